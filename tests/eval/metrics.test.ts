import { describe, expect, it } from "vitest";
import {
  bootstrapInterval,
  computeMetrics,
  passAtK,
  passHatK,
  type TaskOutcomes,
} from "../../src/eval/metrics.js";

const task = (taskIndex: number, rewards: number[], errors = 0): TaskOutcomes => ({
  taskIndex,
  rewards,
  successes: rewards.filter((r) => r >= 1).length,
  errors,
});

describe("pass@k and pass^k", () => {
  it("match the hand-computed values of metrics.md", () => {
    expect(passAtK(5, 2, 1)).toBeCloseTo(0.4, 12);
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12);
    expect(passAtK(5, 2, 5)).toBe(1);
    expect(passHatK(5, 2, 1)).toBeCloseTo(0.4, 12);
    expect(passHatK(5, 2, 2)).toBeCloseTo(0.1, 12);
    expect(passHatK(5, 2, 3)).toBe(0);
    expect(passHatK(4, 4, 4)).toBe(1);
    expect(passAtK(4, 0, 4)).toBe(0);
  });

  it("agree with the closed forms on a grid of (n, c, k)", () => {
    const choose = (n: number, k: number): number => {
      if (k < 0 || k > n) return 0;
      let r = 1;
      for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
      return r;
    };
    for (let n = 1; n <= 12; n++) {
      for (let c = 0; c <= n; c++) {
        for (let k = 1; k <= n; k++) {
          expect(passAtK(n, c, k)).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 10);
          expect(passHatK(n, c, k)).toBeCloseTo(choose(c, k) / choose(n, k), 10);
        }
      }
    }
  });

  it("rejects impossible counts", () => {
    expect(() => passAtK(3, 4, 1)).toThrow(RangeError);
    expect(() => passAtK(3, 1, 4)).toThrow(RangeError);
    expect(() => passHatK(3, 1, 0)).toThrow(RangeError);
  });
});

describe("computeMetrics", () => {
  it("excludes errors from every denominator and reports them beside the rate", () => {
    const report = computeMetrics([task(0, [1, 0, 1]), task(1, [0, 0], 1)], { ks: [1, 2] });
    expect(report.episodes).toBe(6);
    expect(report.finished).toBe(5);
    expect(report.errors).toBe(1);
    expect(report.successes).toBe(2);
    expect(report.successRate).toBeCloseTo(2 / 5, 12);
    expect(report.meanReward).toBeCloseTo(2 / 5, 12);
    // Avg@k: task 0 mean 2/3, task 1 mean 0 → 1/3.
    expect(report.avgAtK.value).toBeCloseTo(1 / 3, 12);
    // pass@2: task 0 = 1 − C(1,2)/C(3,2) = 1; task 1 = 0.
    expect(report.passAtK.find((p) => p.k === 2)?.value).toBeCloseTo(0.5, 12);
    // pass^2: task 0 = C(2,2)/C(3,2) = 1/3; task 1 = 0.
    expect(report.passHatK.find((p) => p.k === 2)?.value).toBeCloseTo(1 / 6, 12);
  });

  it("uses partial rewards for mean reward but the threshold for success", () => {
    const report = computeMetrics([task(0, [0.5, 1]), task(1, [0.25, 0.25])]);
    expect(report.successRate).toBeCloseTo(0.25, 12);
    expect(report.meanReward).toBeCloseTo(0.5, 12);
  });

  it("uses only tasks with at least k finished samples for pass@k", () => {
    const report = computeMetrics([task(0, [1, 1]), task(1, [0], 1)], { ks: [2] });
    expect(report.passAtK[0]?.tasks).toBe(1);
    expect(report.passAtK[0]?.value).toBe(1);
  });

  it("gives NaN, not zero, when every episode errored", () => {
    const report = computeMetrics([task(0, [], 3)]);
    expect(report.errors).toBe(3);
    expect(Number.isNaN(report.successRate)).toBe(true);
  });
});

describe("bootstrapInterval", () => {
  const values = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? 1 : 0));
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

  it("is reproducible for a seed and brackets the point estimate", () => {
    const a = bootstrapInterval(values, mean, { seed: 7 });
    const b = bootstrapInterval(values, mean, { seed: 7 });
    expect(a).toEqual(b);
    expect(a.low).toBeLessThan(mean(values));
    expect(a.high).toBeGreaterThan(mean(values));
    expect(a.high - a.low).toBeGreaterThan(0.1);
    expect(a.high - a.low).toBeLessThan(0.5);
  });

  it("resamples whole tasks, so samples of one task stay together", () => {
    // Two tasks, ten samples each: one always succeeds, one never. Resampling tasks gives rates
    // of 0, 0.5 or 1; resampling the twenty episodes would give a narrow interval around 0.5.
    const report = computeMetrics([task(0, Array(10).fill(1)), task(1, Array(10).fill(0))], {
      seed: 3,
    });
    expect(report.successRate).toBe(0.5);
    expect(report.successRateInterval).toEqual({ low: 0, high: 1 });
  });

  it("is degenerate for constant data and narrows with more tasks", () => {
    expect(bootstrapInterval([1, 1, 1], mean)).toEqual({ low: 1, high: 1 });
    const wide = bootstrapInterval(values.slice(0, 12), mean, { seed: 1 });
    const narrow = bootstrapInterval([...values, ...values, ...values, ...values], mean, {
      seed: 1,
    });
    expect(narrow.high - narrow.low).toBeLessThan(wide.high - wide.low);
  });
});
