/**
 * The Search page: `#/searches` lists the stored searches, `#/searches/<id>` draws one's tree
 * (the engine's fold of its log, refetched as a running search writes), and `?node=<n>` opens
 * a node beside it: its patch, diagnosis, failed improvements and evaluations.
 */
import "./searches.css";
import type { SearchResponse } from "../../api/searches.js";
import { apiPath } from "../api.js";
import { html } from "../html.js";
import { useApi } from "../live.js";
import type { PageProps } from "../main.js";
import { href, type Route, withQuery } from "../router.js";
import { cost, Loaded, rate, Status, statusText, when } from "../ui.js";
import { SearchList } from "./searches/list.js";
import { NodePanel, nodeHref } from "./searches/node.js";
import { SearchTree, TreeLegend } from "./searches/tree.js";

/** Summed work time: seconds, minutes or hours, whichever reads best. */
function workTime(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

function Summary({ data }: { data: SearchResponse }) {
  const { summary: s, totals, finalChoice } = data;
  const e = s.evaluations;
  return html`<div class="cards" data-testid="search-summary">
    <div class="card"><small>method</small><strong>${s.method}</strong>
      <span class="muted">seed ${s.seed ?? "?"} · ${s.workers ?? "?"} worker(s)</span></div>
    <div class="card"><small>evaluations t/T</small><strong>${s.t}${s.budget !== null ? ` / ${s.budget}` : ""}</strong>
      <span class="muted">${e.passes} passed · ${e.fails} failed · ${e.errors} errored${e.pending ? ` · ${e.pending} in flight` : ""}</span></div>
    <div class="card"><small>agents made</small><strong>${s.nodes}</strong>
      <span class="muted">${totals.improvements.started} improvements, ${totals.improvements.failed} gave no child${
        totals.improvements.pending ? `, ${totals.improvements.pending} in flight` : ""
      }</span></div>
    <div class="card" data-testid="final-choice-card"><small>final choice</small>${
      finalChoice
        ? html`<strong><a href=${nodeHref(s.id, finalChoice.node)}>node ${finalChoice.node}</a></strong>
            <span class="muted" title=${finalChoice.rule}>mean ${rate(finalChoice.mean)} · ${finalChoice.epsilon} % quantile ${rate(finalChoice.lowerQuantile)}</span>`
        : html`<strong>none</strong><span class="muted">${data.noChoice}</span>`
    }</div>
    <div class="card"><small>cost</small><strong>${cost(totals.costUsd, totals.unpriced)}</strong>
      <span class="muted">${totals.inputTokens + totals.outputTokens} tokens · ${workTime(totals.workMs)} of work</span></div>
    <div class="card"><small>status</small><strong><${Status} status=${statusText(s)} /></strong>
      <span class="muted">updated ${when(s.updatedAt)}</span></div>
  </div>`;
}

function SearchView({ id, route }: { id: string; route: Route }) {
  const state = useApi<SearchResponse>(apiPath(`/searches/${encodeURIComponent(id)}`));
  const selected =
    route.query.node !== undefined && /^\d+$/.test(route.query.node)
      ? Number(route.query.node)
      : undefined;
  return html`<section class="search-page" data-testid="search-page">
    <p class="crumbs"><a href=${href("/searches")}>Searches</a> / ${id}</p>
    <${Loaded} state=${state}>${(data: SearchResponse) => html`
      <h1>${id} <span class="muted subject">${data.summary.subject}</span></h1>
      <${Summary} data=${data} />
      ${
        data.finalChoice
          ? html`<p class="muted rule" data-testid="final-choice-rule">Final choice: ${data.finalChoice.rule}. Path: ${data.finalChoice.path.join(" › ")}.</p>`
          : ""
      }
      <${TreeLegend} />
      <div class=${selected === undefined ? "search-body" : "search-body with-panel"}>
        <${SearchTree} nodes=${data.nodes} selected=${selected}
          onSelect=${(node: number) => withQuery(route, { node })} />
        ${
          selected === undefined
            ? html`<p class="muted hint">Click a node for its patch, diagnosis and evaluations.</p>`
            : html`<${NodePanel} key=${selected} search=${id} node=${selected}
                onClose=${() => withQuery(route, { node: undefined })} />`
        }
      </div>`}<//>
  </section>`;
}

export function SearchesPage({ route }: PageProps) {
  // Everything after "searches/" is the id (an id may hold a "/").
  const id = route.segments.slice(1).join("/");
  return id === ""
    ? html`<${SearchList} />`
    : html`<${SearchView} key=${id} id=${id} route=${route} />`;
}
