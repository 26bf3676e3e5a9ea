/**
 * GRPO (Shao et al., 2024): no critic; each sample's outcome score is compared with the other
 * samples drawn for the same task instance.
 *
 *   A_i = (s_i − mean_g) / (std_g + ε)         on every agent position of sample i
 *
 * std is the unbiased sample standard deviation (n − 1), as verl's torch.std; agentgym.md gives
 * only the formula. All-equal scores give std 0 and A = 0 (the ε keeps it finite). A group of one
 * (after errors are removed) has no baseline: its advantage is 0. verl instead uses mean 0 and
 * std 1 there, i.e. the raw score, an unnormalised REINFORCE term on a different scale from every
 * other group's. Errored samples are left out of mean and std.
 *
 * `normAdvByStdInGrpo: false` skips the division (Dr. GRPO). Returns equal the advantages (verl).
 */
import { DEFAULTS } from "./defaults.js";
import { admitSamples, assemble, broadcast, groupsOf, sampleScore } from "./samples.js";
import type { AdvantageResult, Estimate, Sample } from "./types.js";

export interface GrpoOptions {
  grpoEpsilon?: number;
  normAdvByStdInGrpo?: boolean;
}

/** Mean and unbiased standard deviation; std is 0 for fewer than two values. */
export function meanAndStd(xs: readonly number[]): { mean: number; std: number } {
  const n = xs.length;
  if (n === 0) return { mean: 0, std: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, std: 0 };
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
  return { mean, std: Math.sqrt(variance) };
}

export function grpo(samples: readonly Sample[], options: GrpoOptions = {}): AdvantageResult {
  const epsilon = options.grpoEpsilon ?? DEFAULTS.grpoEpsilon;
  const byStd = options.normAdvByStdInGrpo ?? DEFAULTS.normAdvByStdInGrpo;

  const { admitted, excluded } = admitSamples(samples);
  const estimates = new Map<number, Estimate>();
  for (const members of groupsOf(samples, admitted).values()) {
    const scores = members.map((i) => sampleScore(samples[i] as Sample));
    const { mean, std } = meanAndStd(scores);
    members.forEach((i, k) => {
      const centred = (scores[k] as number) - mean;
      const advantage = members.length < 2 ? 0 : byStd ? centred / (std + epsilon) : centred;
      const advantages = broadcast(advantage, (samples[i] as Sample).mask);
      estimates.set(i, { advantages, returns: [...advantages] });
    });
  }
  return assemble(samples.length, estimates, excluded);
}
