/**
 * An evaluation run: tasks × samples episodes of one agent on one environment, stored as they
 * finish. Running the same run id again resumes: finished episodes are kept, the rest are run.
 */
import type { AgentFactory } from "../agent/registry.js";
import type { EnvDefinition } from "../env/types.js";
import type { EpisodeRecord } from "../rollout/episode.js";
import { type EpisodeSpec, runEpisodes } from "../rollout/runner.js";
import { EpisodeWriter } from "../store/episode-writer.js";
import type { RunStore } from "../store/run-store.js";

export interface EvalSettings {
  runId: string;
  /** Task indices, already validated against the environment. */
  tasks: readonly number[];
  /** How the tasks were selected (kept in the stored config, e.g. "0-99"). */
  taskSpec: string;
  samples: number;
  maxTurns: number;
  timeoutMs: number;
  /** Passed to env.reset for every episode; agents derive their own seeds from it. */
  seed: number;
  concurrency: number;
  /** More settings that identify the run (model, generation parameters, agent options). */
  identity?: Record<string, unknown>;
}

export interface EvalProgress {
  done: number;
  total: number;
  /** Episodes already stored before this invocation (skipped). */
  skipped: number;
  last?: EpisodeRecord;
}

export interface EvalResult {
  runId: string;
  resumed: boolean;
  skipped: number;
  ran: number;
  interrupted: boolean;
  /** Episodes left unstarted by a stop (e.g. the budget), stored as not_run. */
  notRun: number;
  /** Why the run stopped early, when it did. */
  stopReason?: string;
}

export interface RunEvaluationOptions {
  store: RunStore;
  env: EnvDefinition;
  agent: AgentFactory;
  settings: EvalSettings;
  onProgress?: (progress: EvalProgress) => void;
  signal?: AbortSignal;
  /** Commit episodes on a worker thread, overlapping SQLite with the episode loop. */
  writerThread?: boolean;
  /**
   * A gentle stop (e.g. the budget is spent): no new episodes start, those in flight finish, and
   * the rest are stored as not_run. Its abort reason (a string) becomes the run's stop reason.
   */
  stop?: AbortSignal;
}

/** The configuration that identifies a run; concurrency is left out because it may change. */
export function runConfig(settings: EvalSettings): Record<string, unknown> {
  return {
    tasks: settings.taskSpec,
    samples: settings.samples,
    maxTurns: settings.maxTurns,
    timeoutMs: settings.timeoutMs,
    seed: settings.seed,
    ...settings.identity,
  };
}

export async function runEvaluation(options: RunEvaluationOptions): Promise<EvalResult> {
  const { store, env, agent, settings, signal } = options;
  const { resumed } = store.startRun({
    id: settings.runId,
    env: env.info.name,
    envVersion: env.info.version,
    agent: agent.name,
    config: runConfig(settings),
  });
  const finished = store.finishedEpisodeKeys(settings.runId);
  const plan: EpisodeSpec[] = [];
  for (const taskIndex of settings.tasks) {
    for (let sampleIndex = 0; sampleIndex < settings.samples; sampleIndex++) {
      if (!finished.has(`${taskIndex}:${sampleIndex}`)) {
        plan.push({ taskIndex, sampleIndex, seed: settings.seed });
      }
    }
  }
  const total = settings.tasks.length * settings.samples;
  const skipped = total - plan.length;
  let done = skipped;
  options.onProgress?.({ done, total, skipped });
  const writer = new EpisodeWriter(store, settings.runId, {
    thread: options.writerThread ?? false,
  });
  const ran = new Set<string>();
  try {
    await runEpisodes({
      episodes: plan,
      envInfo: env.info,
      createEnv: env.create,
      createAgent: agent.create,
      limits: { maxTurns: settings.maxTurns, timeoutMs: settings.timeoutMs },
      concurrency: settings.concurrency,
      onEpisode: (record) => {
        ran.add(`${record.taskIndex}:${record.sampleIndex}`);
        writer.write(record);
        done++;
        options.onProgress?.({ done, total, skipped, last: record });
      },
      ...(signal ? { signal } : {}),
      ...(options.stop ? { stop: options.stop } : {}),
    });
    await writer.close();
  } catch (error) {
    // Whatever finished before the stop is kept.
    await writer.close();
    if (signal?.aborted) {
      store.setStatus(settings.runId, "interrupted", "signal");
      return {
        runId: settings.runId,
        resumed,
        skipped,
        ran: done - skipped,
        interrupted: true,
        notRun: 0,
        stopReason: "signal",
      };
    }
    store.setStatus(settings.runId, "interrupted", "error");
    throw error;
  }
  const result = {
    runId: settings.runId,
    resumed,
    skipped,
    ran: done - skipped,
    interrupted: false,
  };
  if (options.stop?.aborted) {
    const unrun = plan.filter((e) => !ran.has(`${e.taskIndex}:${e.sampleIndex}`));
    const stopReason = String(options.stop.reason ?? "stopped");
    store.markNotRun(settings.runId, unrun);
    store.setStatus(settings.runId, "interrupted", stopReason);
    return { ...result, interrupted: true, notRun: unrun.length, stopReason };
  }
  store.setStatus(settings.runId, "complete");
  return { ...result, notRun: 0 };
}
