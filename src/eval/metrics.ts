/**
 * Exact evaluation metrics, as defined in docs/metrics.md (after shared/reference/metrics.md).
 * Every function here is pure; errored episodes never enter a denominator.
 */
import { createRng } from "../env/rng.js";

/** The finished episodes of one task, plus how many of its episodes errored. */
export interface TaskOutcomes {
  taskIndex: number;
  /** Final rewards of the episodes that finished (success or failure), in sample order. */
  rewards: number[];
  /** How many of those finished episodes succeeded. */
  successes: number;
  /** Episodes that ended in an exception, timeout or provider error. */
  errors: number;
}

/** n choose k as a float ratio helper: the product form avoids overflowing factorials. */
function ratioOfCombinations(top: number, n: number, k: number): number {
  // C(top, k) / C(n, k) = Π_{i<k} (top − i) / (n − i)
  if (k > top) return 0;
  let ratio = 1;
  for (let i = 0; i < k; i++) ratio *= (top - i) / (n - i);
  return ratio;
}

function checkCounts(n: number, c: number, k: number): void {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k))) {
    throw new RangeError("n, c and k must be integers");
  }
  if (n < 0 || c < 0 || c > n) throw new RangeError(`need 0 ≤ c ≤ n, got n=${n} c=${c}`);
  if (k < 1 || k > n) throw new RangeError(`need 1 ≤ k ≤ n, got n=${n} k=${k}`);
}

/** Unbiased Pass@k from n samples with c successes: 1 − C(n−c, k) / C(n, k). */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  return 1 - ratioOfCombinations(n - c, n, k);
}

/** pass^k (τ-bench: all of k tries succeed) from n samples with c successes: C(c, k) / C(n, k). */
export function passHatK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  return ratioOfCombinations(c, n, k);
}

function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

export interface Interval {
  low: number;
  high: number;
}

export interface BootstrapOptions {
  resamples?: number;
  /** Two-sided coverage, 0.95 by default. */
  level?: number;
  seed?: number;
}

/**
 * Percentile bootstrap over tasks: resample whole tasks with replacement, recompute the statistic.
 * Resampling tasks (not episodes) keeps the correlation between samples of one task.
 */
export function bootstrapInterval<T>(
  tasks: readonly T[],
  statistic: (sample: readonly T[]) => number,
  options: BootstrapOptions = {},
): Interval {
  const { resamples = 1000, level = 0.95, seed = 0 } = options;
  if (tasks.length === 0) return { low: Number.NaN, high: Number.NaN };
  const rng = createRng(seed, 0xb007);
  const values: number[] = [];
  const sample: T[] = new Array(tasks.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < tasks.length; i++) sample[i] = tasks[rng.int(tasks.length)] as T;
    const value = statistic(sample);
    if (!Number.isNaN(value)) values.push(value);
  }
  return percentileInterval(values, level);
}

/**
 * The central `level` interval of the values by linear interpolation between order statistics
 * (numpy's default percentile); sorts `values` in place. NaN bounds when there are none.
 */
export function percentileInterval(values: number[], level = 0.95): Interval {
  if (values.length === 0) return { low: Number.NaN, high: Number.NaN };
  values.sort((a, b) => a - b);
  const quantile = (q: number) => {
    const position = q * (values.length - 1);
    const lower = Math.floor(position);
    const lo = values[lower] as number;
    const hi = values[Math.ceil(position)] as number;
    return lo + (hi - lo) * (position - lower);
  };
  const tail = (1 - level) / 2;
  return { low: quantile(tail), high: quantile(1 - tail) };
}

export interface PassMetric {
  k: number;
  value: number;
  interval: Interval;
  /** Tasks with at least k finished samples: the only ones the estimate can use. */
  tasks: number;
}

export interface MetricsReport {
  tasks: number;
  episodes: number;
  finished: number;
  successes: number;
  errors: number;
  /** successes / finished episodes (errors excluded). */
  successRate: number;
  successRateInterval: Interval;
  /** Mean final reward over finished episodes (AgentGym's "score"). */
  meanReward: number;
  meanRewardInterval: Interval;
  /** Mean score over the samples of each task, averaged over tasks; k = samples per task. */
  avgAtK: { k: number; value: number };
  passAtK: PassMetric[];
  passHatK: PassMetric[];
}

export interface MetricsOptions extends BootstrapOptions {
  /** Which k to report Pass@k and pass^k for; defaults to 1, powers of two, and the sample count. */
  ks?: number[];
}

function defaultKs(maxSamples: number): number[] {
  const ks = new Set<number>();
  for (let k = 1; k <= maxSamples; k *= 2) ks.add(k);
  if (maxSamples >= 1) ks.add(maxSamples);
  return [...ks].sort((a, b) => a - b);
}

/** Successes over finished episodes, across tasks (NaN when none finished). */
export function successRateOf(tasks: readonly TaskOutcomes[]): number {
  let successes = 0;
  let finished = 0;
  for (const t of tasks) {
    successes += t.successes;
    finished += t.rewards.length;
  }
  return finished === 0 ? Number.NaN : successes / finished;
}

/** Mean final reward over finished episodes, across tasks (NaN when none finished). */
export function meanRewardOf(tasks: readonly TaskOutcomes[]): number {
  let sum = 0;
  let finished = 0;
  for (const t of tasks) {
    for (const r of t.rewards) sum += r;
    finished += t.rewards.length;
  }
  return finished === 0 ? Number.NaN : sum / finished;
}

function passMetric(
  tasks: readonly TaskOutcomes[],
  k: number,
  estimator: (n: number, c: number, k: number) => number,
  options: BootstrapOptions,
): PassMetric {
  const perTask = tasks
    .filter((t) => t.rewards.length >= k)
    .map((t) => estimator(t.rewards.length, t.successes, k));
  return {
    k,
    value: mean(perTask),
    interval: bootstrapInterval(perTask, mean, options),
    tasks: perTask.length,
  };
}

/** All metrics of one evaluation, from per-task outcomes. */
export function computeMetrics(
  tasks: readonly TaskOutcomes[],
  options: MetricsOptions = {},
): MetricsReport {
  const finished = tasks.reduce((s, t) => s + t.rewards.length, 0);
  const errors = tasks.reduce((s, t) => s + t.errors, 0);
  const successes = tasks.reduce((s, t) => s + t.successes, 0);
  const maxSamples = tasks.reduce((m, t) => Math.max(m, t.rewards.length), 0);
  const ks = (options.ks ?? defaultKs(maxSamples)).filter((k) => k >= 1 && k <= maxSamples);
  const scored = tasks.filter((t) => t.rewards.length > 0);
  return {
    tasks: tasks.length,
    episodes: finished + errors,
    finished,
    successes,
    errors,
    successRate: successRateOf(tasks),
    successRateInterval: bootstrapInterval(scored, successRateOf, options),
    meanReward: meanRewardOf(tasks),
    meanRewardInterval: bootstrapInterval(scored, meanRewardOf, options),
    avgAtK: { k: maxSamples, value: mean(scored.map((t) => mean(t.rewards))) },
    passAtK: ks.map((k) => passMetric(tasks, k, passAtK, options)),
    passHatK: ks.map((k) => passMetric(tasks, k, passHatK, options)),
  };
}
