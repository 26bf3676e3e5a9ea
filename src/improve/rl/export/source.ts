/**
 * A collected trajectory in the shape `clade export` reads from the store, so that an RL export
 * lays out its conversation with the very functions that export stored runs (toAgentTraj,
 * toChatMessages in src/store/export.ts): the instruction, the scripted acknowledgement, the first
 * observation, then the agent's turns and the observations between them, in one implementation.
 */
import type { StepRecord } from "../../../rollout/episode.js";
import type { ExportSource, ItemIdStyle } from "../../../store/export.js";
import type { StoredEpisode } from "../../../store/run-store.js";
import type { AgentTurnRecord, Trajectory } from "../rollout/types.js";

/** What every line of an export says about where its trajectories come from. */
export interface RolloutEnvironment {
  name: string;
  version: string;
  /** The instruction the policy was given (collectGroups passes the env's own). */
  instruction: string;
}

/** The assistant's text of a turn: the policy's whole reply when it gave one, else the action. */
export function assistantText(turn: AgentTurnRecord): string {
  return turn.reply ?? turn.action;
}

/**
 * The trajectory as a stored episode and its steps. The store's exporters read the task, the
 * first observation, the reward, the outcome and each step's message and observation; the other
 * fields hold what the rollout knows of them (no wall-clock start, no per-step timing).
 */
export function exportSourceOf(
  trajectory: Trajectory,
  env: RolloutEnvironment,
  itemIds: ItemIdStyle = "agentgym",
): ExportSource {
  const last = trajectory.turns.length - 1;
  const steps: StepRecord[] = trajectory.turns.map((turn, t) => ({
    turn: turn.turn,
    action: turn.action,
    message: assistantText(turn),
    observation: turn.observation,
    reward: turn.envReward,
    done: t === last && trajectory.end === "done",
    elapsedMs: 0,
    info: {},
  }));
  const episode: StoredEpisode = {
    id: trajectory.sampleIndex,
    taskIndex: trajectory.taskIndex,
    sampleIndex: trajectory.sampleIndex,
    seed: trajectory.resetSeed,
    outcome: trajectory.success ? "success" : "failure",
    reward: trajectory.reward,
    endReason: trajectory.end === "done" ? "done" : "max_turns",
    error: null,
    initialObservation: trajectory.initialObservation ?? null,
    turns: trajectory.turns.length,
    parseErrors: 0,
    startedAt: "",
    durationMs: trajectory.envMs + trajectory.policyMs,
  };
  return { env: env.name, instruction: env.instruction, episode, steps, itemIds };
}
