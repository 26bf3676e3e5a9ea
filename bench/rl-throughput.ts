/**
 * RL throughput of the embedded policy on maze (src/improve/rl): environment steps per second
 * of training (rollouts and updates together), where the time goes, and independent stepping
 * against the reference's lockstep rounds. Each figure prints as one JSON line with its absolute
 * value and its ratio to a baseline measured in the same run.
 *
 * - rl_train_env_steps_per_s: env steps per second of `train` (TRAIN_DEFAULTS except the steps;
 *   the default policy size; every sample of a step in flight at once, as `clade train` runs),
 *   rollouts, advantages and PPO updates included. Baseline: the same steps' rollouts alone (the
 *   collector and the policy's forward passes, no update), so the ratio is the share of training
 *   time not spent updating.
 * - rl_share_env, rl_share_policy_forward, rl_share_update, rl_share_other: shares of the training
 *   wall clock spent in the environment (create, reset, step), in the policy during rollouts
 *   (features and forward), in the update, and in everything else (advantages, the collector's
 *   bookkeeping, yielding to the event loop); the baseline is that wall clock (ratio = the share;
 *   the four sum to 1). Measured on a second run of the same steps with one sample in flight at a
 *   time (`concurrency: 1`): the collector's env and policy spans last until their sample resumes,
 *   so with many samples in flight each also holds the other samples' turns and their sums exceed
 *   the wall clock; with one they are disjoint. The maze runs in process, so one sample in flight
 *   does the same work in about the same time (checked: `same_curve`, and the figure below).
 * - rl_train_one_in_flight_env_steps_per_s: that second run's throughput; baseline: the first's.
 * - rl_independent_env_steps_per_s: a batch of groups (4 tasks × 8 samples, a 4096 × 32 policy) on
 *   maze wrapped so that every step waits a random 0–5 ms (a remote environment's uneven
 *   latency), collected with independent stepping;
 *   baseline: the same batch in lockstep rounds, where each round waits for its slowest sample.
 *   Both give the same trajectories (checked: `same_trajectories`); only the timing differs.
 */
import { setTimeout as sleep } from "node:timers/promises";
// The compiled library, as `clade train` runs it (npm run bench builds it first).
import { findEnv } from "../dist/env/registry.js";
import { createRng } from "../dist/env/rng.js";
import type { Env, EnvDefinition } from "../dist/env/types.js";
import { createPolicyModel } from "../dist/improve/rl/policy/index.js";
import {
  collectGroups,
  embeddedPolicy,
  type RolloutMode,
} from "../dist/improve/rl/rollout/index.js";
import {
  type StepMetrics,
  TRAIN_DEFAULTS,
  tasksForStep,
  train,
} from "../dist/improve/rl/train/index.js";

process.setSourceMapsEnabled(false);

const ENV = "maze";
/** Training steps measured (after one warm-up step); each is TRAIN_DEFAULTS' batch. */
const TRAIN_STEPS = Number(process.env.BENCH_RL_STEPS ?? 4);
/** Per-step latency of the uneven environment: uniform in [0, MAX_DELAY_MS). */
const MAX_DELAY_MS = 5;
/**
 * The latency comparison's batch and policy: small enough that the policy's CPU time per round
 * (32 forward passes of a 4096 × 32 scorer, about 5 ms) is of the order of the latency, as with
 * a remote environment; with the default policy and batch the rounds are bound by the policy's
 * CPU and both modes tie.
 */
const LATENCY_TASKS = 4;
const LATENCY_GROUP = 8;
const LATENCY_HORIZON = 30;
const LATENCY_POLICY = { dim: 4096, hidden: 32 };

const env = findEnv(ENV);
const line = (figure: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(figure)}\n`);
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

// ---- Training throughput and where the time goes ----

const warm = await train({ env, steps: 1, checkpointEvery: 0, seed: 1 });

/** TRAIN_STEPS measured steps from the warm weights (the first step, run before them, warms up). */
async function measureTraining(concurrency?: number) {
  const run = await train({
    env,
    steps: TRAIN_STEPS + 1,
    checkpointEvery: 0,
    seed: 1,
    model: warm.model,
    ...(concurrency ? { concurrency } : {}),
  });
  const steps = run.metrics.slice(1);
  const sum = (pick: (m: StepMetrics) => number) => steps.reduce((s, m) => s + pick(m), 0);
  const envSteps = sum((m) => m.envSteps);
  const wallMs = sum((m) => m.seconds * 1000);
  return {
    steps,
    envSteps,
    wallMs,
    rolloutMs: sum((m) => m.timing.rolloutMs),
    envMs: sum((m) => m.timing.envMs),
    policyMs: sum((m) => m.timing.policyMs),
    updateMs: sum((m) => m.timing.updateMs),
    rate: envSteps / (wallMs / 1000),
  };
}
/** The curve without its wall-clock fields: the same for the same seed, whatever the timing. */
const curveOf = (steps: readonly StepMetrics[]) =>
  JSON.stringify(steps.map(({ seconds: _s, timing: _t, ...rest }) => rest));

const trained = await measureTraining();
const rolloutRate = trained.envSteps / (trained.rolloutMs / 1000);
line({
  name: "rl_train_env_steps_per_s",
  value: Math.round(trained.rate),
  unit: "env steps/s (rollouts + updates)",
  ratio: round(trained.rate / rolloutRate),
  baseline: Math.round(rolloutRate),
  baseline_unit: "env steps/s of the same rollouts alone",
  config: {
    algo: TRAIN_DEFAULTS.algo,
    groupSize: TRAIN_DEFAULTS.groupSize,
    batchTasks: TRAIN_DEFAULTS.batchTasks,
    epochs: TRAIN_DEFAULTS.epochs,
    minibatches: TRAIN_DEFAULTS.minibatches,
    featureDim: TRAIN_DEFAULTS.featureDim,
    hidden: TRAIN_DEFAULTS.hidden,
    steps: trained.steps.length,
    envSteps: trained.envSteps,
  },
});

// Where the time goes: the same steps with one sample in flight, whose spans do not overlap.
const single = await measureTraining(1);
const sameCurve = curveOf(single.steps) === curveOf(trained.steps);
const otherMs = single.wallMs - single.envMs - single.policyMs - single.updateMs;
for (const [name, ms] of [
  ["rl_share_env", single.envMs],
  ["rl_share_policy_forward", single.policyMs],
  ["rl_share_update", single.updateMs],
  ["rl_share_other", otherMs],
] as const) {
  line({
    name,
    value: round(ms / 1000, 2),
    unit: "s",
    ratio: round(ms / single.wallMs),
    baseline: round(single.wallMs / 1000, 2),
    baseline_unit:
      "s of training wall clock, one sample in flight (ratio = share; the four sum to 1)",
  });
}
line({
  name: "rl_train_one_in_flight_env_steps_per_s",
  value: Math.round(single.rate),
  unit: "env steps/s of the shares' run (one sample in flight)",
  ratio: round(single.rate / trained.rate),
  baseline: Math.round(trained.rate),
  baseline_unit: "env steps/s with every sample of a step in flight (rl_train_env_steps_per_s)",
  same_curve: sameCurve,
});

// ---- Independent stepping against lockstep rounds, with uneven latency ----

/** Maze whose every step first waits a random 0–5 ms, drawn per instance and step. */
function unevenLatency(def: EnvDefinition): EnvDefinition {
  let instances = 0;
  return {
    info: def.info,
    create: (): Env => {
      const inner = def.create();
      const rng = createRng(0x1a7e, instances++);
      return {
        info: def.info,
        reset: (task, options) => inner.reset(task, options),
        step: async (action) => {
          await sleep(rng.next() * MAX_DELAY_MS);
          return inner.step(action);
        },
        close: () => inner.close?.() ?? Promise.resolve(),
      };
    },
  };
}

const model = createPolicyModel({
  env: ENV,
  envVersion: env.info.version,
  seed: 3,
  features: { dim: LATENCY_POLICY.dim },
  hidden: LATENCY_POLICY.hidden,
});
const tasks = tasksForStep(
  Array.from({ length: 400 }, (_, i) => 100 + i),
  LATENCY_TASKS,
  3,
  0,
);
async function collect(mode: RolloutMode) {
  const started = performance.now();
  const result = await collectGroups({
    env: unevenLatency(env),
    policy: embeddedPolicy(model),
    tasks,
    groupSize: LATENCY_GROUP,
    horizon: LATENCY_HORIZON,
    seed: 3,
    mode,
  });
  const seconds = (performance.now() - started) / 1000;
  return { result, rate: result.envSteps / seconds };
}
await collect("independent"); // warm-up
const lockstep = await collect("lockstep");
const independent = await collect("independent");
const actions = (r: typeof lockstep) =>
  JSON.stringify(r.result.trajectories.map((t) => t.turns.map((turn) => turn.action)));
line({
  name: "rl_independent_env_steps_per_s",
  value: Math.round(independent.rate),
  unit: `env steps/s, independent stepping, 0–${MAX_DELAY_MS} ms per step`,
  ratio: round(independent.rate / lockstep.rate),
  baseline: Math.round(lockstep.rate),
  baseline_unit: "env steps/s, lockstep rounds (each waits for the slowest sample)",
  samples: LATENCY_TASKS * LATENCY_GROUP,
  horizon: LATENCY_HORIZON,
  policy: LATENCY_POLICY,
  same_trajectories: actions(independent) === actions(lockstep),
});
