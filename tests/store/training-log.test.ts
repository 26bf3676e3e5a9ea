/**
 * Training runs in the store (migration 8): steps round-trip with their metrics (no value reads
 * as null), a resumed run that writes step k again replaces it, a run id keeps its
 * configuration, checkpoints are recorded and rewound, training runs share a file with runs and
 * searches, and a store from before the migration is read through an upgraded copy and upgraded
 * by a writer, its runs and searches intact.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/database.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunStore } from "../../src/store/run-store.js";
import { SearchStore } from "../../src/store/search-log.js";
import {
  TrainingConflictError,
  type TrainingStepMetrics,
  TrainingStore,
} from "../../src/store/training-log.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-training-store-"));
});

const CONFIG = { env: "maze", estimator: "grpo", seed: 1, steps: 100, lr: 0.001 };

function metrics(step: number, more: Partial<TrainingStepMetrics> = {}): TrainingStepMetrics {
  return {
    step,
    meanReward: step / 10,
    successRate: step / 20,
    horizon: 10,
    entropy: 1.2 - step / 100,
    kl: 0.01,
    clipFraction: 0.1,
    gradNorm: 0.5,
    envSteps: 64 * (step + 1),
    seconds: 1.5 * (step + 1),
    errors: 0,
    ...more,
  };
}

const withoutAt = <T extends { at: string }>(rows: T[]) => rows.map(({ at: _, ...row }) => row);

describe("the training store", () => {
  it("round-trips steps and status, and continues after a reopen", () => {
    const path = join(dir, "t.db");
    const store = TrainingStore.open(path);
    expect(store.beginRun("t1", CONFIG)).toEqual({ resumed: false, lastStep: -1 });
    for (const step of [0, 1, 2]) store.appendStep("t1", metrics(step));
    store.close();

    const again = TrainingStore.open(path);
    expect(again.beginRun("t1", { ...CONFIG })).toEqual({ resumed: true, lastStep: 2 });
    again.appendStep("t1", metrics(3));
    expect(withoutAt(again.steps("t1"))).toEqual([0, 1, 2, 3].map((s) => metrics(s)));
    expect(again.steps("t1").every((s) => !Number.isNaN(Date.parse(s.at)))).toBe(true);
    again.setStatus("t1", "stopped", "signal");
    expect(again.getRun("t1")).toMatchObject({
      id: "t1",
      config: CONFIG,
      status: "stopped",
      stopReason: "signal",
    });
    again.beginRun("t2", {});
    again.setStatus("t2", "complete");
    expect(again.listRuns().map((r) => [r.id, r.status])).toEqual([
      ["t1", "stopped"],
      ["t2", "complete"],
    ]);
    again.close();
  });

  it("keeps each metric in a column of its own, no value as NULL, others in extra", () => {
    const store = TrainingStore.open(join(dir, "c.db"));
    store.beginRun("t1", CONFIG);
    // A trainer's metrics may have more fields than the columns.
    const more = {
      ...metrics(0, { successRate: Number.NaN, kl: null }),
      valueLoss: 0.25,
      note: "warm-up",
    };
    store.appendStep("t1", more);
    store.appendStep("t1", { step: 1, meanReward: 0.5 });
    const [first, second] = store.steps("t1");
    expect(first).toMatchObject({ successRate: null, kl: null, meanReward: 0 });
    expect(first?.extra).toEqual({ valueLoss: 0.25, note: "warm-up" });
    expect(second).toMatchObject({ step: 1, meanReward: 0.5, entropy: null, errors: null });
    expect(second).not.toHaveProperty("extra");
    // A curve is plain SQL.
    const curve = store.db
      .prepare(
        "SELECT step, mean_reward, env_steps FROM training_steps WHERE run_id = ? ORDER BY step",
      )
      .all("t1");
    expect(curve).toEqual([
      { step: 0, mean_reward: 0, env_steps: 64 },
      { step: 1, mean_reward: 0.5, env_steps: null },
    ]);
    expect(() => store.appendStep("t1", metrics(-1))).toThrow(/training step -1 is not a count/);
    expect(() => store.appendStep("t1", { step: 2, kl: "0.1" as unknown as number })).toThrow(
      /metric "kl" is not a number/,
    );
    expect(() => store.appendStep("nope", metrics(0))).toThrow(/no training run "nope"/);
    store.close();
  });

  it("replaces a step written again by a resumed run", () => {
    const store = TrainingStore.open(join(dir, "r.db"));
    store.beginRun("t1", CONFIG);
    for (const step of [0, 1, 2]) store.appendStep("t1", metrics(step));
    store.appendStep("t1", metrics(1, { meanReward: 0.9, seconds: 99 }));
    const steps = withoutAt(store.steps("t1"));
    expect(steps).toHaveLength(3);
    expect(steps[1]).toEqual(metrics(1, { meanReward: 0.9, seconds: 99 }));
    expect(steps[2]).toEqual(metrics(2));
    store.close();
  });

  it("refuses another configuration under the same id, in one line", () => {
    const store = TrainingStore.open(join(dir, "x.db"));
    store.beginRun("t1", CONFIG);
    const other = { ...CONFIG, estimator: "rloo", seed: 2 };
    expect(() => store.beginRun("t1", other)).toThrow(TrainingConflictError);
    expect(() => store.beginRun("t1", other)).toThrow(
      /^training run "t1" already exists with a different configuration \(estimator, seed\); choose another --run-id$/,
    );
    expect(() => store.beginRun("t1", { ...CONFIG, extra: true })).toThrow(/\(extra\)/);
    store.close();
  });

  it("records checkpoints; rewind forgets what came after a step", () => {
    const store = TrainingStore.open(join(dir, "k.db"));
    store.beginRun("t1", CONFIG);
    const sha = (c: string) => c.repeat(64);
    for (const step of [0, 1, 2, 3]) store.appendStep("t1", metrics(step));
    store.addCheckpoint("t1", { step: 2, path: "/ckpt/2.safetensors", sha256: sha("a") });
    store.addCheckpoint("t1", { step: 3, path: "/ckpt/3.safetensors", sha256: sha("b") });
    store.addCheckpoint("t1", { step: 3, path: "/ckpt/3b.safetensors", sha256: sha("c") });
    expect(store.checkpoints("t1")).toEqual([
      { step: 2, path: "/ckpt/2.safetensors", sha256: sha("a") },
      { step: 3, path: "/ckpt/3b.safetensors", sha256: sha("c") },
    ]);
    expect(store.latestCheckpoint("t1")?.step).toBe(3);
    expect(() => store.addCheckpoint("t1", { step: 4, path: "p", sha256: "zz" })).toThrow(
      /not 64 hex digits/,
    );
    store.rewind("t1", 2);
    expect(store.steps("t1").map((s) => s.step)).toEqual([0, 1, 2]);
    expect(store.latestCheckpoint("t1")?.step).toBe(2);
    expect(store.beginRun("t1", CONFIG).lastStep).toBe(2);
    store.close();
  });

  it("shares a store with runs and searches", () => {
    const path = join(dir, "all.db");
    const runs = RunStore.open(path);
    runs.startRun({ id: "r1", env: "maze", envVersion: "1", agent: "random", config: {} });
    new SearchStore(runs.db).beginSearch("s1", { method: "hgm" });
    const training = new TrainingStore(runs.db);
    training.beginRun("t1", CONFIG);
    training.appendStep("t1", metrics(0));
    expect(runs.listRuns().map((r) => r.id)).toEqual(["r1"]);
    expect(training.listRuns().map((r) => r.id)).toEqual(["t1"]);
    runs.close();
  });
});

describe("a store from before training runs (schema 7)", () => {
  function oldStore(path: string): void {
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    for (const migration of MIGRATIONS.slice(0, 7)) raw.exec(migration);
    raw.pragma("user_version = 7");
    raw
      .prepare(
        `INSERT INTO runs (id, env, env_version, agent, config, status, created_at, updated_at)
         VALUES ('r1', 'maze', '1.1.0', 'random', '{}', 'complete', 'x', 'x')`,
      )
      .run();
    raw
      .prepare(
        `INSERT INTO searches (id, config, status, created_at, updated_at)
         VALUES ('s1', '{"kind":"simulation","method":"hgm"}', 'complete', 'x', 'x')`,
      )
      .run();
    raw.close();
  }

  it("is read through an upgraded copy, the file left as it is", () => {
    const path = join(dir, "old.db");
    oldStore(path);
    const before = readFileSync(path);
    const reader = TrainingStore.open(path, { readonly: true });
    expect(reader.listRuns()).toEqual([]);
    expect(reader.getRun("t1")).toBeUndefined();
    expect(reader.steps("t1")).toEqual([]);
    reader.close();
    expect(readFileSync(path).equals(before)).toBe(true);
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("user_version", { simple: true })).toBe(7);
    raw.close();
  });

  it("is upgraded by a writer, its runs and searches intact", () => {
    const path = join(dir, "old.db");
    oldStore(path);
    const store = TrainingStore.open(path);
    expect(store.db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    store.beginRun("t1", CONFIG);
    store.appendStep("t1", metrics(0));
    store.close();
    const runs = RunStore.open(path, { readonly: true });
    expect(runs.listRuns().map((r) => r.id)).toEqual(["r1"]);
    expect(new SearchStore(runs.db).getSearch("s1")?.status).toBe("complete");
    expect(new TrainingStore(runs.db).steps("t1")).toHaveLength(1);
    runs.close();
  });

  it("a store opened on an older schema without the tables is refused in one line", () => {
    const path = join(dir, "raw.db");
    oldStore(path);
    const raw = new Database(path);
    expect(() => new TrainingStore(raw)).toThrow(StoreError);
    expect(() => new TrainingStore(raw)).toThrow(/no training tables/);
    raw.close();
  });
});
