/**
 * The CycleQD loop on a synthetic genome: a vector x of K = 3 numbers whose score on task k is
 * clamp01(x_k − 0.25·x_{k+1}) (being good at the next task costs a little), merged by a weighted
 * mean and mutated by a small uniform perturbation, both drawn from the loop's generators.
 */
import { describe, expect, it } from "vitest";
import type { Rng } from "../../../src/env/rng.js";
import {
  type CycleSetup,
  type CycleState,
  cycleStateFromJSON,
  cycleStateToJSON,
  type GenerationRecord,
  type Genome,
  type InitRecord,
  initCycle,
  MemoryGenomeStore,
  runCycle,
  runGeneration,
  type Variant,
} from "../../../src/improve/qd/cycle.js";

type Vec = readonly number[];
const K = 3;
const UNIT = { min: 0, max: 1 };
const RANGES = [UNIT, UNIT, UNIT];
const EXPERTS: Vec[] = [
  [0.9, 0.1, 0.1],
  [0.1, 0.9, 0.1],
  [0.1, 0.1, 0.9],
];
const clamp01 = (v: number) => Math.min(Math.max(v, 0), 1);

function scoresOf(x: Vec): number[] {
  return x.map((v, k) => clamp01(v - 0.25 * (x[(k + 1) % K] as number)));
}

const vectorGenome: Genome<Vec> = {
  crossover(parents: readonly Vec[], rng: Rng): Vec {
    const weights = parents.map(() => 0.5 + rng.next());
    const total = weights.reduce((a, b) => a + b, 0);
    return Array.from(
      { length: K },
      (_, j) =>
        parents.reduce((sum, p, i) => sum + (weights[i] as number) * (p[j] as number), 0) / total,
    );
  },
  mutate(child: Vec, _q: number, rng: Rng): Vec {
    return child.map((v) => v + (rng.next() - 0.5) * 0.2);
  },
  async evaluate(x: Vec): Promise<number[]> {
    return scoresOf(x);
  },
  id: (x: Vec) => `v:${x.join(",")}`,
};

function setupOf(genome: Genome<Vec> = vectorGenome, variant: Variant = "paper") {
  return { genome, store: new MemoryGenomeStore<Vec>(), seed: 7, variant };
}

async function start(setup: CycleSetup<Vec>) {
  return initCycle(setup, { experts: EXPERTS, ranges: RANGES });
}

async function runTo(setup: CycleSetup<Vec>, state: CycleState, generations: number) {
  const records: GenerationRecord[] = [];
  const result = await runCycle(setup, state, {
    generations,
    onGeneration: (record) => {
      records.push(record);
    },
  });
  return { result, records };
}

const elitesTotal = (state: CycleState) =>
  state.archives.stats().reduce((sum, s) => sum + s.elites, 0);
const archiveIds = (state: CycleState) =>
  state.archives.archives.flatMap((a) => a.elites().map((e) => e.id));

describe("initCycle", () => {
  it("offers each expert to every archive and keeps their genomes", async () => {
    const setup = setupOf();
    const { state, record } = await start(setup);
    expect(state.generation).toBe(0);
    expect(record.generation).toBe(0);
    expect(record.experts.map((e) => e.results?.map((r) => r.status))).toEqual([
      ["new", "new", "new"],
      ["new", "new", "new"],
      ["new", "new", "new"],
    ]);
    expect(record.experts.map((e) => e.scores)).toEqual(EXPERTS.map(scoresOf));
    expect(record.adds).toEqual([0, 1, 2].map(() => ({ new: 3, improved: 0, not_added: 0 })));
    expect(elitesTotal(state)).toBe(9);
    for (const expert of EXPERTS) expect(setup.store.get(vectorGenome.id(expert))).toBe(expert);
  });

  it("starts from experts that share a cell, using the one elite as both parents", async () => {
    const same: Vec = [0.5, 0.5, 0.5];
    const setup = setupOf();
    const { state } = await initCycle(setup, { experts: [same, same, same], ranges: RANGES });
    expect(state.archives.stats().map((s) => s.elites)).toEqual([1, 1, 1]);
    const record = await runGeneration(setup, state);
    expect(record.parents).toEqual([vectorGenome.id(same), vectorGenome.id(same)]);
    expect(record.child.error).toBeNull();
    expect(record.child.id).not.toBe(vectorGenome.id(same));
  });

  it("refuses to start when no expert could be evaluated", async () => {
    const failing: Genome<Vec> = {
      ...vectorGenome,
      evaluate: async () => {
        throw new Error("provider down");
      },
    };
    await expect(initCycle(setupOf(failing), { experts: EXPERTS, ranges: RANGES })).rejects.toThrow(
      "no expert could be evaluated (3 tried)",
    );
  });
});

describe("runGeneration", () => {
  it("cycles the quality task 1, 2, 0, 1, … and draws two distinct parents from archive q", async () => {
    const setup = setupOf();
    const { state } = await start(setup);
    const qs: number[] = [];
    for (let g = 1; g <= 12; g++) {
      const q = g % K;
      const before = new Set(state.archives.archives[q]?.elites().map((e) => e.id));
      const record = await runGeneration(setup, state);
      expect(record.generation).toBe(g);
      expect(state.generation).toBe(g);
      qs.push(record.qualityTask);
      expect(record.parents).toHaveLength(2);
      expect(record.parents[0]).not.toBe(record.parents[1]);
      for (const parent of record.parents) expect(before.has(parent)).toBe(true);
      expect(record.child.error).toBeNull();
      expect(record.child.results).toHaveLength(K);
    }
    expect(qs).toEqual([1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
  });

  it("keeps a child's genome exactly when it entered an archive", async () => {
    const setup = setupOf();
    const { state } = await start(setup);
    for (let g = 1; g <= 20; g++) {
      const { child } = await runGeneration(setup, state);
      const entered = child.results?.some((r) => r.status !== "not_added") ?? false;
      expect(child.kept).toBe(entered);
      if (child.kept) expect(setup.store.get(child.id)).toBeDefined();
    }
    for (const id of archiveIds(state)) expect(setup.store.get(id)).toBeDefined();
  });
});

describe("runCycle", () => {
  for (const variant of ["paper", "released"] as const) {
    it(`fills strictly more cells than the experts alone (${variant})`, async () => {
      const setup = setupOf(vectorGenome, variant);
      const { state } = await start(setup);
      const experts = elitesTotal(state);
      const { result, records } = await runTo(setup, state, 60);
      expect(result).toEqual({ stopped: "done", generation: 60 });
      expect(records.map((r) => r.generation)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(elitesTotal(state)).toBeGreaterThan(experts);
      expect(records.some((r) => r.child.kept)).toBe(true);
      // Each record's add counts are that generation's: one offer to each archive.
      for (const r of records) {
        for (const adds of r.adds) expect(adds.new + adds.improved + adds.not_added).toBe(1);
      }
    });
  }

  it("drops a child whose evaluation errors, counts it and never inserts it", async () => {
    let calls = 0;
    const flaky: Genome<Vec> = {
      ...vectorGenome,
      async evaluate(x: Vec) {
        calls++;
        if (calls === 5) throw new Error("evaluator crashed");
        if (calls === 8) return [Number.NaN, 0.5, 0.5];
        if (calls === 9) return [0.5, 0.5];
        return scoresOf(x);
      },
    };
    const setup = setupOf(flaky);
    const { state } = await start(setup); // calls 1..3
    const { records } = await runTo(setup, state, 10);
    const errored = records.filter((r) => r.child.error !== null);
    expect(errored.map((r) => r.generation)).toEqual([2, 5, 6]);
    expect(errored.map((r) => r.child.error)).toEqual([
      "evaluator crashed",
      "evaluation returned a non-finite score: NaN",
      "evaluation returned 2 value(s), not 3 scores",
    ]);
    expect(state.errored).toBe(3);
    for (const r of errored) {
      expect(r.child).toMatchObject({ scores: null, results: null, kept: false });
      expect(r.adds).toEqual([0, 1, 2].map(() => ({ new: 0, improved: 0, not_added: 0 })));
      expect(archiveIds(state)).not.toContain(r.child.id);
      expect(setup.store.get(r.child.id)).toBeUndefined();
    }
    // The other generations went on normally.
    expect(state.generation).toBe(10);
    expect(cycleStateToJSON(state).errored).toBe(3);
  });

  it("resumes exactly: 30, serialise, restore, 60 equals 60 straight", async () => {
    const straightSetup = setupOf();
    const straight = await start(straightSetup);
    const all = await runTo(straightSetup, straight.state, 60);

    const splitSetup = setupOf();
    const first = await start(splitSetup);
    expect(first.record).toEqual<InitRecord>(straight.record);
    const head = await runTo(splitSetup, first.state, 30);
    const stored = JSON.parse(JSON.stringify(cycleStateToJSON(first.state)));
    const restored = cycleStateFromJSON(stored);
    expect(restored.generation).toBe(30);
    const tail = await runTo(splitSetup, restored, 60);

    expect([...head.records, ...tail.records]).toEqual(all.records);
    expect(JSON.stringify(cycleStateToJSON(restored))).toBe(
      JSON.stringify(cycleStateToJSON(straight.state)),
    );
  });

  it("stops cleanly between generations when aborted", async () => {
    const setup = setupOf();
    const { state } = await start(setup);
    const controller = new AbortController();
    const records: GenerationRecord[] = [];
    const result = await runCycle(setup, state, {
      generations: 60,
      signal: controller.signal,
      onGeneration: (record) => {
        records.push(record);
        if (record.generation === 10) controller.abort();
      },
    });
    expect(result).toEqual({ stopped: "aborted", generation: 10 });
    expect(records).toHaveLength(10);
    expect(state.generation).toBe(10);
  });

  it("leaves an aborted evaluation's generation undone, and resuming equals a straight run", async () => {
    const controller = new AbortController();
    let calls = 0;
    const aborting: Genome<Vec> = {
      ...vectorGenome,
      async evaluate(x: Vec, signal?: AbortSignal) {
        calls++;
        if (calls === 3 + 7) {
          controller.abort();
          throw signal?.reason ?? new Error("aborted");
        }
        return scoresOf(x);
      },
    };
    const setup = setupOf(aborting);
    const { state } = await start(setup);
    const head = await runTo(setup, state, 6);
    const before = JSON.stringify(cycleStateToJSON(state));
    const result = await runCycle(setup, state, {
      generations: 20,
      signal: controller.signal,
      onGeneration: (record) => {
        head.records.push(record);
      },
    });
    expect(result).toEqual({ stopped: "aborted", generation: 6 });
    expect(state.errored).toBe(0);
    expect(JSON.stringify(cycleStateToJSON(state))).toBe(before);

    const tail = await runTo(setup, state, 20);
    const straightSetup = setupOf();
    const straight = await start(straightSetup);
    const all = await runTo(straightSetup, straight.state, 20);
    expect([...head.records, ...tail.records]).toEqual(all.records);
  });
});

describe("cycle state JSON", () => {
  it("rejects malformed state with one line", () => {
    expect(() =>
      cycleStateFromJSON({ version: 1, generation: -1, errored: 0, archives: {} }),
    ).toThrow(/^invalid cycle state JSON: generation: /);
    expect(() => cycleStateFromJSON({ version: 1, generation: 3, errored: 0 })).toThrow(
      /^invalid cycle state JSON: archives: /,
    );
    expect(() =>
      cycleStateFromJSON({ version: 1, generation: 3, errored: 0, archives: { version: 2 } }),
    ).toThrow(/^invalid archives JSON: version: /);
  });
});
