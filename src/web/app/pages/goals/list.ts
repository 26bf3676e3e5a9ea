/** `#/goals`: the stored goal evaluations, newest first, each with its GSR and open review. */
import type { GoalRunItem } from "../../../api/goals.js";
import { html } from "../../html.js";
import { type PagedColumn, PagedTable } from "../../paged.js";
import { href } from "../../router.js";
import { Status, statusText, when } from "../../ui.js";
import { percent, percentInterval } from "./parts.js";

const COLUMNS: PagedColumn<GoalRunItem>[] = [
  { label: "evaluation", cell: (run) => html`<a href=${href(`/goals/${run.id}`)}>${run.id}</a>` },
  { label: "status", cell: (run) => html`<${Status} status=${statusText(run, true)} />` },
  {
    label: "judges",
    cell: (run) =>
      run.judges.length > 0
        ? run.judges.map((j, i) => html`<div>${i + 1} ${j}</div>`)
        : html`<span class="muted">none (ground truth)</span>`,
  },
  {
    label: "conversations",
    title: "judged / errored / pending of all conversations",
    numeric: true,
    cell: (run) =>
      html`${run.counts.judged} / ${run.counts.errored} / ${run.counts.pending}${" "}<span class="muted">of ${run.counts.conversations}</span>`,
  },
  {
    label: "GSR",
    title: "successful goals ÷ goals (95 % bootstrap interval)",
    numeric: true,
    cell: (run) =>
      html`${percent(run.gsr?.percent)} <span class="muted">${percentInterval(run.gsr?.interval)}</span>${
        run.basis === "ground truth" ? html`<div class="muted">ground truth</div>` : ""
      }`,
  },
  {
    label: "open review",
    title: "queued fields no reviewer has settled",
    numeric: true,
    cell: (run) =>
      run.openReview > 0
        ? html`<a href=${href(`/goals/${run.id}/queue`)}>${run.openReview}</a>`
        : run.judges.length > 0
          ? "0"
          : "–",
  },
  { label: "created", cell: (run) => when(run.createdAt) },
];

export function GoalList() {
  return html`<h1>Goal evaluations</h1>
    <p class="muted">Conversations segmented by user goal and labelled turn by turn (by teacher
      judges, or by the data's own labels). GSR: successful goals ÷ goals, with its 95 %
      bootstrap interval over conversations; the judges' figure counts the reviewers' labels.</p>
    <${PagedTable}
      testId="goal-runs"
      path="/goals"
      columns=${COLUMNS}
      rowKey=${(run: GoalRunItem) => run.id}
      rowAttrs=${() => ({ "data-testid": "goal-run" })}
      empty="No goal evaluations yet: clade goals SOURCE --run-id ID."
    />`;
}
