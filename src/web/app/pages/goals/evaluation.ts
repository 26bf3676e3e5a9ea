/**
 * `#/goals/<id>`: one goal evaluation, as `clade goals report` tells it: GSR, multi-turn GSR and
 * turn success with their intervals (the judges' labels with the reviewers' applied, and the
 * ground truth's beside them), the share of each root cause among failed goals, the judges'
 * agreement, the review queue's size, and the conversations (filter: `?status=`).
 */
import type { ConversationItem, GoalRunResponse, GsrFigure } from "../../../api/goals.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { type PagedColumn, PagedTable } from "../../paged.js";
import { href, type Route, withQuery } from "../../router.js";
import { Loaded, Section, Status, statusText } from "../../ui.js";
import { Crumbs, percent, percentInterval, RateCard } from "./parts.js";

type Metrics = NonNullable<GoalRunResponse["report"]["judged"]>;

const STATUS_FILTERS = [
  ["", "all"],
  ["judged", "judged"],
  ["errored", "errored"],
  ["pending", "pending"],
  ["queued", "queued for review"],
  ["open", "open for review"],
] as const;

function Cards({ metrics, who }: { metrics: Metrics; who: string }) {
  return html`<${RateCard}
      label=${`GSR (${who})`}
      title="successful goals ÷ goals"
      rate=${metrics.gsr as GsrFigure}
      counted="goals"
      testId=${who === "judges" ? "gsr" : "gsr-truth"}
    />
    <${RateCard}
      label=${`multi-turn GSR (${who})`}
      title="the same over goals of more than one turn"
      rate=${metrics.multiTurnGsr as GsrFigure}
      counted="goals"
    />
    <${RateCard}
      label=${`turn success (${who})`}
      title="successful turns ÷ turns"
      rate=${metrics.turnSuccessRate as GsrFigure}
      counted="turns"
    />`;
}

/** Share of failed goals per root cause: judges and ground truth side by side. */
function Causes({ columns }: { columns: { name: string; metrics: Metrics }[] }) {
  const first = columns[0]?.metrics;
  if (!first) return null;
  const share = (m: Metrics, code: string | null) => {
    const c = code === null ? m.unattributed : m.causes.find((x) => x.code === code);
    if (!c) return html`<span class="muted">–</span>`;
    return html`${c.count} <span class="muted">(${percent(c.percent)} ${percentInterval(c.interval)})</span>`;
  };
  const rows = [
    ...first.causes.map((c) => ({ code: c.code, name: c.name })),
    { code: null, name: "no cause given (unattributed)" },
  ];
  return html`<table data-testid="causes">
    <thead><tr><th>code</th><th>root cause</th>${columns.map(
      (c) =>
        html`<th class="num" title="failed goals with this root cause (share of failed goals, 95 % interval)">${c.name}: ${c.metrics.failedGoals} failed goals</th>`,
    )}</tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr key=${r.code ?? "-"}>
        <td><code>${r.code ?? "–"}</code></td><td>${r.name}</td>
        ${columns.map((c) => html`<td class="num">${share(c.metrics, r.code)}</td>`)}
      </tr>`,
    )}</tbody>
  </table>`;
}

function conversationColumns(id: string): PagedColumn<ConversationItem>[] {
  return [
    { label: "#", numeric: true, cell: (item) => item.position },
    {
      label: "conversation",
      cell: (item) =>
        html`<a href=${href(`/goals/${id}/conversations/${item.position}`)}>${item.conversationId}</a>${
          item.source ? html`<div class="muted">${item.source.record}</div>` : ""
        }`,
    },
    { label: "turns", numeric: true, cell: (item) => item.turns },
    {
      label: "goals",
      title: "successful goals / goals, by the labels in force",
      numeric: true,
      cell: (item) =>
        item.goals === null
          ? html`<span class="muted">–</span>`
          : html`<span class=${item.succeeded === item.goals ? "outcome-success" : "outcome-failure"}>${item.succeeded}/${item.goals}</span>`,
    },
    {
      label: "status",
      cell: (item) =>
        html`<span class=${`badge conv-${item.status}`}>${item.status}</span>${
          item.error ? html`<div class="error small">${item.error}</div>` : ""
        }`,
    },
    {
      label: "review",
      title: "fields queued for review",
      numeric: true,
      cell: (item) =>
        item.queued === 0
          ? ""
          : html`<span class=${item.open > 0 ? "badge queued" : "muted"}>${item.open} open</span> <span class="muted">of ${item.queued}</span>`,
    },
  ];
}

export function GoalEvaluation({ id, route }: { id: string; route: Route }) {
  const state = useApi<GoalRunResponse>(apiPath(`/goals/${encodeURIComponent(id)}`));
  const status = route.query.status ?? "";
  return html`<${Loaded} state=${state}>${(data: GoalRunResponse) => {
    const { report, run } = data;
    const columns = [
      ...(report.judged ? [{ name: "judges", metrics: report.judged }] : []),
      ...(report.groundTruth ? [{ name: "ground truth", metrics: report.groundTruth }] : []),
    ];
    return html`<${Crumbs} />
      <h1>${id} <${Status} status=${statusText(run, true)} /></h1>
      <p class="muted">${
        run.judges.length > 0
          ? html`judges: ${run.judges.map((j, i) => html`<span class="judge-name">${i + 1} ${j}</span>`)}`
          : "no judges: the data's own labels"
      } · taxonomy ${report.taxonomy} · ${report.counts.conversations} conversations: ${report.counts.judged} judged, ${report.counts.errored} errored, ${report.counts.pending} pending</p>
      <div class="cards">
        ${report.judged ? html`<${Cards} metrics=${report.judged} who="judges" />` : ""}
        ${
          run.judges.length > 0
            ? html`<a class="card card-link" href=${href(`/goals/${id}/queue`)} data-testid="open-review" title="fields the judges' vote could not settle">
                <div class="label">review queue</div>
                <div class="value">${report.review.open} open</div>
                <div class="muted">${report.review.queued} queued · ${report.review.reviewed} reviewed</div>
              </a>`
            : ""
        }
      </div>
      ${
        report.groundTruth
          ? html`<div class="cards truth-cards"><${Cards} metrics=${report.groundTruth} who="ground truth" /></div>
              ${report.groundTruth.turnLevel ? "" : html`<p class="muted">The data knows only each conversation's outcome: its turn-level figures say little.</p>`}`
          : ""
      }
      <${Section} title="Root causes of failed goals">
        <p class="muted">A failed goal's cause is that of its earliest failed turn.</p>
        <${Causes} columns=${columns} />
      </${Section}>
      ${
        report.among
          ? html`<p class="muted" data-testid="among">Agreement among the ${report.among.labellers} judges (Fleiss' κ, unanimous items):
              ${(["is_new_goal", "quality", "rcof"] as const).map((f) => {
                const a = report.among?.fields[f];
                return a
                  ? html` ${f} ${a.kappa === null ? "n/a" : a.kappa.toFixed(3)} (${a.unanimous}/${a.items});`
                  : "";
              })}</p>`
          : ""
      }
      ${
        report.errors.length > 0
          ? html`<${Section} title="Errored conversations (never scored)">
              <ul class="errors">${report.errors.map((e) => html`<li><code>${e.conversation}</code>: ${e.error}</li>`)}</ul>
            </${Section}>`
          : ""
      }
      <${Section} title="Conversations">
        <div class="toolbar">
          <label>show <select data-testid="status-filter" value=${status}
            onChange=${(e: Event) => withQuery(route, { status: (e.target as HTMLSelectElement).value })}>
            ${STATUS_FILTERS.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
          </select></label>
        </div>
        <${PagedTable}
          testId="conversations"
          path=${`/goals/${encodeURIComponent(id)}/conversations`}
          query=${{ status }}
          columns=${conversationColumns(id)}
          rowKey=${(item: ConversationItem) => item.position}
          rowAttrs=${() => ({ "data-testid": "conversation-row" })}
          empty="no conversations here"
        />
      </${Section}>`;
  }}</${Loaded}>`;
}
