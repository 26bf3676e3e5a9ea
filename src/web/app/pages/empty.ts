/** An empty store (or none yet): how to make something to look at. */
import type { MetaResponse } from "../../api/meta.js";
import { html } from "../html.js";

export function EmptyStore({ meta }: { meta: MetaResponse }) {
  return html`<section class="empty" data-testid="empty-store">
    <h1>Nothing stored yet</h1>
    <p>${meta.store.exists ? "The store" : "There is no store"} at <code>${meta.store.path}</code>${
      meta.store.exists ? " holds no runs yet." : " yet."
    } This page fills in by itself once something is stored.</p>
    <p>Make a run (offline, no key needed):</p>
    <pre>npx clade demo
npx clade eval --env maze --agent reference --tasks 0-19 --db ${meta.store.path}</pre>
    <p>Searches (<code>clade evolve</code>), training (<code>clade train</code>), quality-diversity
    (<code>clade qd</code>), goal evaluations (<code>clade goals</code>) and BLADE analyses
    (<code>clade eval --env blade</code>) each get their page here once stored.</p>
  </section>`;
}
