/**
 * The demo's CycleQD step (`clade demo`), real work of about 15 s: a base policy trained briefly
 * on maze and gridworld mixed, one expert per task trained further from it, a short CycleQD run
 * (paper variant: elite sampling, SVD mutation) over the two archives, and the finalists played
 * beside the experts on held-out test tasks. Deterministic: every part is a function of its seed.
 */
import { findEnv } from "../../env/registry.js";
import { comparePolicies } from "../../improve/qd/compare.js";
import { initCycle, MemoryGenomeStore, runCycle } from "../../improve/qd/cycle.js";
import { type QdTask, trainBaseAndExperts } from "../../improve/qd/experts.js";
import { policyFinalists } from "../../improve/qd/final.js";
import { createPolicyGenome } from "../../improve/qd/policy-genome.js";
import type { PolicyModel } from "../../improve/rl/policy/model.js";

const range = (start: number, n: number) => Array.from({ length: n }, (_, i) => start + i);

/**
 * A small policy (1024 × 16) trained 2 steps on the mixture and 6 steps per expert (8 tasks × 4
 * samples); each genome scored on 8 train tasks per task, so scores are eighths and 8 bins give
 * each its own; 12 generations; 16 held-out test tasks per task for the comparison.
 */
export const DEMO_QD = {
  envs: ["maze", "gridworld"],
  trainTasks: 40,
  searchTasks: 8,
  testTasks: 16,
  baseSteps: 2,
  expertSteps: 6,
  seed: 5,
  cycleSeed: 2,
  variant: "paper",
  generations: 12,
  bins: 8,
  training: { batchTasks: 8, groupSize: 4, featureDim: 1024, hidden: 16, valueHidden: 8 },
} as const;

export interface QdDemo {
  tasks: string[];
  variant: string;
  generations: number;
  /** Elites in all archives after generation 0 (the experts alone) and at the end. */
  expertElites: number;
  elites: number;
  /** Mean coverage over the archives, summed QD-score. */
  coverage: number;
  qdScore: number;
  errored: number;
  /** Greedy success per task on the held-out test tasks, and its mean. */
  test: { name: string; perTask: number[]; mean: number }[];
  testTasks: number;
  seconds: number;
}

export async function demoQd(): Promise<QdDemo> {
  const started = performance.now();
  const tasks: QdTask[] = DEMO_QD.envs.map((name) => {
    const env = findEnv(name);
    const { train, test } = env.info.splits;
    return {
      label: name,
      env,
      train: range(train.start, DEMO_QD.trainTasks),
      search: range(train.start, DEMO_QD.searchTasks),
      test: range(test.start, DEMO_QD.testTasks),
    };
  });
  const trained = await trainBaseAndExperts({
    tasks,
    baseSteps: DEMO_QD.baseSteps,
    expertSteps: DEMO_QD.expertSteps,
    seed: DEMO_QD.seed,
    hyperparameters: DEMO_QD.training,
  });
  const genome = createPolicyGenome({
    base: trained.base,
    experts: trained.experts,
    tasks: tasks.map((t) => ({ env: t.env, tasks: t.search })),
    variant: DEMO_QD.variant,
  });
  const store = new MemoryGenomeStore<PolicyModel>();
  const setup = { genome, store, seed: DEMO_QD.cycleSeed, variant: DEMO_QD.variant };
  const ranges = tasks.map(() => ({ min: 0, max: 1 }));
  const { state } = await initCycle(setup, {
    experts: trained.experts,
    ranges,
    bins: DEMO_QD.bins,
  });
  const elites = () => state.archives.stats().reduce((n, s) => n + s.elites, 0);
  const expertElites = elites();
  await runCycle(setup, state, { generations: DEMO_QD.generations });
  const finalists = await policyFinalists(state.archives, store, trained.base);
  const compared = await comparePolicies(
    [
      { name: "CycleQD best-mean", policy: finalists.bestMean.policy },
      { name: "CycleQD merge", policy: finalists.merge.policy },
      ...trained.experts.map((policy, k) => ({ name: `expert ${tasks[k]?.label}`, policy })),
    ],
    tasks,
  );
  const test = compared.map((c) => ({
    name: c.name,
    perTask: c.perTask.map((t) => t.rate),
    mean: c.mean,
  }));
  const stats = state.archives.stats();
  return {
    tasks: tasks.map((t) => t.label),
    variant: DEMO_QD.variant,
    generations: state.generation,
    expertElites,
    elites: elites(),
    coverage: stats.reduce((a, s) => a + s.coverage, 0) / stats.length,
    qdScore: stats.reduce((a, s) => a + s.qdScore, 0),
    errored: state.errored,
    test,
    testTasks: DEMO_QD.testTasks,
    seconds: (performance.now() - started) / 1000,
  };
}

const fixed = (x: number) => x.toFixed(2);

export function qdText(d: QdDemo): string {
  const rows = d.test
    .map((t) => `  ${t.name.padEnd(20)} ${t.perTask.map(fixed).join("  ")}   mean ${fixed(t.mean)}`)
    .join("\n");
  return (
    `CycleQD (clade qd, ${d.variant} variant) on ${d.tasks.join(" and ")}: experts trained from a ` +
    `common base, then ${d.generations} generations (${d.seconds.toFixed(1)} s in all); the archives ` +
    `went from ${d.expertElites} elites (the experts) to ${d.elites}, coverage ` +
    `${d.coverage.toFixed(3)}, QD-score ${d.qdScore.toFixed(3)}.\n` +
    `Greedy success on ${d.testTasks} held-out tasks each (${d.tasks.join(", ")}):\n${rows}`
  );
}
