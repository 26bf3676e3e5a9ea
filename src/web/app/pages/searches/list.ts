/**
 * Every stored search, newest first: its method, what it searches, how far it got, its final
 * choice and cost. Keyset pages: "more" adds the next page below the ones already shown.
 */
import type { SearchSummary } from "../../../api/searches.js";
import { html } from "../../html.js";
import { type PagedColumn, PagedTable } from "../../paged.js";
import { href } from "../../router.js";
import { cost, rate, Status, statusText, when } from "../../ui.js";

const KIND_WORDS: Record<SearchSummary["kind"], string> = {
  simulation: "simulated",
  agent: "agent folder",
  policy: "policy",
  unknown: "unknown",
};

const COLUMNS: PagedColumn<SearchSummary>[] = [
  {
    label: "search",
    cell: (search) =>
      html`<a href=${href(`/searches/${search.id}`)}>${search.id}</a>${
        search.error ? html` <span class="error" title=${search.error}>unreadable</span>` : null
      }`,
  },
  { label: "method", cell: (search) => html`<span class="badge method">${search.method}</span>` },
  {
    label: "what",
    cell: (search) =>
      html`${search.subject}${
        search.kind === "simulation"
          ? ""
          : html` <span class="muted">· ${KIND_WORDS[search.kind]}</span>`
      }`,
  },
  {
    label: "status",
    cell: (search) => html`<${Status} status=${statusText(search)} />`,
  },
  {
    label: "agents",
    title: "agents made (the root not counted)",
    numeric: true,
    cell: (search) => search.nodes,
  },
  {
    label: "t/T",
    title: "evaluations of non-root agents dispatched / budget T",
    numeric: true,
    cell: (search) => {
      const e = search.evaluations;
      return html`<span title=${`${e.passes} passed, ${e.fails} failed, ${e.errors} errored, ${e.pending} in flight`}>${search.t}${search.budget !== null ? `/${search.budget}` : ""}</span>`;
    },
  },
  {
    label: "final choice",
    title: "the final choice and its own mean score",
    numeric: true,
    cell: (search) =>
      search.finalChoice === null
        ? html`<span class="muted">none yet</span>`
        : html`<a href=${href(`/searches/${search.id}`, { node: search.finalChoice })}>node ${search.finalChoice}</a> · ${rate(search.bestMean)}`,
  },
  { label: "cost", numeric: true, cell: (search) => cost(search.costUsd, search.unpriced) },
  { label: "updated", cell: (search) => when(search.updatedAt) },
];

export function SearchList() {
  return html`<section data-testid="search-list">
    <h1>Searches</h1>
    <p class="muted">Self-improvement searches (clade evolve): HGM and the DGM, greedy and random
      baselines. t counts evaluations of agents other than the root, against the budget T; the final
      choice is the HGM paper's, the same for every method.</p>
    <${PagedTable}
      path="/searches"
      columns=${COLUMNS}
      rowKey=${(search: SearchSummary) => search.id}
      rowAttrs=${(search: SearchSummary) => ({ "data-testid": "search-row", "data-search": search.id })}
      testId="searches"
      tableClass="searches"
      empty="no searches in this store (clade evolve)"
    />
  </section>`;
}
