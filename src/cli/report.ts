/** Human-readable reports of a run's metrics, shared by `eval`, `show` and `demo`. */

import { hostname } from "node:os";
import type { MetricsReport } from "../eval/metrics.js";
import type { ModelUsageSummary, RunRow } from "../store/run-store.js";
import { formatInterval, formatRate, renderTable } from "./table.js";

/** Each metric beside its definition's name, as docs/metrics.md asks. */
export function renderMetrics(report: MetricsReport): string {
  const rows: (string | number)[][] = [
    [
      "success rate",
      formatRate(report.successRate),
      formatInterval(report.successRateInterval),
      `successes/finished (${report.successes}/${report.finished}); errors excluded: ${report.errors}`,
    ],
    [
      "mean reward",
      formatRate(report.meanReward),
      formatInterval(report.meanRewardInterval),
      "mean final reward over finished episodes",
    ],
    [
      `avg@${report.avgAtK.k}`,
      formatRate(report.avgAtK.value),
      "",
      "mean reward per task, averaged over tasks",
    ],
  ];
  for (const p of report.passAtK) {
    rows.push([
      `pass@${p.k}`,
      formatRate(p.value),
      formatInterval(p.interval),
      `unbiased 1 - C(n-c,k)/C(n,k), ${p.tasks} tasks`,
    ]);
  }
  for (const p of report.passHatK) {
    if (p.k === 1) continue; // pass^1 equals pass@1
    rows.push([
      `pass^${p.k}`,
      formatRate(p.value),
      formatInterval(p.interval),
      `C(c,k)/C(n,k), ${p.tasks} tasks`,
    ]);
  }
  return renderTable(["metric", "value", "95% CI (bootstrap over tasks)", "definition"], rows);
}

/** Tokens, cost and latency by model, with a total row when there are several models. */
export function renderUsage(rows: readonly ModelUsageSummary[]): string {
  const total = rows.reduce(
    (t, r) => ({
      calls: t.calls + r.calls,
      cacheHits: t.cacheHits + r.cacheHits,
      failedCalls: t.failedCalls + r.failedCalls,
      failedAttempts: t.failedAttempts + r.failedAttempts,
      inputTokens: t.inputTokens + r.inputTokens,
      outputTokens: t.outputTokens + r.outputTokens,
      costUsd: t.costUsd + r.costUsd,
      retries: t.retries + r.retries,
    }),
    {
      calls: 0,
      cacheHits: 0,
      failedCalls: 0,
      failedAttempts: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      retries: 0,
    },
  );
  const line = (name: string, r: typeof total, latency: number | null) => [
    name,
    r.calls,
    r.cacheHits,
    r.failedCalls,
    r.failedAttempts,
    r.retries,
    r.inputTokens,
    r.outputTokens,
    `$${r.costUsd.toFixed(4)}`,
    latency === null ? "n/a" : Math.round(latency),
  ];
  return renderTable(
    [
      "model",
      "calls",
      "cached",
      "failed",
      "failed attempts",
      "retries",
      "input tok",
      "output tok",
      "cost",
      "mean ms",
    ],
    [
      ...rows.map((r) => line(r.model, r, r.meanLatencyMs)),
      ...(rows.length > 1 ? [line("total", total, null)] : []),
    ],
  );
}

/**
 * A run's status for people: a run still marked running whose process is gone from this machine
 * was killed (SIGKILL, a crash, a power cut); running the same command resumes it.
 */
export function describeStatus(run: RunRow): string {
  if (run.status === "running" && run.owner && run.owner.host === hostname()) {
    try {
      process.kill(run.owner.pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") return "killed (resumable)";
    }
  }
  return run.stopReason ? `${run.status} (${run.stopReason})` : run.status;
}
