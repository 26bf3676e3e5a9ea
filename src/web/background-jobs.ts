/** The heavy computations the viewer hands to its worker thread, and how each is done. */
import type { RunComparison } from "../eval/compare.js";
import type { TaskOutcomes } from "../eval/metrics.js";
import type { SqliteDatabase } from "../store/database.js";
import type { RunRow } from "../store/run-store.js";
import { compareTasks, computeRunMetrics, type RunMetrics } from "./api/runs-read.js";

export type BackgroundJob =
  | { kind: "metrics"; run: RunRow }
  | { kind: "compare"; a: RunRow; tasksA: TaskOutcomes[]; tasksB: TaskOutcomes[] };

export type BackgroundResult<J extends BackgroundJob> = J extends { kind: "metrics" }
  ? RunMetrics
  : RunComparison;

export function computeJob(db: SqliteDatabase, job: BackgroundJob): RunMetrics | RunComparison {
  return job.kind === "metrics"
    ? computeRunMetrics(db, job.run)
    : compareTasks(job.a, job.tasksA, job.tasksB);
}
