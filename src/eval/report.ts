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

/**
 * The instruction an episode's agent was given: as stored, or for episodes stored before
 * instructions were (migration 5) the built-in environment's, when its version is the run's.
 */
export async function episodeInstruction(
  store: RunStore,
  run: Pick<RunRow, "env" | "envVersion">,
  episode: Pick<StoredEpisode, "id">,
): Promise<string | null> {
  const stored = store.instruction(episode.id);
  if (stored !== null) return stored;
  // Loaded only when needed: the environments' infos are not needed to list runs.
  const { findEnvInfo } = await import("../env/infos.js");
  const info = findEnvInfo(run.env);
  return info !== undefined && info.version === run.envVersion ? info.instruction : null;
}
