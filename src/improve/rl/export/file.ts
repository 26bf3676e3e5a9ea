/**
 * A collection's export file in one call: the trajectories the estimator trained on, in the
 * format asked for, with the counts of those left out.
 */
import type { ItemIdStyle } from "../../../store/export.js";
import type { AdvantageEstimator, AdvantageResult } from "../estimators/index.js";
import type { Trajectory } from "../rollout/types.js";
import { formatAgentTrajFile, toRolloutAgentTraj } from "./agenttraj.js";
import { formatChatFile, toRolloutChatLine } from "./chat.js";
import { type RolloutSelection, selectExportable } from "./select.js";
import type { RolloutEnvironment } from "./source.js";

export type RolloutFormat = "agenttraj" | "chat";
export const ROLLOUT_FORMATS: readonly RolloutFormat[] = ["agenttraj", "chat"];

export interface RolloutExportOptions {
  format: RolloutFormat;
  env: RolloutEnvironment;
  /** The estimator the advantages came from, named in every item or line. */
  estimator: AdvantageEstimator;
  /** AgentTraj only: item id style (default "agentgym"). */
  itemIds?: ItemIdStyle;
}

export interface RolloutExport extends Omit<RolloutSelection, "exported"> {
  /** The file's whole text. */
  text: string;
  /** Trajectories written (items or lines). */
  exported: number;
}

/**
 * `trajectories` are a collection's training samples (CollectResult.trajectories) and
 * `advantages` what computeAdvantages (or the trainer's rolloutAdvantages) gave for them, in the
 * same order.
 */
export function exportRollouts(
  trajectories: readonly Trajectory[],
  advantages: AdvantageResult,
  options: RolloutExportOptions,
): RolloutExport {
  const { exported, errored, excluded } = selectExportable(trajectories, advantages);
  const { env, estimator } = options;
  const text =
    options.format === "agenttraj"
      ? formatAgentTrajFile(
          exported.map((e) =>
            toRolloutAgentTraj(e, {
              env,
              estimator,
              ...(options.itemIds ? { itemIds: options.itemIds } : {}),
            }),
          ),
        )
      : formatChatFile(exported.map((e) => toRolloutChatLine(e, { env, estimator })));
  return { text, exported: exported.length, errored, excluded };
}
