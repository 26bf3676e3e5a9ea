/**
 * CycleQD on real embedded policies, end to end at a tiny scale: a base trained on the mixed
 * tasks of maze and gridworld, one expert per task trained further from it, and a short search
 * whose children fill cells the experts alone leave empty.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridworldEnv } from "../../../src/env/gridworld/index.js";
import { mazeEnv } from "../../../src/env/maze/index.js";
import { initCycle, MemoryGenomeStore, runCycle } from "../../../src/improve/qd/cycle.js";
import {
  baseTrainingSet,
  type QdTask,
  type TrainedExperts,
  trainBaseAndExperts,
} from "../../../src/improve/qd/experts.js";
import { createPolicyGenome, policyId } from "../../../src/improve/qd/policy-genome.js";
import type { PolicyModel } from "../../../src/improve/rl/policy/model.js";

const range = (start: number, n: number) => Array.from({ length: n }, (_, i) => start + i);
const TASKS: QdTask[] = [
  { label: "maze", env: mazeEnv, train: range(100, 40), search: range(100, 8), test: range(0, 4) },
  {
    label: "gridworld",
    env: gridworldEnv,
    train: range(100, 40),
    search: range(100, 8),
    test: range(0, 4),
  },
];
const TRAINING = { batchTasks: 8, groupSize: 4, featureDim: 1024, hidden: 16, valueHidden: 8 };
/** What every training call here shares (and `dir` to keep checkpoints). */
const SETTINGS = { tasks: TASKS, baseSteps: 2, expertSteps: 6, seed: 5, hyperparameters: TRAINING };

let dir: string;
let trained: TrainedExperts;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-qd-policies-"));
  trained = await trainBaseAndExperts({
    ...SETTINGS,
    dir,
  });
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the base and the experts", () => {
  it("trains the base on the mixture of the tasks' environments and each expert from it", () => {
    expect(trained.stopped).toBe(false);
    expect(trained.base.provenance.env).toBe("maze+gridworld");
    expect(trained.experts).toHaveLength(2);
    const ids = [trained.base, ...trained.experts].map(policyId);
    expect(new Set(ids).size).toBe(3);
    expect(trained.envSteps.base).toBeGreaterThan(0);
    for (const steps of trained.envSteps.experts) expect(steps).toBeGreaterThan(0);
    expect(trained.base.provenance.step).toBe(2);
    for (const expert of trained.experts) expect(expert.provenance.step).toBe(6);
  });

  it("maps every task's train tasks into the mixture, and resumes finished training from its folder", async () => {
    const set = baseTrainingSet(TASKS);
    expect(set.env.info.name).toBe("maze+gridworld");
    expect(set.trainTasks).toHaveLength(80);
    const again = await trainBaseAndExperts({
      ...SETTINGS,
      dir,
    });
    expect([again.base, ...again.experts].map(policyId)).toEqual(
      [trained.base, ...trained.experts].map(policyId),
    );
  });

  it("uses given experts as they are and refuses them without their base", async () => {
    const given = await trainBaseAndExperts({
      ...SETTINGS,
      base: trained.base,
      experts: trained.experts,
    });
    expect(given.envSteps).toEqual({ base: 0, experts: [0, 0] });
    expect(given.experts).toEqual(trained.experts);
    await expect(
      trainBaseAndExperts({
        tasks: TASKS,
        baseSteps: 1,
        expertSteps: 1,
        seed: 5,
        experts: trained.experts,
      }),
    ).rejects.toThrow(/without their base/);
  });
});

describe("a short CycleQD run on real policies", () => {
  it("fills more cells than the experts alone", async () => {
    const genome = createPolicyGenome({
      base: trained.base,
      experts: trained.experts,
      tasks: TASKS.map((t) => ({ env: t.env, tasks: t.search })),
      variant: "paper",
    });
    const setup = {
      genome,
      store: new MemoryGenomeStore<PolicyModel>(),
      seed: 2,
      variant: "paper" as const,
    };
    const ranges = [
      { min: 0, max: 1 },
      { min: 0, max: 1 },
    ];
    // 8 search tasks per task: scores in eighths, and bins of 1/8 so each score has its own.
    const { state } = await initCycle(setup, { experts: trained.experts, ranges, bins: 8 });
    const elites = () => state.archives.stats().reduce((n, s) => n + s.elites, 0);
    const byExperts = elites();
    expect(byExperts).toBeLessThanOrEqual(4);
    await runCycle(setup, state, { generations: 12 });
    expect(state.errored).toBe(0);
    expect(elites()).toBeGreaterThan(byExperts);
    expect(genome.envSteps).toBeGreaterThan(0);
  }, 60_000);
});
