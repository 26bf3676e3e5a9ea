/**
 * RLOO (Ahmadian et al., 2024; Kool et al., 2019): each sample's baseline is the mean score of the
 * OTHER samples in its group, which keeps the estimator unbiased.
 *
 *   A_i = s_i − (Σ_{j≠i} s_j) / (n − 1) = n / (n − 1) · (s_i − mean_g)      (verl's form)
 *
 * A group of one (after errors are removed) has no other sample: advantage 0 (verl leaves the raw
 * score there). No normalisation by std. Returns equal the advantages (verl).
 */
import { admitSamples, assemble, broadcast, groupsOf, sampleScore } from "./samples.js";
import type { AdvantageResult, Estimate, Sample } from "./types.js";

export function rloo(samples: readonly Sample[]): AdvantageResult {
  const { admitted, excluded } = admitSamples(samples);
  const estimates = new Map<number, Estimate>();
  for (const members of groupsOf(samples, admitted).values()) {
    const n = members.length;
    const scores = members.map((i) => sampleScore(samples[i] as Sample));
    const total = scores.reduce((a, b) => a + b, 0);
    members.forEach((i, k) => {
      const score = scores[k] as number;
      const advantage = n < 2 ? 0 : score - (total - score) / (n - 1);
      const advantages = broadcast(advantage, (samples[i] as Sample).mask);
      estimates.set(i, { advantages, returns: [...advantages] });
    });
  }
  return assemble(samples.length, estimates, excluded);
}
