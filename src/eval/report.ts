/** Turns stored episodes into per-task outcomes and the metrics report of a run. */
import type { RunRow, RunStore, StoredEpisode } from "../store/run-store.js";
import {
  computeMetrics,
  type MetricsOptions,
  type MetricsReport,
  type TaskOutcomes,
} from "./metrics.js";

export function taskOutcomes(episodes: readonly StoredEpisode[]): TaskOutcomes[] {
  const byTask = new Map<number, TaskOutcomes>();
  const sorted = [...episodes].sort(
    (a, b) => a.taskIndex - b.taskIndex || a.sampleIndex - b.sampleIndex,
  );
  for (const episode of sorted) {
    // Never started (budget) or unreadable (damaged row): not an outcome at all.
    if (episode.outcome === "not_run" || episode.outcome === "damaged") continue;
    let task = byTask.get(episode.taskIndex);
    if (!task) {
      task = { taskIndex: episode.taskIndex, rewards: [], successes: 0, errors: 0 };
      byTask.set(episode.taskIndex, task);
    }
    if (episode.outcome === "error") {
      task.errors++;
    } else {
      task.rewards.push(episode.reward);
      if (episode.outcome === "success") task.successes++;
    }
  }
  return [...byTask.values()];
}

export function runMetrics(
  episodes: readonly StoredEpisode[],
  options: MetricsOptions = {},
): MetricsReport {
  return computeMetrics(taskOutcomes(episodes), options);
}

/** The seed `clade show` bootstraps a run's intervals with (and `clade compare`, A's). */
export const seedOf = (run: Pick<RunRow, "config">): number =>
  typeof run.config.seed === "number" ? run.config.seed : 0;

/**
 * What the reader of a comparison must know when the runs are on different environments (or
 * versions of one); undefined when they are on the same.
 */
export function environmentsDiffer(
  a: Pick<RunRow, "env" | "envVersion">,
  b: Pick<RunRow, "env" | "envVersion">,
): string | undefined {
  if (a.env === b.env && a.envVersion === b.envVersion) return undefined;
  return `the runs are on different environments (${a.env} v${a.envVersion} vs ${b.env} v${b.envVersion}): the same task index may be a different task`;
}

/**
 * The instruction an episode's agent was given: as stored, or for episodes stored before
 * instructions were (migration 5) the built-in environment's, when its version is the run's.
 */
export async function episodeInstruction(
  store: RunStore,
  run: Pick<RunRow, "env" | "envVersion">,
  episode: Pick<StoredEpisode, "id">,
): Promise<string | null> {
  return store.instruction(episode.id) ?? (await builtInInstruction(run));
}

/**
 * The built-in environment's instruction, when the run's environment is built in and its version
 * is the run's: what an episode stored before instructions were (migration 5) was given.
 */
export async function builtInInstruction(
  run: Pick<RunRow, "env" | "envVersion">,
): Promise<string | null> {
  // Loaded only when needed: the environments' infos are not needed to list runs.
  const { findEnvInfo } = await import("../env/infos.js");
  const info = findEnvInfo(run.env);
  return info !== undefined && info.version === run.envVersion ? info.instruction : null;
}
