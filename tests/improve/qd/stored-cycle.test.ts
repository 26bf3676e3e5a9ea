/**
 * A CycleQD run kept in the store: aborted part-way through a generation's evaluation and run
 * again, it reaches the archives of a run that never stopped, with one record per generation.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cycleStateToJSON, type Genome, MemoryGenomeStore } from "../../../src/improve/qd/cycle.js";
import { runStoredCycle } from "../../../src/improve/qd/stored-cycle.js";
import { QdStore } from "../../../src/store/qd-log.js";
import { EXPERTS, RANGES, type Vec, vectorGenome } from "./vector-genome.js";

/** The vector genome; the `abortAt`-th evaluation aborts the controller and stops. */
function genomeWith(controller?: AbortController, abortAt = Number.POSITIVE_INFINITY): Genome<Vec> {
  let evaluations = 0;
  return vectorGenome((_x, signal) => {
    if (++evaluations === abortAt) {
      controller?.abort();
      signal?.throwIfAborted();
    }
  });
}

let dir: string;
let store: QdStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-qd-stored-"));
  store = QdStore.open(join(dir, "clade.db"));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (
  runId: string,
  genome: Genome<Vec>,
  genomes: MemoryGenomeStore<Vec>,
  signal?: AbortSignal,
) =>
  runStoredCycle({
    store,
    runId,
    setup: { genome, store: genomes, seed: 4, variant: "paper" },
    experts: () => EXPERTS,
    ranges: RANGES,
    bins: 15,
    generations: 30,
    ...(signal ? { signal } : {}),
  });

describe("runStoredCycle", () => {
  it("resumes an aborted run to the archives of an uninterrupted one", async () => {
    store.beginRun("whole", {});
    const whole = await run("whole", genomeWith(), new MemoryGenomeStore());
    expect(whole).toMatchObject({ stopped: "done", resumedAfter: undefined });

    store.beginRun("cut", {});
    const genomes = new MemoryGenomeStore<Vec>();
    const controller = new AbortController();
    // 3 experts, then generation 1, 2, …: the 15th evaluation is generation 12's child.
    const first = await run("cut", genomeWith(controller, 15), genomes, controller.signal);
    expect(first.stopped).toBe("aborted");
    expect(store.lastGeneration("cut")).toBe(11);
    const second = await run("cut", genomeWith(), genomes);
    expect(second).toMatchObject({ stopped: "done", resumedAfter: 11 });
    expect(cycleStateToJSON(second.state)).toEqual(cycleStateToJSON(whole.state));
    expect(store.generations("cut").map((g) => g.generation)).toEqual(
      Array.from({ length: 31 }, (_, g) => g),
    );
    const summary = (id: string) => store.generations(id).map(({ at: _, ...row }) => row);
    expect(summary("cut")).toEqual(summary("whole"));
  });
});
