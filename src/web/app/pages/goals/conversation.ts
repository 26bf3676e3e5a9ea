/**
 * `#/goals/<id>/conversations/<position>`: one conversation cut into its goals (a coloured bar
 * per goal: success or failure, and a failure's root cause), each turn with its text and every
 * judge's labels and rationale in columns side by side, the fields they disagree on
 * highlighted, the vote and the label in force, what was queued and the reviewers' labels.
 */
import type { ConversationResponse, GoalView, TurnView } from "../../../api/goals.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { href } from "../../router.js";
import { Loaded, when } from "../../ui.js";
import { Crumbs, FIELD_NAMES, JudgesSideBySide, reviewValueText, TurnText } from "./parts.js";

function goalHeading(goal: GoalView, data: ConversationResponse): string {
  const turns =
    goal.firstTurn === goal.lastTurn
      ? `turn ${goal.firstTurn}`
      : `turns ${goal.firstTurn}–${goal.lastTurn}`;
  if (goal.success === null) return `${turns} · not labelled yet`;
  if (goal.success) return `Goal ${goal.goalNumber} · ${turns} · success`;
  const code = data.codes.find((c) => c.code === goal.rootCause);
  const cause = goal.rootCause
    ? `root cause ${goal.rootCause}${code ? ` (${code.name})` : ""}`
    : "no cause given";
  return `Goal ${goal.goalNumber} · ${turns} · failure at turn ${goal.firstFailedTurn}: ${cause}`;
}

function Turn({ view, data }: { view: TurnView; data: ConversationResponse }) {
  const number = view.turn.turn_number;
  return html`<div class="turn" data-testid="turn" data-turn=${number} id=${`turn-${number}`}>
    <div class="turn-number">turn ${number}</div>
    <div class="turn-body">
      <${TurnText} turn=${view.turn} />
      ${
        data.judges.length > 0
          ? html`<${JudgesSideBySide}
              judges=${data.judges}
              labels=${view.judges}
              vote=${view.vote}
              inForce=${view.label}
              disagreements=${view.disagreements}
              queued=${view.queued.filter((q) => q.open).map((q) => q.field)}
            />`
          : ""
      }
      ${
        view.truth
          ? html`<p class="muted truth">ground truth: ${view.truth.is_new_goal ? "new goal, " : ""}${view.truth.quality}${
              view.truth.quality === "failure" ? ` (${view.truth.rcof ?? "no cause"})` : ""
            }</p>`
          : ""
      }
      ${view.queued.map(
        (q) =>
          html`<p class=${`queued-reason ${q.open ? "open" : "settled"}`} data-testid="queued">
            ${q.open ? "queued" : "reviewed"}: ${FIELD_NAMES[q.field]}: ${q.reason}${
              q.open ? html` · <a href=${href(`/goals/${data.runId}/queue`)}>review it</a>` : ""
            }</p>`,
      )}
      ${
        view.reviews.length > 0
          ? html`<ul class="reviews" data-testid="reviews">${view.reviews.map(
              (r) =>
                html`<li data-testid="review"><strong>${r.reviewer}</strong> set ${FIELD_NAMES[r.field]} to <strong>${reviewValueText(r.value)}</strong>${" "}<span class="muted">at ${when(r.at)}</span>${r.note ? html` — <em>${r.note}</em>` : ""}</li>`,
            )}</ul>`
          : ""
      }
    </div>
  </div>`;
}

function Goal({ goal, data }: { goal: GoalView; data: ConversationResponse }) {
  const kind = goal.success === null ? "unlabelled" : goal.success ? "success" : "failure";
  return html`<section class=${`goal goal-${kind}`} data-testid="goal" data-outcome=${kind}>
    <h2 class="goal-heading">${goalHeading(goal, data)}</h2>
    ${goal.turns.map((view) => html`<${Turn} key=${view.turn.turn_number} view=${view} data=${data} />`)}
  </section>`;
}

export function GoalConversation({ id, position }: { id: string; position: number }) {
  const state = useApi<ConversationResponse>(
    apiPath(`/goals/${encodeURIComponent(id)}/conversations/${position}`),
  );
  return html`<${Loaded} state=${state}>${(data: ConversationResponse) => {
    const goals = data.goals;
    const succeeded = goals.filter((g) => g.success === true).length;
    return html`<${Crumbs} id=${id} />
      <h1>Conversation ${data.conversationId} <span class=${`badge conv-${data.status}`}>${data.status}</span></h1>
      <div class="toolbar">
        ${data.previous !== null ? html`<a href=${href(`/goals/${id}/conversations/${data.previous}`)} data-testid="previous">← previous</a>` : ""}
        ${data.next !== null ? html`<a href=${href(`/goals/${id}/conversations/${data.next}`)} data-testid="next">next →</a>` : ""}
        <span class="muted">position ${data.position}${data.source ? ` · ${data.source.format} ${data.source.record}` : ""}${
          data.segmentedBy
            ? ` · ${succeeded} of ${goals.length} goals achieved (${data.segmentedBy}' labels)`
            : ""
        }</span>
      </div>
      ${data.error ? html`<p class="error" data-testid="conversation-error">${data.error}</p>` : ""}
      ${
        data.judges.some((j) => j.status !== null)
          ? html`<details class="reasoning"><summary>the judges' reasoning</summary>
              ${data.judges.map(
                (
                  j,
                ) => html`<div><strong>judge ${j.judge + 1}</strong> <span class="muted">${j.model}${
                  j.answers !== null && j.answers > 1 ? ` · ${j.answers} answers asked` : ""
                }</span>
                  ${j.error ? html`<p class="error">${j.error}</p>` : html`<pre>${j.reasoning ?? ""}</pre>`}</div>`,
              )}</details>`
          : ""
      }
      ${data.system ? html`<details><summary>system prompt</summary><pre>${data.system}</pre></details>` : ""}
      ${data.opening ? html`<p class="muted">assistant, before the first turn: ${data.opening}</p>` : ""}
      ${goals.map((goal) => html`<${Goal} key=${goal.goalNumber} goal=${goal} data=${data} />`)}
      ${data.closing ? html`<p class="muted">user, after the last turn: ${data.closing}</p>` : ""}`;
  }}</${Loaded}>`;
}
