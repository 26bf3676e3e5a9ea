/**
 * Advantage estimators and PPO-family loss pieces for multi-turn agent RL, after AgentGym-RL
 * (verl). Pure functions over samples laid out as positions with a mask; see types.ts.
 */
import type { KlEstimator } from "./defaults.js";
import { gae } from "./gae.js";
import { grpo } from "./grpo.js";
import { reinforcePlusPlus } from "./reinforce-pp.js";
import { remax } from "./remax.js";
import { rloo } from "./rloo.js";
import type { AdvantageEstimator, AdvantageResult, GroupId, Sample } from "./types.js";

export { DEFAULTS, type Hyperparameters, type KlEstimator } from "./defaults.js";
export { type GaeOptions, gae, gaeForSample } from "./gae.js";
export { type GrpoOptions, grpo, meanAndStd } from "./grpo.js";
export {
  type ActorLossTerms,
  actorLoss,
  type ClippedGradients,
  categoricalEntropy,
  categoricalEntropyWithGrad,
  clipGradNorm,
  type KlLossInput,
  klDivergence,
  klDivergenceGrad,
  klLoss,
  meanEntropy,
  ppoClippedSurrogate,
  type SurrogateInput,
  type SurrogateResult,
  type ValueLossInput,
  valueLoss,
} from "./losses.js";
export {
  discountedReturns,
  foldKlIntoRewards,
  type ReinforcePlusPlusOptions,
  reinforcePlusPlus,
} from "./reinforce-pp.js";
export { type RemaxOptions, remax } from "./remax.js";
export { rloo } from "./rloo.js";
export {
  maskedMean,
  maskedWhiten,
  placeOutcomeReward,
  sampleScore,
  validateSample,
} from "./samples.js";
export type {
  AdvantageEstimator,
  AdvantageResult,
  Estimate,
  ExcludedSample,
  GroupId,
  MaskBit,
  Sample,
} from "./types.js";

export const ADVANTAGE_ESTIMATORS: readonly AdvantageEstimator[] = [
  "gae",
  "grpo",
  "rloo",
  "reinforce_plus_plus",
  "remax",
];

export interface AdvantageOptions {
  gamma?: number;
  lam?: number;
  grpoEpsilon?: number;
  normAdvByStdInGrpo?: boolean;
  whitenGaeAdvantages?: boolean;
  whitenEpsilon?: number;
  klCoef?: number;
  klPenalty?: KlEstimator;
  /** ReMax only: the greedy rollout's score per group. */
  baselines?: ReadonlyMap<GroupId, number>;
}

/** One entry point by verl's `adv_estimator` name; options not used by the estimator are ignored. */
export function computeAdvantages(
  estimator: AdvantageEstimator,
  samples: readonly Sample[],
  options: AdvantageOptions = {},
): AdvantageResult {
  switch (estimator) {
    case "gae":
      return gae(samples, options);
    case "grpo":
      return grpo(samples, options);
    case "rloo":
      return rloo(samples);
    case "reinforce_plus_plus":
      return reinforcePlusPlus(samples, options);
    case "remax":
      if (options.baselines === undefined) {
        throw new Error(
          "computeAdvantages: remax needs options.baselines (the greedy score per group)",
        );
      }
      return remax(samples, { baselines: options.baselines });
  }
}
