/**
 * Evaluating the embedded policy on tasks (held-out test tasks, say) through the RL rollout: one
 * sample per task, greedy by default, up to the horizon (the environment's own step limit by
 * default). Deterministic for greedy play; sampled play is keyed by the seed.
 */
import type { EnvDefinition } from "../../../env/types.js";
import type { Featurizer, PolicyModel } from "../policy/index.js";
import { collectGroups } from "../rollout/collect.js";
import { embeddedPolicy } from "../rollout/embedded.js";
import type { ActionMode, CollectResult, RolloutPolicy } from "../rollout/types.js";

export interface EvaluateOptions {
  env: EnvDefinition;
  /** The embedded model, or any rollout policy. */
  policy: PolicyModel | RolloutPolicy;
  tasks: readonly number[];
  /** Agent turns per episode; the environment's maxSteps by default. */
  horizon?: number;
  /** "greedy" (default) or "sample". */
  mode?: ActionMode;
  /** Sampling temperature of the embedded model (sample mode). */
  temperature?: number;
  /** Keys the sampling streams (sample mode). */
  seed?: number;
  /** Episodes per task (sample mode; greedy play repeats itself). */
  samples?: number;
  featurizer?: Featurizer;
  signal?: AbortSignal;
}

export interface EvaluationResult {
  /** Successes over episodes that did not error. */
  successRate: number;
  meanReward: number;
  episodes: number;
  successes: number;
  errors: number;
  /** Successful episodes' mean number of agent turns (0 when none succeeded). */
  meanSuccessTurns: number;
  /**
   * Per task (in the order of `tasks`): the share of its non-errored episodes that succeeded,
   * null when all of them errored. Intervals resample these.
   */
  taskScores: (number | null)[];
  /** env.step() calls of the evaluation (an environment-step budget counts them). */
  envSteps: number;
  seconds: number;
}

function isModel(policy: PolicyModel | RolloutPolicy): policy is PolicyModel {
  return (policy as PolicyModel).params instanceof Map;
}

export async function evaluatePolicy(options: EvaluateOptions): Promise<EvaluationResult> {
  const started = performance.now();
  const mode = options.mode ?? "greedy";
  const policy = isModel(options.policy)
    ? embeddedPolicy(options.policy, {
        temperature: options.temperature ?? 1,
        envName: options.env.info.name,
        ...(options.featurizer ? { featurizer: options.featurizer } : {}),
      })
    : options.policy;
  const result = await collectGroups({
    env: options.env,
    policy,
    tasks: options.tasks,
    groupSize: mode === "greedy" ? 1 : (options.samples ?? 1),
    horizon: options.horizon ?? options.env.info.maxSteps,
    seed: options.seed ?? 0,
    actionMode: mode,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  let successes = 0;
  let reward = 0;
  let played = 0;
  let successTurns = 0;
  for (const t of result.trajectories) {
    if (t.error !== undefined) continue;
    played++;
    reward += t.reward;
    if (t.success) {
      successes++;
      successTurns += t.turns.length;
    }
  }
  return {
    successRate: played === 0 ? 0 : successes / played,
    meanReward: played === 0 ? 0 : reward / played,
    episodes: result.trajectories.length,
    successes,
    errors: result.errors.length,
    meanSuccessTurns: successes === 0 ? 0 : successTurns / successes,
    taskScores: taskScoresOf(result.groups),
    envSteps: result.envSteps,
    seconds: (performance.now() - started) / 1000,
  };
}

function taskScoresOf(groups: CollectResult["groups"]): (number | null)[] {
  return groups.map((group) => {
    const played = group.samples.filter((t) => t.error === undefined);
    return played.length === 0 ? null : played.filter((t) => t.success).length / played.length;
  });
}
