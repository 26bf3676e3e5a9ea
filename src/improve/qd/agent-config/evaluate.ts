/**
 * Scoring a configuration: its LLM agent (the registry's react or tools agent on the given
 * model, with the configuration's system prompt and parameters, held to its tool set) plays each
 * task's episodes through the rollout runner (runEpisodes: turn and wall-clock limits, errors
 * captured as outcomes), and task k's score is its success rate over the episodes that did not
 * error. Errors are not failures: when every episode of a task errors there is no score, and
 * evaluation throws, so the CycleQD loop drops the child instead of scoring it 0.
 */
import { llmAgentFactory } from "../../../agent/registry.js";
import type { EpisodeContext } from "../../../agent/types.js";
import { mixSeeds } from "../../../env/rng.js";
import type { EnvDefinition } from "../../../env/types.js";
import type { Model } from "../../../model/types.js";
import type { EpisodeRecord } from "../../../rollout/episode.js";
import { type EpisodeSpec, runEpisodes } from "../../../rollout/runner.js";
import type { AgentConfig } from "./config.js";
import { generationParams } from "./params.js";
import { renderSystemPrompt } from "./prompt.js";
import { restrictTools } from "./tool-set.js";

/** Task k: an environment and the task indices it is scored on. */
export interface AgentConfigTask {
  readonly env: EnvDefinition;
  readonly tasks: readonly number[];
}

/** How episodes run; every field has clade eval's default. */
export interface EpisodeOptions {
  /** Episodes per task index; default 1. */
  readonly samples?: number;
  /** Turn limit; default each environment's maxSteps. */
  readonly maxTurns?: number;
  /** Wall-clock limit per episode; default 300,000 ms. */
  readonly timeoutMs?: number;
  /** Passed to env.reset; default 0. */
  readonly seed?: number;
  /** Episodes at once, per task; default 8. */
  readonly concurrency?: number;
  /**
   * Keys the model's seed on every agent call (mixed with the episode's task index and sample),
   * for providers that honour one.
   */
  readonly generationSeed?: number;
}

export const EPISODE_DEFAULTS = { samples: 1, timeoutMs: 300_000, seed: 0, concurrency: 8 };

/** Throws one line, prefixed by `what`, on a count that is not a positive integer. */
export function checkEpisodeOptions(episode: EpisodeOptions, what: string): void {
  const positive = ["samples", "maxTurns", "timeoutMs", "concurrency"] as const;
  for (const name of positive) {
    const value = episode[name];
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      throw new Error(`${what}: episode.${name} must be an integer ≥ 1, got ${value}`);
    }
  }
  for (const name of ["seed", "generationSeed"] as const) {
    const value = episode[name];
    if (value !== undefined && !Number.isInteger(value)) {
      throw new Error(`${what}: episode.${name} must be an integer, got ${value}`);
    }
  }
}

export interface EvaluateConfigOptions {
  readonly model: Model;
  readonly tasks: readonly AgentConfigTask[];
  readonly episode?: EpisodeOptions;
  /** Each finished episode, with its task k (e.g. to store it). */
  readonly onEpisode?: (task: number, record: EpisodeRecord) => void | Promise<void>;
  readonly signal?: AbortSignal;
}

/** The episodes of one task. */
export interface ConfigTaskResult {
  readonly episodes: number;
  readonly successes: number;
  readonly errors: number;
  /** Successes over the episodes that did not error; null when all errored. */
  readonly successRate: number | null;
  /** One of the errors, for the message when all errored. */
  readonly firstError?: string;
}

/** Outcomes of one task's records. */
export function taskResult(records: readonly EpisodeRecord[]): ConfigTaskResult {
  const errored = records.filter((r) => r.outcome === "error");
  const successes = records.filter((r) => r.outcome === "success").length;
  const played = records.length - errored.length;
  const first = errored[0];
  return {
    episodes: records.length,
    successes,
    errors: errored.length,
    successRate: played === 0 ? null : successes / played,
    ...(first ? { firstError: first.error ?? first.endReason } : {}),
  };
}

/** Plays task k's episodes with the configuration's agent. */
export async function runConfigTask(
  config: AgentConfig,
  k: number,
  options: EvaluateConfigOptions,
): Promise<ConfigTaskResult> {
  const task = options.tasks[k];
  if (!task) throw new RangeError(`no task ${k}`);
  checkEpisodeOptions(options.episode ?? {}, "evaluate agent config");
  const episode = { ...EPISODE_DEFAULTS, ...options.episode };
  const systemPrompt = renderSystemPrompt(config);
  const { generationSeed } = episode;
  // One seed per episode: samples of a task under one seed would be one sample repeated.
  const seedOf = (context: EpisodeContext) =>
    generationSeed === undefined
      ? undefined
      : mixSeeds(generationSeed, context.taskIndex, context.sampleIndex);
  const tools = config.kind === "tools" ? config.tools : null;
  const plan: EpisodeSpec[] = task.tasks.flatMap((taskIndex) =>
    Array.from({ length: episode.samples }, (_, sampleIndex) => ({
      taskIndex,
      sampleIndex,
      seed: episode.seed,
    })),
  );
  const records: EpisodeRecord[] = [];
  await runEpisodes({
    episodes: plan,
    envInfo: task.env.info,
    createEnv: task.env.create,
    createAgent: (context) => {
      const agent = llmAgentFactory(config.kind, {
        model: options.model,
        options: { systemPrompt, params: generationParams(config.params, seedOf(context)) },
      }).create(context);
      return tools === null ? agent : restrictTools(agent, tools);
    },
    limits: {
      maxTurns: episode.maxTurns ?? task.env.info.maxSteps,
      timeoutMs: episode.timeoutMs,
    },
    concurrency: episode.concurrency,
    onEpisode: async (record) => {
      records.push(record);
      await options.onEpisode?.(k, record);
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return taskResult(records);
}

/** K success rates in task order; throws when every episode of some task errored. */
export async function evaluateConfig(
  config: AgentConfig,
  options: EvaluateConfigOptions,
): Promise<number[]> {
  const scores: number[] = [];
  for (let k = 0; k < options.tasks.length; k++) {
    const result = await runConfigTask(config, k, options);
    if (result.successRate === null) {
      const name = options.tasks[k]?.env.info.name;
      throw new Error(
        `every episode of task ${k} (${name}) errored (${result.errors}); first: ${result.firstError}`,
      );
    }
    scores.push(result.successRate);
  }
  return scores;
}
