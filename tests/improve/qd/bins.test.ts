/**
 * The bin rule: linspace edges, right-closed bins (an edge belongs to the bin below it), clamped
 * to 0..B−1; the cases numpy's `clip(digitize(x, edges, right=True) - 1, 0, B - 1)` gives.
 */
import { describe, expect, it } from "vitest";
import {
  binEdges,
  binIndex,
  binIndexInEdges,
  DEFAULT_BINS,
  validateBinSpec,
} from "../../../src/improve/qd/bins.js";

describe("bin edges", () => {
  it("are linspace(min, max, B + 1)", () => {
    expect(binEdges({ min: 0, max: 1, bins: 4 })).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(binEdges({ min: -2, max: 2, bins: 2 })).toEqual([-2, 0, 2]);
    expect(binEdges({ min: 3, max: 5, bins: 1 })).toEqual([3, 5]);
  });

  it("end exactly at max, with i·step between, as numpy computes them", () => {
    const edges = binEdges({ min: 0, max: 0.45, bins: DEFAULT_BINS });
    expect(edges).toHaveLength(16);
    expect(edges[0]).toBe(0);
    expect(edges[15]).toBe(0.45);
    // np.linspace(0, 0.45, 16)[1] == 0.030000000000000002 (0.45 / 15 is not exact in binary).
    expect(edges[1]).toBe(0.030000000000000002);
    expect(edges[9]).toBe(0.27);
  });
});

describe("bin index", () => {
  const spec = { min: 0, max: 1, bins: 4 };

  it.each([
    [-0.3, 0, "below min: clamped"],
    [0, 0, "min: clamped up from −1"],
    [0.1, 0, "inside the first bin"],
    [0.25, 0, "an edge belongs to the bin below"],
    [0.26, 1, "just above an edge"],
    [0.5, 1, "the middle edge"],
    [0.75, 2, "an edge"],
    [0.9, 3, "inside the last bin"],
    [1, 3, "max"],
    [1.7, 3, "above max: clamped"],
  ])("score %s → bin %s (%s)", (score, bin) => {
    expect(binIndex(score, spec)).toBe(bin);
  });

  it("puts every interior edge of the default grid in the bin below it", () => {
    const range = { min: 0, max: 0.45, bins: DEFAULT_BINS };
    const edges = binEdges(range);
    for (let i = 1; i <= 15; i++) {
      expect(binIndex(edges[i] as number, range)).toBe(i - 1);
      if (i < 15) expect(binIndex((edges[i] as number) + 1e-9, range)).toBe(i);
    }
    // 0.03 as written is below the computed edge 0.030000000000000002, so bin 0, as in numpy.
    expect(binIndex(0.03, range)).toBe(0);
    expect(binIndex(0.27, range)).toBe(8);
    expect(binIndex(0.1, range)).toBe(3); // 0.09… < 0.1 ≤ 0.12…
  });

  it("has one bin when B = 1", () => {
    for (const score of [-1, 3, 4, 5, 9])
      expect(binIndex(score, { min: 3, max: 5, bins: 1 })).toBe(0);
  });

  it("works on precomputed edges and rejects NaN", () => {
    expect(binIndexInEdges(0.6, [0, 0.25, 0.5, 0.75, 1])).toBe(2);
    expect(() => binIndex(Number.NaN, spec)).toThrow("cannot bin a NaN score");
  });
});

describe("bin spec validation", () => {
  it.each([
    [{ min: 1, max: 1, bins: 4 }, "bin range needs min < max, got [1, 1]"],
    [{ min: 2, max: 1, bins: 4 }, "bin range needs min < max, got [2, 1]"],
    [{ min: Number.NaN, max: 1, bins: 4 }, "bin range must be finite, got [NaN, 1]"],
    [{ min: 0, max: Number.POSITIVE_INFINITY, bins: 4 }, "bin range must be finite"],
    [{ min: 0, max: 1, bins: 0 }, "bin count must be an integer ≥ 1, got 0"],
    [{ min: 0, max: 1, bins: 1.5 }, "bin count must be an integer ≥ 1, got 1.5"],
  ])("%o → one-line error", (spec, message) => {
    expect(() => validateBinSpec(spec)).toThrow(message);
    expect(() => binIndex(0.5, spec)).toThrow(message);
  });
});
