/**
 * One episode: reset, then ask the agent and step the env until done, the turn limit or the
 * wall-clock limit. Every step is recorded; exceptions and timeouts become an `error` outcome,
 * never a failure.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Agent, AgentState, EpisodeContext, Turn } from "../agent/types.js";
import type { Env, Observation } from "../env/types.js";
import type { ModelCallRecord } from "../model/call-record.js";

export type Outcome = "success" | "failure" | "error";

/**
 * Why the episode stopped. store_error: it ran, but could not be stored as it was (e.g. too big
 * to encode), so it was stored as an error without its steps, to be run again on resume.
 */
export type EndReason =
  | "done"
  | "max_turns"
  | "timeout"
  | "agent_error"
  | "env_error"
  | "store_error";

export interface StepRecord {
  turn: number;
  action: string;
  /** The agent's full reply; equal to the action when the agent gave none. */
  message: string;
  observation: Observation;
  reward: number;
  done: boolean;
  /** Milliseconds spent in this turn (agent and env together). */
  elapsedMs: number;
  info: Record<string, unknown>;
  /** Model replies without a usable action in this turn, each fed back to the model (LLM agents). */
  parseErrors?: number;
}

export interface EpisodeRecord {
  taskIndex: number;
  sampleIndex: number;
  seed: number;
  outcome: Outcome;
  /** The last step's reward (AgentGym keeps the final reward), 0 when no step was taken. */
  reward: number;
  endReason: EndReason;
  error?: string;
  /**
   * The instruction the agent was given (AgentState.instruction): what the model saw first,
   * stored so exports need not guess it from the environment's name.
   */
  instruction?: string;
  initialObservation?: Observation;
  steps: StepRecord[];
  /** Model calls the agent made, each tagged with its turn (absent for agents without a model). */
  calls?: ModelCallRecord[];
  /** Unusable model replies over the whole episode (0 for agents without a model). */
  parseErrors: number;
  startedAt: string;
  durationMs: number;
}

export interface EpisodeLimits {
  maxTurns: number;
  /** Wall-clock limit for the whole episode. */
  timeoutMs: number;
}

/** How long an episode may run on without letting timers and I/O callbacks in. */
const YIELD_EVERY_MS = 10;

/** Raised inside an episode when its wall-clock limit passes. */
class EpisodeTimeout extends Error {}

/** Resolves with the promise, or rejects as soon as the signal aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export interface RunEpisodeOptions {
  env: Env;
  agent: Agent;
  context: EpisodeContext;
  limits: EpisodeLimits;
  /** Aborting it (e.g. on SIGINT) rejects with the signal's reason: the episode is not recorded. */
  signal?: AbortSignal;
}

export async function runEpisode(options: RunEpisodeOptions): Promise<EpisodeRecord> {
  const { env, agent, context, limits } = options;
  const startedAt = new Date().toISOString();
  const start = performance.now();
  const steps: StepRecord[] = [];
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new EpisodeTimeout(`episode exceeded ${limits.timeoutMs} ms`)),
    limits.timeoutMs,
  );
  const outer = options.signal;
  const forwardAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", forwardAbort, { once: true });
  const signal = controller.signal;
  // The timer cannot fire while synchronous work holds the thread, so check the clock too.
  const checkDeadline = () => {
    if (performance.now() - start > limits.timeoutMs) {
      throw new EpisodeTimeout(`episode exceeded ${limits.timeoutMs} ms`);
    }
  };
  let lastYield = performance.now();

  let initialObservation: Observation | undefined;
  let reward = 0;
  let endReason: EndReason = "max_turns";
  let error: string | undefined;
  let phase: "agent" | "env" = "env";
  let turn = 0;
  let parseErrors = 0;
  const calls: ModelCallRecord[] = [];
  // Failed calls too: whatever the agent spent is accounted, whatever the turn's fate.
  const collectCalls = () => {
    for (const call of agent.takeCalls?.() ?? []) calls.push({ ...call, turn });
  };
  try {
    initialObservation = await abortable(
      env.reset(context.taskIndex, { seed: context.seed }),
      signal,
    );
    const history: Turn[] = [];
    let observation = initialObservation;
    for (turn = 0; turn < limits.maxTurns; turn++) {
      const turnStart = performance.now();
      const state: AgentState = { instruction: context.env.instruction, observation, history };
      phase = "agent";
      const reply = await abortable(agent.act(state, signal), signal);
      collectCalls();
      checkDeadline();
      if (typeof reply?.action !== "string") {
        throw new TypeError(`the agent replied ${JSON.stringify(reply)}, not { action: string }`);
      }
      parseErrors += reply.parseErrors ?? 0;
      phase = "env";
      const result = await abortable(env.step(reply.action), signal);
      checkDeadline();
      const message = reply.message ?? reply.action;
      steps.push({
        turn,
        action: reply.action,
        message,
        observation: result.observation,
        reward: result.reward,
        done: result.done,
        elapsedMs: performance.now() - turnStart,
        info: result.info,
        ...(reply.parseErrors ? { parseErrors: reply.parseErrors } : {}),
      });
      history.push({
        action: reply.action,
        message,
        observation: result.observation,
        reward: result.reward,
      });
      reward = result.reward;
      observation = result.observation;
      if (result.done) {
        endReason = "done";
        break;
      }
      // Agents and envs that never wait on I/O would keep timers (other episodes' deadlines,
      // signal handlers) from ever running; hand the event loop a turn now and then.
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await yieldToEventLoop();
        lastYield = performance.now();
      }
    }
    // Calls made inside the last env.step (helpdesk's model-written user) are collected too.
    collectCalls();
  } catch (caught) {
    collectCalls();
    if (outer?.aborted) throw outer.reason;
    if (caught instanceof EpisodeTimeout) {
      endReason = "timeout";
      error = caught.message;
    } else {
      endReason = phase === "agent" ? "agent_error" : "env_error";
      error = describeError(caught);
    }
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", forwardAbort);
    // Agents holding resources (a sandboxed agent's process) release them; a failure to do so
    // says nothing about the episode.
    try {
      await agent.close?.();
    } catch {
      // Ignored: the episode's outcome is already decided.
    }
  }
  const outcome: Outcome =
    error !== undefined ? "error" : reward >= context.env.successThreshold ? "success" : "failure";
  return {
    taskIndex: context.taskIndex,
    sampleIndex: context.sampleIndex,
    seed: context.seed,
    outcome,
    reward,
    endReason,
    ...(error !== undefined ? { error } : {}),
    instruction: context.env.instruction,
    ...(initialObservation !== undefined ? { initialObservation } : {}),
    steps,
    ...(calls.length > 0 ? { calls } : {}),
    parseErrors,
    startedAt,
    durationMs: performance.now() - start,
  };
}
