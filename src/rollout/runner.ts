/**
 * Runs many episodes with a concurrency limit. Each worker owns one env instance and reuses it
 * across episodes (reset starts a fresh episode), so env construction stays off the hot path.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Agent, EpisodeContext } from "../agent/types.js";
import type { Env, EnvInfo } from "../env/types.js";
import { type EpisodeLimits, type EpisodeRecord, runEpisode } from "./episode.js";

export interface EpisodeSpec {
  taskIndex: number;
  sampleIndex: number;
  seed: number;
}

export interface RunEpisodesOptions {
  episodes: readonly EpisodeSpec[];
  envInfo: EnvInfo;
  createEnv: () => Env;
  createAgent: (context: EpisodeContext) => Agent;
  limits: EpisodeLimits;
  concurrency: number;
  /** Called once per finished episode, in completion order; a throw stops the run. */
  onEpisode: (record: EpisodeRecord) => void | Promise<void>;
  /** Aborting stops new episodes; episodes in flight are abandoned, not recorded. */
  signal?: AbortSignal;
  /** A gentler stop: no new episodes start, episodes in flight finish and are recorded. */
  stop?: AbortSignal;
}

/** Resolves when every episode is recorded, or rejects with the abort reason / a sink error. */
export async function runEpisodes(options: RunEpisodesOptions): Promise<void> {
  const { episodes, concurrency, signal } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    const env = options.createEnv();
    try {
      while (failure === undefined && next < episodes.length && !options.stop?.aborted) {
        if (signal?.aborted) throw signal.reason;
        const spec = episodes[next++] as EpisodeSpec;
        const context: EpisodeContext = { env: options.envInfo, ...spec };
        const record = await runEpisode({
          env,
          agent: options.createAgent(context),
          context,
          limits: options.limits,
          ...(signal ? { signal } : {}),
        });
        await options.onEpisode(record);
        // Agents that never wait on I/O would otherwise starve timers and signal handlers.
        await yieldToEventLoop();
      }
    } catch (error) {
      failure ??= error;
    } finally {
      await env.close?.();
    }
  };
  const workers = Array.from({ length: Math.min(concurrency, episodes.length) }, worker);
  await Promise.all(workers);
  if (failure !== undefined) throw failure;
}
