import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EpisodeRecord } from "../../src/rollout/episode.js";
import { StoreError } from "../../src/store/database.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunConflictError, RunStore } from "../../src/store/run-store.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-store-"));
});
afterEach(() => {});

const header = {
  id: "r1",
  env: "maze",
  envVersion: "1.0.0",
  agent: "random",
  config: { tasks: "0-9", samples: 2, seed: 0 },
};

function record(
  taskIndex: number,
  sampleIndex: number,
  outcome: EpisodeRecord["outcome"],
): EpisodeRecord {
  return {
    taskIndex,
    sampleIndex,
    seed: 0,
    outcome,
    reward: outcome === "success" ? 1 : 0,
    endReason: outcome === "error" ? "agent_error" : "done",
    ...(outcome === "error" ? { error: "Error: boom" } : {}),
    initialObservation: { text: "start", availableActions: ["a", "b"] },
    steps: [
      {
        turn: 0,
        action: "a",
        message: "Thought: x\n\nAction: a",
        observation: { text: "o1" },
        reward: 0,
        done: false,
        elapsedMs: 1,
        info: {},
      },
      {
        turn: 1,
        action: "b",
        message: "b",
        observation: { text: "o2", availableActions: ["c"] },
        reward: 1,
        done: true,
        elapsedMs: 2,
        info: { success: true },
      },
    ],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 3,
    parseErrors: 0,
  };
}

describe("RunStore", () => {
  it("creates a WAL database with the current schema version", () => {
    const path = join(dir, "sub", "clade.db");
    const store = RunStore.open(path);
    expect(store.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(store.db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    store.close();
    expect(statSync(path).size).toBeGreaterThan(0);
  });

  it("round-trips episodes and steps, including messages and available actions", () => {
    const store = RunStore.open(join(dir, "a.db"));
    store.startRun(header);
    store.saveEpisodes("r1", [record(3, 1, "success")]);
    const [episode] = store.episodes("r1");
    expect(episode).toMatchObject({
      taskIndex: 3,
      sampleIndex: 1,
      outcome: "success",
      reward: 1,
      turns: 2,
    });
    expect(episode?.initialObservation).toEqual({ text: "start", availableActions: ["a", "b"] });
    const steps = store.steps(episode?.id as number);
    expect(steps).toEqual(record(3, 1, "success").steps);
    store.close();
  });

  it("treats errored episodes as unfinished and replaces them when redone", () => {
    const store = RunStore.open(join(dir, "b.db"));
    store.startRun(header);
    store.saveEpisodes("r1", [record(0, 0, "error")]);
    store.saveEpisodes("r1", [record(0, 1, "failure")]);
    expect([...store.finishedEpisodeKeys("r1")]).toEqual(["0:1"]);
    store.saveEpisodes("r1", [record(0, 0, "success")]);
    expect(store.episodes("r1").map((e) => e.outcome)).toEqual(["success", "failure"]);
    const trajectories = store.db.prepare("SELECT COUNT(*) AS n FROM trajectories").get() as {
      n: number;
    };
    expect(trajectories.n).toBe(2);
    const [summary] = store.listRuns();
    expect(summary).toMatchObject({
      id: "r1",
      episodes: 2,
      successes: 1,
      failures: 1,
      errors: 0,
      steps: 4,
    });
    store.close();
  });

  it("resumes a run with the same config and refuses a different one", () => {
    const store = RunStore.open(join(dir, "c.db"));
    expect(store.startRun(header)).toEqual({ resumed: false });
    expect(store.startRun(header)).toEqual({ resumed: true });
    expect(() => store.startRun({ ...header, config: { ...header.config, samples: 4 } })).toThrow(
      RunConflictError,
    );
    expect(() => store.startRun({ ...header, agent: "reference" })).toThrow(/agent/);
    store.close();
  });

  it("refuses a file that is not SQLite, without changing it", () => {
    const path = join(dir, "notes.db");
    writeFileSync(path, "these are my notes, not a database\n".repeat(200));
    const before = readFileSync(path);
    expect(() => RunStore.open(path)).toThrow(StoreError);
    expect(() => RunStore.open(path)).toThrow(/not a SQLite database/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("refuses another application's SQLite database", () => {
    const path = join(dir, "other.db");
    const other = new Database(path);
    other.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
    other.close();
    expect(() => RunStore.open(path)).toThrow(/not a clade store/);
    const check = new Database(path);
    const tables = check.prepare("SELECT name FROM sqlite_master WHERE type='table'").all();
    check.close();
    expect(tables).toEqual([{ name: "customers" }]);
  });

  it("refuses a store written by a newer schema", () => {
    const path = join(dir, "new.db");
    RunStore.open(path).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    raw.close();
    expect(() => RunStore.open(path)).toThrow(/newer clade/);
  });

  it("leaves no -wal or -shm files behind after reading", () => {
    const path = join(dir, "r.db");
    const store = RunStore.open(path);
    store.startRun(header);
    store.saveEpisodes("r1", [record(0, 0, "success")]);
    store.close();
    const reader = RunStore.open(path, { readonly: true });
    expect(reader.listRuns()).toHaveLength(1);
    reader.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(`${path}-shm`)).toBe(false);
  });

  it("refuses an empty SQLite file that another program versioned", () => {
    const path = join(dir, "versioned.db");
    const raw = new Database(path);
    raw.pragma("user_version = 5");
    raw.close();
    expect(() => RunStore.open(path)).toThrow(/not a clade store/);
    const check = new Database(path);
    expect(check.pragma("user_version", { simple: true })).toBe(5);
    check.close();
  });

  it("opens read-only without creating a missing file", () => {
    const path = join(dir, "missing.db");
    expect(() => RunStore.open(path, { readonly: true })).toThrow(/no store/);
    expect(() => statSync(path)).toThrow();
  });
});
