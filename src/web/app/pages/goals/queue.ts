/**
 * `#/goals/<id>/queue`: the review queue, as `clade review` walks it. Each field the judges'
 * vote could not settle comes with its turn, every judge's label and rationale side by side,
 * and why it was queued; a form sets the reviewer's label (the name is remembered in this
 * browser), stored with who and when, and the GSR is recomputed: the card at the top follows
 * (the page asks again when the store changes) and each saved label says GSR before → after.
 * `?all=true` shows every queued field, reviewed ones with their review. A static bundle, or a
 * store the viewer may not write, shows the queue without the form.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { LabelField } from "../../../../eval/goals/agreement.js";
import type {
  CauseCode,
  GoalRunResponse,
  GsrFigure,
  QueueItem,
  QueueResponse,
  ReviewBody,
  ReviewResponse,
} from "../../../api/goals.js";
import { apiPath, postJson } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { href, type Route, withQuery } from "../../router.js";
import { ErrorLine, Loaded, MoreButton, when } from "../../ui.js";
import {
  Crumbs,
  FIELD_NAMES,
  JudgesSideBySide,
  percent,
  RateCard,
  reviewValueText,
  TurnText,
} from "./parts.js";

const REVIEWER_KEY = "clade-reviewer";

function rememberedReviewer(): string {
  try {
    return localStorage.getItem(REVIEWER_KEY) ?? "";
  } catch {
    return "";
  }
}

/** The choices of a field's value: [the select's value, what it reads]. */
function choices(
  field: LabelField,
  turnNumber: number,
  codes: readonly CauseCode[],
): [string, string][] {
  if (field === "is_new_goal") {
    return turnNumber === 1
      ? [["true", "yes: starts a goal"]]
      : [
          ["true", "yes: starts a goal"],
          ["false", "no: continues the goal"],
        ];
  }
  if (field === "quality")
    return [
      ["success", "success"],
      ["failure", "failure"],
    ];
  return [
    ...codes.map((c): [string, string] => [c.code, `${c.code} ${c.name}`]),
    ["null", "none (no cause)"],
  ];
}

function parseChoice(field: LabelField, chosen: string): boolean | string | null {
  if (field === "is_new_goal") return chosen === "true";
  if (field === "rcof" && chosen === "null") return null;
  return chosen;
}

interface Saved {
  item: QueueItem;
  response: ReviewResponse;
}

function ReviewForm({
  id,
  item,
  codes,
  reviewer,
  onSaved,
}: {
  id: string;
  item: QueueItem;
  codes: readonly CauseCode[];
  reviewer: string;
  onSaved: (saved: Saved) => void;
}) {
  const [chosen, setChosen] = useState("");
  const [note, setNote] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [saving, setSaving] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    const body: ReviewBody = {
      position: item.position,
      turnNumber: item.turn_number,
      field: item.field,
      value: parseChoice(item.field, chosen),
      reviewer: reviewer.trim(),
      ...(note.trim() ? { note: note.trim() } : {}),
    };
    try {
      const response = await postJson<ReviewResponse>(
        `/goals/${encodeURIComponent(id)}/reviews`,
        body,
      );
      onSaved({ item, response });
      setChosen("");
      setNote("");
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setSaving(false);
    }
  };
  const ready = chosen !== "" && reviewer.trim() !== "" && !saving;
  return html`<form class="review-form" data-testid="review-form" onSubmit=${save}>
    <label>${FIELD_NAMES[item.field]}
      <select data-testid="review-value" value=${chosen} onChange=${(e: Event) => setChosen((e.target as HTMLSelectElement).value)}>
        <option value="">choose…</option>
        ${choices(item.field, item.turn_number, codes).map(([value, text]) => html`<option value=${value}>${text}</option>`)}
      </select>
    </label>
    <input data-testid="review-note" placeholder="note (optional)" value=${note}
      onInput=${(e: Event) => setNote((e.target as HTMLInputElement).value)} />
    <button type="submit" data-testid="review-save" disabled=${!ready}
      title=${reviewer.trim() === "" ? "give your name above first" : ""}>${saving ? "saving…" : "save"}</button>
    ${error ? html`<${ErrorLine} message=${error} />` : ""}
  </form>`;
}

function Item({
  id,
  item,
  codes,
  form,
}: {
  id: string;
  item: QueueItem;
  codes: readonly CauseCode[];
  form: ComponentChildren;
}) {
  const link = `${href(`/goals/${id}/conversations/${item.position}`)}`;
  return html`<article class="queue-item" data-testid="queue-item" data-conversation=${item.conversation} data-field=${item.field}>
    <h3><a href=${link}>${item.conversation}</a> · turn ${item.turn_number} · ${FIELD_NAMES[item.field]}</h3>
    <p class="queued-reason open">${item.reason}</p>
    <${TurnText} turn=${item.turn} />
    <${JudgesSideBySide}
      judges=${item.judges}
      labels=${item.judges.map((j) => j.label)}
      vote=${item.vote}
      disagreements=${item.disagreements}
      queued=${[item.field]}
    />
    ${
      item.review
        ? html`<p class="item-review" data-testid="item-review">reviewed: <strong>${reviewValueText(item.review.value)}</strong>${" by "}<strong>${item.review.reviewer}</strong> <span class="muted">at ${when(item.review.at)}</span>${
            item.review.note ? html` — <em>${item.review.note}</em>` : ""
          }</p>`
        : ""
    }
    ${form}
    ${item.field === "rcof" ? html`<p class="muted small">${codes.length} codes in this taxonomy; a turn reviewed as a success has no cause.</p>` : ""}
  </article>`;
}

function QueuePage({
  id,
  address,
  reviewing,
  reviewer,
  onSaved,
  onMore,
  first,
}: {
  id: string;
  address: string;
  first: boolean;
  reviewing: boolean;
  reviewer: string;
  onSaved: (saved: Saved) => void;
  onMore: ((cursor: string) => void) | undefined;
}) {
  const state = useApi<QueueResponse>(address);
  return html`<${Loaded} state=${state}>${({ items, codes, nextCursor, all }: QueueResponse) => {
    if (first && items.length === 0) {
      return html`<p class="muted" data-testid="queue-empty">Nothing ${all ? "was queued" : "left to review"}.</p>`;
    }
    return html`${items.map(
      (item) => html`<${Item}
        key=${`${item.position}:${item.turn_number}:${item.field}`}
        id=${id}
        item=${item}
        codes=${codes}
        form=${
          reviewing
            ? html`<${ReviewForm} id=${id} item=${item} codes=${codes} reviewer=${reviewer} onSaved=${onSaved} />`
            : ""
        }
      />`,
    )}${onMore ? html`<${MoreButton} next=${nextCursor} onMore=${onMore} />` : ""}`;
  }}<//>`;
}

/** The queue's pages, the first and each "more" followed; another filter starts afresh (keyed). */
function QueuePages({
  id,
  all,
  reviewing,
  reviewer,
  onSaved,
}: {
  id: string;
  all: boolean;
  reviewing: boolean;
  reviewer: string;
  onSaved: (saved: Saved) => void;
}) {
  const [cursors, setCursors] = useState<string[]>([]);
  const pages = [undefined, ...cursors];
  return html`${pages.map(
    (cursor, i) => html`<${QueuePage}
      key=${cursor ?? "first"}
      id=${id}
      first=${i === 0}
      address=${apiPath(`/goals/${encodeURIComponent(id)}/queue`, { all: all ? "true" : undefined, cursor })}
      reviewing=${reviewing}
      reviewer=${reviewer}
      onSaved=${onSaved}
      onMore=${i === pages.length - 1 ? (next: string) => setCursors([...cursors, next]) : undefined}
    />`,
  )}`;
}

function savedLine({ item, response }: Saved) {
  const r = response.review;
  const gsr = (f: GsrFigure | null) => percent(f?.percent);
  const what = `set ${FIELD_NAMES[r.field]} of ${item.conversation} turn ${r.turnNumber} to `;
  return html`<li data-testid="saved">
    <strong>${r.reviewer}</strong> ${what}<strong>${reviewValueText(r.value as boolean | string | null)}</strong>${" "}<span class="muted" data-testid="saved-at">at ${when(r.at)}</span>${r.note ? html` — <em>${r.note}</em>` : ""}${" · GSR "}<span data-testid="saved-gsr">${gsr(response.gsr.before)} → ${gsr(response.gsr.after)}</span>
  </li>`;
}

export function ReviewQueue({
  id,
  route,
  writable,
  bundle,
}: {
  id: string;
  route: Route;
  writable: boolean;
  bundle: boolean;
}) {
  const all = route.query.all === "true";
  const run = useApi<GoalRunResponse>(apiPath(`/goals/${encodeURIComponent(id)}`));
  const [reviewer, setReviewer] = useState(rememberedReviewer);
  const [saved, setSaved] = useState<Saved[]>([]);
  const reviewing = writable && !bundle;
  const changeReviewer = (name: string) => {
    setReviewer(name);
    try {
      localStorage.setItem(REVIEWER_KEY, name);
    } catch {
      // A browser that keeps nothing: the name lasts as long as the page.
    }
  };
  return html`<${Crumbs} id=${id} />
    <h1>Review queue</h1>
    <${Loaded} state=${run}>${(data: GoalRunResponse) =>
      html`<div class="cards">
        <${RateCard} label="GSR (judges, reviews applied)" title="successful goals ÷ goals"
          rate=${data.report.judged?.gsr as GsrFigure | undefined} counted="goals" testId="gsr" />
        <${RateCard} label="multi-turn GSR" title="the same over goals of more than one turn"
          rate=${data.report.judged?.multiTurnGsr as GsrFigure | undefined} counted="goals" />
        <div class="card" data-testid="queue-counts">
          <div class="label">queue</div>
          <div class="value">${data.report.review.open} open</div>
          <div class="muted">${data.report.review.queued} queued · ${data.report.review.reviewed} reviewed</div>
        </div>
      </div>`}</${Loaded}>
    <div class="toolbar">
      <label><input type="checkbox" data-testid="show-all" checked=${all}
        onChange=${(e: Event) => withQuery(route, { all: (e.target as HTMLInputElement).checked ? "true" : undefined })} />
        every queued field, reviewed ones too</label>
      ${
        reviewing
          ? html`<label>reviewer <input data-testid="reviewer" value=${reviewer} placeholder="your name"
              onInput=${(e: Event) => changeReviewer((e.target as HTMLInputElement).value)} /></label>`
          : html`<span class="muted" data-testid="read-only">${
              bundle
                ? "A static copy: review with clade view or clade review."
                : "This store is read-only here: review with clade review."
            }</span>`
      }
    </div>
    ${
      saved.length > 0
        ? html`<section class="saved"><h2>Saved here</h2><ul>${saved.map(savedLine)}</ul></section>`
        : ""
    }
    <div data-testid="queue">
      <${QueuePages} key=${String(all)} id=${id} all=${all} reviewing=${reviewing} reviewer=${reviewer}
        onSaved=${(s: Saved) => setSaved((list) => [s, ...list])} />
    </div>`;
}
