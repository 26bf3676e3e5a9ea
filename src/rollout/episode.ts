/**
 * One episode: reset, then ask the agent and step the env until done, the turn limit or the
 * wall-clock limit. Every step is recorded; exceptions and timeouts become an `error` outcome,
 * never a failure.
 */
import type { Agent, AgentState, EpisodeContext, Turn } from "../agent/types.js";
import type { Env, Observation } from "../env/types.js";

export type Outcome = "success" | "failure" | "error";

/** Why the episode stopped. */
export type EndReason = "done" | "max_turns" | "timeout" | "agent_error" | "env_error";

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
  initialObservation?: Observation;
  steps: StepRecord[];
  startedAt: string;
  durationMs: number;
}

export interface EpisodeLimits {
  maxTurns: number;
  /** Wall-clock limit for the whole episode. */
  timeoutMs: number;
}

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

  let initialObservation: Observation | undefined;
  let reward = 0;
  let endReason: EndReason = "max_turns";
  let error: string | undefined;
  let phase: "agent" | "env" = "env";
  try {
    initialObservation = await abortable(
      env.reset(context.taskIndex, { seed: context.seed }),
      signal,
    );
    const history: Turn[] = [];
    let observation = initialObservation;
    for (let turn = 0; turn < limits.maxTurns; turn++) {
      const turnStart = performance.now();
      const state: AgentState = { instruction: context.env.instruction, observation, history };
      phase = "agent";
      const reply = await abortable(agent.act(state, signal), signal);
      phase = "env";
      const result = await abortable(env.step(reply.action), signal);
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
    }
  } catch (caught) {
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
    ...(initialObservation !== undefined ? { initialObservation } : {}),
    steps,
    startedAt,
    durationMs: performance.now() - start,
  };
}
