/**
 * Generalized Advantage Estimation (Schulman et al., 2016): PPO with a learned value baseline.
 *
 *   δ_t = r_t + γ V(s_{t'}) − V(s_t)          t' = the next agent position after t
 *   A_t = δ_t + γλ A_{t'}                      (A and V are 0 past the last agent position)
 *   R_t = A_t + V(s_t)                         the critic's target
 *
 * Multi-turn: the recursion runs over agent positions (mask 1) only. An observation between two
 * agent turns is the environment's part of the transition, not an action, so it is skipped: the
 * next agent position's value is the bootstrap, and γ counts agent positions, not observations.
 * (verl's newer code does the same by carrying nextvalues/lastgaelam through mask-0 positions;
 * AgentGym-RL's bootstraps from V at t + 1 even when that is an observation.) The last agent
 * position bootstraps from 0: the episode ended, or was cut at the horizon, which the reference
 * also treats as terminal. With γ = λ = 1, A_t = (sum of rewards from t on) − V(s_t).
 *
 * verl then whitens the advantages over the batch (`whitenGaeAdvantages`, on by default); the
 * returns are taken before whitening.
 */
import { DEFAULTS } from "./defaults.js";
import { admitSamples, assemble, maskedWhiten } from "./samples.js";
import type { AdvantageResult, Estimate, Sample } from "./types.js";

export interface GaeOptions {
  gamma?: number;
  lam?: number;
  whitenGaeAdvantages?: boolean;
  whitenEpsilon?: number;
}

/** GAE for one sample's positions, before any whitening. Values at mask-0 positions are ignored. */
export function gaeForSample(sample: Sample, gamma: number, lam: number): Estimate {
  const { rewards, mask } = sample;
  const values = sample.values;
  if (values === undefined) throw new Error("gaeForSample: the sample has no values");
  const n = mask.length;
  const advantages = new Array<number>(n).fill(0);
  const returns = new Array<number>(n).fill(0);
  let nextValue = 0; // V at the next agent position; 0 after the last
  let nextAdvantage = 0; // A at the next agent position
  for (let t = n - 1; t >= 0; t--) {
    if (mask[t] !== 1) continue; // observation: the recursion passes through untouched
    const value = values[t] as number;
    const delta = (rewards[t] as number) + gamma * nextValue - value;
    nextAdvantage = delta + gamma * lam * nextAdvantage;
    nextValue = value;
    advantages[t] = nextAdvantage;
    returns[t] = nextAdvantage + value;
  }
  return { advantages, returns };
}

export function gae(samples: readonly Sample[], options: GaeOptions = {}): AdvantageResult {
  const gamma = options.gamma ?? DEFAULTS.gamma;
  const lam = options.lam ?? DEFAULTS.lam;
  const whiten = options.whitenGaeAdvantages ?? DEFAULTS.whitenGaeAdvantages;
  const epsilon = options.whitenEpsilon ?? DEFAULTS.whitenEpsilon;

  const { admitted, excluded } = admitSamples(samples, { values: true });
  const raw = admitted.map((i) => gaeForSample(samples[i] as Sample, gamma, lam));
  const advantages = whiten
    ? maskedWhiten(
        raw.map((e) => e.advantages),
        admitted.map((i) => (samples[i] as Sample).mask),
        epsilon,
      )
    : raw.map((e) => e.advantages);

  const estimates = new Map<number, Estimate>();
  admitted.forEach((i, k) => {
    estimates.set(i, {
      advantages: advantages[k] as number[],
      returns: (raw[k] as Estimate).returns,
    });
  });
  return assemble(samples.length, estimates, excluded);
}
