/**
 * Every stored search, newest first: its method, what it searches, how far it got, its final
 * choice and cost. Keyset pages: "more" adds the next page below the ones already shown.
 */
import { useState } from "preact/hooks";
import type { SearchesResponse, SearchSummary } from "../../../api/searches.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { href } from "../../router.js";
import { cost, ErrorLine, Loading, MoreButton, rate, Status, when } from "../../ui.js";

const KIND_WORDS: Record<SearchSummary["kind"], string> = {
  simulation: "simulated",
  agent: "agent folder",
  policy: "policy",
  unknown: "unknown",
};

function Row({ search }: { search: SearchSummary }) {
  const e = search.evaluations;
  const status = search.stopReason ? `${search.status} ${search.stopReason}` : search.status;
  return html`<tr data-testid="search-row" data-search=${search.id}>
    <td><a href=${href(`/searches/${search.id}`)}>${search.id}</a>${
      search.error ? html` <span class="error" title=${search.error}>unreadable</span>` : null
    }</td>
    <td><span class="badge method">${search.method}</span></td>
    <td>${search.subject}${
      search.kind === "simulation"
        ? ""
        : html` <span class="muted">· ${KIND_WORDS[search.kind]}</span>`
    }</td>
    <td><${Status} status=${status} /></td>
    <td class="num">${search.nodes}</td>
    <td class="num" title=${`${e.passes} passed, ${e.fails} failed, ${e.errors} errored, ${e.pending} in flight`}>
      ${search.t}${search.budget !== null ? `/${search.budget}` : ""}
    </td>
    <td class="num">${
      search.finalChoice === null
        ? html`<span class="muted">none yet</span>`
        : html`<a href=${href(`/searches/${search.id}`, { node: search.finalChoice })}>node ${search.finalChoice}</a> · ${rate(search.bestMean)}`
    }</td>
    <td class="num">${cost(search.costUsd, search.unpriced)}</td>
    <td>${when(search.updatedAt)}</td>
  </tr>`;
}

/** One page of the list (its rows), and "more" under the last one. */
function Chunk({
  cursor,
  last,
  onMore,
}: {
  cursor: string | undefined;
  last: boolean;
  onMore: (cursor: string) => void;
}) {
  const state = useApi<SearchesResponse>(apiPath("/searches", { cursor }));
  if (state.data === undefined) {
    return html`<tbody><tr><td colspan="9">${
      state.error ? html`<${ErrorLine} message=${state.error} />` : html`<${Loading} />`
    }</td></tr></tbody>`;
  }
  return html`<tbody>
    ${state.data.items.map((search) => html`<${Row} key=${search.id} search=${search} />`)}
    ${
      last && state.data.nextCursor !== null
        ? html`<tr><td colspan="9"><${MoreButton} next=${state.data.nextCursor} onMore=${onMore} /></td></tr>`
        : null
    }
  </tbody>`;
}

export function SearchList() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return html`<section data-testid="search-list">
    <h1>Searches</h1>
    <p class="muted">Self-improvement searches (clade evolve): HGM and the DGM, greedy and random
      baselines. t counts evaluations of agents other than the root, against the budget T; the final
      choice is the HGM paper's, the same for every method.</p>
    <table class="searches">
      <thead><tr>
        <th>search</th><th>method</th><th>what</th><th>status</th>
        <th class="num" title="agents made (the root not counted)">agents</th>
        <th class="num" title="evaluations of non-root agents dispatched / budget T">t/T</th>
        <th class="num" title="the final choice and its own mean score">final choice</th>
        <th class="num">cost</th><th>updated</th>
      </tr></thead>
      ${cursors.map(
        (cursor, i) =>
          html`<${Chunk} key=${cursor ?? ""} cursor=${cursor} last=${i === cursors.length - 1}
            onMore=${(next: string) => setCursors([...cursors, next])} />`,
      )}
    </table>
  </section>`;
}
