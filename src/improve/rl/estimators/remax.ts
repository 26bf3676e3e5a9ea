/**
 * ReMax (Li et al., 2024): the baseline is the score of one greedy (temperature 0) rollout of the
 * same task instance, given per group.
 *
 *   R_t = Σ_{u ≥ t, mask_u = 1} r_u           undiscounted reward-to-go, as verl
 *   A_t = R_t − b_g                            on agent positions
 *
 * A group without a baseline (its greedy rollout errored, say) cannot be scored: its samples are
 * excluded and reported rather than trained against a made-up baseline.
 */
import { admitSamples, assemble } from "./samples.js";
import type { AdvantageResult, Estimate, GroupId, Sample } from "./types.js";

export interface RemaxOptions {
  /** The greedy rollout's score for each group. */
  baselines: ReadonlyMap<GroupId, number>;
}

export function remax(samples: readonly Sample[], options: RemaxOptions): AdvantageResult {
  const { admitted, excluded } = admitSamples(samples);
  const estimates = new Map<number, Estimate>();
  for (const i of admitted) {
    const { group, rewards, mask } = samples[i] as Sample;
    const baseline = options.baselines.get(group);
    if (baseline === undefined || !Number.isFinite(baseline)) {
      excluded.push({ index: i, group, reason: `no greedy baseline for group ${String(group)}` });
      continue;
    }
    const n = mask.length;
    const advantages = new Array<number>(n).fill(0);
    const returns = new Array<number>(n).fill(0);
    let toGo = 0;
    for (let t = n - 1; t >= 0; t--) {
      if (mask[t] !== 1) continue;
      toGo += rewards[t] as number;
      returns[t] = toGo;
      advantages[t] = toGo - baseline;
    }
    estimates.set(i, { advantages, returns });
  }
  return assemble(samples.length, estimates, excluded);
}
