/** `clade cost RUN`: tokens, cost and latency of a run's model calls, by model. */
import type { CliIo } from "../io.js";
import { renderUsage } from "../report.js";
import { openRun } from "./runs.js";

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
