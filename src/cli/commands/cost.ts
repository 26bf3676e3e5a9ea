/** `clade cost RUN`: tokens, cost and latency of a run's model calls, by model. */
import type { ModelUsageSummary } from "../../store/run-store.js";
import type { CliIo } from "../io.js";
import { renderTable } from "../table.js";
import { openRun } from "./runs.js";

export function renderUsage(rows: readonly ModelUsageSummary[]): string {
  const total = rows.reduce(
    (t, r) => ({
      calls: t.calls + r.calls,
      cacheHits: t.cacheHits + r.cacheHits,
      failedCalls: t.failedCalls + r.failedCalls,
      inputTokens: t.inputTokens + r.inputTokens,
      outputTokens: t.outputTokens + r.outputTokens,
      costUsd: t.costUsd + r.costUsd,
      retries: t.retries + r.retries,
    }),
    {
      calls: 0,
      cacheHits: 0,
      failedCalls: 0,
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
    r.retries,
    r.inputTokens,
    r.outputTokens,
    `$${r.costUsd.toFixed(4)}`,
    latency === null ? "n/a" : Math.round(latency),
  ];
  return renderTable(
    ["model", "calls", "cached", "failed", "retries", "input tok", "output tok", "cost", "mean ms"],
    [
      ...rows.map((r) => line(r.model, r, r.meanLatencyMs)),
      ...(rows.length > 1 ? [line("total", total, null)] : []),
    ],
  );
}

export function costCommand(
  runId: string,
  options: { db: string; json?: boolean },
  io: CliIo,
): number {
  const { store } = openRun(options.db, runId);
  try {
    const rows = store.usageByModel(runId);
    if (options.json) {
      io.stdout(`${JSON.stringify(rows)}\n`);
    } else if (rows.length === 0) {
      io.stdout(`run ${runId} made no model calls\n`);
    } else {
      io.stdout(renderUsage(rows));
      io.stdout(
        "\ncost from the price table (clade.config prices override it); cache hits cost 0 and have no latency\n",
      );
    }
    return 0;
  } finally {
    store.close();
  }
}
