/**
 * An evaluation run: tasks × samples episodes of one agent on one environment, stored as they
 * finish. Running the same run id again resumes: finished episodes are kept, the rest are run.
 *
 * Two ways in: the library's short form (`env` and `tasks`; everything else has a default) and
 * the full form the CLI uses (a store, an AgentFactory and every setting spelt out).
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { AgentFactory } from "../agent/registry.js";
import type { Agent, EpisodeContext } from "../agent/types.js";
import { checkTaskIndex, type EnvDefinition } from "../env/types.js";
import type { EpisodeRecord } from "../rollout/episode.js";
import { type EpisodeSpec, runEpisodes } from "../rollout/runner.js";
import { EpisodeWriter } from "../store/episode-writer.js";
import { RunStore, type StoredEpisode } from "../store/run-store.js";
import type { MetricsOptions, MetricsReport } from "./metrics.js";
import { runMetrics } from "./report.js";
import { formatTaskRange, parseTaskRange } from "./task-range.js";

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

/**
 * Fail fast, as Inspect AI's --fail-on-error: once this many episodes in a row (in the order they
 * finish) end in an error with the same cause, no new episode starts. `false` (or 0) turns it off.
 */
export type FailFast = { consecutiveErrors: number } | false;

/** The default threshold of the fail-fast rule (`clade eval --fail-on-error`, the short form). */
export const DEFAULT_FAIL_FAST_ERRORS = 5;

/** The stop reason of a run that the fail-fast rule stopped. */
export const FAIL_FAST_STOP = "fail-fast";

export interface EvalResult {
  runId: string;
  resumed: boolean;
  skipped: number;
  ran: number;
  interrupted: boolean;
  /** Episodes left unstarted by a stop (the budget, fail-fast), stored as not_run. */
  notRun: number;
  /** Why the run stopped early, when it did: "budget", "fail-fast", "signal", ... */
  stopReason?: string;
  /**
   * Set when the fail-fast rule stopped the run: how many episodes in a row ended in the same
   * error, and that error as the last of them reported it.
   */
  failFast?: { episodes: number; error: string };
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
  /** Off unless given in this form (the short form defaults to DEFAULT_FAIL_FAST_ERRORS). */
  failFast?: FailFast;
}

/** An agent as the short form takes it. */
export type AgentInput =
  /** A registered name: "reference" or "random" (LLM agents come from createLlmAgent). */
  | string
  /** `{ name, create(context) }`: a fresh agent per episode. */
  | AgentFactory
  /** A function building a fresh agent per episode. */
  | ((context: EpisodeContext) => Agent)
  /** One agent object shared by every episode: it should keep no per-episode state. */
  | (Agent & { name?: string });

/** The short form: only `env` and `tasks` are required. */
export interface EvaluateOptions {
  /** A built-in environment's name, or an environment of your own. */
  env: string | EnvDefinition;
  /** "test", "train", "0-9,20", or task indices. */
  tasks: string | readonly number[];
  /** Default "reference" (the environment's reference solver). */
  agent?: AgentInput;
  /**
   * A RunStore or the path of one (opened and closed here). Default: a store in memory, gone
   * when the call returns; the result carries the episodes and metrics.
   */
  store?: RunStore | string;
  /** Default: `<env>-<agent>-<time>-<random hex>`. Give one to resume a run in a stored path. */
  runId?: string;
  /** Samples per task; default 1. */
  samples?: number;
  /** Episodes running at once; default 8. */
  concurrency?: number;
  /** Turn limit per episode; default the environment's own step limit (info.maxSteps). */
  maxTurns?: number;
  /** Wall-clock limit per episode; default 300,000 ms. */
  timeoutMs?: number;
  /** Passed to env.reset; default 0. */
  seed?: number;
  /** More settings that identify the run (besides what the agent brings). */
  identity?: Record<string, unknown>;
  /** Default { consecutiveErrors: DEFAULT_FAIL_FAST_ERRORS }. */
  failFast?: FailFast;
  onProgress?: (progress: EvalProgress) => void;
  /** Aborting it abandons the episodes in flight; the result says interrupted. */
  signal?: AbortSignal;
  /** A gentle stop: episodes in flight finish, the rest are stored as not_run. */
  stop?: AbortSignal;
  /** Options of the metrics computed at the end (ks, bootstrap resamples and seed). */
  metrics?: MetricsOptions;
}

/** What the short form returns: the run's result, its metrics and its stored episodes. */
export interface Evaluation extends EvalResult {
  env: string;
  agent: string;
  metrics: MetricsReport;
  episodes: StoredEpisode[];
}

export const EVALUATION_DEFAULTS = {
  samples: 1,
  concurrency: 8,
  timeoutMs: 300_000,
  seed: 0,
} as const;

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

/** Volatile parts of an error message: ids, then any number (ports, timings, counts). */
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const TOKEN_ID = /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{10,}\b/g;
const NUMBER = /\d+/g;

/**
 * An error message with its volatile parts (request ids, ports, addresses, timings, attempt
 * counts) replaced, so that two episodes failing for the same reason compare equal.
 */
export function normaliseError(message: string): string {
  return message.replace(UUID, "<id>").replace(TOKEN_ID, "<id>").replace(NUMBER, "#").trim();
}

/** What caused an errored episode: where it failed and the normalised message. */
export function errorCause(record: Pick<EpisodeRecord, "endReason" | "error">): string {
  return `${record.endReason}: ${normaliseError(record.error ?? "")}`;
}

/** Counts episodes in a row, in finishing order, that ended in an error with the same cause. */
export class ErrorStreak {
  private cause: string | undefined;
  /** Episodes in the current streak. */
  count = 0;
  /** The error text of the streak's latest episode. */
  error = "";

  /** Adds a finished episode; returns the streak's length (0 when it did not end in an error). */
  observe(record: EpisodeRecord): number {
    if (record.outcome !== "error") {
      this.cause = undefined;
      this.count = 0;
      return 0;
    }
    const cause = errorCause(record);
    this.count = cause === this.cause ? this.count + 1 : 1;
    this.cause = cause;
    this.error = record.error ?? "";
    return this.count;
  }
}

function failFastThreshold(failFast: FailFast | undefined): number {
  if (!failFast) return 0;
  const n = failFast.consecutiveErrors;
  if (!Number.isInteger(n) || n < 0) {
    throw new RangeError(`failFast.consecutiveErrors must be a whole number ≥ 0, got ${n}`);
  }
  return n;
}

/** Evaluates an agent on an environment: the short form (`env` and `tasks`) or the full form. */
export function runEvaluation(options: RunEvaluationOptions): Promise<EvalResult>;
export function runEvaluation(options: EvaluateOptions): Promise<Evaluation>;
export function runEvaluation(
  options: RunEvaluationOptions | EvaluateOptions,
): Promise<EvalResult | Evaluation> {
  return "settings" in options ? runPlanned(options) : evaluate(options);
}

async function runPlanned(options: RunEvaluationOptions): Promise<EvalResult> {
  const { store, env, agent, signal } = options;
  const settings: EvalSettings = agent.identity
    ? { ...options.settings, identity: { ...agent.identity, ...options.settings.identity } }
    : options.settings;
  const threshold = failFastThreshold(options.failFast);
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
  // The caller's gentle stop and the fail-fast rule stop the episode loop the same way.
  const stop = new AbortController();
  const forwardStop = () => {
    if (!stop.signal.aborted) stop.abort(options.stop?.reason ?? "stopped");
  };
  if (options.stop?.aborted) forwardStop();
  options.stop?.addEventListener("abort", forwardStop, { once: true });
  const streak = new ErrorStreak();
  let failFast: EvalResult["failFast"];
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
        const count = streak.observe(record);
        if (threshold > 0 && count >= threshold) {
          if (!stop.signal.aborted) {
            failFast = { episodes: count, error: streak.error };
            stop.abort(FAIL_FAST_STOP);
          } else if (failFast && count > failFast.episodes) {
            // Episodes in flight at the stop that failed the same way lengthen the streak.
            failFast = { episodes: count, error: streak.error };
          }
        }
        options.onProgress?.({ done, total, skipped, last: record });
      },
      ...(signal ? { signal } : {}),
      stop: stop.signal,
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
  } finally {
    options.stop?.removeEventListener("abort", forwardStop);
  }
  const result = {
    runId: settings.runId,
    resumed,
    skipped,
    ran: done - skipped,
    interrupted: false,
  };
  if (stop.signal.aborted) {
    const unrun = plan.filter((e) => !ran.has(`${e.taskIndex}:${e.sampleIndex}`));
    const stopReason = String(stop.signal.reason ?? "stopped");
    // The rule fired on the last episodes: nothing was stopped, the run is simply complete.
    const stoppedNothing = stopReason === FAIL_FAST_STOP && unrun.length === 0;
    if (!stoppedNothing) {
      // Stored as not_run so reports show the whole plan; a rerun runs them (and the errors).
      store.markNotRun(settings.runId, unrun);
      store.setStatus(settings.runId, "interrupted", stopReason);
      return {
        ...result,
        interrupted: true,
        notRun: unrun.length,
        stopReason,
        ...(stopReason === FAIL_FAST_STOP && failFast ? { failFast } : {}),
      };
    }
  }
  store.setStatus(settings.runId, "complete");
  return { ...result, notRun: 0 };
}

const shortFormSchema = z.object({
  samples: z.number().int().min(1),
  concurrency: z.number().int().min(1),
  maxTurns: z.number().int().min(1),
  timeoutMs: z.number().int().min(1),
  seed: z.number().int().min(0),
});

async function toAgentFactory(
  input: AgentInput | undefined,
  env: EnvDefinition,
): Promise<AgentFactory> {
  if (input === undefined || typeof input === "string") {
    // The registry loads every reference solver: only when a name asks for it.
    const { isLlmAgent, resolveAgent, UnknownAgentError } = await import("../agent/registry.js");
    if (input === undefined) return resolveAgent("reference", env);
    if (isLlmAgent(input)) {
      throw new UnknownAgentError(
        `agent "${input}" needs a model: pass createLlmAgent({ kind: "${input}", model: ... }) as the agent`,
      );
    }
    return resolveAgent(input, env);
  }
  if (typeof input === "function") {
    return { name: input.name || "custom", create: input };
  }
  if (typeof (input as AgentFactory).create === "function") return input as AgentFactory;
  if (typeof (input as Agent).act === "function") {
    const agent = input as Agent & { name?: unknown };
    return { name: typeof agent.name === "string" ? agent.name : "custom", create: () => agent };
  }
  throw new TypeError("agent must be a name, an agent ({ act }), a factory function or { create }");
}

function selectTasks(tasks: string | readonly number[], env: EnvDefinition): number[] {
  if (typeof tasks === "string") return parseTaskRange(tasks, env.info);
  for (const task of tasks) checkTaskIndex(env.info, task);
  return [...new Set(tasks)].sort((a, b) => a - b);
}

/** A fresh id: time to the second for readability, random hex so that parallel runs differ. */
export function defaultRunId(env: string, agent: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${env}-${agent}-${stamp}-${randomBytes(3).toString("hex")}`;
}

async function evaluate(options: EvaluateOptions): Promise<Evaluation> {
  const env =
    typeof options.env === "string"
      ? (await import("../env/registry.js")).findEnv(options.env)
      : options.env;
  const tasks = selectTasks(options.tasks, env);
  if (tasks.length === 0) throw new RangeError("no tasks to run");
  const agent = await toAgentFactory(options.agent, env);
  const numbers = shortFormSchema.parse({
    samples: options.samples ?? EVALUATION_DEFAULTS.samples,
    concurrency: options.concurrency ?? EVALUATION_DEFAULTS.concurrency,
    maxTurns: options.maxTurns ?? env.info.maxSteps,
    timeoutMs: options.timeoutMs ?? EVALUATION_DEFAULTS.timeoutMs,
    seed: options.seed ?? EVALUATION_DEFAULTS.seed,
  });
  const owned = !(options.store instanceof RunStore);
  const store =
    options.store instanceof RunStore ? options.store : RunStore.open(options.store ?? ":memory:");
  try {
    const runId = options.runId ?? defaultRunId(env.info.name, agent.name);
    const result = await runPlanned({
      store,
      env,
      agent,
      settings: {
        runId,
        tasks,
        taskSpec: formatTaskRange(tasks),
        ...numbers,
        ...(options.identity ? { identity: options.identity } : {}),
      },
      failFast: options.failFast ?? { consecutiveErrors: DEFAULT_FAIL_FAST_ERRORS },
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.stop ? { stop: options.stop } : {}),
    });
    const episodes = store.episodes(runId);
    return {
      ...result,
      env: env.info.name,
      agent: agent.name,
      metrics: runMetrics(episodes, { seed: numbers.seed, ...options.metrics }),
      episodes,
    };
  } finally {
    if (owned) store.close();
  }
}
