import { describe, expect, it } from "vitest";
import {
  ADVANTAGE_ESTIMATORS,
  computeAdvantages,
  DEFAULTS,
  discountedReturns,
  gae,
  grpo,
  type MaskBit,
  maskedWhiten,
  placeOutcomeReward,
  reinforcePlusPlus,
  remax,
  rloo,
  type Sample,
} from "../../../src/improve/rl/estimators/index.js";

// The running multi-turn example: agent, observation, agent, observation, agent, and a trailing
// observation (the environment's final reply). Positions 1, 3 and 5 are never trained.
const MASK: MaskBit[] = [1, 0, 1, 0, 1, 0];

function outcome(group: string | number, reward: number, mask: MaskBit[] = MASK): Sample {
  return { group, mask, rewards: placeOutcomeReward(mask, reward) };
}

/** A small deterministic generator for property checks (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function closeTo(actual: readonly number[] | undefined, expected: readonly number[], digits = 9) {
  expect(actual).toBeDefined();
  expect(actual?.length).toBe(expected.length);
  expected.forEach((e, t) => {
    expect(actual?.[t]).toBeCloseTo(e, digits);
  });
}

describe("DEFAULTS", () => {
  it("are AgentGym-RL's", () => {
    expect(DEFAULTS).toMatchObject({
      gamma: 1,
      lam: 1,
      clipRatio: 0.2,
      klLossCoef: 0.001,
      klLossType: "low_var_kl",
      entropyCoeff: 0.001,
      gradClip: 1,
      grpoEpsilon: 1e-6,
    });
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
  });
});

describe("placeOutcomeReward and validation", () => {
  it("puts the outcome on the last AGENT position, not the trailing observation", () => {
    expect(placeOutcomeReward(MASK, 1)).toEqual([0, 0, 0, 0, 1, 0]);
    expect(placeOutcomeReward([1], -2)).toEqual([-2]);
  });

  it("refuses a mask with no agent position", () => {
    expect(() => placeOutcomeReward([0, 0], 1)).toThrow(/no agent position/);
  });

  it("refuses a reward on an observation position, where GAE and REINFORCE++ would lose it", () => {
    // The reference's layout: the reward on the last token, an observation with mask 0.
    const reference: Sample = { group: 0, mask: MASK, rewards: [0, 0, 0, 0, 0, 1] };
    for (const estimator of ["grpo", "rloo", "reinforce_plus_plus"] as const) {
      expect(() => computeAdvantages(estimator, [reference])).toThrow(
        /reward 1 at observation position 5 \(mask 0\) would be lost/,
      );
    }
  });

  it("refuses malformed samples with one line naming the sample", () => {
    const bad: [Sample, RegExp][] = [
      [{ group: "g", mask: [1, 0], rewards: [1] }, /sample 0 \(group g\): 1 rewards for 2 mask/],
      [{ group: "g", mask: [1, 2 as MaskBit], rewards: [0, 0] }, /mask\[1\] is 2/],
      [{ group: "g", mask: [1], rewards: [Number.NaN] }, /rewards\[0\] is NaN/],
      [{ group: "g", mask: [0, 0], rewards: [0, 0] }, /no agent position .* mark it as an error/],
    ];
    for (const [sample, message] of bad) {
      expect(() => grpo([sample])).toThrow(message);
    }
    expect(() => gae([outcome("g", 1)])).toThrow(/values are required/);
    expect(() => gae([{ ...outcome("g", 1), values: [0, 0] }])).toThrow(/2 values for 6 positions/);
  });
});

describe("GAE", () => {
  it("matches a hand-computed multi-turn example, skipping observation positions", () => {
    // γ = 0.9, λ = 0.8 (γλ = 0.72). Rewards: 0.1 on the first agent turn, the outcome 1 on the
    // last. Values at observation positions (99) must be ignored.
    const sample: Sample = {
      group: 0,
      mask: MASK,
      rewards: [0.1, 0, 0, 0, 1, 0],
      values: [0.5, 99, 0.6, 99, 0.7, 99],
    };
    // t = 4 (last agent turn, bootstrap 0): δ = 1 + 0.9·0 − 0.7 = 0.3;  A = 0.3;  R = 1.0
    // t = 2 (next agent turn is 4):        δ = 0 + 0.9·0.7 − 0.6 = 0.03;  A = 0.03 + 0.72·0.3 = 0.246;  R = 0.846
    // t = 0 (next agent turn is 2):        δ = 0.1 + 0.9·0.6 − 0.5 = 0.14;  A = 0.14 + 0.72·0.246 = 0.31712;  R = 0.81712
    const result = gae([sample], { gamma: 0.9, lam: 0.8, whitenGaeAdvantages: false });
    closeTo(result.estimates[0]?.advantages, [0.31712, 0, 0.246, 0, 0.3, 0]);
    closeTo(result.estimates[0]?.returns, [0.81712, 0, 0.846, 0, 1.0, 0]);
    expect(result.excluded).toEqual([]);
  });

  it("with γ = λ = 1 (the defaults) equals return − value at every agent position", () => {
    const random = rng(7);
    for (let trial = 0; trial < 20; trial++) {
      const n = 2 + Math.floor(random() * 10);
      const mask = Array.from({ length: n }, () => (random() < 0.6 ? 1 : 0)) as MaskBit[];
      mask[0] = 1;
      const rewards = mask.map((m) => (m === 1 ? random() * 2 - 1 : 0));
      const values = mask.map(() => random());
      const estimate = gae([{ group: 0, mask, rewards, values }], { whitenGaeAdvantages: false })
        .estimates[0];
      mask.forEach((m, t) => {
        const toGo = rewards.slice(t).reduce((a, b) => a + b, 0);
        expect(estimate?.advantages[t]).toBeCloseTo(m === 1 ? toGo - (values[t] as number) : 0, 12);
        expect(estimate?.returns[t]).toBeCloseTo(m === 1 ? toGo : 0, 12);
      });
    }
  });

  it("whitens advantages over the batch by default (verl), returns unwhitened", () => {
    const samples: Sample[] = [
      { ...outcome(0, 1), values: [0.2, 0, 0.4, 0, 0.6, 0] },
      { ...outcome(1, 0, [1, 0, 1]), values: [0.3, 0, 0.1] },
    ];
    const raw = gae(samples, { whitenGaeAdvantages: false });
    const whitened = gae(samples);
    // Raw agent advantages: [0.8, 0.6, 0.4] and [−0.3, −0.1].
    closeTo(raw.estimates[0]?.advantages, [0.8, 0, 0.6, 0, 0.4, 0]);
    closeTo(raw.estimates[1]?.advantages, [-0.3, 0, -0.1]);
    const agent = whitened.estimates.flatMap((e, i) =>
      (e?.advantages ?? []).filter((_, t) => samples[i]?.mask[t] === 1),
    );
    const mean = agent.reduce((a, b) => a + b, 0) / agent.length;
    const variance = agent.reduce((a, x) => a + (x - mean) ** 2, 0) / (agent.length - 1);
    expect(mean).toBeCloseTo(0, 12);
    expect(variance).toBeCloseTo(1, 6);
    expect(whitened.estimates[0]?.returns).toEqual(raw.estimates[0]?.returns);
    expect(whitened.estimates[0]?.advantages[1]).toBe(0); // observation stays 0
  });

  it("excludes an errored sample from the batch statistics and reports it", () => {
    const good: Sample[] = [
      { ...outcome(0, 1), values: [0.2, 0, 0.4, 0, 0.6, 0] },
      { ...outcome(0, 0), values: [0.1, 0, 0.1, 0, 0.1, 0] },
    ];
    const errored: Sample = { group: 0, mask: [1], rewards: [0], error: "env server 500" };
    const alone = gae(good);
    const mixed = gae([good[0] as Sample, errored, good[1] as Sample]);
    expect(mixed.estimates[1]).toBeNull();
    expect(mixed.excluded).toEqual([{ index: 1, group: 0, reason: "env server 500" }]);
    expect(mixed.estimates[0]).toEqual(alone.estimates[0]);
    expect(mixed.estimates[2]).toEqual(alone.estimates[1]);
  });
});

describe("GRPO", () => {
  it("normalises scores within each group with the unbiased std (torch.std, as verl)", () => {
    // Group "a": scores 1, 0, 0, 0 on samples of different lengths.
    // mean = 0.25; deviations 0.75, −0.25, −0.25, −0.25; Σ dev² = 0.5625 + 3·0.0625 = 0.75
    // unbiased var = 0.75 / 3 = 0.25, std = 0.5  →  A = 0.75/0.5 = 1.5 and −0.25/0.5 = −0.5
    // (the population std, 0.433, would give 1.732 and −0.577).
    const samples = [
      outcome("a", 1),
      outcome("a", 0, [1, 0, 1]),
      outcome("a", 0, [1]),
      outcome("a", 0),
    ];
    const result = grpo(samples);
    const eps = DEFAULTS.grpoEpsilon;
    closeTo(result.estimates[0]?.advantages, [
      0.75 / (0.5 + eps),
      0,
      0.75 / (0.5 + eps),
      0,
      0.75 / (0.5 + eps),
      0,
    ]);
    closeTo(result.estimates[1]?.advantages, [-0.25 / (0.5 + eps), 0, -0.25 / (0.5 + eps)]);
    closeTo(result.estimates[2]?.advantages, [-0.5], 5);
    expect(result.estimates[0]?.advantages[0]).toBeCloseTo(1.5, 5);
    // Returns equal advantages (verl; no critic uses them).
    expect(result.estimates[0]?.returns).toEqual(result.estimates[0]?.advantages);
  });

  it("keeps groups apart, gives 0 for all-equal scores and for a group of one", () => {
    const samples = [
      outcome("same", 1),
      outcome("same", 1),
      outcome("same", 1),
      outcome("single", 1),
      outcome("pair", 1),
      outcome("pair", 0),
    ];
    const result = grpo(samples);
    for (const i of [0, 1, 2, 3]) {
      expect(result.estimates[i]?.advantages).toEqual([0, 0, 0, 0, 0, 0]);
    }
    // Pair: mean 0.5, unbiased std = sqrt((0.25 + 0.25) / 1) = 0.7071 → ±0.5/0.7071 = ±0.7071.
    expect(result.estimates[4]?.advantages[4]).toBeCloseTo(Math.SQRT1_2, 5);
    expect(result.estimates[5]?.advantages[4]).toBeCloseTo(-Math.SQRT1_2, 5);
  });

  it("leaves an errored sample out of its group's mean and std, never scoring it 0", () => {
    // With the error scored 0 (the reference), the group would be 1, 1, 0: mean 2/3.
    // Without it: 1, 1 → all equal → advantage 0 for both.
    const samples: Sample[] = [
      outcome("g", 1),
      { group: "g", mask: [1, 0], rewards: [0, 0], error: "model timeout" },
      outcome("g", 1),
    ];
    const result = grpo(samples);
    expect(result.estimates[1]).toBeNull();
    expect(result.excluded).toEqual([{ index: 1, group: "g", reason: "model timeout" }]);
    expect(result.estimates[0]?.advantages).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("a group left with one sample after errors gets advantage 0", () => {
    const samples: Sample[] = [
      outcome("g", 1),
      { group: "g", mask: [1], rewards: [0], error: "env crashed" },
    ];
    expect(grpo(samples).estimates[0]?.advantages).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("without std normalisation (Dr. GRPO) only centres", () => {
    const result = grpo([outcome("g", 1), outcome("g", 0)], { normAdvByStdInGrpo: false });
    closeTo(result.estimates[0]?.advantages, [0.5, 0, 0.5, 0, 0.5, 0]);
  });
});

describe("RLOO", () => {
  it("subtracts the mean of the other samples of the group", () => {
    // Scores 1, 0, 0, 0:  A_0 = 1 − (0+0+0)/3 = 1;  A_1 = 0 − (1+0+0)/3 = −1/3
    // (= n/(n−1)·(s − mean): 4/3·0.75 = 1 and 4/3·(−0.25) = −1/3).
    const samples = [outcome("a", 1), outcome("a", 0, [1, 0, 1]), outcome("a", 0), outcome("a", 0)];
    const result = rloo(samples);
    closeTo(result.estimates[0]?.advantages, [1, 0, 1, 0, 1, 0]);
    closeTo(result.estimates[1]?.advantages, [-1 / 3, 0, -1 / 3]);
  });

  it("gives 0 to a group of one and to all-equal scores, and skips errors", () => {
    const samples: Sample[] = [
      outcome("single", 1),
      outcome("same", 0.5),
      outcome("same", 0.5),
      { group: "same", mask: [1], rewards: [0], error: "env crashed" },
    ];
    const result = rloo(samples);
    expect(result.estimates[0]?.advantages).toEqual([0, 0, 0, 0, 0, 0]);
    expect(result.estimates[1]?.advantages).toEqual([0, 0, 0, 0, 0, 0]);
    expect(result.estimates[3]).toBeNull();
    expect(result.excluded.map((e) => e.index)).toEqual([3]);
  });
});

describe("ReMax", () => {
  it("subtracts the group's greedy score from the reward-to-go", () => {
    // Rewards 0.2 on the first agent turn and 1 on the last; greedy baseline 0.5.
    // Reward-to-go: t4 = 1, t2 = 1, t0 = 1.2;  advantages 0.5, 0.5, 0.7.
    const sample: Sample = { group: "g", mask: MASK, rewards: [0.2, 0, 0, 0, 1, 0] };
    const result = remax([sample, outcome("h", 0)], {
      baselines: new Map<string, number>([
        ["g", 0.5],
        ["h", 1],
      ]),
    });
    closeTo(result.estimates[0]?.returns, [1.2, 0, 1, 0, 1, 0]);
    closeTo(result.estimates[0]?.advantages, [0.7, 0, 0.5, 0, 0.5, 0]);
    closeTo(result.estimates[1]?.advantages, [-1, 0, -1, 0, -1, 0]);
  });

  it("excludes a group without a greedy baseline and errored samples, and reports both", () => {
    const samples: Sample[] = [
      outcome("g", 1),
      outcome("nobaseline", 1),
      { group: "g", mask: [1], rewards: [0], error: "env crashed" },
    ];
    const result = remax(samples, { baselines: new Map([["g", 0]]) });
    expect(result.estimates[1]).toBeNull();
    expect(result.estimates[2]).toBeNull();
    expect(result.excluded).toEqual([
      { index: 1, group: "nobaseline", reason: "no greedy baseline for group nobaseline" },
      { index: 2, group: "g", reason: "env crashed" },
    ]);
    expect(() => computeAdvantages("remax", samples)).toThrow(/needs options.baselines/);
  });
});

describe("REINFORCE++", () => {
  it("folds the KL into rewards, discounts over agent turns and whitens over the batch", () => {
    // γ = 0.9, β = 0.1, k1 KL = logp − ref.
    // Sample A: outcome 1 on t4.  KL: t0 = −1 − (−1.2) = 0.2, t2 = 0, t4 = −0.5 − (−0.4) = −0.1
    //   r' = r − 0.1·KL: t0 = 0 − 0.02 = −0.02, t2 = 0, t4 = 1 + 0.01 = 1.01
    //   G4 = 1.01;  G2 = 0 + 0.9·1.01 = 0.909;  G0 = −0.02 + 0.9·0.909 = 0.7981
    // Sample B: outcome 0, logp = ref → G = 0, 0.
    // Whitening over the 5 agent positions [0.7981, 0.909, 1.01, 0, 0]:
    //   mean = 2.7171 / 5 = 0.54342; unbiased var = 0.251704532; std = 0.501701636
    //   A = (x − 0.54342) / sqrt(var + 1e-8) = [0.507632, 0.728680, 0.929995, −1.083154, −1.083154]
    const a: Sample = {
      ...outcome("p", 1),
      logprobs: [-1, 0, -2, 0, -0.5, 0],
      refLogprobs: [-1.2, 0, -2, 0, -0.4, 0],
    };
    const b: Sample = {
      ...outcome("q", 0, [1, 0, 1]),
      logprobs: [-1, 0, -1],
      refLogprobs: [-1, 0, -1],
    };
    const result = reinforcePlusPlus([a, b], { gamma: 0.9, klCoef: 0.1, klPenalty: "kl" });
    closeTo(result.estimates[0]?.returns, [0.7981, 0, 0.909, 0, 1.01, 0]);
    closeTo(result.estimates[1]?.returns, [0, 0, 0]);
    closeTo(result.estimates[0]?.advantages, [0.5076324, 0, 0.7286801, 0, 0.929995, 0], 6);
    closeTo(result.estimates[1]?.advantages, [-1.0831537, 0, -1.0831537], 6);
  });

  it("earlier turns keep the outcome reward (verl's reset at mask 0 would zero them)", () => {
    expect(discountedReturns([0, 0, 0, 0, 1, 0], MASK, 1)).toEqual([1, 0, 1, 0, 1, 0]);
    expect(discountedReturns([0, 0, 0, 0, 1, 0], MASK, 0.5)).toEqual([0.25, 0, 0.5, 0, 1, 0]);
  });

  it("whitened advantages have mean ≈ 0 and std ≈ 1 over the batch's agent positions", () => {
    const random = rng(11);
    const samples: Sample[] = Array.from({ length: 16 }, (_, i) => {
      const turns = 1 + Math.floor(random() * 5);
      const mask = Array.from({ length: 2 * turns }, (_, t) => (t % 2 === 0 ? 1 : 0)) as MaskBit[];
      return outcome(i % 4, random() < 0.4 ? 1 : 0, mask);
    });
    const result = reinforcePlusPlus(samples, { gamma: 0.95 });
    const agent = result.estimates.flatMap((e, i) =>
      (e?.advantages ?? []).filter((_, t) => samples[i]?.mask[t] === 1),
    );
    const mean = agent.reduce((x, y) => x + y, 0) / agent.length;
    const std = Math.sqrt(agent.reduce((x, v) => x + (v - mean) ** 2, 0) / (agent.length - 1));
    expect(mean).toBeCloseTo(0, 10);
    expect(std).toBeCloseTo(1, 6);
  });

  it("excludes errors from the whitening and refuses a batch where only some samples carry log-probs", () => {
    const good = [outcome(0, 1), outcome(1, 0)];
    const errored: Sample = { group: 2, mask: [1], rewards: [0], error: "env crashed" };
    const alone = reinforcePlusPlus(good);
    const mixed = reinforcePlusPlus([errored, ...good]);
    expect(mixed.estimates[0]).toBeNull();
    expect(mixed.estimates.slice(1)).toEqual(alone.estimates);
    const partial = {
      ...outcome(0, 1),
      logprobs: [0, 0, 0, 0, 0, 0],
      refLogprobs: [0, 0, 0, 0, 0, 0],
    };
    expect(() => reinforcePlusPlus([partial, outcome(1, 0)])).toThrow(
      /1 of 2 samples carry logprobs/,
    );
  });
});

describe("maskedWhiten", () => {
  it("returns 0 for a single position (verl raises) and leaves mask-0 positions 0", () => {
    expect(maskedWhiten([[5, 7]], [[1, 0]], 1e-8)).toEqual([[0, 0]]);
    expect(maskedWhiten([], [], 1e-8)).toEqual([]);
  });
});

describe("computeAdvantages", () => {
  it("dispatches by verl's names and reports errors the same way for every estimator", () => {
    const samples: Sample[] = [
      { ...outcome("g", 1), values: [0, 0, 0, 0, 0, 0] },
      { ...outcome("g", 0), values: [0, 0, 0, 0, 0, 0] },
      { group: "g", mask: [1], rewards: [0], error: "env crashed" },
    ];
    for (const estimator of ADVANTAGE_ESTIMATORS) {
      const result = computeAdvantages(estimator, samples, { baselines: new Map([["g", 0.5]]) });
      expect(result.estimates).toHaveLength(3);
      expect(result.estimates[2]).toBeNull();
      expect(result.excluded).toEqual([{ index: 2, group: "g", reason: "env crashed" }]);
      // Observation positions never get an advantage; the better sample gets the larger one.
      const [better, worse] = [result.estimates[0], result.estimates[1]];
      for (const t of [1, 3, 5]) expect(better?.advantages[t]).toBe(0);
      expect(better?.advantages[4]).toBeGreaterThan(
        worse?.advantages[4] ?? Number.POSITIVE_INFINITY,
      );
    }
  });
});
