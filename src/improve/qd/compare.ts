/**
 * The comparison that matters (the paper's central table): policies (the experts, the base, a
 * multi-task baseline, CycleQD's finalists) played greedily on each task's held-out test tasks,
 * with 95 % bootstrap intervals over test tasks.
 *
 * The mean over tasks is the unweighted mean of the K success rates (each task counts the same
 * however many test tasks it has); its interval resamples each task's test tasks independently
 * (a stratified bootstrap), since tasks of different environments are not paired.
 */
import { createRng } from "../../env/rng.js";
import { bootstrapInterval, type Interval, percentileInterval } from "../../eval/metrics.js";
import type { PolicyModel } from "../rl/policy/model.js";
import { evaluatePolicy } from "../rl/train/evaluate.js";
import type { QdTask } from "./experts.js";

/** Resamples of the bootstrap intervals. */
export const COMPARISON_RESAMPLES = 2000;
const COMPARISON_STREAM = 0xc0a1;

export interface TaskResult {
  /** Successes over test tasks that did not error. */
  readonly rate: number;
  readonly interval: Interval;
  readonly tasks: number;
  /** Test tasks whose episode errored (left out, never failures). */
  readonly errors: number;
}

/** One genome (a policy, an agent configuration) on every task's test tasks. */
export interface Comparison {
  readonly name: string;
  /** One per QD task, in task order. */
  readonly perTask: TaskResult[];
  /** Unweighted mean of the per-task rates, with its stratified interval. */
  readonly mean: number;
  readonly meanInterval: Interval;
}

export interface PolicyComparison extends Comparison {
  readonly envSteps: number;
}

/** Each task's played scores (errored tasks left out). */
type Played = readonly (readonly number[])[];

const average = (xs: readonly number[]) =>
  xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;

/** The percentile interval of the mean of per-task means, resampling within each task. */
export function stratifiedMeanInterval(played: Played, seed = 0): Interval {
  if (played.some((scores) => scores.length === 0)) return { low: Number.NaN, high: Number.NaN };
  const rng = createRng(seed, COMPARISON_STREAM);
  const means: number[] = [];
  for (let r = 0; r < COMPARISON_RESAMPLES; r++) {
    let total = 0;
    for (const scores of played) {
      let sum = 0;
      for (let i = 0; i < scores.length; i++) sum += scores[rng.int(scores.length)] as number;
      total += sum / scores.length;
    }
    means.push(total / played.length);
  }
  return percentileInterval(means, 0.95);
}

/** Plays one policy on every task's test tasks. */
export async function comparePolicy(
  name: string,
  policy: PolicyModel,
  tasks: readonly QdTask[],
  signal?: AbortSignal,
): Promise<PolicyComparison> {
  const played: PlayedTask[] = [];
  let envSteps = 0;
  for (const task of tasks) {
    const result = await evaluatePolicy({
      env: task.env,
      policy,
      tasks: task.test,
      mode: "greedy",
      ...(signal ? { signal } : {}),
    });
    envSteps += result.envSteps;
    played.push({
      scores: result.taskScores.filter((s): s is number => s !== null),
      total: result.taskScores.length,
    });
  }
  return { ...comparisonOf(name, played), envSteps };
}

/** One task's test tasks as played: the scores of those that did not error, and how many there were. */
export interface PlayedTask {
  readonly scores: readonly number[];
  readonly total: number;
}

/** Per-task rates with bootstrap intervals, and their mean with its stratified interval. */
export function comparisonOf(name: string, played: readonly PlayedTask[]): Comparison {
  const perTask = played.map(({ scores, total }) => ({
    rate: average(scores),
    interval: bootstrapInterval(scores, average, { resamples: COMPARISON_RESAMPLES }),
    tasks: scores.length,
    errors: total - scores.length,
  }));
  return {
    name,
    perTask,
    mean: average(perTask.map((t) => t.rate)),
    meanInterval: stratifiedMeanInterval(played.map((p) => p.scores)),
  };
}

/** Plays each named policy in turn (in the order given). */
export async function comparePolicies(
  policies: readonly { readonly name: string; readonly policy: PolicyModel }[],
  tasks: readonly QdTask[],
  signal?: AbortSignal,
): Promise<PolicyComparison[]> {
  const results: PolicyComparison[] = [];
  for (const { name, policy } of policies) {
    results.push(await comparePolicy(name, policy, tasks, signal));
  }
  return results;
}
