/**
 * REINFORCE++ (Hu, 2025): no critic and no groups. A token-level KL penalty is folded into the
 * rewards, the discounted return-to-go is the advantage, and the advantages are whitened over the
 * whole batch (verl's masked_whiten: unbiased variance, ε = 1e-8).
 *
 *   r'_t = r_t − β · KL_t                        KL_t = klDivergence(logp_t, ref_t), agent positions
 *   G_t  = r'_t + γ G_{t'}                       t' = the next agent position (0 after the last)
 *   A    = whiten(G) over every agent position of the batch
 *
 * Multi-turn: like GAE, the return skips observation positions. verl "resets after EOS" by
 * multiplying the running return by the mask, which at an observation wipes out everything after
 * it, so in a multi-turn sequence every turn but the last loses the outcome reward.
 *
 * The KL is folded in only when samples carry `logprobs` and `refLogprobs` (verl: only when a
 * reference policy exists), with β = klCoef and estimator klPenalty ("kl", k1, as the REINFORCE++
 * paper). verl does this only when the actor has no KL loss; pass klCoef 0 to keep the KL out of
 * the reward when the actor loss already has it.
 */
import { DEFAULTS, type KlEstimator } from "./defaults.js";
import { klDivergence } from "./losses.js";
import { admitSamples, assemble, maskedWhiten } from "./samples.js";
import type { AdvantageResult, Estimate, MaskBit, Sample } from "./types.js";

export interface ReinforcePlusPlusOptions {
  gamma?: number;
  klCoef?: number;
  klPenalty?: KlEstimator;
  whitenEpsilon?: number;
}

/** r_t − β · KL_t on agent positions; the rewards unchanged when the sample has no log-probs. */
export function foldKlIntoRewards(
  sample: Sample,
  klCoef: number = DEFAULTS.klCoef,
  klPenalty: KlEstimator = DEFAULTS.klPenalty,
): number[] {
  const { rewards, mask, logprobs, refLogprobs } = sample;
  if (logprobs === undefined || refLogprobs === undefined || klCoef === 0) return [...rewards];
  return rewards.map((r, t) =>
    mask[t] === 1
      ? r - klCoef * klDivergence(logprobs[t] as number, refLogprobs[t] as number, klPenalty)
      : 0,
  );
}

/** Discounted return-to-go over agent positions; 0 at observation positions. */
export function discountedReturns(
  rewards: readonly number[],
  mask: readonly MaskBit[],
  gamma: number,
): number[] {
  const returns = new Array<number>(mask.length).fill(0);
  let toGo = 0;
  for (let t = mask.length - 1; t >= 0; t--) {
    if (mask[t] !== 1) continue;
    toGo = (rewards[t] as number) + gamma * toGo;
    returns[t] = toGo;
  }
  return returns;
}

export function reinforcePlusPlus(
  samples: readonly Sample[],
  options: ReinforcePlusPlusOptions = {},
): AdvantageResult {
  const gamma = options.gamma ?? DEFAULTS.gamma;
  const klCoef = options.klCoef ?? DEFAULTS.klCoef;
  const klPenalty = options.klPenalty ?? DEFAULTS.klPenalty;
  const epsilon = options.whitenEpsilon ?? DEFAULTS.whitenEpsilon;

  // A batch where only some samples carry log-probs would penalise only those: refuse it.
  const live = samples.filter((sample) => sample.error === undefined);
  const withKl = live.filter((s) => s.logprobs !== undefined && s.refLogprobs !== undefined).length;
  if (withKl !== 0 && withKl !== live.length) {
    throw new Error(
      `reinforcePlusPlus: ${withKl} of ${live.length} samples carry logprobs and refLogprobs; give them to all or none`,
    );
  }
  const { admitted, excluded } = admitSamples(samples, { logprobs: withKl > 0 });

  const returns = admitted.map((i) => {
    const sample = samples[i] as Sample;
    return discountedReturns(foldKlIntoRewards(sample, klCoef, klPenalty), sample.mask, gamma);
  });
  const advantages = maskedWhiten(
    returns,
    admitted.map((i) => (samples[i] as Sample).mask),
    epsilon,
  );
  const estimates = new Map<number, Estimate>();
  admitted.forEach((i, k) => {
    estimates.set(i, { advantages: advantages[k] as number[], returns: returns[k] as number[] });
  });
  return assemble(samples.length, estimates, excluded);
}
