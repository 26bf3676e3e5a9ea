/**
 * The RL trainer: a run killed and resumed gives the same curve and the same weights, bit for
 * bit, as one that never stopped; checkpoints are complete folders, pruned to the newest few;
 * every algorithm trains; errored samples are reported, not scored; and a short run on small
 * maze tasks beats the random agent on held-out mazes by a wide margin.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_TRAINING } from "../../../src/cli/commands/demo-rl.js";
import { smallMazes } from "../../../src/env/maze/small.js";
import { findEnv } from "../../../src/env/registry.js";
import type { Env, EnvDefinition } from "../../../src/env/types.js";
import { loadPolicy, type PolicyModel } from "../../../src/improve/rl/policy/index.js";
import {
  layoutSample,
  type RolloutPolicy,
  type Trajectory,
} from "../../../src/improve/rl/rollout/index.js";
import {
  type Algorithm,
  evaluatePolicy,
  latestCheckpoint,
  loadCheckpoint,
  noveltyKeyOf,
  type StepMetrics,
  type TrainOptions,
  tasksForStep,
  train,
  withNoveltyBonus,
} from "../../../src/improve/rl/train/index.js";

const root = mkdtempSync(join(tmpdir(), "clade-train-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `run-${dirs++}`);

const maze = findEnv("maze");

/** A tiny configuration: a step takes a few milliseconds. */
const TINY: Omit<TrainOptions, "env"> = {
  algo: "ppo",
  featureDim: 512,
  hidden: 8,
  valueHidden: 4,
  groupSize: 3,
  batchTasks: 2,
  epochs: 2,
  minibatches: 2,
  schedule: "custom:3x2,5x2,8",
  trainTasks: [100, 101, 102, 103, 104],
  noveltyBonus: 0.05,
  seed: 11,
};

/** Metrics without the wall-clock fields, which no two runs share. */
function curve(metrics: readonly StepMetrics[]) {
  return metrics.map(({ seconds: _s, timing: _t, eval: evaluation, ...rest }) => ({
    ...rest,
    ...(evaluation ? { eval: { ...evaluation, seconds: 0 } } : {}),
  }));
}

function expectSameWeights(a: PolicyModel, b: PolicyModel): void {
  expect([...a.params.keys()].sort()).toEqual([...b.params.keys()].sort());
  for (const [name, t] of a.params) {
    const other = b.params.get(name)?.data as Float32Array;
    // Bit for bit: the same bytes, not merely close numbers.
    expect(Buffer.from(other.buffer).equals(Buffer.from(t.data.buffer))).toBe(true);
  }
}

describe("resume", () => {
  it("train 6 steps = train 3, stop, resume to 6: the same metrics and the same weights", async () => {
    const whole = await train({ ...TINY, env: maze, steps: 6, evalEvery: 3, evalTasks: [0, 1] });
    expect(whole.metrics.map((m) => m.step)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(whole.metrics.map((m) => m.horizon)).toEqual([3, 3, 5, 5, 8, 8]);

    const dir = freshDir();
    const first = await train({
      ...TINY,
      env: maze,
      steps: 3,
      dir,
      evalEvery: 3,
      evalTasks: [0, 1],
    });
    expect(first.steps).toBe(3);
    expect(first.stopped).toBe(false);
    const second = await train({
      ...TINY,
      env: maze,
      steps: 6,
      dir,
      resume: true,
      evalEvery: 3,
      evalTasks: [0, 1],
    });
    expect(second.resumedFrom).toBe(3);
    expect(curve(second.metrics)).toEqual(curve(whole.metrics));
    expectSameWeights(second.model, whole.model);
    // The final policy on disk is the final weights (stored as F32, as in memory).
    expectSameWeights(await loadPolicy(second.policyPath as string), whole.model);
    expect(second.model.provenance.step).toBe(6);
  });

  it("a crash between checkpoints redoes the lost steps exactly", async () => {
    const whole = await train({ ...TINY, env: maze, steps: 5 });
    const dir = freshDir();
    await expect(
      train({
        ...TINY,
        env: maze,
        steps: 5,
        dir,
        checkpointEvery: 2,
        onStep: (m) => {
          if (m.step === 2) throw new Error("killed");
        },
      }),
    ).rejects.toThrow("killed");
    // Step 2 finished but was never checkpointed: the newest checkpoint is after step 1.
    expect((await latestCheckpoint(dir))?.step).toBe(2);
    const resumed = await train({ ...TINY, env: maze, steps: 5, dir, resume: true });
    expect(resumed.resumedFrom).toBe(2);
    expect(curve(resumed.metrics)).toEqual(curve(whole.metrics));
    expectSameWeights(resumed.model, whole.model);
  });

  it("a signal stops after the step in flight, checkpoints, and the run resumes on the same curve", async () => {
    const whole = await train({ ...TINY, env: maze, steps: 4 });
    const dir = freshDir();
    const controller = new AbortController();
    const stopped = await train({
      ...TINY,
      env: maze,
      steps: 4,
      dir,
      checkpointEvery: 0,
      signal: controller.signal,
      onStep: (m) => {
        if (m.step === 1) controller.abort(new Error("SIGINT"));
      },
    });
    expect(stopped.stopped).toBe(true);
    expect(stopped.steps).toBe(2);
    expect((await latestCheckpoint(dir))?.step).toBe(2);
    const resumed = await train({ ...TINY, env: maze, steps: 4, dir, resume: true });
    expect(resumed.stopped).toBe(false);
    expect(curve(resumed.metrics)).toEqual(curve(whole.metrics));
    expectSameWeights(resumed.model, whole.model);
  });

  it("refuses to resume with settings that change the curve, and allows those that do not", async () => {
    const dir = freshDir();
    await train({ ...TINY, env: maze, steps: 2, dir });
    await expect(
      train({ ...TINY, env: maze, steps: 3, dir, resume: true, lr: 0.5 }),
    ).rejects.toThrow(/cannot resume from .*step-00000002: .*lr 0\.003, now 0\.5/);
    const more = await train({
      ...TINY,
      env: maze,
      steps: 3,
      dir,
      resume: true,
      rolloutMode: "lockstep",
      checkpointEvery: 5,
    });
    expect(more.steps).toBe(3);
  });
});

describe("checkpoints", () => {
  it("are complete folders (policy, Adam moments, state), the newest `keep` of them", async () => {
    const dir = freshDir();
    const result = await train({
      ...TINY,
      env: maze,
      steps: 5,
      dir,
      checkpointEvery: 1,
      keepCheckpoints: 2,
    });
    expect(readdirSync(join(dir, "checkpoints")).sort()).toEqual([
      "step-00000004",
      "step-00000005",
    ]);
    const saved = await loadCheckpoint<{ metrics: StepMetrics[] }>(
      join(dir, "checkpoints", "step-00000005"),
    );
    expect(saved.step).toBe(5);
    expect(saved.moments.t).toBe(5 * 2 * 2); // steps × epochs × minibatches
    expect(saved.extra.metrics).toHaveLength(5);
    expectSameWeights(saved.model, result.model);
    expect(existsSync(join(dir, "policy.safetensors"))).toBe(true);
  });
});

describe("algorithms", () => {
  const algorithms: Algorithm[] = ["grpo", "ppo", "rloo", "reinforce++", "remax"];
  it.each(algorithms)("%s trains and reports finite metrics", async (algo) => {
    const result = await train({ ...TINY, env: maze, algo, steps: 2 });
    for (const m of result.metrics) {
      for (const key of [
        "meanReward",
        "successRate",
        "entropy",
        "kl",
        "clipFraction",
        "gradNorm",
        "policyLoss",
        "valueLoss",
        "seconds",
      ] as const) {
        expect(Number.isFinite(m[key]), `${algo} ${key}`).toBe(true);
      }
      expect(m.envSteps).toBeGreaterThan(0);
      expect(m.trainedTurns).toBeGreaterThan(0);
      expect(m.errors).toBe(0);
    }
    // ReMax plays one more (greedy) sample per group: its steps count, its turns are not trained.
    if (algo === "remax") {
      const m = result.metrics[0] as StepMetrics;
      expect(m.envSteps).toBeGreaterThan(m.trainedTurns);
    }
  });

  it("a KL loss to the starting policy is reported when klCoef > 0", async () => {
    const dir = freshDir();
    const result = await train({ ...TINY, env: maze, steps: 3, klCoef: 0.1, dir });
    expect(existsSync(join(dir, "reference.safetensors"))).toBe(true);
    expect(result.metrics[0]?.refKl).toBe(0); // π = π_ref before the first update
    expect(result.metrics[2]?.refKl).toBeGreaterThan(0);
  });
});

describe("errors", () => {
  it("samples whose environment throws are reported and left out, not scored 0", async () => {
    // Maze, except that task 101 throws on its third step.
    const flaky: EnvDefinition = {
      info: maze.info,
      create: (): Env => {
        const inner = maze.create();
        let task = 0;
        let steps = 0;
        return {
          info: maze.info,
          reset: (index, options) => {
            task = index;
            steps = 0;
            return inner.reset(index, options);
          },
          step: (action) => {
            if (task === 101 && ++steps === 3) throw new Error("server went away");
            return inner.step(action);
          },
        };
      },
    };
    const result = await train({
      ...TINY,
      env: flaky,
      algo: "grpo",
      steps: 3,
      trainTasks: [100, 101],
    });
    for (const m of result.metrics) {
      expect(m.errors).toBe(3); // task 101's group
      expect(m.excluded).toBe(3);
      expect(m.errorMessages).toEqual(["Error: server went away"]);
      // Only task 100's samples are trained on.
      expect(m.trainedTurns).toBeGreaterThan(0);
      expect(m.trainedTurns).toBeLessThanOrEqual(3 * m.horizon);
    }
  });
});

describe("novelty bonus", () => {
  const texts = [
    "You moved up. You are at 2, 3.", // new
    "You cannot move up. You are at 2, 3.", // same numbers: not new
    "You moved down. You are at 3, 3.", // the start again: not new
    "You moved left. You are at 3, 2.", // new
    "You moved left. You are at 3, 1.", // new
  ];
  const turns = texts.map((text, turn) => ({
    turn,
    action: "a",
    envReward: 0,
    observation: { text },
  }));
  const episode = (reward: number) =>
    ({
      initialObservation: { text: "Start. You are at 3, 3." },
      turns,
      success: reward >= 1,
      sample: layoutSample(0, turns, true, reward),
    }) as unknown as Trajectory;

  it("rewards the turns of a failed episode that reach a state new to it, keyed by its numbers", () => {
    expect(noveltyKeyOf("at 3, 3; goal 8, 6", "numbers")).toBe("3,3,8,6");
    const failed = episode(0);
    const sample = withNoveltyBonus(failed, 0.1, "numbers");
    expect(sample.rewards).toEqual([0, 0.1, 0, 0, 0, 0, 0, 0.1, 0, 0.1, 0]);
    expect(sample.mask).toEqual(failed.sample.mask);
    // The whole text as the key: every text here is new.
    expect(withNoveltyBonus(failed, 0.1, "text").rewards).toEqual([
      0, 0.1, 0, 0.1, 0, 0.1, 0, 0.1, 0, 0.1, 0,
    ]);
    // At most `cap` in all.
    expect(withNoveltyBonus(failed, 0.25, "numbers", 0.375).rewards).toEqual([
      0, 0.25, 0, 0, 0, 0, 0, 0.125, 0, 0, 0,
    ]);
  });

  it("leaves a successful episode alone: a success always outscores exploring", () => {
    const won = episode(1);
    expect(withNoveltyBonus(won, 0.1, "numbers").rewards).toEqual(won.sample.rewards);
  });
});

describe("tasks", () => {
  it("each pass over the train tasks deals them all once, as a function of (seed, step)", () => {
    const pool = [10, 11, 12, 13, 14, 15];
    const dealt = [0, 1, 2].flatMap((step) => tasksForStep(pool, 2, 7, step));
    expect([...dealt].sort()).toEqual(pool);
    expect(tasksForStep(pool, 4, 7, 5)).toEqual(tasksForStep(pool, 4, 7, 5));
    expect(tasksForStep(pool, 4, 8, 0)).not.toEqual(tasksForStep(pool, 4, 7, 0));
  });
});

/** Uniform over the listed actions, with its own seeded stream per sample. */
const randomPolicy: RolloutPolicy = {
  decide(state, rng) {
    const actions = state.observation.availableActions ?? [];
    return { action: actions[rng.int(actions.length)] as string };
  },
};

describe("learning", () => {
  it("beats the random agent by a wide margin on held-out small mazes, over fixed seeds", async () => {
    // 91 train and 24 test mazes; random play reaches the goal in 1.7 % of 50-step episodes.
    // The demo's recipe (a 2048 × 16 policy, PPO with the novelty bonus, 30 steps of 8 tasks ×
    // 8 samples at horizon 30): about 13 s of one core per seed. Measured greedy success on the
    // test mazes: seed 1, 0.21; seed 3, 0.29.
    const trainTasks = smallMazes(maze.info.splits.train);
    const testTasks = smallMazes(maze.info.splits.test);
    expect(testTasks).toHaveLength(24);
    const random = await evaluatePolicy({
      env: maze,
      policy: randomPolicy,
      tasks: testTasks,
      mode: "sample",
      samples: DEMO_TRAINING.randomSamples,
      seed: DEMO_TRAINING.randomSeed,
    });
    expect(random.successRate).toBeLessThan(0.05);
    for (const seed of [1, 3]) {
      const result = await train({
        env: maze,
        trainTasks,
        ...DEMO_TRAINING.options,
        steps: DEMO_TRAINING.steps,
        seed,
      });
      const trained = await evaluatePolicy({ env: maze, policy: result.model, tasks: testTasks });
      console.log(
        `maze (small), seed ${seed}: trained ${trained.successRate.toFixed(2)} greedy vs ` +
          `random ${random.successRate.toFixed(2)}`,
      );
      expect(trained.successRate).toBeGreaterThan(random.successRate + 0.15);
    }
  }, 120_000);
});
