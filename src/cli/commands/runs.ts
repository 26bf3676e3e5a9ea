/** `clade runs` and `clade show RUN`: what the store holds. */
import { existsSync } from "node:fs";
import { episodeInstruction, runMetrics, seedOf } from "../../eval/report.js";
import type { ModelCallRecord } from "../../model/call-record.js";
import type { StepRecord } from "../../rollout/episode.js";
import {
  addCosts,
  type CostFields,
  callForJson,
  damagedWarning,
  describeStatus,
  orDamaged,
  type RunRow,
  RunStore,
  type StoredEpisode,
} from "../../store/run-store.js";
import { type CliIo, UsageError } from "../io.js";
import { formatCost, renderEpisode, renderMetrics, renderUsage } from "../report.js";
import { formatRate, renderTable } from "../table.js";

export function runsCommand(options: { db: string; json?: boolean }, io: CliIo): number {
  if (!existsSync(options.db)) {
    if (options.json) io.stdout(`${JSON.stringify({ schema: "clade.runs/1", runs: [] })}\n`);
    else io.stdout(`no runs yet (no store at ${options.db})\n`);
    return 0;
  }
  const store = RunStore.open(options.db, { readonly: true });
  try {
    // Models and cost are added fields, so older readers of --json keep working.
    const runs = store.listRuns().map((run) => ({ ...run, ...modelsAndCost(store, run) }));
    for (const run of runs) {
      if (run.damaged > 0) io.stderr(damagedWarning(run.id, run.damaged));
    }
    if (options.json) {
      io.stdout(`${JSON.stringify({ schema: "clade.runs/1", runs })}\n`);
      return 0;
    }
    if (runs.length === 0) {
      io.stdout("no runs yet\n");
      return 0;
    }
    io.stdout(
      renderTable(
        [
          "run",
          "env",
          "agent",
          "status",
          "episodes",
          "success",
          "errors",
          "steps",
          "model",
          "cost",
          "created",
        ],
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
          r.models.length > 0 ? r.models.join(", ") : "-",
          formatCost(r, "-"),
          r.createdAt.slice(0, 19).replace("T", " "),
        ]),
      ),
    );
    return 0;
  } finally {
    store.close();
  }
}

/**
 * The models a run called (from its calls, else the model its configuration names) and what its
 * calls cost (CostFields: unpriced when some had no price); costUsd is null when it made no
 * model call.
 */
function modelsAndCost(store: RunStore, run: RunRow): { models: string[] } & CostFields {
  const usage = store.usageByModel(run.id);
  if (usage.length > 0) return { models: usage.map((u) => u.model), ...addCosts(usage) };
  return { models: typeof run.config.model === "string" ? [run.config.model] : [], costUsd: null };
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

export async function showCommand(
  runId: string,
  options: { db: string; json?: boolean; episodes?: boolean; episode?: string },
  io: CliIo,
): Promise<number> {
  const { store, run } = openRun(options.db, runId);
  try {
    if (options.episode !== undefined) {
      return await showEpisode(store, run, options.episode, options, io);
    }
    const episodes = store.episodes(runId);
    const metrics = runMetrics(episodes, { seed: seedOf(run) });
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
        `${JSON.stringify({ schema: "clade.run/1", run, metrics, notRun, parseErrors, usage, ...(options.episodes ? { episodes: withUsage } : {}) })}\n`,
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
                    formatCost(u ?? { costUsd: 0 }),
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

/** The episode `--episode` names: TASK/SAMPLE (e.g. 3/0) or the episode's id. */
function findEpisode(
  episodes: readonly StoredEpisode[],
  runId: string,
  spec: string,
): StoredEpisode {
  const text = spec.trim();
  const pair = /^(\d+)\/(\d+)$/.exec(text);
  if (!pair && !/^\d+$/.test(text)) {
    throw new UsageError(
      `--episode must be TASK/SAMPLE (e.g. 3/0) or an episode id, got "${spec}"`,
    );
  }
  const found = pair
    ? episodes.find((e) => e.taskIndex === Number(pair[1]) && e.sampleIndex === Number(pair[2]))
    : episodes.find((e) => e.id === Number(text));
  if (!found) {
    const which = pair ? `${pair[1]}/${pair[2]} (task/sample)` : `with id ${text}`;
    throw new UsageError(`run ${runId} has no episode ${which} (see: clade show RUN --episodes)`);
  }
  return found;
}

/** `clade show RUN --episode N`: one episode turn by turn, with the model calls of each turn. */
async function showEpisode(
  store: RunStore,
  run: RunRow,
  spec: string,
  options: { json?: boolean },
  io: CliIo,
): Promise<number> {
  const episode = findEpisode(store.episodes(run.id), run.id, spec);
  const problems: string[] = [];
  if (episode.outcome === "damaged" && episode.error) problems.push(episode.error);
  const steps: StepRecord[] = orDamaged(() => store.steps(episode.id), problems);
  const calls: ModelCallRecord[] = orDamaged(() => store.calls(episode.id), problems);
  if (problems.length > 0) {
    io.stderr(
      `warning: episode ${episode.taskIndex}/${episode.sampleIndex} of run ${run.id} is damaged ` +
        `(${problems.join("; ")}); showing what can be read\n`,
    );
  }
  const instruction = await episodeInstruction(store, run, episode);
  if (options.json) {
    io.stdout(
      `${JSON.stringify({ schema: "clade.episode/1", run, episode, instruction, steps, calls: calls.map(callForJson) })}\n`,
    );
    return 0;
  }
  io.stdout(renderEpisode({ runId: run.id, episode, instruction, steps, calls }));
  return 0;
}
