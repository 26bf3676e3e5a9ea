/**
 * Comparing two runs: each run's metrics beside the other's, the difference B − A with a paired
 * bootstrap interval over the tasks both runs share, and the tasks whose outcome moved.
 * Every function here is pure.
 */
import {
  type BootstrapOptions,
  bootstrapInterval,
  computeMetrics,
  type Interval,
  type MetricsReport,
  meanRewardOf,
  passAtK,
  successRateOf,
  type TaskOutcomes,
} from "./metrics.js";

/** One metric of both runs, and B − A over the shared tasks. */
export interface MetricComparison {
  /** "success rate", "mean reward" or "pass@k". */
  metric: string;
  /** Over all of A's tasks, as `clade show` reports it. */
  a: number;
  aInterval: Interval;
  b: number;
  bInterval: Interval;
  /** B − A over the shared tasks only, so that both sides weigh the same tasks. */
  difference: number;
  /** Paired percentile bootstrap: shared tasks resampled, each keeping its A and B outcomes. */
  differenceInterval: Interval;
  /** Shared tasks the difference uses (for pass@k: those with at least k finished in both). */
  tasks: number;
}

/** A task whose success rate differs between the runs. */
export interface MovedTask {
  taskIndex: number;
  a: { successes: number; finished: number };
  b: { successes: number; finished: number };
  /** B succeeds more often (gained) or less often (lost) than A. */
  change: "gained" | "lost";
  /** All-success in one run and no success in the other. */
  flipped: boolean;
}

export interface RunComparison {
  /** Tasks with at least one finished episode in both runs, ascending. */
  sharedTasks: number[];
  /** Tasks with finished episodes in only one of the runs. */
  onlyA: number;
  onlyB: number;
  a: MetricsReport;
  b: MetricsReport;
  metrics: MetricComparison[];
  /** Shared tasks whose success rate moved, ascending by task. */
  moved: MovedTask[];
}

type Pair = readonly [TaskOutcomes, TaskOutcomes];

/** Mean unbiased pass@k over tasks; the caller keeps only tasks with at least k finished. */
function meanPassAtK(tasks: readonly TaskOutcomes[], k: number): number {
  if (tasks.length === 0) return Number.NaN;
  let sum = 0;
  for (const t of tasks) sum += passAtK(t.rewards.length, t.successes, k);
  return sum / tasks.length;
}

/** B − A of a statistic over paired tasks. */
function pairedDifference(
  pairs: readonly Pair[],
  statistic: (tasks: readonly TaskOutcomes[]) => number,
): number {
  return statistic(pairs.map((p) => p[1])) - statistic(pairs.map((p) => p[0]));
}

function compareMetric(
  metric: string,
  values: { a: number; aInterval: Interval; b: number; bInterval: Interval },
  pairs: readonly Pair[],
  statistic: (tasks: readonly TaskOutcomes[]) => number,
  options: BootstrapOptions,
): MetricComparison {
  const difference = (sample: readonly Pair[]) => pairedDifference(sample, statistic);
  return {
    metric,
    ...values,
    difference: difference(pairs),
    differenceInterval: bootstrapInterval(pairs, difference, options),
    tasks: pairs.length,
  };
}

const finishedTasks = (tasks: readonly TaskOutcomes[]) =>
  new Map(tasks.filter((t) => t.rewards.length > 0).map((t) => [t.taskIndex, t]));

/**
 * Compares run B with run A from their per-task outcomes (see taskOutcomes). Pass@k is compared
 * for the ks both runs report. Errored episodes stay out, as in every metric.
 */
export function compareRuns(
  a: readonly TaskOutcomes[],
  b: readonly TaskOutcomes[],
  options: BootstrapOptions = {},
): RunComparison {
  const reportA = computeMetrics(a, options);
  const reportB = computeMetrics(b, options);
  const byTaskA = finishedTasks(a);
  const byTaskB = finishedTasks(b);
  const pairs: Pair[] = [];
  for (const [taskIndex, taskA] of byTaskA) {
    const taskB = byTaskB.get(taskIndex);
    if (taskB) pairs.push([taskA, taskB]);
  }
  pairs.sort((x, y) => x[0].taskIndex - y[0].taskIndex);
  const sharedTasks = pairs.map((p) => p[0].taskIndex);

  const metrics: MetricComparison[] = [
    compareMetric(
      "success rate",
      {
        a: reportA.successRate,
        aInterval: reportA.successRateInterval,
        b: reportB.successRate,
        bInterval: reportB.successRateInterval,
      },
      pairs,
      successRateOf,
      options,
    ),
    compareMetric(
      "mean reward",
      {
        a: reportA.meanReward,
        aInterval: reportA.meanRewardInterval,
        b: reportB.meanReward,
        bInterval: reportB.meanRewardInterval,
      },
      pairs,
      meanRewardOf,
      options,
    ),
  ];
  for (const passA of reportA.passAtK) {
    const passB = reportB.passAtK.find((p) => p.k === passA.k);
    if (!passB) continue;
    const k = passA.k;
    // Per-task pass@k needs k finished samples on both sides.
    const eligible = pairs.filter((p) => p[0].rewards.length >= k && p[1].rewards.length >= k);
    metrics.push(
      compareMetric(
        `pass@${k}`,
        { a: passA.value, aInterval: passA.interval, b: passB.value, bInterval: passB.interval },
        eligible,
        (tasks) => meanPassAtK(tasks, k),
        options,
      ),
    );
  }

  const moved: MovedTask[] = [];
  for (const [taskA, taskB] of pairs) {
    const rateA = taskA.successes / taskA.rewards.length;
    const rateB = taskB.successes / taskB.rewards.length;
    if (rateA === rateB) continue;
    moved.push({
      taskIndex: taskA.taskIndex,
      a: { successes: taskA.successes, finished: taskA.rewards.length },
      b: { successes: taskB.successes, finished: taskB.rewards.length },
      change: rateB > rateA ? "gained" : "lost",
      flipped: Math.abs(rateB - rateA) === 1,
    });
  }

  return {
    sharedTasks,
    onlyA: byTaskA.size - sharedTasks.length,
    onlyB: byTaskB.size - sharedTasks.length,
    a: reportA,
    b: reportB,
    metrics,
    moved,
  };
}
