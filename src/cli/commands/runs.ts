/** `clade runs` and `clade show RUN`: what the store holds. */
import { existsSync } from "node:fs";
import { runMetrics } from "../../eval/report.js";
import { damagedWarning, RunStore } from "../../store/run-store.js";
import { type CliIo, UsageError } from "../io.js";
import { describeStatus, renderMetrics, renderUsage } from "../report.js";
import { formatRate, renderTable } from "../table.js";

export function runsCommand(options: { db: string; json?: boolean }, io: CliIo): number {
  if (!existsSync(options.db)) {
    if (options.json) io.stdout("[]\n");
    else io.stdout(`no runs yet (no store at ${options.db})\n`);
    return 0;
  }
  const store = RunStore.open(options.db, { readonly: true });
  try {
    const runs = store.listRuns();
    for (const run of runs) {
      if (run.damaged > 0) io.stderr(damagedWarning(run.id, run.damaged));
    }
    if (options.json) {
      io.stdout(`${JSON.stringify(runs)}\n`);
      return 0;
    }
    if (runs.length === 0) {
      io.stdout("no runs yet\n");
      return 0;
    }
    io.stdout(
      renderTable(
        ["run", "env", "agent", "status", "episodes", "success", "errors", "steps", "created"],
        runs.map((r) => [
          r.id,
          `${r.env} v${r.envVersion}`,
          r.agent,
          describeStatus(r),
          r.episodes,
          formatRate(
            r.successes + r.failures === 0 ? Number.NaN : r.successes / (r.successes + r.failures),
          ),
          r.errors,
          r.steps,
          r.createdAt.slice(0, 19).replace("T", " "),
        ]),
      ),
    );
    return 0;
  } finally {
    store.close();
  }
}

export function openRun(
  db: string,
  runId: string,
): { store: RunStore; run: NonNullable<ReturnType<RunStore["getRun"]>> } {
  const store = RunStore.open(db, { readonly: true });
  const run = store.getRun(runId);
  if (!run) {
    store.close();
    throw new UsageError(`no run "${runId}" in ${db} (see: clade runs)`);
  }
  return { store, run };
}

export function showCommand(
  runId: string,
  options: { db: string; json?: boolean; episodes?: boolean },
  io: CliIo,
): number {
  const { store, run } = openRun(options.db, runId);
  try {
    const episodes = store.episodes(runId);
    const seed = typeof run.config.seed === "number" ? run.config.seed : 0;
    const metrics = runMetrics(episodes, { seed });
    const usage = store.usageByModel(runId);
    const perEpisode = store.episodeUsage(runId);
    const notRun = episodes.filter((e) => e.outcome === "not_run").length;
    const damaged = episodes.filter((e) => e.outcome === "damaged").length;
    if (damaged > 0) io.stderr(damagedWarning(runId, damaged));
    if (run.configDamaged) {
      io.stderr(`warning: the stored configuration of run ${runId} could not be read (damaged)\n`);
    }
    const parseErrors = episodes.reduce((sum, e) => sum + e.parseErrors, 0);
    if (options.json) {
      const withUsage = episodes.map((e) => ({ ...e, usage: perEpisode.get(e.id) ?? null }));
      io.stdout(
        `${JSON.stringify({ run, metrics, notRun, parseErrors, usage, ...(options.episodes ? { episodes: withUsage } : {}) })}\n`,
      );
      return 0;
    }
    const config = Object.entries(run.config)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(" ");
    io.stdout(
      `run ${run.id} [${describeStatus(run)}]: ${run.env} v${run.envVersion}, agent ${run.agent}\n`,
    );
    io.stdout(`config: ${config}\n`);
    if (notRun > 0) io.stdout(`not run: ${notRun} episodes (never started; a resume runs them)\n`);
    if (parseErrors > 0)
      io.stdout(`unusable model replies fed back to the model: ${parseErrors}\n`);
    io.stdout("\n");
    io.stdout(renderMetrics(metrics));
    if (usage.length > 0) io.stdout(`\n${renderUsage(usage)}`);
    if (options.episodes) {
      const priced = perEpisode.size > 0;
      io.stdout("\n");
      io.stdout(
        renderTable(
          [
            "task",
            "sample",
            "outcome",
            "reward",
            "turns",
            "end",
            "ms",
            ...(priced ? ["calls", "tokens in/out", "cost"] : []),
            "error",
          ],
          episodes.map((e) => {
            const u = perEpisode.get(e.id);
            return [
              e.taskIndex,
              e.sampleIndex,
              e.outcome,
              e.reward,
              e.turns,
              e.endReason,
              Math.round(e.durationMs),
              ...(priced
                ? [
                    u?.calls ?? 0,
                    `${u?.inputTokens ?? 0}/${u?.outputTokens ?? 0}`,
                    `$${(u?.costUsd ?? 0).toFixed(4)}`,
                  ]
                : []),
              e.error ?? "",
            ];
          }),
        ),
      );
    }
    return 0;
  } finally {
    store.close();
  }
}
