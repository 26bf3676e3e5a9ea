/**
 * Checking and preparing samples, and the masked statistics every estimator shares. Validation
 * throws one-line errors naming the sample: a malformed batch is a bug upstream, not an outcome.
 */
import type {
  AdvantageResult,
  Estimate,
  ExcludedSample,
  GroupId,
  MaskBit,
  Sample,
} from "./types.js";

/**
 * Rewards for a trajectory whose only reward is its outcome: the reward sits on the LAST agent
 * position (mask 1), never on a trailing observation. The reference puts it on the sequence's last
 * token, an observation with mask 0, so GAE and REINFORCE++ never see it.
 */
export function placeOutcomeReward(mask: readonly MaskBit[], reward: number): number[] {
  const last = mask.lastIndexOf(1);
  if (last < 0) {
    throw new Error(
      "placeOutcomeReward: the mask has no agent position (1), so there is nowhere to put the reward; a sample where the agent never acted should be an error sample",
    );
  }
  if (!Number.isFinite(reward))
    throw new Error(`placeOutcomeReward: reward ${reward} is not finite`);
  const rewards = new Array<number>(mask.length).fill(0);
  rewards[last] = reward;
  return rewards;
}

/** Which optional per-position arrays an estimator needs. */
export interface SampleNeeds {
  values?: boolean;
  logprobs?: boolean;
}

/**
 * Splits off errored samples (reported, not trained) and validates the rest. Returns the indices
 * of the admitted samples and the excluded ones.
 */
export function admitSamples(
  samples: readonly Sample[],
  needs: SampleNeeds = {},
): { admitted: number[]; excluded: ExcludedSample[] } {
  const admitted: number[] = [];
  const excluded: ExcludedSample[] = [];
  samples.forEach((sample, index) => {
    if (sample.error !== undefined) {
      excluded.push({ index, group: sample.group, reason: sample.error || "error (no message)" });
      return;
    }
    validateSample(sample, index, needs);
    admitted.push(index);
  });
  return { admitted, excluded };
}

export function validateSample(sample: Sample, index: number, needs: SampleNeeds = {}): void {
  const where = `sample ${index} (group ${String(sample.group)})`;
  const n = sample.mask.length;
  if (sample.rewards.length !== n) {
    throw new Error(`${where}: ${sample.rewards.length} rewards for ${n} mask positions`);
  }
  let agentPositions = 0;
  for (let t = 0; t < n; t++) {
    const m = sample.mask[t];
    const r = sample.rewards[t] as number;
    if (m !== 0 && m !== 1) throw new Error(`${where}: mask[${t}] is ${String(m)}, not 0 or 1`);
    if (!Number.isFinite(r)) throw new Error(`${where}: rewards[${t}] is ${r}, not finite`);
    if (m === 0 && r !== 0) {
      throw new Error(
        `${where}: reward ${r} at observation position ${t} (mask 0) would be lost; put it on an agent position (see placeOutcomeReward)`,
      );
    }
    agentPositions += m;
  }
  if (agentPositions === 0) {
    throw new Error(`${where}: no agent position (mask 1) to train; mark it as an error instead`);
  }
  const arrays: [string, readonly number[] | undefined, boolean | undefined][] = [
    ["values", sample.values, needs.values],
    ["logprobs", sample.logprobs, needs.logprobs],
    ["refLogprobs", sample.refLogprobs, needs.logprobs],
  ];
  for (const [name, array, needed] of arrays) {
    if (array === undefined) {
      if (needed) throw new Error(`${where}: ${name} are required by this estimator`);
      continue;
    }
    if (array.length !== n) throw new Error(`${where}: ${array.length} ${name} for ${n} positions`);
    for (let t = 0; t < n; t++) {
      if (sample.mask[t] === 1 && !Number.isFinite(array[t] as number)) {
        throw new Error(`${where}: ${name}[${t}] is ${String(array[t])}, not finite`);
      }
    }
  }
}

/** The outcome score of a sample: its rewards summed (they sit on agent positions only). */
export function sampleScore(sample: Sample): number {
  let score = 0;
  for (const r of sample.rewards) score += r;
  return score;
}

/** Admitted sample indices by group, in first-seen order. */
export function groupsOf(
  samples: readonly Sample[],
  admitted: readonly number[],
): Map<GroupId, number[]> {
  const groups = new Map<GroupId, number[]>();
  for (const i of admitted) {
    const group = (samples[i] as Sample).group;
    const members = groups.get(group);
    if (members) members.push(i);
    else groups.set(group, [i]);
  }
  return groups;
}

/** One number for every agent position, 0 elsewhere: how outcome advantages reach the positions. */
export function broadcast(value: number, mask: readonly MaskBit[]): number[] {
  return mask.map((m) => (m === 1 ? value : 0));
}

/** Mean of the positions with mask 1; 0 when there are none. */
export function maskedMean(values: readonly number[], mask: readonly MaskBit[]): number {
  let sum = 0;
  let count = 0;
  for (let t = 0; t < mask.length; t++) {
    if (mask[t] === 1) {
      sum += values[t] as number;
      count++;
    }
  }
  return count === 0 ? 0 : sum / count;
}

/**
 * verl's masked_whiten over a whole batch: (x − mean) / sqrt(var + ε) over every mask-1 position
 * of every array, with the unbiased variance (n − 1), as verl. Mask-0 positions come back 0. With
 * one position the variance is undefined (verl raises); we return it centred, i.e. 0.
 */
export function maskedWhiten(
  arrays: readonly (readonly number[])[],
  masks: readonly (readonly MaskBit[])[],
  epsilon: number,
): number[][] {
  let sum = 0;
  let count = 0;
  arrays.forEach((xs, i) => {
    const mask = masks[i] as readonly MaskBit[];
    xs.forEach((x, t) => {
      if (mask[t] === 1) {
        sum += x;
        count++;
      }
    });
  });
  const mean = count === 0 ? 0 : sum / count;
  let squares = 0;
  arrays.forEach((xs, i) => {
    const mask = masks[i] as readonly MaskBit[];
    xs.forEach((x, t) => {
      if (mask[t] === 1) squares += (x - mean) ** 2;
    });
  });
  const variance = count > 1 ? squares / (count - 1) : 0;
  const scale = count > 1 ? 1 / Math.sqrt(variance + epsilon) : 0;
  return arrays.map((xs, i) => {
    const mask = masks[i] as readonly MaskBit[];
    return xs.map((x, t) => (mask[t] === 1 ? (x - mean) * scale : 0));
  });
}

/** Assembles a result in input order from the estimates of the admitted samples. */
export function assemble(
  count: number,
  estimates: ReadonlyMap<number, Estimate>,
  excluded: ExcludedSample[],
): AdvantageResult {
  const ordered: (Estimate | null)[] = [];
  for (let i = 0; i < count; i++) ordered.push(estimates.get(i) ?? null);
  excluded.sort((a, b) => a.index - b.index);
  return { estimates: ordered, excluded };
}
