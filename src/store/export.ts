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

export interface ExportSource {
  env: string;
  instruction: string;
  episode: StoredEpisode;
  steps: readonly StepRecord[];
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
    item_id: `${source.env}_${episode.taskIndex}`,
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
