/**
 * Pieces the goal pages share: percentages with their intervals, a GSR card, a turn's text, and
 * a turn's labels with every judge in its own column beside the vote and the label in force,
 * the fields the judges disagree on highlighted. Figures arrive as JSON, so an undefined one
 * (no goals to count) is null and shows as "n/a".
 */
import type { ComponentChildren } from "preact";
import type { LabelField } from "../../../../eval/goals/agreement.js";
import type { ConversationTurn } from "../../../../eval/goals/conversation.js";
import type { TurnLabel, TurnLabelFields } from "../../../../eval/goals/labels.js";
import type { GsrFigure } from "../../../api/goals.js";
import { html } from "../../html.js";
import { href } from "../../router.js";

export function percent(value: number | null | undefined, digits = 1): string {
  return value === null || value === undefined || Number.isNaN(value)
    ? "n/a"
    : `${value.toFixed(digits)}%`;
}

/** "[40.0, 80.0]": a 95 % bootstrap interval in percent, or nothing when undefined. */
export function percentInterval(
  interval: { low: number | null; high: number | null } | null | undefined,
): string {
  if (!interval || interval.low === null || interval.high === null) return "";
  return `[${interval.low.toFixed(1)}, ${interval.high.toFixed(1)}]`;
}

/** A rate as a card: the percentage, its interval, and what it counts. */
export function RateCard({
  label,
  title,
  rate,
  counted,
  testId,
}: {
  label: string;
  title: string;
  rate: GsrFigure | null | undefined;
  counted: string;
  testId?: string;
}) {
  return html`<div class="card" title=${title} data-testid=${testId}>
    <div class="label">${label}</div>
    <div class="value" data-testid=${testId ? `${testId}-value` : undefined}>${percent(rate?.percent)}</div>
    <div class="muted">${percentInterval(rate?.interval)}${
      rate ? html` · ${rate.count}/${rate.total} ${counted}` : ""
    }</div>
  </div>`;
}

export const FIELD_NAMES: Record<LabelField, string> = {
  is_new_goal: "new goal",
  quality: "quality",
  rcof: "root cause",
};

/** One field of a label as shown: yes/no, success/failure, a code or "–". */
function fieldText(label: TurnLabelFields | null | undefined, field: LabelField): string {
  if (!label) return "";
  if (field === "is_new_goal") return label.is_new_goal ? "yes" : "no";
  if (field === "quality") return label.quality;
  return label.quality === "success" ? "–" : (label.rcof ?? "none");
}

/** A field's value as a badge, coloured by what it says. */
function FieldValue({
  label,
  field,
}: {
  label: TurnLabelFields | null | undefined;
  field: LabelField;
}) {
  if (!label) return html`<span class="muted">no label</span>`;
  const text = fieldText(label, field);
  const kind =
    field === "quality"
      ? `q-${label.quality}`
      : field === "is_new_goal"
        ? label.is_new_goal
          ? "q-new"
          : ""
        : label.quality === "failure"
          ? "q-cause"
          : "";
  return html`<span class=${`label-value ${kind}`}>${text}</span>`;
}

/** The user's message, the assistant's reply and what it did with tools in between. */
export function TurnText({ turn }: { turn: ConversationTurn | null }) {
  if (!turn) return html`<p class="muted">(the turn is missing)</p>`;
  return html`<div class="turn-text">
    <div class="said user"><span class="who">user</span>${turn.user}</div>
    ${(turn.tool_calls ?? []).map(
      (call) =>
        html`<div class="said tool"><span class="who">tool call</span><code>${call.name}(${call.arguments})</code></div>`,
    )}
    ${(turn.tool_results ?? []).map(
      (result) =>
        html`<div class="said tool"><span class="who">${result.name ?? "tool"} result</span><code>${result.content}</code></div>`,
    )}
    <div class="said assistant"><span class="who">assistant</span>${
      turn.assistant || html`<span class="muted">(no reply text)</span>`
    }</div>
  </div>`;
}

interface JudgeHead {
  judge: number;
  model: string;
}

/**
 * A turn's labels side by side: one column per judge, then the vote and the label in force.
 * Rows are the fields (only `fields` when given) and each judge's rationale; a field the judges
 * disagree on is highlighted, a queued one marked.
 */
export function JudgesSideBySide({
  judges,
  labels,
  vote,
  inForce,
  disagreements,
  queued = [],
  fields = ["is_new_goal", "quality", "rcof"],
}: {
  judges: readonly JudgeHead[];
  labels: readonly (TurnLabel | null)[];
  vote: TurnLabel | null;
  inForce?: TurnLabelFields | null;
  disagreements: readonly LabelField[];
  queued?: readonly LabelField[];
  fields?: readonly LabelField[];
}) {
  const extra: { name: string; title: string; label: TurnLabelFields | null }[] = [];
  if (vote) extra.push({ name: "vote", title: "the ensemble's vote, as cast", label: vote });
  if (inForce !== undefined) {
    extra.push({
      name: "in force",
      title: "the label counted: the vote with the reviewers' labels applied",
      label: inForce,
    });
  }
  const cell = (children: ComponentChildren, className = "") =>
    html`<td class=${className}>${children}</td>`;
  return html`<table class="judges" data-testid="judges">
    <thead><tr>
      <th></th>
      ${judges.map(
        (j) =>
          html`<th data-testid="judge-column" title=${j.model}>judge ${j.judge + 1}<div class="muted model">${j.model}</div></th>`,
      )}
      ${extra.map((e) => html`<th class="derived" title=${e.title}>${e.name}</th>`)}
    </tr></thead>
    <tbody>
      ${fields.map(
        (field) =>
          html`<tr class=${disagreements.includes(field) ? "disagree" : ""} data-field=${field} data-disagree=${disagreements.includes(field) ? "yes" : "no"}>
            <th>${FIELD_NAMES[field]}${
              queued.includes(field)
                ? html` <span class="badge queued" title="queued for review">queued</span>`
                : ""
            }</th>
            ${labels.map((label) => cell(html`<${FieldValue} label=${label} field=${field} />`))}
            ${extra.map((e) => cell(html`<${FieldValue} label=${e.label} field=${field} />`, "derived"))}
          </tr>`,
      )}
      <tr class="rationale">
        <th>rationale</th>
        ${labels.map((label) =>
          cell(
            label
              ? html`<span data-testid="rationale">${label.rationale}</span>`
              : html`<span class="muted">–</span>`,
          ),
        )}
        ${extra.map(() => cell("", "derived"))}
      </tr>
    </tbody>
  </table>`;
}

/** "yes"/"no", a quality or a code (null: no cause), as a review's value reads. */
export function reviewValueText(value: boolean | string | null): string {
  if (value === true) return "yes";
  if (value === false) return "no";
  return value ?? "none";
}

/** Where a page sits: the evaluations, then the evaluation (when inside one). */
export function Crumbs({ id }: { id?: string }) {
  return html`<p class="crumbs"><a href=${href("/goals")}>goal evaluations</a>${" / "}${
    id === undefined ? "" : html`<a href=${href(`/goals/${id}`)}>${id}</a>${" / "}`
  }</p>`;
}
