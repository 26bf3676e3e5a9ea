/**
 * The pieces of the PPO-family actor and critic losses, as verl computes them, on flat arrays of
 * positions (the caller concatenates a mini-batch's samples) with a mask. Losses are averaged over
 * the mask-1 positions of the whole mini-batch (verl's "token-mean"). Each loss also returns its
 * derivative with respect to the per-position log-probability (or value), so a policy without
 * automatic differentiation can back-propagate through its own parameters.
 *
 *   actor loss = pg_loss − entropyCoeff · entropy + klLossCoef · kl_loss
 */
import { DEFAULTS, type KlEstimator } from "./defaults.js";
import type { MaskBit } from "./types.js";

function countMasked(mask: readonly MaskBit[]): number {
  let n = 0;
  for (const m of mask) n += m;
  return n;
}

function checkLengths(
  what: string,
  mask: readonly MaskBit[],
  arrays: Record<string, readonly number[]>,
): void {
  for (const [name, array] of Object.entries(arrays)) {
    if (array.length !== mask.length) {
      throw new Error(`${what}: ${array.length} ${name} for ${mask.length} mask positions`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// KL divergence to the reference policy, per position.

/**
 * One position's KL estimate from the log-probabilities of the sampled action under the policy
 * and the reference (Schulman's k1/k2/k3). k3 is clamped to [−clamp, clamp] as verl does.
 */
export function klDivergence(
  logprob: number,
  refLogprob: number,
  estimator: KlEstimator,
  clamp: number = DEFAULTS.klClamp,
): number {
  const diff = logprob - refLogprob;
  switch (estimator) {
    case "kl":
      return diff;
    case "abs":
      return Math.abs(diff);
    case "mse":
      return 0.5 * diff * diff;
    case "low_var_kl": {
      const logRatio = -diff; // ref − logp
      const k3 = Math.exp(logRatio) - logRatio - 1;
      return Math.min(Math.max(k3, -clamp), clamp);
    }
  }
}

/** d klDivergence / d logprob (0 where k3 is clamped). */
export function klDivergenceGrad(
  logprob: number,
  refLogprob: number,
  estimator: KlEstimator,
  clamp: number = DEFAULTS.klClamp,
): number {
  const diff = logprob - refLogprob;
  switch (estimator) {
    case "kl":
      return 1;
    case "abs":
      return Math.sign(diff);
    case "mse":
      return diff;
    case "low_var_kl": {
      const logRatio = -diff;
      const k3 = Math.exp(logRatio) - logRatio - 1;
      return Math.abs(k3) > clamp ? 0 : 1 - Math.exp(logRatio);
    }
  }
}

export interface KlLossInput {
  logprobs: readonly number[];
  refLogprobs: readonly number[];
  mask: readonly MaskBit[];
}

/** The KL term of the actor loss (before klLossCoef): the masked mean of the per-position KL. */
export function klLoss(
  input: KlLossInput,
  estimator: KlEstimator = DEFAULTS.klLossType,
  clamp: number = DEFAULTS.klClamp,
): { loss: number; gradLogprobs: number[] } {
  const { logprobs, refLogprobs, mask } = input;
  checkLengths("klLoss", mask, { logprobs, refLogprobs });
  const n = countMasked(mask);
  let sum = 0;
  const gradLogprobs = mask.map((m, t) => {
    if (m !== 1) return 0;
    const lp = logprobs[t] as number;
    const ref = refLogprobs[t] as number;
    sum += klDivergence(lp, ref, estimator, clamp);
    return klDivergenceGrad(lp, ref, estimator, clamp) / n;
  });
  return { loss: n === 0 ? 0 : sum / n, gradLogprobs };
}

// ---------------------------------------------------------------------------------------------
// PPO's clipped surrogate (Schulman et al., 2017).

export interface SurrogateInput {
  /** log π_θ(a_t | s_t) under the policy being updated. */
  logprobs: readonly number[];
  /** log π_old(a_t | s_t) under the policy that collected the rollout. */
  oldLogprobs: readonly number[];
  advantages: readonly number[];
  mask: readonly MaskBit[];
}

export interface SurrogateResult {
  /** mean over mask-1 positions of max(−A·ρ, −A·clip(ρ, 1 − ε, 1 + ε)). */
  loss: number;
  /** Fraction of mask-1 positions where the clipped term is the larger (the clip is active). */
  clipFraction: number;
  /** mean(old − new log-prob): verl's ppo_kl, a cheap drift monitor. */
  approxKl: number;
  /** d loss / d logprobs[t]: −A·ρ / n where the clip is inactive, 0 where it is active. */
  gradLogprobs: number[];
}

export function ppoClippedSurrogate(
  input: SurrogateInput,
  clipRatio: number = DEFAULTS.clipRatio,
): SurrogateResult {
  const { logprobs, oldLogprobs, advantages, mask } = input;
  checkLengths("ppoClippedSurrogate", mask, { logprobs, oldLogprobs, advantages });
  const n = countMasked(mask);
  let loss = 0;
  let clipped = 0;
  let drift = 0;
  const gradLogprobs = mask.map((m, t) => {
    if (m !== 1) return 0;
    const logRatio = (logprobs[t] as number) - (oldLogprobs[t] as number);
    const ratio = Math.exp(logRatio);
    const a = advantages[t] as number;
    const unclippedLoss = -a * ratio;
    const clippedLoss = -a * Math.min(Math.max(ratio, 1 - clipRatio), 1 + clipRatio);
    drift += -logRatio;
    // Pessimistic bound: the larger loss wins; when it is the clipped one, no gradient flows.
    if (clippedLoss > unclippedLoss) {
      clipped++;
      loss += clippedLoss;
      return 0;
    }
    loss += unclippedLoss;
    return unclippedLoss / n;
  });
  if (n === 0) return { loss: 0, clipFraction: 0, approxKl: 0, gradLogprobs };
  return { loss: loss / n, clipFraction: clipped / n, approxKl: drift / n, gradLogprobs };
}

// ---------------------------------------------------------------------------------------------
// Entropy bonus.

/** Entropy of a categorical distribution given by logits (stable log-sum-exp). */
export function categoricalEntropy(logits: readonly number[]): number {
  return categoricalEntropyWithGrad(logits).entropy;
}

/** Entropy and d entropy / d logits: −p_i (log p_i + H). */
export function categoricalEntropyWithGrad(logits: readonly number[]): {
  entropy: number;
  gradLogits: number[];
} {
  if (logits.length === 0) throw new Error("categoricalEntropy: no logits");
  const max = Math.max(...logits);
  let z = 0;
  for (const l of logits) z += Math.exp(l - max);
  const logZ = max + Math.log(z);
  const logp = logits.map((l) => l - logZ);
  let entropy = 0;
  for (const lp of logp) entropy -= Math.exp(lp) * lp;
  const gradLogits = logp.map((lp) => -Math.exp(lp) * (lp + entropy));
  return { entropy, gradLogits };
}

/** The entropy term of the actor loss (before entropyCoeff): masked mean of per-position entropy. */
export function meanEntropy(entropies: readonly number[], mask: readonly MaskBit[]): number {
  checkLengths("meanEntropy", mask, { entropies });
  const n = countMasked(mask);
  let sum = 0;
  mask.forEach((m, t) => {
    if (m === 1) sum += entropies[t] as number;
  });
  return n === 0 ? 0 : sum / n;
}

// ---------------------------------------------------------------------------------------------
// The actor loss, and the critic's.

export interface ActorLossTerms {
  pgLoss: number;
  /** Mean entropy; omitted = no bonus. */
  entropy?: number;
  /** Mean KL to the reference; omitted = no KL loss (e.g. when the KL is in the reward instead). */
  klLoss?: number;
}

/** pg_loss − entropyCoeff · entropy + klLossCoef · kl_loss, as verl's dp_actor. */
export function actorLoss(
  terms: ActorLossTerms,
  coefficients: { entropyCoeff?: number; klLossCoef?: number } = {},
): number {
  const entropyCoeff = coefficients.entropyCoeff ?? DEFAULTS.entropyCoeff;
  const klLossCoef = coefficients.klLossCoef ?? DEFAULTS.klLossCoef;
  return terms.pgLoss - entropyCoeff * (terms.entropy ?? 0) + klLossCoef * (terms.klLoss ?? 0);
}

export interface ValueLossInput {
  /** The critic's new predictions. */
  values: readonly number[];
  /** The predictions made when the rollout was scored (the clip's anchor). */
  oldValues: readonly number[];
  returns: readonly number[];
  mask: readonly MaskBit[];
}

/**
 * verl's clipped value loss: ½ · mean(max((V − R)², (clip(V, V_old ± c) − R)²)), with its clip
 * fraction and d loss / d values.
 */
export function valueLoss(
  input: ValueLossInput,
  cliprangeValue: number = DEFAULTS.cliprangeValue,
): { loss: number; clipFraction: number; gradValues: number[] } {
  const { values, oldValues, returns, mask } = input;
  checkLengths("valueLoss", mask, { values, oldValues, returns });
  const n = countMasked(mask);
  let loss = 0;
  let clipped = 0;
  const gradValues = mask.map((m, t) => {
    if (m !== 1) return 0;
    const v = values[t] as number;
    const old = oldValues[t] as number;
    const r = returns[t] as number;
    const vClipped = Math.min(Math.max(v, old - cliprangeValue), old + cliprangeValue);
    const plain = (v - r) ** 2;
    const clip = (vClipped - r) ** 2;
    if (clip > plain) {
      clipped++;
      loss += clip;
      return 0; // the clipped prediction is a constant in V
    }
    loss += plain;
    return (v - r) / n;
  });
  if (n === 0) return { loss: 0, clipFraction: 0, gradValues };
  return { loss: (0.5 * loss) / n, clipFraction: clipped / n, gradValues };
}

// ---------------------------------------------------------------------------------------------
// Global-norm gradient clipping.

export interface ClippedGradients {
  grads: Record<string, number[]>;
  /** L2 norm over every array together, before clipping. */
  totalNorm: number;
  /** The factor applied: min(1, maxNorm / (totalNorm + 1e-6)), as torch's clip_grad_norm_. */
  scale: number;
  /** False when the norm is NaN or infinite: verl skips that optimizer step; grads come back unscaled. */
  finite: boolean;
}

/** Scales every gradient by one factor so that their joint L2 norm is at most maxNorm. */
export function clipGradNorm(
  grads: Readonly<Record<string, readonly number[]>>,
  maxNorm: number = DEFAULTS.gradClip,
): ClippedGradients {
  if (!(maxNorm > 0)) throw new Error(`clipGradNorm: maxNorm must be positive, got ${maxNorm}`);
  let squares = 0;
  for (const array of Object.values(grads)) for (const g of array) squares += g * g;
  const totalNorm = Math.sqrt(squares);
  const finite = Number.isFinite(totalNorm);
  const scale = finite ? Math.min(1, maxNorm / (totalNorm + 1e-6)) : 1;
  const out: Record<string, number[]> = {};
  for (const [name, array] of Object.entries(grads)) out[name] = array.map((g) => g * scale);
  return { grads: out, totalNorm, scale, finite };
}
