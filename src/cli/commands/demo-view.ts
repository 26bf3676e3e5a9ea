/**
 * The demo's look at `clade view`: the viewer's own API asked, in memory, what its pages would
 * show of the demo's store (the menu's counts and the runs list with their statuses and success
 * intervals), with the time it took; and how to open it in a browser.
 */
import type { MetaResponse } from "../../web/api/meta.js";
import type { RunListResponse } from "../../web/api/runs.js";
import { askJson, createViewApp } from "../../web/server.js";
import { StoreView } from "../../web/store-view.js";

export interface ViewDemo {
  capabilities: MetaResponse["capabilities"];
  runs: number;
  complete: number;
  /** Wall time of the two requests, store opening included. */
  ms: number;
}

export async function demoView(db: string): Promise<ViewDemo> {
  const started = performance.now();
  const view = new StoreView(db, { readonly: true });
  try {
    const app = createViewApp({ view, token: "demo", loopback: true });
    const meta = await askJson<MetaResponse>(app, "/meta");
    const list = await askJson<RunListResponse>(app, "/runs?limit=500");
    return {
      capabilities: meta.capabilities,
      runs: list.matched,
      complete: list.items.filter((run) => run.state === "complete").length,
      ms: Math.round(performance.now() - started),
    };
  } finally {
    view.close();
  }
}

export function viewText(demo: ViewDemo, db: string | undefined): string {
  const { capabilities: c } = demo;
  const others = [
    [c.searches, "search"],
    [c.training, "training run"],
    [c.qd, "CycleQD run"],
    [c.goals, "goal evaluation"],
    [c.analyses, "BLADE run"],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `, ${n} ${what}${n === 1 ? "" : "s"}`)
    .join("");
  const open = db
    ? `npx clade view --db ${db}`
    : "npx clade demo --db demo.db && npx clade view --db demo.db";
  return (
    `Viewer (clade view): its API read the demo's store in ${demo.ms} ms: ${demo.runs} runs ` +
    `(${demo.complete} complete)${others}.\n` +
    `Browse them at http://127.0.0.1:7575/: ${open}`
  );
}
