/**
 * The data the estimators read and write. A sample is one trajectory laid out as a sequence of
 * positions: a position is an agent turn or an observation turn today (the embedded policy acts
 * once per agent turn) and may be a token later; nothing here depends on which.
 */

/** 1 = an agent position (trained), 0 = an observation position (context only, never trained). */
export type MaskBit = 0 | 1;

/** A group of samples drawn for the same task instance (verl's `uid`; GRPO's "prompt group"). */
export type GroupId = string | number;

export interface Sample {
  /** Samples with the same group share a task instance; GRPO, RLOO and ReMax compare within it. */
  group: GroupId;
  /**
   * Reward per position. Rewards may sit only on agent positions (mask 1): a reward on an
   * observation position would be silently lost by GAE and REINFORCE++ (the reference's defect),
   * so the estimators refuse it. `placeOutcomeReward` puts an outcome reward in the right place.
   */
  rewards: readonly number[];
  /** Per position: 1 trained, 0 not. Same length as `rewards`. */
  mask: readonly MaskBit[];
  /** Critic values V(s_t) per position; GAE only. Values at mask-0 positions are ignored. */
  values?: readonly number[];
  /** Log-probability of each position under the rollout policy; REINFORCE++'s in-reward KL only. */
  logprobs?: readonly number[];
  /** Log-probability of each position under the reference policy; REINFORCE++'s in-reward KL only. */
  refLogprobs?: readonly number[];
  /**
   * Set when an environment or model error ended the sample. Such a sample is excluded from its
   * group's statistics, gets no advantages and is reported in `AdvantageResult.excluded`: an error
   * says nothing about the policy, so scoring it 0 (as the reference does) would teach noise.
   */
  error?: string;
}

/** Per-position advantages and returns of one sample; 0 at mask-0 positions. */
export interface Estimate {
  advantages: number[];
  /** The regression target of a critic (GAE); the reward-to-go or the advantage elsewhere, as verl. */
  returns: number[];
}

/** A sample the estimator did not train on, and why. */
export interface ExcludedSample {
  /** Index into the input array. */
  index: number;
  group: GroupId;
  reason: string;
}

export interface AdvantageResult {
  /** One entry per input sample, in order; null for an excluded sample. */
  estimates: (Estimate | null)[];
  excluded: ExcludedSample[];
}

/** verl's `adv_estimator` names. */
export type AdvantageEstimator = "gae" | "grpo" | "rloo" | "reinforce_plus_plus" | "remax";
