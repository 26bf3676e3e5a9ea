/**
 * RL rollouts as chat JSONL (docs/formats.md, "RL rollouts as chat JSONL"): the messages of
 * `clade export --format chat` (toChatMessages), each with a loss mask, and each assistant
 * message with the estimator's advantage and return at its agent position, plus what the policy
 * reported of it (log-probability, token ids and per-token log-probabilities). One line per
 * trajectory, named by environment, task, group and sample.
 */
import { type ChatExportMessage, toChatMessages } from "../../../store/export.js";
import type { AdvantageEstimator } from "../estimators/index.js";
import type { SampleEnd } from "../rollout/types.js";
import type { ExportableTrajectory } from "./select.js";
import { exportSourceOf, type RolloutEnvironment } from "./source.js";

export interface RolloutChatMessage extends ChatExportMessage {
  /** 1: an assistant message, trained; 0: context (system, user), never trained. */
  mask: 0 | 1;
  /** Assistant only: the estimator's advantage at this agent turn. */
  advantage?: number;
  /** Assistant only: the estimator's return there (GAE: the critic's target). */
  return?: number;
  /** Assistant only, when the policy gave it: log π(action | state) under the behaviour policy. */
  logprob?: number;
  /** Assistant only, when the policy gave them (LLM policies): the reply's token ids. */
  token_ids?: number[];
  /** Assistant only, when the policy gave them: each of those tokens' log-probability. */
  token_logprobs?: number[];
}

export interface RolloutChatLine {
  env: string;
  env_version: string;
  /** The task index passed to reset. */
  task: number;
  /** The group (the task's position in the collected batch): samples compared with each other. */
  group: number;
  /** The sample's index within its group. */
  sample: number;
  /** The seed passed to reset (the same for a whole group). */
  reset_seed: number;
  /** The outcome reward: the last step's reward. */
  reward: number;
  success: boolean;
  /** "done": the environment ended it; "horizon": the turn limit did. */
  end: Exclude<SampleEnd, "error">;
  estimator: AdvantageEstimator;
  messages: RolloutChatMessage[];
}

export interface ChatExportOptions {
  env: RolloutEnvironment;
  estimator: AdvantageEstimator;
}

export function toRolloutChatLine(
  exported: ExportableTrajectory,
  options: ChatExportOptions,
): RolloutChatLine {
  const { trajectory, advantages, returns } = exported;
  const { messages } = toChatMessages(exportSourceOf(trajectory, options.env));
  // Each agent turn is one assistant message, in order: the k-th is turn k.
  let k = 0;
  const marked = messages.map((message): RolloutChatMessage => {
    if (message.role !== "assistant") return { ...message, mask: 0 };
    const turn = trajectory.turns[k];
    if (turn === undefined) {
      throw new Error(`toRolloutChatLine: more assistant messages than agent turns`);
    }
    const out: RolloutChatMessage = {
      ...message,
      mask: 1,
      advantage: advantages[k] as number,
      return: returns[k] as number,
    };
    if (turn.logprob !== undefined) out.logprob = turn.logprob;
    if (turn.tokenIds !== undefined) out.token_ids = [...turn.tokenIds];
    if (turn.tokenLogprobs !== undefined) out.token_logprobs = [...turn.tokenLogprobs];
    k++;
    return out;
  });
  if (k !== trajectory.turns.length) {
    throw new Error(
      `toRolloutChatLine: ${k} assistant messages for ${trajectory.turns.length} agent turns`,
    );
  }
  return {
    env: options.env.name,
    env_version: options.env.version,
    task: trajectory.taskIndex,
    group: trajectory.group,
    sample: trajectory.sampleIndex,
    reset_seed: trajectory.resetSeed,
    reward: trajectory.reward,
    success: trajectory.success,
    end: trajectory.end === "done" ? "done" : "horizon",
    estimator: options.estimator,
    messages: marked,
  };
}

/** The file: one JSON object per line. */
export function formatChatFile(lines: readonly RolloutChatLine[]): string {
  return lines.map((line) => `${JSON.stringify(line)}\n`).join("");
}
