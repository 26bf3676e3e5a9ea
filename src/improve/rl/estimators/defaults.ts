/**
 * Every hyperparameter of the advantage estimators and the policy loss, with AgentGym-RL's
 * defaults (its verl config keys, camel-cased, in the comments). The functions in this folder take
 * their defaults from here, so a change here is a change everywhere.
 */

/** How a KL divergence between the policy and the reference is estimated per position. */
export type KlEstimator =
  /** k1 = logp − ref: unbiased, can be negative (verl "kl"). */
  | "kl"
  /** |logp − ref| (verl "abs"). */
  | "abs"
  /** k2 = ½ (logp − ref)² (verl "mse"). */
  | "mse"
  /** k3 = exp(ref − logp) − (ref − logp) − 1: unbiased, never negative, low variance (verl "low_var_kl"). */
  | "low_var_kl";

export interface Hyperparameters {
  /** algorithm.gamma: discount per position (turn or token). 1 = undiscounted. */
  gamma: number;
  /** algorithm.lam: GAE's λ. 1 = Monte-Carlo return minus the value. */
  lam: number;
  /** GRPO's ε in (r − mean) / (std + ε). */
  grpoEpsilon: number;
  /** algorithm.norm_adv_by_std_in_grpo: false gives Dr. GRPO (mean-centred only). */
  normAdvByStdInGrpo: boolean;
  /** GAE's batch whitening of advantages (verl always whitens GAE advantages). */
  whitenGaeAdvantages: boolean;
  /** ε under the square root of verl's masked_whiten. */
  whitenEpsilon: number;
  /** algorithm.kl_penalty: the estimator when the KL is folded into rewards (REINFORCE++). */
  klPenalty: KlEstimator;
  /** algorithm.kl_ctrl.kl_coef: β of the in-reward KL penalty (fixed controller). */
  klCoef: number;
  /** actor_rollout_ref.actor.clip_ratio: PPO's ε; the ratio is clipped to [1 − ε, 1 + ε]. */
  clipRatio: number;
  /** actor_rollout_ref.actor.kl_loss_coef: weight of the KL term in the actor loss. */
  klLossCoef: number;
  /** actor_rollout_ref.actor.kl_loss_type: AgentGym-RL ships the low-variance estimator (k3). */
  klLossType: KlEstimator;
  /** verl clamps k3 to [−c, c] so one wild position cannot dominate the loss. */
  klClamp: number;
  /** actor_rollout_ref.actor.entropy_coeff: weight of the entropy bonus. */
  entropyCoeff: number;
  /** actor_rollout_ref.actor.grad_clip: maximum global L2 norm of the gradient. */
  gradClip: number;
  /** critic.cliprange_value: how far a new value may move from the old one before clipping. */
  cliprangeValue: number;
}

export const DEFAULTS: Readonly<Hyperparameters> = Object.freeze({
  gamma: 1.0,
  lam: 1.0,
  grpoEpsilon: 1e-6,
  normAdvByStdInGrpo: true,
  whitenGaeAdvantages: true,
  whitenEpsilon: 1e-8,
  klPenalty: "kl",
  klCoef: 0.001,
  clipRatio: 0.2,
  klLossCoef: 0.001,
  klLossType: "low_var_kl",
  klClamp: 10,
  entropyCoeff: 0.001,
  gradClip: 1.0,
  cliprangeValue: 0.5,
});
