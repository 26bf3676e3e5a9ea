/** `#/goals`: the stored goal evaluations, newest first, each with its GSR and open review. */
import type { GoalRunItem } from "../../../api/goals.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { href } from "../../router.js";
import { Status, when } from "../../ui.js";
import { PagedTable } from "./paged.js";
import { percent, percentInterval } from "./parts.js";

function statusOf(run: GoalRunItem): string {
  return run.stopReason ? `${run.status} (${run.stopReason})` : run.status;
}

export function GoalList() {
  return html`<h1>Goal evaluations</h1>
    <p class="muted">Conversations segmented by user goal and labelled turn by turn (by teacher
      judges, or by the data's own labels). GSR: successful goals ÷ goals, with its 95 %
      bootstrap interval over conversations; the judges' figure counts the reviewers' labels.</p>
    <${PagedTable}
      testId="goal-runs"
      address=${(cursor: string | undefined) => apiPath("/goals", { cursor })}
      columns=${7}
      empty="No goal evaluations yet: clade goals SOURCE --run-id ID."
      head=${html`<tr>
        <th>evaluation</th><th>status</th><th>judges</th>
        <th class="num" title="judged / errored / pending of all conversations">conversations</th>
        <th class="num" title="successful goals ÷ goals (95 % bootstrap interval)">GSR</th>
        <th class="num" title="queued fields no reviewer has settled">open review</th>
        <th>created</th>
      </tr>`}
      row=${(run: GoalRunItem) => html`<tr key=${run.id} data-testid="goal-run">
        <td><a href=${href(`/goals/${run.id}`)}>${run.id}</a></td>
        <td><${Status} status=${statusOf(run)} /></td>
        <td>${
          run.judges.length > 0
            ? run.judges.map((j, i) => html`<div>${i + 1} ${j}</div>`)
            : html`<span class="muted">none (ground truth)</span>`
        }</td>
        <td class="num">${run.counts.judged} / ${run.counts.errored} / ${run.counts.pending}${" "}<span class="muted">of ${run.counts.conversations}</span></td>
        <td class="num">${percent(run.gsr?.percent)} <span class="muted">${percentInterval(run.gsr?.interval)}</span>${
          run.basis === "ground truth" ? html`<div class="muted">ground truth</div>` : ""
        }</td>
        <td class="num">${
          run.openReview > 0
            ? html`<a href=${href(`/goals/${run.id}/queue`)}>${run.openReview}</a>`
            : run.judges.length > 0
              ? "0"
              : "–"
        }</td>
        <td>${when(run.createdAt)}</td>
      </tr>`}
    />`;
}
