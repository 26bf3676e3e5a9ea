import type { EnvInfo, Observation } from "../env/types.js";
import type { ModelCallRecord } from "../model/call-record.js";

/** One completed turn of an episode as the agent remembers it. */
export interface Turn {
  action: string;
  /** The agent's full reply (thought and action) when it differs from the bare action. */
  message: string;
  observation: Observation;
  reward: number;
}

/** Everything an agent may look at when choosing its next action. */
export interface AgentState {
  instruction: string;
  /** The latest observation (after reset, or after the last step). */
  observation: Observation;
  /** Earlier turns, oldest first. */
  history: readonly Turn[];
}

export interface AgentReply {
  /** The action string passed to env.step(). */
  action: string;
  /** The full reply as it should appear in a trajectory; defaults to the action. */
  message?: string;
  /**
   * Model replies in this turn that had no usable action (LLM agents only). Each one was answered
   * with an explanatory message and the model asked again; sum over the steps for the episode.
   */
  parseErrors?: number;
}

export interface Agent {
  act(state: AgentState, signal: AbortSignal): Promise<AgentReply>;
  /**
   * Model calls made since the last take (agents backed by a model). The runner takes them after
   * every act(), failed ones included, and stores them with the turn.
   */
  takeCalls?(): ModelCallRecord[];
  /**
   * Called once when the episode ends, however it ends (an agent running in a sandbox stops its
   * process here). Errors are ignored.
   */
  close?(): Promise<void> | void;
}

/** Identifies one episode; agents are created fresh for each. */
export interface EpisodeContext {
  env: EnvInfo;
  taskIndex: number;
  /** The seed passed to env.reset(). */
  seed: number;
  sampleIndex: number;
}

/**
 * A reference solver: proves every task solvable by solving it. It may read the task's
 * generated data (it lives beside the environment's generator), never the env instance.
 */
export type ReferenceSolver = (ctx: EpisodeContext) => Agent;
