/**
 * Two runs side by side (#/compare?a=ID&b=ID): each metric of A and of B with its interval and
 * B − A over the tasks both finished, then every task's success rate in A and in B with the
 * flipped ones marked, as promptfoo users expect; "only flipped" keeps those.
 */
import type { CompareResponse, CompareSideTask, CompareTaskRow } from "../../../api/runs.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { type PagedColumn, PagedTable } from "../../paged.js";
import { href, type Route, withQuery } from "../../router.js";
import { ErrorLine, interval, Loaded, rate, Section, Status, Table } from "../../ui.js";

type Metric = CompareResponse["metrics"][number];

const signed = (value: number | null | undefined) => `${(value ?? 0) > 0 ? "+" : ""}${rate(value)}`;

const side = (s: CompareSideTask | null) =>
  s === null
    ? html`<span class="muted">–</span>`
    : html`${rate(s.rate)} <small class="muted">${s.successes}/${s.finished}${s.errors ? `, ${s.errors} err` : ""}</small>`;

const CHANGE_LABEL: Record<CompareTaskRow["change"], string> = {
  gained: "gained",
  lost: "lost",
  same: "same",
  onlyA: "only in A",
  onlyB: "only in B",
};

export function ComparePage({ route }: { route: Route }) {
  const { a, b } = route.query;
  const only = route.query.only === "flipped" ? "flipped" : undefined;
  const query = { a, b, only };
  const head = useApi<CompareResponse>(a && b ? apiPath("/compare", query) : undefined);
  if (!a || !b) {
    return html`<${ErrorLine} message="compare needs two runs: #/compare?a=RUN&b=RUN (tick two on the runs page)" />`;
  }
  const columns: PagedColumn<CompareTaskRow>[] = [
    {
      label: "task",
      numeric: true,
      cell: (r) => html`<span data-testid="compare-task" data-task=${r.task}>${r.task}</span>`,
    },
    { label: `A: ${a}`, title: "success rate (passes/finished) in A", cell: (r) => side(r.a) },
    { label: `B: ${b}`, title: "success rate (passes/finished) in B", cell: (r) => side(r.b) },
    {
      label: "change",
      title: head.data?.definitions.change,
      cell: (r) => html`<span class=${`change-${r.change}`}>${CHANGE_LABEL[r.change]}</span>`,
    },
    {
      label: "flipped",
      title: head.data?.definitions.flipped,
      cell: (r) =>
        r.flipped ? html`<strong class="flip" data-testid="flipped">flipped</strong>` : "",
    },
  ];
  return html`<section data-testid="compare-page">
    <p><a href="#/runs">← runs</a></p>
    <h1>Compare</h1>
    <${Loaded} state=${head}>${(d: CompareResponse) => html`<${Header} data=${d} />`}<//>
    <${Section} title="Per task">
      <div class="toolbar">
        <label><input type="checkbox" data-testid="only-flipped" checked=${only === "flipped"}
          onChange=${(e: Event) => withQuery(route, { only: (e.target as HTMLInputElement).checked ? "flipped" : undefined })} />
          only flipped tasks</label>
        ${head.data ? html`<span class="muted" data-testid="flip-counts">${head.data.flipped} flipped, ${head.data.changed} changed, ${head.data.sharedTasks} shared tasks</span>` : null}
      </div>
      <p class="muted">${head.data?.definitions.flipped ? `Flipped: ${head.data.definitions.flipped}.` : ""}</p>
      <${PagedTable} path="/compare" query=${query} columns=${columns}
        rowKey=${(r: CompareTaskRow) => r.task} rowAttrs=${(r: CompareTaskRow) => ({ class: r.flipped ? "flipped" : undefined })}
        testId="compare-table" empty=${only ? "no task flipped" : "no tasks"} />
    <//>
  </section>`;
}

function Header({ data }: { data: CompareResponse }) {
  const runLine = (label: string, s: CompareResponse["a"]) =>
    html`<p><strong>${label}</strong> <a href=${href(`/runs/${s.run.id}`)}>${s.run.id}</a> <${Status} status=${s.run.status} />
      <span class="muted">${s.run.env} v${s.run.envVersion} · agent ${s.run.agent}</span></p>`;
  return html`${runLine("A", data.a)}${runLine("B", data.b)}
    ${data.warnings.map((w) => html`<p class="error" data-testid="compare-warning">warning: ${w}</p>`)}
    <${Table} testId="compare-metrics" rows=${data.metrics} rowKey=${(m: Metric) => m.metric} columns=${[
      { label: "metric", cell: (m: Metric) => m.metric },
      {
        label: "A",
        numeric: true,
        cell: (m: Metric) =>
          html`${rate(m.a)} <small class="muted">${interval(m.aInterval)}</small>`,
      },
      {
        label: "B",
        numeric: true,
        cell: (m: Metric) =>
          html`${rate(m.b)} <small class="muted">${interval(m.bInterval)}</small>`,
      },
      {
        label: "B − A",
        numeric: true,
        title: data.definitions.difference,
        cell: (m: Metric) =>
          html`<strong class=${m.difference > 0 ? "outcome-success" : m.difference < 0 ? "outcome-failure" : ""}>${signed(m.difference)}</strong> <small class="muted">${interval(m.differenceInterval)}</small>`,
      },
      {
        label: "tasks",
        numeric: true,
        title: "shared tasks the difference uses",
        cell: (m: Metric) => m.tasks,
      },
    ]} />
    <p class="muted">${data.sharedTasks} shared tasks; ${data.onlyA} only in A, ${data.onlyB} only in B. ${data.definitions.difference}.</p>`;
}
