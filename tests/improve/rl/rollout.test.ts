/**
 * RL rollouts: the masks and where the outcome reward sits, errored samples (excluded from their
 * group, reported, never scored 0), determinism from (seed, step), and lockstep rounds giving the
 * same trajectories as independent stepping, only slower when environments are uneven.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { findEnv } from "../../../src/env/registry.js";
import type { Env, EnvDefinition, EnvInfo, Observation } from "../../../src/env/types.js";
import { computeAdvantages } from "../../../src/improve/rl/estimators/index.js";
import { createPolicyModel, type PolicyModel } from "../../../src/improve/rl/policy/index.js";
import {
  collectGroup,
  collectGroups,
  embeddedPolicy,
  type RolloutPolicy,
  type Trajectory,
} from "../../../src/improve/rl/rollout/index.js";

const INFO: EnvInfo = {
  name: "count",
  version: "1.0.0",
  description: "say a or b until the task's count is reached",
  instruction: "Say a or b. Saying a at the end wins.",
  splits: { train: { start: 0, end: 10 }, test: { start: 10, end: 20 } },
  successThreshold: 1,
  maxSteps: 10,
};

/**
 * Task i ends after (i mod 3) + 2 steps; the final reward is 1 when the last action is "a". Every
 * step also returns a small per-step reward (0.1) that training must not see. Task 7 throws on
 * its second step; task 8 lists no actions after its first step; task 9 throws on reset.
 */
function countEnv(): EnvDefinition {
  return {
    info: INFO,
    create: (): Env => {
      let task = 0;
      let steps = 0;
      const observe = (text: string): Observation => ({
        text,
        availableActions: task === 8 && steps > 0 ? [] : ["a", "b"],
      });
      return {
        info: INFO,
        async reset(taskIndex) {
          if (taskIndex === 9) throw new Error("reset failed on purpose");
          task = taskIndex;
          steps = 0;
          return observe(`task ${taskIndex}: say a or b`);
        },
        async step(action) {
          steps++;
          if (task === 7 && steps === 2) throw new Error("the environment broke");
          const done = steps >= (task % 3) + 2;
          return {
            observation: observe(`you said ${action} (${steps})`),
            reward: done ? (action === "a" ? 1 : 0) : 0.1,
            done,
            info: {},
          };
        },
      };
    },
  };
}

/** The environment with every step delayed by delayOf(instance, step) milliseconds. */
function delayed(def: EnvDefinition, delayOf: (instance: number, step: number) => number) {
  let instances = 0;
  return {
    info: def.info,
    create: (): Env => {
      const inner = def.create();
      const instance = instances++;
      let steps = 0;
      return {
        info: def.info,
        reset: (task, options) => {
          steps = 0;
          return inner.reset(task, options);
        },
        step: async (action) => {
          await sleep(delayOf(instance, steps++));
          return inner.step(action);
        },
      };
    },
  } satisfies EnvDefinition;
}

function smallModel(seed = 1): PolicyModel {
  return createPolicyModel({
    env: "count",
    envVersion: "1.0.0",
    seed,
    features: { dim: 512 },
    hidden: 8,
    valueHidden: 4,
  });
}

/** What must be equal between two collections of the same (seed, step): everything but time. */
function essence(trajectories: readonly Trajectory[]) {
  return trajectories.map((t) => ({
    task: t.taskIndex,
    sample: t.sampleIndex,
    end: t.end,
    error: t.error,
    reward: t.reward,
    actions: t.turns.map((turn) => turn.action),
    logprobs: t.turns.map((turn) => turn.logprob),
    values: t.turns.map((turn) => turn.value),
    sample_: t.sample,
  }));
}

describe("rollout layout", () => {
  it("alternates observation (0) and agent (1) positions and puts the outcome on the last agent turn", async () => {
    const group = await collectGroup({
      env: countEnv(),
      policy: embeddedPolicy(smallModel(), { values: true }),
      task: 4, // ends after 3 steps
      groupSize: 6,
      horizon: 10,
      seed: 3,
    });
    expect(group.samples).toHaveLength(6);
    for (const t of group.samples) {
      expect(t.end).toBe("done");
      expect(t.turns).toHaveLength(3);
      expect(t.envSteps).toBe(3);
      expect(t.sample.mask).toEqual([0, 1, 0, 1, 0, 1, 0]);
      const won = t.turns[2]?.action === "a" ? 1 : 0;
      expect(t.reward).toBe(won);
      expect(t.success).toBe(won === 1);
      // The per-step rewards are kept on the turns, not trained on; the outcome sits on position 5.
      expect(t.turns.map((turn) => turn.envReward)).toEqual([0.1, 0.1, won]);
      expect(t.sample.rewards).toEqual([0, 0, 0, 0, 0, won, 0]);
      // Log-probabilities and values at agent positions only.
      const logprobs = t.sample.logprobs as number[];
      const values = t.sample.values as number[];
      for (const p of [0, 2, 4, 6]) {
        expect(logprobs[p]).toBe(0);
        expect(values[p]).toBe(0);
      }
      t.turns.forEach((turn, i) => {
        expect(logprobs[2 * i + 1]).toBe(turn.logprob);
        expect(turn.logprob).toBeLessThan(0);
        expect(values[2 * i + 1]).toBe(turn.value);
        expect(turn.features?.candidates).toHaveLength(2);
        expect(["a", "b"][turn.actionIndex as number]).toBe(turn.action);
      });
    }
    // The estimators take the samples as they are.
    const result = computeAdvantages(
      "gae",
      group.samples.map((t) => t.sample),
    );
    expect(result.excluded).toEqual([]);
  });

  it("cuts samples at the horizon and keeps the last step's reward", async () => {
    const group = await collectGroup({
      env: countEnv(),
      policy: embeddedPolicy(smallModel()),
      task: 5, // would end after 4 steps
      groupSize: 3,
      horizon: 2,
      seed: 0,
    });
    for (const t of group.samples) {
      expect(t.end).toBe("horizon");
      expect(t.turns).toHaveLength(2);
      expect(t.reward).toBe(0.1);
      expect(t.sample.rewards).toEqual([0, 0, 0, 0.1, 0]);
    }
  });
});

describe("errors", () => {
  it("ends the sample as an error: excluded from its group, reported, never scored 0", async () => {
    const result = await collectGroups({
      env: countEnv(),
      policy: embeddedPolicy(smallModel(), { envName: "count" }),
      tasks: [3, 7, 8, 9],
      groupSize: 4,
      horizon: 10,
      seed: 1,
    });
    const byTask = (task: number) =>
      result.trajectories.filter((t) => t.taskIndex === task) as Trajectory[];
    expect(byTask(3).every((t) => t.error === undefined)).toBe(true);
    for (const t of byTask(7)) {
      expect(t.end).toBe("error");
      expect(t.error).toBe("Error: the environment broke");
      expect(t.success).toBe(false);
      expect(t.turns).toHaveLength(1);
    }
    for (const t of byTask(8)) {
      expect(t.error).toMatch(/^PolicyNeedsActionsError: .*count listed none/);
    }
    for (const t of byTask(9)) {
      expect(t.error).toBe("Error: reset failed on purpose");
      expect(t.sample.mask).toEqual([]);
    }
    expect(result.errors).toHaveLength(12);
    expect(new Set(result.errors.map((e) => e.taskIndex))).toEqual(new Set([7, 8, 9]));

    const advantages = computeAdvantages(
      "grpo",
      result.trajectories.map((t) => t.sample),
    );
    expect(advantages.excluded).toHaveLength(12);
    result.trajectories.forEach((t, i) => {
      if (t.error !== undefined) expect(advantages.estimates[i]).toBeNull();
      else expect(advantages.estimates[i]).not.toBeNull();
    });
    // Task 3's group is compared only with itself: an errored group changes nothing there.
    const alone = await collectGroups({
      env: countEnv(),
      policy: embeddedPolicy(smallModel()),
      tasks: [3],
      groupSize: 4,
      horizon: 10,
      seed: 1,
    });
    const lone = computeAdvantages(
      "grpo",
      alone.trajectories.map((t) => t.sample),
    );
    expect(lone.estimates).toEqual(advantages.estimates.slice(0, 4));
  });

  it("a policy that throws is a model error of that sample only", async () => {
    const base = embeddedPolicy(smallModel());
    let calls = 0;
    const flaky: RolloutPolicy = {
      decide(state, rng, mode) {
        if (++calls === 3) throw new Error("model unavailable");
        return base.decide(state, rng, mode);
      },
    };
    const result = await collectGroups({
      env: countEnv(),
      policy: flaky,
      tasks: [0],
      groupSize: 4,
      horizon: 10,
      seed: 1,
      mode: "lockstep",
    });
    expect(result.errors.map((e) => e.message)).toEqual(["Error: model unavailable"]);
    expect(result.trajectories.filter((t) => t.error === undefined)).toHaveLength(3);
  });

  it("an aborted collection rejects with the reason instead of recording errors", async () => {
    const controller = new AbortController();
    const pending = collectGroups({
      env: delayed(countEnv(), () => 5),
      policy: embeddedPolicy(smallModel()),
      tasks: [0, 1, 2],
      groupSize: 2,
      horizon: 10,
      seed: 1,
      signal: controller.signal,
    });
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
  });
});

describe("determinism", () => {
  const maze = findEnv("maze");
  const model = createPolicyModel({
    env: "maze",
    envVersion: maze.info.version,
    seed: 5,
    features: { dim: 1024 },
    hidden: 8,
    valueHidden: 4,
  });
  const collect = (step: number, mode: "independent" | "lockstep", concurrency?: number) =>
    collectGroups({
      env: maze,
      policy: embeddedPolicy(model, { values: true }),
      tasks: [120, 121, 120],
      groupSize: 3,
      horizon: 12,
      seed: 9,
      step,
      mode,
      greedyBaseline: true,
      ...(concurrency ? { concurrency } : {}),
    });

  it("the same (seed, step) gives the same trajectories; another step others", async () => {
    const a = await collect(4, "independent");
    const b = await collect(4, "independent", 2);
    expect(essence(a.trajectories)).toEqual(essence(b.trajectories));
    const c = await collect(5, "independent");
    expect(essence(c.trajectories)).not.toEqual(essence(a.trajectories));
    // A task twice in a batch gives two groups with their own ids.
    expect(a.groups.map((g) => g.group)).toEqual([0, 1, 2]);
    expect(a.trajectories.map((t) => t.sample.group)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2]);
    // The greedy baseline (ReMax) is one more sample per group, not among the training samples.
    for (const group of a.groups) {
      expect(group.baseline?.greedy).toBe(true);
      expect(group.baseline?.sampleIndex).toBe(3);
    }
    expect(a.trajectories.some((t) => t.greedy)).toBe(false);
    // The two groups of task 120 draw from their own streams.
    const actions = (g: number) => a.groups[g]?.samples.map((t) => t.turns.map((x) => x.action));
    expect(actions(0)).not.toEqual(actions(2));
    expect(a.envSteps).toBe(
      a.trajectories.reduce((n, t) => n + t.envSteps, 0) +
        a.groups.reduce((n, g) => n + (g.baseline?.envSteps ?? 0), 0),
    );
  });

  it("lockstep rounds give the same trajectories as independent stepping", async () => {
    const independent = await collect(2, "independent");
    const lockstep = await collect(2, "lockstep");
    expect(essence(lockstep.trajectories)).toEqual(essence(independent.trajectories));
    expect(lockstep.groups.map((g) => g.baseline?.turns.map((t) => t.action))).toEqual(
      independent.groups.map((g) => g.baseline?.turns.map((t) => t.action)),
    );
  });

  it("with uneven environment latency only the timing differs, and lockstep waits longer", async () => {
    // Every fourth step of a sample is slow (10 ms), at staggered turns: each lockstep round waits
    // for some slow sample, while independent samples each wait only for their own slow steps.
    const uneven = delayed(maze, (instance, step) => ((instance + step) % 4 === 0 ? 10 : 0));
    const run = (mode: "independent" | "lockstep") =>
      collectGroups({
        env: uneven,
        policy: embeddedPolicy(model),
        tasks: [130, 131],
        groupSize: 4,
        horizon: 12,
        seed: 2,
        mode,
      });
    const independent = await run("independent");
    const lockstep = await run("lockstep");
    expect(essence(lockstep.trajectories)).toEqual(essence(independent.trajectories));
    expect(lockstep.timing.wallMs).toBeGreaterThan(independent.timing.wallMs);
  });
});
