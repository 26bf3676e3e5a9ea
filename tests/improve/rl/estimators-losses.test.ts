import { describe, expect, it } from "vitest";
import {
  actorLoss,
  categoricalEntropy,
  categoricalEntropyWithGrad,
  clipGradNorm,
  DEFAULTS,
  klDivergence,
  klLoss,
  type MaskBit,
  meanEntropy,
  ppoClippedSurrogate,
  valueLoss,
} from "../../../src/improve/rl/estimators/index.js";

/** Central finite difference of f at x[i]. */
function numericGrad(
  f: (x: number[]) => number,
  x: readonly number[],
  i: number,
  h = 1e-6,
): number {
  const up = [...x];
  const down = [...x];
  up[i] = (up[i] as number) + h;
  down[i] = (down[i] as number) - h;
  return (f(up) - f(down)) / (2 * h);
}

describe("PPO clipped surrogate", () => {
  // Four agent positions covering the four cases, and an observation (mask 0) that must not count.
  //   ratio ρ = exp(logp − old);  clip ε = 0.2 → [0.8, 1.2]
  //   A = +1, ρ = 1.5: max(−1.5, −1.2) = −1.2   clipped (the clipped term is larger)
  //   A = +1, ρ = 0.5: max(−0.5, −0.8) = −0.5   not clipped
  //   A = −1, ρ = 0.5: max( 0.5,  0.8) =  0.8   clipped
  //   A = −1, ρ = 1.5: max( 1.5,  1.2) =  1.5   not clipped
  //   loss = (−1.2 − 0.5 + 0.8 + 1.5) / 4 = 0.15;  clip fraction = 2/4
  const ratios = [1.5, 0.5, 7, 0.5, 1.5];
  const input = {
    oldLogprobs: [-1, -1, -1, -1, -1],
    logprobs: ratios.map((r) => -1 + Math.log(r)),
    advantages: [1, 1, 5, -1, -1],
    mask: [1, 1, 0, 1, 1] as MaskBit[],
  };

  it("matches the hand-computed loss and clip fraction with the default ε = 0.2", () => {
    const result = ppoClippedSurrogate(input);
    expect(result.loss).toBeCloseTo(0.15, 12);
    expect(result.clipFraction).toBe(0.5);
    // approx KL = mean(old − new) = −mean(log ρ) = −(ln 1.5 + ln 0.5 + ln 0.5 + ln 1.5) / 4
    expect(result.approxKl).toBeCloseTo(-(2 * Math.log(1.5) + 2 * Math.log(0.5)) / 4, 12);
  });

  it("passes gradient only where the clip is inactive: −A·ρ / n", () => {
    const result = ppoClippedSurrogate(input);
    // t0 clipped → 0;  t1: −1·0.5/4 = −0.125;  t2 mask 0 → 0;  t3 clipped → 0;  t4: +1·1.5/4 = 0.375
    result.gradLogprobs.forEach((g, t) => {
      expect(g).toBeCloseTo([0, -0.125, 0, 0, 0.375][t] as number, 12);
      const f = (lp: number[]) => ppoClippedSurrogate({ ...input, logprobs: lp }).loss;
      expect(g).toBeCloseTo(numericGrad(f, input.logprobs, t), 6);
    });
  });

  it("ratio 1 everywhere: loss −mean(A), nothing clipped", () => {
    const same = { ...input, logprobs: input.oldLogprobs };
    const result = ppoClippedSurrogate(same);
    expect(result.loss).toBeCloseTo(0, 12); // −(1 + 1 − 1 − 1) / 4
    expect(result.clipFraction).toBe(0);
    expect(ppoClippedSurrogate({ ...input, mask: [0, 0, 0, 0, 0] })).toMatchObject({
      loss: 0,
      clipFraction: 0,
    });
  });

  it("refuses arrays of different lengths", () => {
    expect(() => ppoClippedSurrogate({ ...input, advantages: [1] })).toThrow(
      /1 advantages for 5 mask positions/,
    );
  });
});

describe("KL to the reference", () => {
  it("k3 (low_var_kl, the default) is ≥ 0 and 0 exactly at equality", () => {
    expect(DEFAULTS.klLossType).toBe("low_var_kl");
    for (let lp = -5; lp <= 0; lp += 0.25) {
      for (let ref = -5; ref <= 0; ref += 0.25) {
        expect(klDivergence(lp, ref, "low_var_kl")).toBeGreaterThanOrEqual(0);
      }
      expect(klDivergence(lp, lp, "low_var_kl")).toBe(0);
    }
    // logp = −1, ref = −2: x = ref − logp = −1 → e^−1 − (−1) − 1 = e^−1 = 0.367879
    expect(klDivergence(-1, -2, "low_var_kl")).toBeCloseTo(Math.exp(-1), 12);
    // Clamped at 10 as verl: ref − logp = 20 would give e^20 − 21.
    expect(klDivergence(-20, 0, "low_var_kl")).toBe(10);
  });

  it("k1, abs and k2 as verl's kl, abs and mse", () => {
    expect(klDivergence(-1, -1.5, "kl")).toBeCloseTo(0.5, 12);
    expect(klDivergence(-1.5, -1, "kl")).toBeCloseTo(-0.5, 12);
    expect(klDivergence(-1.5, -1, "abs")).toBeCloseTo(0.5, 12);
    expect(klDivergence(-1.5, -1, "mse")).toBeCloseTo(0.125, 12);
  });

  it("the KL loss is the masked mean, with its gradient", () => {
    const input = {
      logprobs: [-1, -3, -0.5],
      refLogprobs: [-2, 0, -0.7],
      mask: [1, 0, 1] as MaskBit[],
    };
    const result = klLoss(input);
    const expected =
      (klDivergence(-1, -2, "low_var_kl") + klDivergence(-0.5, -0.7, "low_var_kl")) / 2;
    expect(result.loss).toBeCloseTo(expected, 12);
    result.gradLogprobs.forEach((g, t) => {
      const f = (lp: number[]) => klLoss({ ...input, logprobs: lp }).loss;
      expect(g).toBeCloseTo(numericGrad(f, input.logprobs, t), 6);
    });
    expect(result.gradLogprobs[1]).toBe(0);
  });
});

describe("entropy bonus", () => {
  it("is ln K for uniform logits and 0 for a certain choice; its gradient checks", () => {
    expect(categoricalEntropy([0, 0, 0, 0])).toBeCloseTo(Math.log(4), 12);
    expect(categoricalEntropy([0, -1000])).toBeCloseTo(0, 12);
    expect(categoricalEntropy([1000, 1000])).toBeCloseTo(Math.LN2, 12); // stable for large logits
    const logits = [0.3, -1.2, 2, 0];
    const { gradLogits } = categoricalEntropyWithGrad(logits);
    gradLogits.forEach((g, i) => {
      expect(g).toBeCloseTo(numericGrad(categoricalEntropy, logits, i), 6);
    });
    expect(meanEntropy([1, 100, 3], [1, 0, 1])).toBe(2);
  });

  it("enters the actor loss with −0.001 and the KL with +0.001", () => {
    // pg 0.5, entropy 2, KL 3: 0.5 − 0.001·2 + 0.001·3 = 0.501
    expect(actorLoss({ pgLoss: 0.5, entropy: 2, klLoss: 3 })).toBeCloseTo(0.501, 12);
    expect(actorLoss({ pgLoss: 0.5 })).toBe(0.5);
    expect(actorLoss({ pgLoss: 0.5, entropy: 2 }, { entropyCoeff: 0 })).toBe(0.5);
  });
});

describe("value loss", () => {
  it("clips new values to the old ± 0.5 and takes the larger squared error", () => {
    // t0: V = 2, old 0, R = 0.4: plain (1.6)² = 2.56, clipped V = 0.5 → (0.1)² = 0.01 → 2.56
    // t1: V = 1, old 0, R = 2:   plain 1, clipped V = 0.5 → 2.25 (clip active) → 2.25
    // loss = ½ · (2.56 + 2.25) / 2 = 1.2025; clip fraction 1/2
    const input = {
      values: [2, 1, 9],
      oldValues: [0, 0, 0],
      returns: [0.4, 2, 0],
      mask: [1, 1, 0] as MaskBit[],
    };
    const result = valueLoss(input);
    expect(result.loss).toBeCloseTo(1.2025, 12);
    expect(result.clipFraction).toBe(0.5);
    result.gradValues.forEach((g, t) => {
      const f = (v: number[]) => valueLoss({ ...input, values: v }).loss;
      expect(g).toBeCloseTo(numericGrad(f, input.values, t), 6);
    });
  });
});

describe("global-norm gradient clipping", () => {
  it("scales gradients with norm above 1.0 down to norm 1.0, all by one factor", () => {
    // ‖(3, 0, 4)‖ = 5 → scale 1 / (5 + 1e-6)
    const result = clipGradNorm({ w: [3, 0], b: [4] });
    expect(result.totalNorm).toBe(5);
    expect(result.finite).toBe(true);
    const norm = Math.hypot(...(result.grads.w ?? []), ...(result.grads.b ?? []));
    expect(norm).toBeCloseTo(1, 5);
    expect((result.grads.w?.[0] ?? 0) / (result.grads.b?.[0] ?? 1)).toBeCloseTo(3 / 4, 12);
  });

  it("leaves gradients at or below the limit alone", () => {
    const grads = { w: [0.3], b: [0.4] };
    const result = clipGradNorm(grads);
    expect(result.totalNorm).toBeCloseTo(0.5, 12);
    expect(result.scale).toBe(1);
    expect(result.grads).toEqual(grads);
    expect(result.grads.w).not.toBe(grads.w); // a copy: the function is pure
  });

  it("reports a non-finite norm (verl skips that step) and refuses a non-positive limit", () => {
    const result = clipGradNorm({ w: [Number.NaN, 1] });
    expect(result.finite).toBe(false);
    expect(result.scale).toBe(1);
    expect(() => clipGradNorm({ w: [1] }, 0)).toThrow(/maxNorm must be positive/);
  });
});
