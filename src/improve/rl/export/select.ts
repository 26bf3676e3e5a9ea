/**
 * Which collected samples an export holds, and each one's advantages per agent turn. A sample is
 * exported when the estimator trained on it: errored samples (an environment or policy error says
 * nothing about the policy) and samples the estimator left out for another reason (a ReMax group
 * whose greedy rollout errored) are counted instead; greedy baselines are never trained on.
 */
import type { AdvantageResult } from "../estimators/index.js";
import type { Trajectory } from "../rollout/types.js";

/** One trajectory to export, with the estimator's numbers at its agent turns. */
export interface ExportableTrajectory {
  trajectory: Trajectory;
  /** Per agent turn t: the advantage at the sample's position 2t + 1. */
  advantages: number[];
  /** Per agent turn t: the estimator's return there (GAE's value target; see Estimate). */
  returns: number[];
}

export interface RolloutSelection {
  exported: ExportableTrajectory[];
  /** Training samples that ended in an error: left out. */
  errored: number;
  /** Samples without an error that the estimator still left out (ReMax without a baseline). */
  excluded: number;
}

/**
 * Pairs `trajectories[i]` with `advantages.estimates[i]` (the order computeAdvantages keeps) and
 * reads each agent turn's numbers at its position. Throws when the two do not line up: that is a
 * caller's bug, and an export with advantages shifted by one sample would train the wrong turns.
 */
export function selectExportable(
  trajectories: readonly Trajectory[],
  advantages: AdvantageResult,
): RolloutSelection {
  if (advantages.estimates.length !== trajectories.length) {
    throw new Error(
      `selectExportable: ${advantages.estimates.length} estimates for ${trajectories.length} trajectories`,
    );
  }
  const selection: RolloutSelection = { exported: [], errored: 0, excluded: 0 };
  trajectories.forEach((trajectory, i) => {
    if (trajectory.greedy) {
      throw new Error("selectExportable: a greedy baseline rollout is not a training sample");
    }
    if (trajectory.error !== undefined || trajectory.sample.error !== undefined) {
      selection.errored++;
      return;
    }
    const estimate = advantages.estimates[i];
    if (!estimate) {
      selection.excluded++;
      return;
    }
    const positions = trajectory.sample.mask.length;
    if (estimate.advantages.length !== positions || positions !== 2 * trajectory.turns.length + 1) {
      throw new Error(
        `selectExportable: trajectory ${i} has ${trajectory.turns.length} turns but ${estimate.advantages.length} advantage positions`,
      );
    }
    const at = (values: readonly number[]) =>
      trajectory.turns.map((_, t) => values[2 * t + 1] as number);
    selection.exported.push({
      trajectory,
      advantages: at(estimate.advantages),
      returns: at(estimate.returns),
    });
  });
  return selection;
}
