import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/database.js";
import { QdConflictError, QdStore } from "../../src/store/qd-log.js";

let dir: string;
let store: QdStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-qd-log-"));
  store = QdStore.open(join(dir, "clade.db"));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const generation = (g: number, record: unknown = { generation: g }) => ({
  generation: g,
  qualityTask: g === 0 ? null : g % 3,
  coverage: 0.01 * g,
  qdScore: 0.5 * g,
  errored: g === 2,
  record: record as never,
});

describe("QdStore", () => {
  it("creates a run, resumes it under the same configuration and refuses another", () => {
    expect(store.beginRun("r", { variant: "paper", seed: 1 })).toEqual({
      resumed: false,
      lastGeneration: -1,
    });
    store.appendGeneration("r", generation(0));
    store.setStatus("r", "stopped", "signal");
    expect(store.getRun("r")?.status).toBe("stopped");
    expect(store.beginRun("r", { variant: "paper", seed: 1 })).toEqual({
      resumed: true,
      lastGeneration: 0,
    });
    expect(store.getRun("r")?.status).toBe("running");
    expect(() => store.beginRun("r", { variant: "released", seed: 1 })).toThrow(QdConflictError);
    expect(() => store.beginRun("r", { variant: "released", seed: 1 })).toThrow(/variant/);
  });

  it("keeps generations in order, with their columns and records", () => {
    store.beginRun("r", {});
    for (let g = 0; g < 4; g++)
      store.appendGeneration("r", generation(g, { generation: g, x: [g] }));
    const rows = store.generations("r");
    expect(rows.map((r) => r.generation)).toEqual([0, 1, 2, 3]);
    expect(rows[0]?.qualityTask).toBeNull();
    expect(rows[2]).toMatchObject({ qualityTask: 2, coverage: 0.02, qdScore: 1, errored: true });
    expect(rows[3]?.record).toEqual({ generation: 3, x: [3] });
    expect(store.generations("r", 1).map((r) => r.generation)).toEqual([0, 1]);
    expect(store.lastGeneration("r")).toBe(3);
  });

  it("refuses a hole, a repeat, a non-finite summary and an unknown run, writing nothing", () => {
    store.beginRun("r", {});
    store.appendGeneration("r", generation(0));
    expect(() => store.appendGeneration("r", generation(2))).toThrow(
      /generation 2 written after generation 0/,
    );
    expect(() => store.appendGeneration("r", generation(0))).toThrow(StoreError);
    expect(() => store.appendGeneration("r", { ...generation(1), qdScore: Number.NaN })).toThrow(
      /qdScore/,
    );
    expect(() => store.appendGeneration("nope", generation(0))).toThrow(/no CycleQD run/);
    expect(store.lastGeneration("r")).toBe(0);
    expect(store.listRuns().map((r) => r.id)).toEqual(["r"]);
  });
});
