/**
 * The Beta distribution the search relies on: quantiles against SciPy's values, the CDF, and
 * draws whose moments match; and the fast generator giving createRng's very numbers.
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../src/env/rng.js";
import {
  betaQuantile,
  createBetaSampler,
  logGamma,
  regularizedIncompleteBeta,
} from "../../src/improve/search/beta.js";
import { createFastRng } from "../../src/improve/search/fast-rng.js";

describe("Beta quantiles", () => {
  // scipy.stats.beta.ppf(q, a, b), SciPy 1.17.
  const SCIPY: [number, number, number, number][] = [
    [0.01, 1, 1, 0.01],
    [0.01, 11, 3, 0.49382928201964443],
    [0.01, 3, 11, 0.035775221551986064],
    [0.5, 2, 5, 0.26444998329566005],
    [0.99, 40, 20, 0.7975190685120541],
    [0.01, 1, 61, 0.00016474603203756974],
    [0.01, 61, 1, 0.9272847441516197],
    [0.01, 301, 201, 0.548256501056186],
    [0.3, 0.2, 0.7, 0.004188853962031014],
    [0.01, 10_000, 30_000, 0.24498183800717716],
  ];

  it.each(SCIPY)("q=%s of Beta(%s, %s) is SciPy's %s", (q, a, b, expected) => {
    expect(betaQuantile(q, a, b)).toBeCloseTo(expected, 11);
  });

  it("inverts the CDF, and closed forms hold", () => {
    for (const [a, b] of [
      [1.5, 2.5],
      [30, 4],
      [0.5, 0.5],
    ] as const) {
      for (const q of [0.001, 0.01, 0.2, 0.5, 0.9, 0.999]) {
        expect(regularizedIncompleteBeta(betaQuantile(q, a, b), a, b)).toBeCloseTo(q, 12);
      }
    }
    // I_x(a, 1) = x^a, so the quantile is q^(1/a).
    expect(betaQuantile(0.3, 4, 1)).toBeCloseTo(0.3 ** 0.25, 13);
    expect(regularizedIncompleteBeta(0.3, 2.5, 4)).toBeCloseTo(0.3521975859067672, 13);
    expect(regularizedIncompleteBeta(0.9, 50, 3)).toBeCloseTo(0.09663328513725222, 13);
    expect(logGamma(100.5)).toBeCloseTo(361.4355404677775, 10);
    expect(logGamma(0.1)).toBeCloseTo(2.252712651734206, 12);
    expect(() => betaQuantile(1.5, 1, 1)).toThrow(RangeError);
    expect(() => betaQuantile(0.5, 0, 1)).toThrow(RangeError);
  });
});

describe("Beta and Gamma draws", () => {
  const moments = (draws: number[]) => {
    const mean = draws.reduce((s, x) => s + x, 0) / draws.length;
    const variance = draws.reduce((s, x) => s + (x - mean) ** 2, 0) / draws.length;
    return { mean, variance };
  };

  it.each([
    [1, 1],
    [3, 7],
    [0.4, 2],
    [200, 50],
    [2e4, 1e4],
  ])("Beta(%s, %s) has its mean and variance", (a, b) => {
    const sampler = createBetaSampler(createFastRng(11, a, b));
    const draws = Array.from({ length: 100_000 }, () => sampler.beta(a, b));
    const { mean, variance } = moments(draws);
    const trueVariance = (a * b) / ((a + b) ** 2 * (a + b + 1));
    expect(Math.abs(mean - a / (a + b))).toBeLessThan(5 * Math.sqrt(trueVariance / draws.length));
    expect(variance / trueVariance).toBeGreaterThan(0.97);
    expect(variance / trueVariance).toBeLessThan(1.03);
    expect(draws.every((x) => x > 0 && x < 1)).toBe(true);
  });

  it("normals are standard normal, tails included", () => {
    const sampler = createBetaSampler(createFastRng(5));
    const n = 400_000;
    const draws = Array.from({ length: n }, () => sampler.normal());
    const { mean, variance } = moments(draws);
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(Math.abs(variance - 1)).toBeLessThan(0.01);
    // P(|Z| > 3) = 0.0026998; P(Z > 3.5) = 0.000233 (the ziggurat's tail layer starts at 3.44).
    const beyond3 = draws.filter((x) => Math.abs(x) > 3).length / n;
    const beyond35 = draws.filter((x) => x > 3.5).length / n;
    expect(Math.abs(beyond3 - 0.0026998)).toBeLessThan(0.0004);
    expect(Math.abs(beyond35 - 0.000233)).toBeLessThan(0.00009);
  });

  it("Gamma with a shape below 1 has its mean", () => {
    const sampler = createBetaSampler(createFastRng(3));
    const draws = Array.from({ length: 100_000 }, () => sampler.gamma(0.3));
    expect(Math.abs(moments(draws).mean - 0.3)).toBeLessThan(0.01);
  });
});

describe("the fast generator", () => {
  it("gives createRng's numbers for the same keys", () => {
    for (const keys of [[0], [7, 3], [123, 0xdec1, 99]]) {
      const slow = createRng(...keys);
      const fast = createFastRng(...keys);
      const a = Array.from({ length: 10_000 }, () => fast.next());
      const b = Array.from({ length: 10_000 }, () => slow.next());
      expect(a).toEqual(b);
      expect(fast.int(1000)).toBe(slow.int(1000));
      expect(fast.shuffle([1, 2, 3, 4, 5])).toEqual(slow.shuffle([1, 2, 3, 4, 5]));
    }
  });
});
