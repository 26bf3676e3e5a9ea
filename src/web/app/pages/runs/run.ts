/**
 * One run: its header and status, totals by outcome (errors apart from failures), the metrics
 * with their intervals and definitions, errors grouped by message, cost by model, per-task
 * outcomes across samples (one cell per sample) and the episodes, filtered by outcome. The
 * episode filter and sort live in the address (#/runs/ID?outcome=failure&sort=reward).
 */
import { useEffect, useRef } from "preact/hooks";
import type {
  EpisodeRow,
  ErrorGroup,
  RunListResponse,
  RunMetricsResponse,
  RunResponse,
  TaskRow,
  TaskSample,
} from "../../../api/runs.js";
import { apiPath, isBundle } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { type PagedColumn, PagedTable, routeSorting } from "../../paged.js";
import { href, navigate, type Route, withQuery } from "../../router.js";
import { cost, interval, Loaded, rate, Section, Status, Table, when } from "../../ui.js";

/** The episode filters, as buttons: label → the API's outcome value. */
const FILTERS: readonly { label: string; outcome: string | undefined }[] = [
  { label: "all", outcome: undefined },
  { label: "passes", outcome: "success" },
  { label: "failures", outcome: "failure" },
  { label: "errors", outcome: "error" },
  { label: "parse errors", outcome: "parse_errors" },
  { label: "not run", outcome: "not_run" },
];

const episodeHref = (id: number) => href(`/episodes/${id}`);

/** The episodes' order when the address names none: by task, the first first. */
const DEFAULT_SORT = { key: "task", dir: "asc" } as const;

export function RunPage({ route, id }: { route: Route; id: string }) {
  const base = `/runs/${encodeURIComponent(id)}`;
  const detail = useApi<RunResponse>(apiPath(base));
  return html`<section data-testid="run-page">
    <p><a href="#/runs">← runs</a></p>
    <${Loaded} state=${detail}>${(d: RunResponse) => html`<${RunHeader} detail=${d} />`}<//>
    <${Metrics} base=${base} ready=${detail.data !== undefined} />
    <${Loaded} state=${detail}>${(d: RunResponse) => html`<${Errors} detail=${d} />`}<//>
    <${Section} title="Per task, across samples">
      <p class="muted">One cell per sample (the first 100 of a task), by outcome; a cell opens its episode, a task number filters the episodes below.</p>
      <${PagedTable} path=${`${base}/tasks`}
        columns=${TASK_COLUMNS(route)} rowKey=${(t: TaskRow) => t.task} testId="tasks-table" empty="no episodes yet" />
    <//>
    <${Episodes} route=${route} base=${base} />
    <${Loaded} state=${detail}>${(d: RunResponse) => html`<${Usage} detail=${d} />`}<//>
  </section>`;
}

function RunHeader({ detail }: { detail: RunResponse }) {
  const { run, totals } = detail;
  const card = (label: string, value: unknown, testId: string, cls = "", title = "") =>
    html`<div class="card" data-testid=${testId} title=${title}><div class="label">${label}</div><div class=${`value ${cls}`}>${value}</div></div>`;
  return html`<div class="run-header">
      <h1>${run.id} <${Status} status=${run.status} /></h1>
      <p class="muted">${run.env} v${run.envVersion} · agent ${run.agent} · created ${when(run.createdAt)} · updated ${when(run.updatedAt)}${
        run.owner ? ` · pid ${run.owner.pid} on ${run.owner.host}` : ""
      }</p>
      ${run.state === "killed" ? html`<p class="error">Its process is gone: running the same command again resumes it.</p>` : null}
      <details><summary>configuration${run.configDamaged ? " (damaged: could not be read)" : ""}</summary>
        <pre>${JSON.stringify(run.config, null, 2)}</pre></details>
      <${CompareWith} id=${run.id} />
    </div>
    <div class="cards" data-testid="totals">
      ${card("episodes", totals.episodes, "total-episodes")}
      ${card("passes", totals.success, "total-success", "outcome-success")}
      ${card("failures", totals.failure, "total-failure", "outcome-failure")}
      ${card("errors", totals.error, "total-error", "outcome-error", "exceptions, timeouts, provider errors: not failures, in no denominator")}
      ${card("not run", totals.notRun, "total-not-run", "outcome-not_run", "planned, never started (a budget ran out)")}
      ${card("with parse errors", totals.withParseErrors, "total-parse-errors", "", `episodes with model replies that had no usable action (${totals.parseErrors} replies in all)`)}
      ${card("cost", cost(detail.cost.costUsd, detail.cost.unpriced), "total-cost")}
    </div>`;
}

/** Pick another run to compare this one with (this run is A). */
function CompareWith({ id }: { id: string }) {
  const runs = useApi<RunListResponse>(apiPath("/runs"));
  const others = runs.data?.items.filter((r) => r.id !== id) ?? [];
  if (others.length === 0) return null;
  return html`<p class="toolbar"><label>compare with
    <select data-testid="compare-with" onChange=${(e: Event) => {
      const b = (e.target as HTMLSelectElement).value;
      if (b) navigate("/compare", { a: id, b });
    }}><option value="">another run…</option>${others.map((r) => html`<option value=${r.id}>${r.id} (${r.agent})</option>`)}</select></label></p>`;
}

/**
 * Asked for once the run's header is in: on a run of 100,000 episodes the first computation
 * takes over a second (then it is cached), and the server answers in order, so asking last
 * lets the header, tasks and episodes come first.
 */
function Metrics({ base, ready }: { base: string; ready: boolean }) {
  const metrics = useApi<RunMetricsResponse>(ready ? apiPath(`${base}/metrics`) : undefined);
  return html`<${Section} title="Metrics">
    <${Loaded} state=${metrics}>${(m: RunMetricsResponse) =>
      html`<div class="cards" data-testid="metrics">${m.rows.map(
        (row) => html`<div class="card metric" title=${row.definition} data-metric=${row.name}>
          <div class="label">${row.name}</div>
          <div class="value">${rate(row.value)}</div>
          <div class="muted interval">${row.interval ? `95% ${interval(row.interval)}` : "\u00a0"}</div>
        </div>`,
      )}</div>
      ${m.damaged > 0 ? html`<p class="error" data-testid="damaged">${m.damaged} damaged episode rows could not be read: left out of the metrics, run again on resume.</p>` : null}
      <details class="definitions" data-testid="definitions"><summary>definitions</summary>
        <dl class="defs">${m.rows.map((row) => html`<dt>${row.name}</dt><dd>${row.definition}</dd>`)}</dl>
        ${m.notes.map((note) => html`<p class="muted">${note}</p>`)}
        <p class="muted">computed ${when(m.computedAt)}</p>
      </details>`}<//>
  <//>`;
}

function Errors({ detail }: { detail: RunResponse }) {
  const { errors, run } = detail;
  if (errors.total === 0) return null;
  return html`<${Section} title=${`Errors (${errors.total}), apart from failures`}>
    <p class="muted">Exceptions, timeouts and provider errors: reported apart, never scored 0${
      errors.distinct > errors.groups.length
        ? `; the ${errors.groups.length} most frequent of ${errors.distinct} messages`
        : ""
    }.</p>
    <${Table} testId="error-groups" rows=${errors.groups} rowKey=${(g: ErrorGroup) => g.pattern}
      columns=${[
        { label: "count", numeric: true, cell: (g: { count: number }) => g.count },
        {
          label: "message",
          title:
            "numbers and ids shown as # and <id>, so one cause is one row; hover for a message as stored",
          cell: (g: ErrorGroup) => html`<code title=${g.message}>${g.pattern}</code>`,
        },
        {
          label: "e.g.",
          cell: (g: { episode: number }) =>
            html`<a href=${episodeHref(g.episode)}>episode ${g.episode}</a>`,
        },
      ]} />
    <p><a href=${href(`/runs/${run.id}`, { outcome: "error" })}>show the errored episodes</a></p>
  <//>`;
}

function Usage({ detail }: { detail: RunResponse }) {
  if (detail.usage.length === 0) return null;
  type U = RunResponse["usage"][number];
  return html`<${Section} title="Model calls and cost">
    <${Table} testId="usage" rows=${detail.usage} rowKey=${(u: U) => u.model} columns=${[
      { label: "model", cell: (u: U) => u.model },
      { label: "calls", numeric: true, cell: (u: U) => u.calls },
      { label: "cache hits", numeric: true, cell: (u: U) => u.cacheHits },
      { label: "failed", numeric: true, cell: (u: U) => u.failedCalls },
      { label: "retries", numeric: true, cell: (u: U) => u.retries },
      { label: "tokens in", numeric: true, cell: (u: U) => u.inputTokens },
      { label: "tokens out", numeric: true, cell: (u: U) => u.outputTokens },
      {
        label: "latency ms",
        numeric: true,
        cell: (u: U) => (u.meanLatencyMs === null ? "–" : Math.round(u.meanLatencyMs)),
      },
      { label: "cost", numeric: true, cell: (u: U) => cost(u.costUsd, u.unpriced) },
    ]} />
  <//>`;
}

const TASK_COLUMNS = (route: Route): PagedColumn<TaskRow>[] => [
  {
    label: "task",
    numeric: true,
    // A bundle holds the outcome filters, not one task's episodes.
    cell: (t) =>
      isBundle()
        ? t.task
        : html`<a href=${href(route.path, { ...route.query, task: t.task })} title="show this task's episodes" data-testid="task-link">${t.task}</a>`,
  },
  {
    label: "samples",
    title: "one cell per sample: green passed, red failed, amber errored, grey not run",
    cell: (t) => html`<${SampleCells} row=${t} />`,
  },
  {
    label: "pass",
    numeric: true,
    cell: (t) => html`<span class="outcome-success">${t.success}</span>`,
  },
  {
    label: "fail",
    numeric: true,
    cell: (t) => html`<span class="outcome-failure">${t.failure}</span>`,
  },
  {
    label: "error",
    numeric: true,
    cell: (t) => html`<span class=${t.error ? "outcome-error" : "muted"}>${t.error}</span>`,
  },
  { label: "not run", numeric: true, cell: (t) => html`<span class="muted">${t.notRun}</span>` },
  {
    label: "success",
    numeric: true,
    title: "passes / finished samples of the task (errors left out)",
    cell: (t) => rate(t.success + t.failure === 0 ? null : t.success / (t.success + t.failure)),
  },
  {
    label: "mean reward",
    numeric: true,
    title: "over finished samples",
    cell: (t) => rate(t.meanReward),
  },
];

const EPISODE_COLUMNS: PagedColumn<EpisodeRow>[] = [
  {
    label: "episode",
    cell: (e) => html`<a href=${episodeHref(e.id)} data-testid="episode-link">${e.id}</a>`,
  },
  { label: "task", numeric: true, sort: "task", cell: (e) => e.task },
  { label: "sample", numeric: true, cell: (e) => e.sample },
  { label: "seed", numeric: true, cell: (e) => e.seed },
  {
    label: "outcome",
    cell: (e) =>
      html`<span class=${`outcome-${e.outcome}`} data-testid="episode-outcome">${e.outcome}</span>`,
  },
  { label: "reward", numeric: true, sort: "reward", cell: (e) => rate(e.reward) },
  { label: "turns", numeric: true, sort: "turns", cell: (e) => e.turns },
  {
    label: "parse errors",
    numeric: true,
    title: "model replies without a usable action, fed back to the model",
    cell: (e) => (e.parseErrors ? html`<span class="outcome-error">${e.parseErrors}</span>` : 0),
  },
  { label: "end", cell: (e) => e.endReason },
  { label: "ms", numeric: true, sort: "duration", cell: (e) => Math.round(e.durationMs) },
  { label: "started", cell: (e) => when(e.startedAt) },
  {
    label: "error",
    cell: (e) => (e.error ? html`<code class="outcome-error">${e.error}</code>` : ""),
  },
];

function Episodes({ route, base }: { route: Route; base: string }) {
  const { outcome, task, sort, dir } = route.query;
  const bundle = isBundle();
  const query = { outcome, task, sort, dir };
  return html`<${Section} title="Episodes">
    <div class="toolbar filters" data-testid="episode-filters">
      ${FILTERS.map(
        (f) =>
          html`<button class=${f.outcome === outcome ? "active" : ""} data-filter=${f.outcome ?? "all"}
            aria-pressed=${f.outcome === outcome} onClick=${() => withQuery(route, { outcome: f.outcome })}>${f.label}</button>`,
      )}
      ${
        task !== undefined
          ? html`<span class="chip" data-testid="task-filter">task ${task} <a href=${href(route.path, { ...route.query, task: undefined })}>×</a></span>`
          : null
      }
    </div>
    <${PagedTable} path=${`${base}/episodes`} query=${query} columns=${EPISODE_COLUMNS}
      rowKey=${(e: EpisodeRow) => e.id} testId="episodes-table" empty="no episode matches this filter"
      sorting=${bundle ? undefined : routeSorting(route, DEFAULT_SORT)} />
  <//>`;
}

/** Cells per line, their size and the gap between them (CSS pixels). */
const CELL = { perLine: 40, size: 10, gap: 2 } as const;
const CELL_COLOURS: Record<string, string> = {
  success: "#1f8a4c",
  failure: "#c0392b",
  error: "#b7791f",
  not_run: "#d5d9e0",
  damaged: "#b7791f",
};

/**
 * A task's samples as cells on one canvas: a page of 50 tasks × 100 samples would otherwise be
 * 5,000 elements, most of the run page's first render. A click opens the sample's episode; the
 * outcomes are in `data-outcomes` for tests and tools.
 */
function SampleCells({ row }: { row: TaskRow }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const cells = row.cells;
  const step = CELL.size + CELL.gap;
  const columns = Math.min(cells.length, CELL.perLine);
  const lines = Math.ceil(cells.length / CELL.perLine);
  useEffect(() => {
    const element = canvas.current;
    const context = element?.getContext("2d");
    if (!element || !context) return;
    const scale = window.devicePixelRatio || 1;
    element.width = Math.max(1, columns * step * scale);
    element.height = Math.max(1, lines * step * scale);
    context.scale(scale, scale);
    cells.forEach((cell, i) => {
      context.fillStyle = CELL_COLOURS[cell.outcome] ?? "#d5d9e0";
      context.fillRect(
        (i % CELL.perLine) * step,
        Math.floor(i / CELL.perLine) * step,
        CELL.size,
        CELL.size,
      );
    });
  }, [cells, columns, lines, step]);
  const at = (event: MouseEvent): TaskSample | undefined => {
    const column = Math.floor(event.offsetX / step);
    const line = Math.floor(event.offsetY / step);
    return column < CELL.perLine ? cells[line * CELL.perLine + column] : undefined;
  };
  return html`<span class="cells" data-testid="task-cells" data-task=${row.task}
      data-outcomes=${cells.map((c) => c.outcome).join(",")}>
    <canvas ref=${canvas} style=${`width:${columns * step}px;height:${lines * step}px`}
      onClick=${(event: MouseEvent) => {
        const cell = at(event);
        if (cell) navigate(`/episodes/${cell.episode}`);
      }}
      onMouseMove=${(event: MouseEvent) => {
        const cell = at(event);
        (event.currentTarget as HTMLCanvasElement).title = cell
          ? `sample ${cell.sample}: ${cell.outcome}`
          : "";
      }}></canvas>${row.samples > cells.length ? html` <small class="muted">+${row.samples - cells.length}</small>` : null}</span>`;
}
