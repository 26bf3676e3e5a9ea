/**
 * The demo's two RL steps (`clade demo`), real work of a few seconds each:
 *
 * 1. The embedded policy trained briefly (PPO with the novelty bonus, a small policy) on the small
 *    mazes of the train split, then played greedily on the small mazes of the test split, against
 *    the random agent on the same mazes: the trainer's learning test (tests/improve/rl), as a demo.
 * 2. HGM over training branches of that policy (src/improve/rl/branches.ts): a child is its
 *    parent's weights trained further with a recipe drawn for it, an evaluation plays one held-out
 *    small maze greedily, and the search decides which checkpoint to train and which to evaluate.
 *
 * Both are deterministic: training is a function of its seed, the search runs one worker.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMALL_MAZE_CELLS, smallMazes } from "../../env/maze/small.js";
import { findEnv } from "../../env/registry.js";
import { createTrainingBranches, type Recipe, trainingRoot } from "../../improve/rl/branches.js";
import type { PolicyModel } from "../../improve/rl/policy/index.js";
import type { RolloutPolicy } from "../../improve/rl/rollout/index.js";
import { evaluatePolicy, type TrainOptions, train } from "../../improve/rl/train/index.js";
import { memoryLog, runSearch } from "../../improve/search/engine.js";
import { createPolicy } from "../../improve/search/policies/index.js";
import { ROOT } from "../../improve/search/tree.js";

/**
 * The training step: the learning test's settings (a 2048 × 16 policy, the most numerous feature
 * group off; PPO, lr 0.01, 8 tasks × 8 samples at horizon 30, novelty bonus 0.05) for 30 steps,
 * about 12 s of one core; seed 3 reaches 0.29 greedy success on the 24 held-out small mazes.
 */
export const DEMO_TRAINING = {
  env: "maze",
  steps: 30,
  seed: 3,
  options: {
    algo: "ppo",
    gamma: 0.99,
    lam: 0.95,
    lr: 0.01,
    epochs: 2,
    minibatches: 4,
    groupSize: 8,
    batchTasks: 8,
    schedule: "fixed:30",
    noveltyBonus: 0.05,
    featureDim: 2048,
    hidden: 16,
    valueHidden: 16,
    features: { groups: { bigramAction: false } },
    checkpointEvery: 0,
  } satisfies Omit<TrainOptions, "env" | "steps" | "seed">,
  /** The random agent's episodes per test maze, and the seed of its draws. */
  randomSamples: 20,
  randomSeed: 1,
} as const;

/**
 * The search over training branches: HGM with one worker (so the tree is the same every run), a
 * budget of 96 evaluations of branches (four per held-out maze), the engine's root evaluation on
 * every held-out maze besides; about 5 s.
 */
export const DEMO_BRANCHES = { method: "hgm", budget: 96, workers: 1, seed: 0 } as const;

export interface PolicyScore {
  /** Successes over finished episodes. */
  successRate: number;
  successes: number;
  episodes: number;
}

export interface TrainingDemo {
  env: string;
  algo: string;
  steps: number;
  seed: number;
  /** Small mazes (≤ maxCells cells) trained on and held out. */
  maxCells: number;
  trainTasks: number;
  testTasks: number;
  envSteps: number;
  seconds: number;
  /** The trained policy, greedy, one episode per held-out maze. */
  trained: PolicyScore;
  /** The random agent (uniform over the listed actions), randomSamples episodes per maze. */
  random: PolicyScore & { samples: number };
}

export interface BranchesDemo {
  method: string;
  budget: number;
  workers: number;
  seed: number;
  /** Held-out small mazes evaluations draw from. */
  tasks: number;
  /** Nodes in the tree, the root (the trained policy) included. */
  nodes: number;
  /** Branches made: children trained from a parent (nodes − 1). */
  expanded: number;
  /** Finished evaluations of branches (the root's not counted). */
  evaluations: number;
  /** The root's greedy play on every held-out maze. */
  root: { s: number; f: number; successRate: number | null };
  /** The search's final choice (the engine's ε-quantile rule, as `clade best`); null if none. */
  best: {
    node: number;
    depth: number;
    s: number;
    f: number;
    successRate: number | null;
    recipe: Recipe | null;
  } | null;
  stopReason: string;
  seconds: number;
}

/** Uniform over the listed actions, with its own seeded stream per sample. */
const randomPolicy: RolloutPolicy = {
  decide(state, rng) {
    const actions = state.observation.availableActions ?? [];
    return { action: actions[rng.int(actions.length)] as string };
  },
};

const score = (r: {
  successRate: number;
  successes: number;
  episodes: number;
  errors: number;
}) => ({
  successRate: r.successRate,
  successes: r.successes,
  episodes: r.episodes - r.errors,
});

const rate = (s: number, f: number) => (s + f === 0 ? null : s / (s + f));

/** Step 1: train on the small train mazes, then the trained policy and random play on the test ones. */
export async function demoTraining(): Promise<{
  result: TrainingDemo;
  model: PolicyModel;
  trainTasks: number[];
  testTasks: number[];
}> {
  const env = findEnv(DEMO_TRAINING.env);
  const trainTasks = smallMazes(env.info.splits.train);
  const testTasks = smallMazes(env.info.splits.test);
  const started = performance.now();
  const trainedRun = await train({
    env,
    trainTasks,
    ...DEMO_TRAINING.options,
    steps: DEMO_TRAINING.steps,
    seed: DEMO_TRAINING.seed,
  });
  const seconds = (performance.now() - started) / 1000;
  const trained = await evaluatePolicy({ env, policy: trainedRun.model, tasks: testTasks });
  const random = await evaluatePolicy({
    env,
    policy: randomPolicy,
    tasks: testTasks,
    mode: "sample",
    samples: DEMO_TRAINING.randomSamples,
    seed: DEMO_TRAINING.randomSeed,
  });
  return {
    result: {
      env: env.info.name,
      algo: DEMO_TRAINING.options.algo,
      steps: trainedRun.steps,
      seed: DEMO_TRAINING.seed,
      maxCells: SMALL_MAZE_CELLS,
      trainTasks: trainTasks.length,
      testTasks: testTasks.length,
      envSteps: trainedRun.metrics.at(-1)?.totalEnvSteps ?? 0,
      seconds: Number(seconds.toFixed(2)),
      trained: score(trained),
      random: { ...score(random), samples: DEMO_TRAINING.randomSamples },
    },
    model: trainedRun.model,
    trainTasks,
    testTasks,
  };
}

/** Step 2: HGM over training branches of `model`, evaluated on the held-out mazes. */
export async function demoBranches(
  model: PolicyModel,
  trainTasks: readonly number[],
  testTasks: readonly number[],
): Promise<BranchesDemo> {
  const env = findEnv(DEMO_TRAINING.env);
  const dir = mkdtempSync(join(tmpdir(), "clade-demo-branches-"));
  const started = performance.now();
  try {
    const rootData = await trainingRoot(dir, model);
    const { improver, evaluator } = createTrainingBranches({
      env,
      dir,
      seed: DEMO_BRANCHES.seed,
      trainTasks,
    });
    const search = await runSearch({
      policy: createPolicy(DEMO_BRANCHES.method),
      improver,
      evaluator,
      tasks: testTasks,
      T: DEMO_BRANCHES.budget,
      W: DEMO_BRANCHES.workers,
      seed: DEMO_BRANCHES.seed,
      rootData,
      log: memoryLog(),
    });
    const { tree } = search;
    const root = tree.node(ROOT);
    const branches = tree.nodes.slice(1);
    const chosen = search.chosen === null ? null : tree.node(search.chosen);
    const recipeOf = (data: unknown): Recipe | null =>
      ((data as { recipe?: Recipe | null } | null)?.recipe ?? null) as Recipe | null;
    return {
      method: DEMO_BRANCHES.method,
      budget: DEMO_BRANCHES.budget,
      workers: DEMO_BRANCHES.workers,
      seed: DEMO_BRANCHES.seed,
      tasks: testTasks.length,
      nodes: tree.size,
      expanded: branches.length,
      evaluations: branches.reduce((sum, n) => sum + n.s + n.f, 0),
      root: { s: root.s, f: root.f, successRate: rate(root.s, root.f) },
      best: chosen
        ? {
            node: chosen.id,
            depth: chosen.depth,
            s: chosen.s,
            f: chosen.f,
            successRate: rate(chosen.s, chosen.f),
            recipe: recipeOf(chosen.data),
          }
        : null,
      stopReason: search.stopReason,
      seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fixed = (x: number | null) => (x === null ? "n/a" : x.toFixed(2));

export function trainingText(t: TrainingDemo): string {
  return (
    `RL training of the embedded policy (clade train): ${t.steps} ${t.algo.toUpperCase()} steps ` +
    `on ${t.trainTasks} small ${t.env} tasks (≤ ${t.maxCells} cells), seed ${t.seed}, ` +
    `${t.envSteps.toLocaleString("en-US")} env steps in ${t.seconds.toFixed(1)} s.\n` +
    `On the ${t.testTasks} held-out small mazes: trained policy (greedy) ` +
    `${fixed(t.trained.successRate)} (${t.trained.successes}/${t.trained.episodes}), ` +
    `random agent ${fixed(t.random.successRate)} ` +
    `(${t.random.successes}/${t.random.episodes}, ${t.random.samples} per maze).`
  );
}

export function branchesText(b: BranchesDemo): string {
  const best = b.best;
  const recipe = best?.recipe;
  const choice = best
    ? `the final choice, node ${best.node} (depth ${best.depth}` +
      (recipe
        ? `: ${recipe.algo} lr ${recipe.lr} ${recipe.schedule} × ${recipe.steps} steps`
        : ": the trained policy itself") +
      `), passed ${best.s}/${best.s + best.f} = ${fixed(best.successRate)}`
    : "no node was evaluated";
  return (
    "HGM over training branches (a child is its parent trained further with a drawn recipe; " +
    `budget ${b.budget} evaluations, ${b.workers} worker): ${b.expanded} branches trained and ` +
    `${b.evaluations} evaluations in ${b.seconds.toFixed(1)} s.\n` +
    `On the ${b.tasks} held-out small mazes, ${choice}; the trained policy it started from, ` +
    `${b.root.s}/${b.root.s + b.root.f} = ${fixed(b.root.successRate)}.`
  );
}
