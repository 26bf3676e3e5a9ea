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
import { bootstrapInterval, type Interval } from "../../eval/metrics.js";
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

export interface PolicyComparison {
  readonly name: string;
  /** One per QD task, in task order. */
  readonly perTask: TaskResult[];
  /** Unweighted mean of the per-task rates, with its stratified interval. */
  readonly mean: number;
  readonly meanInterval: Interval;
  readonly envSteps: number;
}

/** Each task's played scores (errored tasks left out). */
type Played = number[][];

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
  means.sort((a, b) => a - b);
  const at = (q: number) => {
    const position = q * (means.length - 1);
    const lower = Math.floor(position);
    const lo = means[lower] as number;
    const hi = means[Math.ceil(position)] as number;
    return lo + (hi - lo) * (position - lower);
  };
  return { low: at(0.025), high: at(0.975) };
}

/** Plays one policy on every task's test tasks. */
export async function comparePolicy(
  name: string,
  policy: PolicyModel,
  tasks: readonly QdTask[],
  signal?: AbortSignal,
): Promise<PolicyComparison> {
  const played: Played = [];
  const perTask: TaskResult[] = [];
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
    const scores = result.taskScores.filter((s): s is number => s !== null);
    played.push(scores);
    perTask.push({
      rate: average(scores),
      interval: bootstrapInterval(scores, average, { resamples: COMPARISON_RESAMPLES }),
      tasks: scores.length,
      errors: result.taskScores.length - scores.length,
    });
  }
  return {
    name,
    perTask,
    mean: average(perTask.map((t) => t.rate)),
    meanInterval: stratifiedMeanInterval(played),
    envSteps,
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
