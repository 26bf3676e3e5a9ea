/** `clade compare RUN_A RUN_B`: two runs' metrics side by side and what changed from A to B. */
import { compareRuns } from "../../eval/compare.js";
import { environmentsDiffer, seedOf, taskOutcomes } from "../../eval/report.js";
import { damagedWarning, type RunRow } from "../../store/run-store.js";
import { type CliIo, UsageError } from "../io.js";
import { renderComparison } from "../report.js";
import { openRun } from "./runs.js";

export function compareCommand(
  runA: string,
  runB: string,
  options: { db: string; json?: boolean },
  io: CliIo,
): number {
  const { store, run: a } = openRun(options.db, runA);
  try {
    const b = store.getRun(runB);
    if (!b) throw new UsageError(`no run "${runB}" in ${options.db} (see: clade runs)`);
    const episodesA = store.episodes(a.id);
    const episodesB = store.episodes(b.id);
    for (const [run, episodes] of [
      [a, episodesA],
      [b, episodesB],
    ] as const) {
      const damaged = episodes.filter((e) => e.outcome === "damaged").length;
      if (damaged > 0) io.stderr(damagedWarning(run.id, damaged));
    }
    // A's seed, as `show` uses for a single run: the same command gives the same intervals.
    const comparison = compareRuns(taskOutcomes(episodesA), taskOutcomes(episodesB), {
      seed: seedOf(a),
    });
    if (comparison.sharedTasks.length === 0) {
      throw new UsageError(
        `runs ${a.id} and ${b.id} share no task with a finished episode: nothing to compare`,
      );
    }
    const environments = environmentsDiffer(a, b);
    if (environments !== undefined) io.stderr(`warning: ${environments}\n`);
    if (options.json) {
      const side = (run: RunRow, metrics: typeof comparison.a) => ({
        id: run.id,
        env: run.env,
        envVersion: run.envVersion,
        agent: run.agent,
        config: run.config,
        metrics,
      });
      io.stdout(
        `${JSON.stringify({
          schema: "clade.compare/1",
          a: side(a, comparison.a),
          b: side(b, comparison.b),
          sharedTasks: comparison.sharedTasks,
          onlyA: comparison.onlyA,
          onlyB: comparison.onlyB,
          metrics: comparison.metrics,
          flipped: comparison.moved,
        })}\n`,
      );
      return 0;
    }
    io.stdout(
      `A: ${a.id} (${a.env} v${a.envVersion}, agent ${a.agent})\n` +
        `B: ${b.id} (${b.env} v${b.envVersion}, agent ${b.agent})\n`,
    );
    io.stdout(renderComparison(comparison, a.id, b.id));
    return 0;
  } finally {
    store.close();
  }
}
