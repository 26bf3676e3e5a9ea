/**
 * Searches in the store: the event log round-trips every event exactly, a reopened log continues
 * its numbering, a search id keeps its configuration, a damaged row is reported with its
 * position, and searches share a file with runs. Work whose models had no price stays unpriced,
 * also in a store written before the log recorded it (schema 6).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/database.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
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

describe("unpriced work in the search log", () => {
  const unpriced = { inputTokens: 40, outputTokens: 8, costUsd: 0, unpriced: true as const };
  const partly = { inputTokens: 40, outputTokens: 8, costUsd: 0.5, unpriced: true as const };

  it("round-trips the flag; priced work has none", () => {
    const path = join(dir, "u.db");
    const store = SearchStore.open(path);
    const { log } = store.beginSearch("s1", { kind: "agent", method: "hgm" });
    const events: SearchEvent[] = [
      { type: "evaluation_dispatched", work: 0, node: 0, task: 0, attempt: 1 },
      {
        type: "evaluation_finished",
        work: 0,
        node: 0,
        task: 0,
        outcome: "fail",
        reason: null,
        usage: unpriced,
        durationMs: 3,
      },
      { type: "improvement_started", work: 1, parent: 0 },
      {
        type: "improvement_failed",
        work: 1,
        parent: 0,
        reason: "empty patch",
        usage: partly,
        durationMs: 5,
      },
      { type: "improvement_started", work: 2, parent: 0 },
      {
        type: "improvement_finished",
        work: 2,
        parent: 0,
        node: 1,
        data: { patch: "" },
        usage,
        durationMs: 7,
      },
    ];
    for (const event of events) log.append(event);
    store.close();
    const again = SearchStore.open(path, { readonly: true });
    const read = again.events("s1");
    again.close();
    expect(read).toEqual(events);
    expect((read[5] as { usage: object }).usage).not.toHaveProperty("unpriced");
    const raw = new Database(path, { readonly: true });
    const flags = raw.prepare("SELECT unpriced FROM search_events ORDER BY seq").pluck().all();
    raw.close();
    // 1 unpriced, 0 priced, NULL where the event has no usage.
    expect(flags).toEqual([null, 1, null, 1, null, 0]);
  });

  it("upgrades a store from before the flag; an old agent search's tokens at $0 read as unpriced", () => {
    const path = join(dir, "old.db");
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    for (const migration of MIGRATIONS.slice(0, 6)) raw.exec(migration);
    raw.pragma("user_version = 6");
    const insertSearch = raw.prepare(
      `INSERT INTO searches (id, config, status, created_at, updated_at)
       VALUES (?, ?, 'complete', 'x', 'x')`,
    );
    insertSearch.run("agents", JSON.stringify({ kind: "agent", method: "hgm" }));
    insertSearch.run("sim", JSON.stringify({ kind: "simulation", method: "hgm" }));
    const insertEvent = raw.prepare(
      `INSERT INTO search_events (search_id, seq, type, work, node, task, attempt, outcome,
         input_tokens, output_tokens, cost_usd, duration_ms, at)
       VALUES (?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?, 'x')`,
    );
    for (const id of ["agents", "sim"]) {
      // A local model's work (tokens, $0), a priced one's, and work that used no model.
      insertEvent.run(id, 0, "evaluation_dispatched", 0, 1, null, null, null, null, null);
      insertEvent.run(id, 1, "evaluation_finished", 0, null, "error", 40, 8, 0, 1);
      insertEvent.run(id, 2, "evaluation_dispatched", 1, 2, null, null, null, null, null);
      insertEvent.run(id, 3, "evaluation_finished", 1, null, "error", 40, 8, 0.5, 1);
      insertEvent.run(id, 4, "evaluation_dispatched", 2, 3, null, null, null, null, null);
      insertEvent.run(id, 5, "evaluation_finished", 2, null, "pass", 0, 0, 0, 1);
    }
    raw.close();

    // A reader sees the upgrade (in a private copy); a writer upgrades the file.
    const usages = (store: SearchStore, id: string) =>
      store.events(id).flatMap((e) => ("usage" in e ? [e.usage] : []));
    const reader = SearchStore.open(path, { readonly: true });
    expect(usages(reader, "agents").map((u) => u.unpriced)).toEqual([true, undefined, undefined]);
    reader.close();
    const store = SearchStore.open(path);
    expect(store.db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    expect(usages(store, "agents")).toEqual([
      { inputTokens: 40, outputTokens: 8, costUsd: 0, unpriced: true },
      { inputTokens: 40, outputTokens: 8, costUsd: 0.5 },
      { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    ]);
    // A simulation's prices are always set: tokens at $0 are priced.
    expect(usages(store, "sim").every((u) => u.unpriced === undefined)).toBe(true);
    // New work of the old search records its flag, which wins over the guess.
    const { log } = store.beginSearch("agents", { kind: "agent", method: "hgm" });
    log.append({ type: "evaluation_dispatched", work: 3, node: 0, task: 0, attempt: 4 });
    log.append({
      type: "evaluation_finished",
      work: 3,
      node: 0,
      task: 0,
      outcome: "fail",
      reason: null,
      usage: { inputTokens: 40, outputTokens: 8, costUsd: 0 },
      durationMs: 1,
    });
    store.close();
    const reopened = SearchStore.open(path, { readonly: true });
    expect(usages(reopened, "agents").map((u) => u.unpriced)).toEqual([
      true,
      undefined,
      undefined,
      undefined,
    ]);
    reopened.close();
  });
});
