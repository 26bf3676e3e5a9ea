/**
 * What the runs pages read from the store: short SQL queries over `runs` and `episodes` that the
 * viewer's indexes answer (episodes_by_outcome, episodes_by_task_outcome, the (run, task, sample)
 * key), and the metrics `clade show` and `clade compare` compute, kept per run until its episodes
 * change. RunStore.listRuns checks every trajectory's JSON (300 ms on a run of 100,000 episodes),
 * so the list counts straight from `episodes` and damaged rows are counted on the run page only.
 */

import { compareRuns, type RunComparison } from "../../eval/compare.js";
import {
  bootstrapInterval,
  computeMetrics,
  type Interval,
  type MetricsReport,
  successRateOf,
  type TaskOutcomes,
} from "../../eval/metrics.js";
import { seedOf, taskOutcomes } from "../../eval/report.js";
import type { SqliteDatabase } from "../../store/database.js";
import {
  addCosts,
  type CostFields,
  ownerGone,
  type RunRow,
  type RunRowRaw,
  toRun,
} from "../../store/run-store.js";
import { runStoreOn } from "../store-view.js";

/** A run's state for filters and badges: `killed` is a running run whose process is gone. */
export type RunState = "running" | "complete" | "interrupted" | "killed";

export const RUN_STATES: readonly RunState[] = ["running", "complete", "interrupted", "killed"];

/** The state a run is in, as `clade runs` describes it (describeStatus). */
export function runState(run: Pick<RunRow, "status" | "owner">): RunState {
  return ownerGone(run) ? "killed" : run.status;
}

/** Episodes of a run by stored outcome (damaged rows count under what they say). */
export interface OutcomeCounts {
  episodes: number;
  success: number;
  failure: number;
  error: number;
  notRun: number;
}

/** One row of every run with its counts, and what changes whenever its episodes do. */
export interface CountedRun {
  run: RunRow;
  counts: OutcomeCounts;
  /** Changes when an episode of the run is added, replaced or removed, or the run's row moves. */
  fingerprint: string;
}

type CountsRaw = RunRowRaw & {
  n: number;
  last: number | null;
  success: number;
  failure: number;
  error: number;
  not_run: number;
};

const COUNTS = `COUNT(e.id) AS n, MAX(e.id) AS last,
  COALESCE(SUM(e.outcome = 'success'), 0) AS success,
  COALESCE(SUM(e.outcome = 'failure'), 0) AS failure,
  COALESCE(SUM(e.outcome = 'error'), 0) AS error,
  COALESCE(SUM(e.outcome = 'not_run'), 0) AS not_run`;

function toCounted(row: CountsRaw): CountedRun {
  const run = toRun(row);
  return {
    run,
    counts: {
      episodes: row.n,
      success: row.success,
      failure: row.failure,
      error: row.error,
      notRun: row.not_run,
    },
    // A replaced episode gets a new, larger id, so (count, last id) moves with every write.
    fingerprint: `${row.n}:${row.last}:${row.status}:${row.stop_reason}:${row.updated_at}`,
  };
}

/** Every run with its outcome counts: one pass over the outcome index, no trajectory read. */
export function countedRuns(db: SqliteDatabase): CountedRun[] {
  const rows = db
    .prepare(
      `SELECT r.*, ${COUNTS} FROM runs r LEFT JOIN episodes e ON e.run_id = r.id
       GROUP BY r.id ORDER BY r.created_at, r.id`,
    )
    .all() as CountsRaw[];
  return rows.map(toCounted);
}

/** Success rate over finished episodes (errors and not-run left out) and its 95% interval. */
export interface RateWithInterval {
  /** null when no episode finished. */
  value: number | null;
  interval: Interval | null;
}

/**
 * The success rate's interval as `clade show` computes it (percentile bootstrap over tasks, the
 * run's seed), from per-task counts read off the task index: the success rate of a resample only
 * needs each task's successes and finished count, so the rewards are not read.
 */
export function listSuccessRate(db: SqliteDatabase, run: RunRow): RateWithInterval {
  const rows = db
    .prepare(
      `SELECT task_index AS task, SUM(outcome = 'success') AS successes,
         SUM(outcome IN ('success', 'failure')) AS finished
       FROM episodes WHERE run_id = ? GROUP BY task_index ORDER BY task_index`,
    )
    .all(run.id) as { task: number; successes: number; finished: number }[];
  const tasks: TaskOutcomes[] = rows
    .filter((r) => r.finished > 0)
    .map((r) => ({
      taskIndex: r.task,
      rewards: new Array<number>(r.finished).fill(0),
      successes: r.successes,
      errors: 0,
    }));
  if (tasks.length === 0) return { value: null, interval: null };
  return {
    value: successRateOf(tasks),
    interval: bootstrapInterval(tasks, successRateOf, { seed: seedOf(run) }),
  };
}

/** What a run's model calls cost, as `clade runs` sums it (null: no call was priced). */
export function runCost(db: SqliteDatabase, runId: string): CostFields {
  return addCosts(runStoreOn(db).usageByModel(runId));
}

/** A run's metrics as `clade show RUN --json` gives them, and the damaged rows left out. */
export interface RunMetrics {
  metrics: MetricsReport;
  /** Per task, as the metrics see them (damaged and not-run episodes left out). */
  tasks: TaskOutcomes[];
  damaged: number;
}

/** Reads every episode (with RunStore's damage check) and computes the report: the slow part. */
export function computeRunMetrics(db: SqliteDatabase, run: RunRow): RunMetrics {
  const episodes = runStoreOn(db).episodes(run.id);
  const tasks = taskOutcomes(episodes);
  const damaged = episodes.reduce((n, e) => n + (e.outcome === "damaged" ? 1 : 0), 0);
  return { metrics: computeMetrics(tasks, { seed: seedOf(run) }), tasks, damaged };
}

/** Two runs compared as `clade compare A B` does (A's seed), from their cached per-task outcomes. */
export function compareTasks(
  a: RunRow,
  tasksA: readonly TaskOutcomes[],
  tasksB: readonly TaskOutcomes[],
): RunComparison {
  return compareRuns(tasksA, tasksB, { seed: seedOf(a) });
}
