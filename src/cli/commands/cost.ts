/**
 * `clade cost RUN`: tokens, cost (or "unpriced") and time of a run's model calls, by model:
 * latency at the provider, queue and retry waits apart.
 */
import type { CliIo } from "../io.js";
import { renderUsage } from "../report.js";
import { openRun } from "./runs.js";

/** What the usage table's figures mean. */
const USAGE_NOTES =
  "cost from clade.config (models.NAME.price, prices), else the built-in price table; " +
  "unpriced: the model has no price, so its cost is unknown (give it one in clade.config)\n" +
  "cache hits cost 0 and have no latency; latency is the provider's time alone: waiting for " +
  "the model's rate limits (queue) and between retries (retry) is counted apart\n";

export function costCommand(
  runId: string,
  options: { db: string; json?: boolean },
  io: CliIo,
): number {
  const { store } = openRun(options.db, runId);
  try {
    const rows = store.usageByModel(runId);
    if (options.json) {
      io.stdout(`${JSON.stringify({ schema: "clade.cost/1", run: runId, usage: rows })}\n`);
    } else if (rows.length === 0) {
      io.stdout(`run ${runId} made no model calls\n`);
    } else {
      io.stdout(renderUsage(rows));
      io.stdout(`\n${USAGE_NOTES}`);
    }
    return 0;
  } finally {
    store.close();
  }
}
