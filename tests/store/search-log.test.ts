/**
 * Searches in the store: the event log round-trips every event exactly, a reopened log continues
 * its numbering, a search id keeps its configuration, a damaged row is reported with its
 * position, and searches share a file with runs.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/database.js";
import { RunStore } from "../../src/store/run-store.js";
import { SearchConflictError, type SearchEvent, SearchStore } from "../../src/store/search-log.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-search-store-"));
});

const usage = { inputTokens: 12, outputTokens: 3, costUsd: 0.25 };
const EVENTS: SearchEvent[] = [
  { type: "evaluation_dispatched", work: 0, node: 0, task: 7, attempt: 1 },
  {
    type: "evaluation_finished",
    work: 0,
    node: 0,
    task: 7,
    outcome: "pass",
    reason: null,
    usage,
    durationMs: 12.5,
  },
  { type: "improvement_started", work: 1, parent: 0 },
  { type: "improvement_failed", work: 1, parent: 0, reason: "empty patch", usage, durationMs: 30 },
  { type: "improvement_started", work: 2, parent: 0 },
  {
    type: "improvement_finished",
    work: 2,
    parent: 0,
    node: 1,
    data: { type: "stone", p: 0.3, nested: [1, "two", null] },
    usage,
    durationMs: 40,
  },
  { type: "evaluation_dispatched", work: 3, node: 1, task: 7, attempt: 1 },
  {
    type: "evaluation_finished",
    work: 3,
    node: 1,
    task: 7,
    outcome: "error",
    reason: "timeout",
    usage,
    durationMs: 1,
  },
  { type: "evaluation_dispatched", work: 4, node: 1, task: 7, attempt: 2 },
];

describe("the search log", () => {
  it("round-trips events and continues after a reopen", () => {
    const path = join(dir, "s.db");
    const store = SearchStore.open(path);
    const { resumed, log } = store.beginSearch("s1", { method: "hgm", budget: 800 });
    expect(resumed).toBe(false);
    for (const event of EVENTS.slice(0, 5)) log.append(event);
    store.close();

    const again = SearchStore.open(path);
    const second = again.beginSearch("s1", { method: "hgm", budget: 800 });
    expect(second.resumed).toBe(true);
    expect(second.log.read()).toEqual(EVENTS.slice(0, 5));
    for (const event of EVENTS.slice(5)) second.log.append(event);
    expect(again.events("s1")).toEqual(EVENTS);
    again.setStatus("s1", "stopped", "signal");
    expect(again.getSearch("s1")).toMatchObject({ status: "stopped", stopReason: "signal" });
    expect(again.listSearches().map((s) => s.id)).toEqual(["s1"]);
    again.close();
  });

  it("refuses another configuration under the same id", () => {
    const store = SearchStore.open(join(dir, "c.db"));
    store.beginSearch("s1", { method: "hgm", budget: 800, seed: 1 });
    expect(() => store.beginSearch("s1", { method: "dgm", budget: 800, seed: 2 })).toThrow(
      SearchConflictError,
    );
    expect(() => store.beginSearch("s1", { method: "dgm", budget: 800, seed: 2 })).toThrow(
      /method, seed/,
    );
    store.close();
  });

  it("reports a damaged row with its position", () => {
    const store = SearchStore.open(join(dir, "d.db"));
    const { log } = store.beginSearch("s1", {});
    for (const event of EVENTS.slice(0, 3)) log.append(event);
    store.db.prepare("UPDATE search_events SET outcome = NULL WHERE seq = 1").run();
    expect(() => store.events("s1")).toThrow(StoreError);
    expect(() => store.events("s1")).toThrow(/event 1 is damaged/);
    store.close();
  });

  it("shares a store with runs", () => {
    const path = join(dir, "both.db");
    const runs = RunStore.open(path);
    runs.startRun({ id: "r1", env: "maze", envVersion: "1", agent: "random", config: {} });
    const searches = new SearchStore(runs.db);
    searches.beginSearch("s1", { method: "hgm" }).log.append(EVENTS[0] as SearchEvent);
    expect(runs.listRuns().map((r) => r.id)).toEqual(["r1"]);
    expect(searches.events("s1")).toHaveLength(1);
    runs.close();
  });
});
