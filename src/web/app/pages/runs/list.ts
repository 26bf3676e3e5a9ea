/**
 * The runs list: filter (text, env, agent, status), sort by a column header, each run's status,
 * success rate with its interval, errors apart from failures, cost; tick two runs to compare
 * them. Filters and sort live in the page's address (#/runs?status=killed&sort=success).
 */
import { useState } from "preact/hooks";
import type { RunListItem, RunListResponse } from "../../../api/runs.js";
import { apiPath, isBundle } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { type PagedColumn, PagedTable, routeSorting } from "../../paged.js";
import { href, navigate, type Route, withQuery } from "../../router.js";
import { cost, interval, rate, Status, when } from "../../ui.js";

const STATES = ["running", "complete", "interrupted", "killed"] as const;
const DEFAULT_SORT = { key: "created", dir: "desc" } as const;

export function RunList({ route }: { route: Route }) {
  const { q, env, agent, status } = route.query;
  const bundle = isBundle();
  // The unfiltered list gives the filter's choices (and is what a bundle holds).
  const choices = useApi<RunListResponse>(apiPath("/runs"));
  const [picked, setPicked] = useState<string[]>([]);

  const query = { q, env, agent, status, sort: route.query.sort, dir: route.query.dir };

  const toggle = (id: string) =>
    setPicked((list) =>
      list.includes(id) ? list.filter((x) => x !== id) : [...list, id].slice(-2),
    );

  const columns: PagedColumn<RunListItem>[] = [
    {
      label: "",
      title: "tick two runs to compare them (the first ticked is A)",
      cell: (r) =>
        html`<input type="checkbox" data-testid="pick-run" data-run=${r.id} checked=${picked.includes(r.id)}
          onChange=${() => toggle(r.id)} aria-label=${`pick ${r.id}`} />`,
    },
    {
      label: "run",
      cell: (r) => html`<a href=${href(`/runs/${r.id}`)} data-testid="run-link">${r.id}</a>`,
    },
    { label: "env", cell: (r) => `${r.env} v${r.envVersion}` },
    { label: "agent", cell: (r) => r.agent },
    {
      label: "status",
      title:
        "killed (resumable): still marked running, but its process is gone; the same command resumes it",
      cell: (r) => html`<${Status} status=${r.status} />`,
    },
    {
      label: "episodes",
      sort: "episodes",
      numeric: true,
      title: "episodes stored, of every outcome",
      cell: (r) => r.counts.episodes,
    },
    {
      label: "success rate",
      sort: "success",
      numeric: true,
      title:
        "successes / finished episodes (errors and episodes not run left out), with its 95% bootstrap interval over tasks",
      cell: (r) =>
        html`<span data-testid="success-rate">${rate(r.successRate.value)}</span> <small class="muted">${interval(r.successRate.interval)}</small>`,
    },
    {
      label: "pass / fail",
      numeric: true,
      title: "finished episodes: successes / failures",
      cell: (r) =>
        html`<span class="outcome-success">${r.counts.success}</span> / <span class="outcome-failure">${r.counts.failure}</span>`,
    },
    {
      label: "errors",
      numeric: true,
      title:
        "episodes that ended in an exception, timeout or provider error: not failures, in no denominator",
      cell: (r) =>
        html`<span class=${r.counts.error > 0 ? "outcome-error" : "muted"} data-testid="error-count">${r.counts.error}</span>`,
    },
    {
      label: "not run",
      numeric: true,
      title: "planned but never started (a budget ran out); a resume runs them",
      cell: (r) => html`<span class="muted">${r.counts.notRun}</span>`,
    },
    { label: "cost", numeric: true, cell: (r) => cost(r.cost.costUsd, r.cost.unpriced) },
    { label: "created", sort: "created", cell: (r) => when(r.createdAt) },
    { label: "updated", sort: "updated", cell: (r) => when(r.updatedAt) },
  ];

  const options = (values: readonly string[] | undefined, current: string | undefined) =>
    [...new Set([...(values ?? []), ...(current ? [current] : [])])].map(
      (v) => html`<option value=${v} selected=${v === current}>${v}</option>`,
    );

  return html`<section data-testid="runs-page">
    <h1>Runs</h1>
    ${
      bundle
        ? null
        : html`<form class="toolbar" data-testid="runs-filters" onSubmit=${(e: Event) => e.preventDefault()}>
      <input type="search" placeholder="search id, env, agent, config" value=${q ?? ""} data-testid="filter-q"
        onChange=${(e: Event) => withQuery(route, { q: (e.target as HTMLInputElement).value.trim() })} />
      <select data-testid="filter-env" onChange=${(e: Event) => withQuery(route, { env: (e.target as HTMLSelectElement).value })}>
        <option value="">any env</option>${options(choices.data?.envs, env)}
      </select>
      <select data-testid="filter-agent" onChange=${(e: Event) => withQuery(route, { agent: (e.target as HTMLSelectElement).value })}>
        <option value="">any agent</option>${options(choices.data?.agents, agent)}
      </select>
      <select data-testid="filter-status" onChange=${(e: Event) => withQuery(route, { status: (e.target as HTMLSelectElement).value })}>
        <option value="">any status</option>${options(STATES, status)}
      </select>
      ${q || env || agent || status ? html`<a href=${href("/runs", { sort: route.query.sort, dir: route.query.dir })}>clear</a>` : null}
    </form>`
    }
    <div class="toolbar">
      <button data-testid="compare-picked" disabled=${picked.length !== 2}
        onClick=${() => navigate("/compare", { a: picked[0], b: picked[1] })}>compare ${picked.length}/2 ticked</button>
      <span class="muted">${picked.length === 2 ? `A = ${picked[0]}, B = ${picked[1]}` : "tick two runs to compare them task by task"}</span>
    </div>
    <${PagedTable} path="/runs" query=${query} columns=${columns}
      rowKey=${(r: RunListItem) => r.id} testId="runs-table" empty="no run matches these filters"
      sorting=${bundle ? undefined : routeSorting(route, DEFAULT_SORT)} />
  </section>`;
}
