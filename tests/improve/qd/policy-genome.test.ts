/**
 * The embedded policy as a CycleQD genome: crossover, both mutations, evaluation on K tasks of two
 * environments (a maze-trained policy plays gridworld too), stable ids, the file store, and a
 * short cycle whose kept children are weight files that load back.
 *
 * Tiny policies (1024 features, 8 hidden): the base is a fresh seed and each "expert" the base plus
 * a distinct Gaussian perturbation, so every task vector is non-zero. Tasks: 4 small mazes and two
 * sets of 4 gridworld test tasks. An untrained policy solves no maze but some gridworld tasks, so
 * the experts chosen below occupy at least two cells of every archive.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { smallMazes } from "../../../src/env/maze/small.js";
import { findEnv } from "../../../src/env/registry.js";
import { createRng } from "../../../src/env/rng.js";
import {
  createPolicyGenome,
  FilePolicyStore,
  initCycle,
  MemoryGenomeStore,
  type PolicyTask,
  policyId,
  runCycle,
} from "../../../src/improve/qd/index.js";
import { standardNormal } from "../../../src/improve/qd/operators/normal.js";
import {
  cloneParams,
  createPolicyModel,
  loadPolicy,
  type PolicyModel,
  savePolicy,
  type Tensor,
} from "../../../src/improve/rl/policy/index.js";

const maze = findEnv("maze");
const grid = findEnv("gridworld");
const g0 = grid.info.splits.test.start;
const TASKS: PolicyTask[] = [
  { env: maze, tasks: smallMazes(maze.info.splits.test).slice(0, 4) },
  { env: grid, tasks: [g0, g0 + 1, g0 + 2, g0 + 3] },
  { env: grid, tasks: [g0 + 4, g0 + 5, g0 + 6, g0 + 7] },
];
const RANGES = TASKS.map(() => ({ min: 0, max: 1 }));
const BINS = 8;

const base = createPolicyModel({
  env: "maze",
  envVersion: maze.info.version,
  seed: 1,
  features: { dim: 1024 },
  hidden: 8,
  valueHidden: 4,
});

/** The base plus N(0, scale²) per weight, keyed by `key`. */
function perturbed(key: number, scale = 0.05): PolicyModel {
  const params = cloneParams(base.params);
  const rng = createRng(77, key);
  for (const t of params.values()) {
    for (let i = 0; i < t.data.length; i++) {
      t.data[i] = (t.data[i] as number) + scale * standardNormal(rng);
    }
  }
  return { ...base, params };
}

// Keys 1, 2 and 4 score (0, .5, .75), (0, .5, .25), (0, .25, 0): ≥ 2 cells in every archive.
const experts = [perturbed(1), perturbed(2), perturbed(4)];

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "clade-policy-genome-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function data(model: PolicyModel, name: string): Float32Array | Float64Array {
  return (model.params.get(name) as Tensor).data;
}

function maxDiff(a: PolicyModel, b: PolicyModel, name: string): number {
  const x = data(a, name);
  const y = data(b, name);
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs((x[i] as number) - (y[i] as number)));
  return m;
}

describe("createPolicyGenome", () => {
  const paper = createPolicyGenome({ base, experts, tasks: TASKS, variant: "paper" });
  const released = createPolicyGenome({ base, experts, tasks: TASKS, variant: "released" });

  it("crossover of identical parents returns the parent", () => {
    const parent = experts[1] as PolicyModel;
    const child = paper.crossover([parent, parent], createRng(5));
    expect([...child.params.keys()]).toEqual([...parent.params.keys()]);
    for (const name of parent.params.keys())
      expect(maxDiff(child, parent, name)).toBeLessThan(1e-6);
    expect(child.provenance).toEqual(base.provenance);
    expect(child.network).toEqual(base.network);
  });

  it("crossover of distinct parents lies between them", () => {
    const [a, b] = experts as [PolicyModel, PolicyModel];
    const child = paper.crossover([a, b], createRng(5));
    const x = data(child, "policy.w1");
    const p = data(a, "policy.w1");
    const q = data(b, "policy.w1");
    for (let i = 0; i < 50; i++) {
      const lo = Math.min(p[i] as number, q[i] as number);
      const hi = Math.max(p[i] as number, q[i] as number);
      const slack = 0.02 * (hi - lo) + 1e-6; // merge weights near 1, not exactly 1
      expect(x[i] as number).toBeGreaterThanOrEqual(lo - slack);
      expect(x[i] as number).toBeLessThanOrEqual(hi + slack);
    }
  });

  it("paper mutation changes only the 2-D matrices, reproducibly for a seed", () => {
    const child = experts[0] as PolicyModel;
    const m1 = paper.mutate(child, 2, createRng(9));
    const m2 = paper.mutate(child, 2, createRng(9));
    const m3 = paper.mutate(child, 2, createRng(10));
    let matrices = 0;
    for (const [name, t] of child.params) {
      if (t.shape.length === 2) {
        matrices++;
        expect(maxDiff(m1, child, name)).toBeGreaterThan(0);
        expect(maxDiff(m1, m3, name)).toBeGreaterThan(0);
      } else {
        expect(maxDiff(m1, child, name)).toBe(0);
      }
      expect(maxDiff(m1, m2, name)).toBe(0);
    }
    expect(matrices).toBeGreaterThanOrEqual(2);
    expect(policyId(m1)).toBe(policyId(m2));
    expect(policyId(m1)).not.toBe(policyId(m3));
    // The mutation is bounded by the expert's task vector: |Δ| ≤ 0.1·‖τ‖ per entry, roughly.
    expect(maxDiff(m1, child, "policy.w1")).toBeLessThan(0.1 * 0.05 * 20);
  });

  it("released mutation perturbs every tensor by about σ = 0.0003", () => {
    const child = experts[0] as PolicyModel;
    const m = released.mutate(child, 1, createRng(9));
    for (const name of child.params.keys()) {
      const d = maxDiff(m, child, name);
      expect(d).toBeGreaterThan(0);
      expect(d).toBeLessThan(0.0003 * 8);
    }
  });

  it("evaluates K success rates in [0, 1], a maze policy playing gridworld included", async () => {
    const scores = await paper.evaluate(experts[0] as PolicyModel);
    expect(scores).toHaveLength(TASKS.length);
    for (const s of scores) {
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(1);
    }
    // The expert's provenance says maze, yet it plays (and here solves some) gridworld tasks.
    expect((experts[0] as PolicyModel).provenance.env).toBe("maze");
    expect((scores[1] as number) + (scores[2] as number)).toBeGreaterThan(0);
    expect(await paper.evaluate(experts[0] as PolicyModel)).toEqual(scores); // greedy: repeatable
  });

  it("gives stable ids: equal weights share one, through a file too", async () => {
    const a = experts[0] as PolicyModel;
    const id = paper.id(a);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(paper.id({ ...a, params: cloneParams(a.params) })).toBe(id);
    expect(paper.id(experts[1] as PolicyModel)).not.toBe(id);
    const path = join(tempDir(), "a.safetensors");
    await savePolicy(path, a);
    expect(paper.id(await loadPolicy(path))).toBe(id);
  });

  it("refuses experts that do not fit the tasks or the base", () => {
    expect(() =>
      createPolicyGenome({ base, experts: experts.slice(0, 2), tasks: TASKS, variant: "paper" }),
    ).toThrow(/2 expert\(s\) for 3 task\(s\)/);
    const other = createPolicyModel({
      env: "maze",
      envVersion: maze.info.version,
      seed: 1,
      features: { dim: 1024 },
      hidden: 4,
      valueHidden: 4,
    });
    expect(() =>
      createPolicyGenome({ base, experts: [other, other, other], tasks: TASKS }),
    ).toThrow(/expert 0/);
  });
});

describe("FilePolicyStore", () => {
  it("stores a policy as DIR/<id>.safetensors and loads it back", async () => {
    const dir = join(tempDir(), "elites");
    const store = new FilePolicyStore(dir);
    const a = experts[2] as PolicyModel;
    const id = policyId(a);
    expect(await store.get(id)).toBeUndefined();
    await store.put(id, a);
    expect(readdirSync(dir)).toEqual([`${id}.safetensors`]); // no temporary file left
    const back = await store.get(id);
    expect(back && policyId(back)).toBe(id);
    expect(back?.provenance).toEqual(a.provenance);
    await store.put(id, a); // overwriting is fine
    expect(readdirSync(dir)).toEqual([`${id}.safetensors`]);
    expect(() => store.path("../x")).toThrow(/not a usable genome id/);
  });
});

describe("a short CycleQD run of policies", () => {
  it("runs 6 generations and keeps its children as loadable files", async () => {
    const dir = join(tempDir(), "run");
    const store = new FilePolicyStore(dir);
    const genome = createPolicyGenome({ base, experts, tasks: TASKS, variant: "paper" });
    const setup = { genome, store, seed: 3, variant: "paper" as const };
    const { state, record } = await initCycle(setup, { experts, ranges: RANGES, bins: BINS });
    expect(record.experts.every((e) => e.error === null)).toBe(true);

    const kept: string[] = [];
    const result = await runCycle(setup, state, {
      generations: 6,
      onGeneration: (r) => {
        expect(r.child.error).toBeNull();
        if (r.child.kept) kept.push(r.child.id);
      },
    });
    expect(result).toEqual({ stopped: "done", generation: 6 });
    expect(state.errored).toBe(0);

    const elites = state.archives.archives.flatMap((a) => a.elites().map((e) => e.id));
    for (const id of new Set([...elites, ...kept])) {
      expect(existsSync(join(dir, `${id}.safetensors`))).toBe(true);
      const back = await store.get(id);
      expect(back && genome.id(back)).toBe(id);
    }
    expect(readdirSync(dir).every((f) => f.endsWith(".safetensors"))).toBe(true);

    // The same seed replays the same run: ids are stable across runs.
    const again = { genome, store: new MemoryGenomeStore<PolicyModel>(), seed: 3 };
    const init2 = await initCycle(again, { experts, ranges: RANGES, bins: BINS });
    const ids2: string[] = [];
    await runCycle(again, init2.state, {
      generations: 6,
      onGeneration: (r) => {
        if (r.child.kept) ids2.push(r.child.id);
      },
    });
    expect(ids2).toEqual(kept);
  }, 60_000);
});
