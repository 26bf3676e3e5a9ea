/**
 * RL rollouts as AgentGym's AgentTraj items (docs/formats.md, "RL rollouts as AgentTraj"): the
 * conversation of `clade export --format agenttraj` (toAgentTraj), with the RL fields added as
 * keys AgentGym's loader does not read: per trained gpt turn its advantage, per item the group,
 * the sample and the estimator.
 */
import {
  type AgentTrajItem,
  type AgentTrajTurn,
  type ItemIdStyle,
  toAgentTraj,
} from "../../../store/export.js";
import type { AdvantageEstimator } from "../estimators/index.js";
import type { ExportableTrajectory } from "./select.js";
import { exportSourceOf, type RolloutEnvironment } from "./source.js";

/** A conversation turn; `advantage` only on the gpt turns the agent produced (loss true). */
export interface RolloutAgentTrajTurn extends AgentTrajTurn {
  advantage?: number;
}

export interface RolloutAgentTrajItem extends AgentTrajItem {
  conversations: RolloutAgentTrajTurn[];
  /** The group (the task's position in the collected batch): samples compared with each other. */
  group: number;
  /** The sample's index within its group. */
  sample: number;
  /** verl's adv_estimator name of the advantages. */
  estimator: AdvantageEstimator;
}

export interface AgentTrajExportOptions {
  env: RolloutEnvironment;
  estimator: AdvantageEstimator;
  /** Item id style, as `clade export --item-ids` (default "agentgym"). */
  itemIds?: ItemIdStyle;
}

export function toRolloutAgentTraj(
  exported: ExportableTrajectory,
  options: AgentTrajExportOptions,
): RolloutAgentTrajItem {
  const { trajectory, advantages } = exported;
  const base = toAgentTraj(exportSourceOf(trajectory, options.env, options.itemIds));
  // Each agent turn is one trained gpt turn, in order: the k-th gets turn k's advantage.
  let k = 0;
  const conversations = base.conversations.map((turn): RolloutAgentTrajTurn => {
    if (turn.from !== "gpt" || turn.loss !== true) return turn;
    return { ...turn, advantage: advantages[k++] as number };
  });
  if (k !== advantages.length) {
    throw new Error(
      `toRolloutAgentTraj: ${k} trained turns in the conversation for ${advantages.length} agent turns`,
    );
  }
  return {
    item_id: base.item_id,
    conversations,
    reward: base.reward,
    success: base.success,
    group: trajectory.group,
    sample: trajectory.sampleIndex,
    estimator: options.estimator,
  };
}

/** The file: one JSON array, an item per line (as `clade export` writes it). */
export function formatAgentTrajFile(items: readonly RolloutAgentTrajItem[]): string {
  if (items.length === 0) return "[]\n";
  return `[\n${items.map((item) => JSON.stringify(item)).join(",\n")}\n]\n`;
}
