/**
 * Trajectory export formats: AgentGym's AgentTraj (see docs/formats.md) and OpenAI chat JSONL.
 * Pure functions over one stored episode and its steps.
 */
import type { StepRecord } from "../rollout/episode.js";
import type { StoredEpisode } from "./run-store.js";

export interface AgentTrajTurn {
  from: "human" | "gpt";
  /** Only gpt turns with loss true are trained on; human turns carry null. */
  loss: boolean | null;
  value: string;
}

export interface AgentTrajItem {
  item_id: string;
  conversations: AgentTrajTurn[];
  reward: number;
  success: boolean;
}

/**
 * How AgentTraj items are named: "agentgym", `<AgentGym's task name>_<task>` where AgentGym has
 * a name for the task (AGENTGYM_ITEM_PREFIXES; its tooling picks the task by that prefix and
 * reads the index after the last "_"), else `<env>_<task>`; "clade", always `<env>_<task>`.
 */
export type ItemIdStyle = "agentgym" | "clade";
export const ITEM_ID_STYLES: readonly ItemIdStyle[] = ["agentgym", "clade"];

/**
 * AgentGym's item id prefix for an environment name, where it differs from the name: clade's
 * environments that play an AgentGym task (as `clade serve-env` mounts them) and AgentGym's
 * task names for LMRL-Gym's servers. Every other name (textcraft, todo, babyai, sqlgym, webshop,
 * ...) is AgentGym's own already, or has no AgentGym counterpart (coding, helpdesk, your own), and is kept.
 * AgentEvol's filter knows webshop, alfworld, textcraft, sciworld, sqlgym, lmrlgym_wordle,
 * lmrlgym_maze, weather, movie, todo and babyai, and fails on any other prefix.
 */
export const AGENTGYM_ITEM_PREFIXES: Readonly<Record<string, string>> = {
  maze: "lmrlgym_maze",
  wordle: "lmrlgym_wordle",
  sql: "sqlgym",
  gridworld: "babyai",
};

/** The item id of a task: see ItemIdStyle. */
export function agentTrajItemId(env: string, taskIndex: number, style: ItemIdStyle = "agentgym") {
  const prefix = style === "agentgym" ? (AGENTGYM_ITEM_PREFIXES[env] ?? env) : env;
  return `${prefix}_${taskIndex}`;
}

export interface ExportSource {
  env: string;
  /** What the agent was told first: the episode's stored instruction (see RunStore.instruction). */
  instruction: string;
  episode: StoredEpisode;
  steps: readonly StepRecord[];
  /** Default "agentgym". */
  itemIds?: ItemIdStyle;
}

/**
 * The instruction comes first with a fixed "OK." acknowledgement (not trained on), then the first
 * observation and the agent's turns. The observation after the final action is left out: no
 * assistant turn answers it.
 */
export function toAgentTraj(source: ExportSource): AgentTrajItem {
  const { episode, steps } = source;
  const conversations: AgentTrajTurn[] = [
    { from: "human", loss: null, value: source.instruction },
    { from: "gpt", loss: false, value: "OK." },
    { from: "human", loss: null, value: episode.initialObservation?.text ?? "" },
  ];
  steps.forEach((step, i) => {
    conversations.push({ from: "gpt", loss: true, value: step.message });
    if (i < steps.length - 1)
      conversations.push({ from: "human", loss: null, value: step.observation.text });
  });
  return {
    item_id: agentTrajItemId(source.env, episode.taskIndex, source.itemIds),
    conversations,
    reward: episode.reward,
    success: episode.outcome === "success",
  };
}

export interface ChatExportMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** OpenAI chat fine-tuning shape: the instruction as the system message, then alternating turns. */
export function toChatMessages(source: ExportSource): { messages: ChatExportMessage[] } {
  const messages: ChatExportMessage[] = [
    { role: "system", content: source.instruction },
    { role: "user", content: source.episode.initialObservation?.text ?? "" },
  ];
  source.steps.forEach((step, i) => {
    messages.push({ role: "assistant", content: step.message });
    if (i < source.steps.length - 1)
      messages.push({ role: "user", content: step.observation.text });
  });
  return { messages };
}
