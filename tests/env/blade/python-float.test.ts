import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatPythonFloat, pythonRound } from "../../../src/env/blade/python-float.js";

const goldens = JSON.parse(readFileSync("tests/fixtures/blade/hash/goldens.json", "utf8")) as {
  floats: [string, string][];
};

/** A Python float repr read back into a JS number. */
function fromRepr(text: string): number {
  if (text === "inf") return Number.POSITIVE_INFINITY;
  if (text === "-inf") return Number.NEGATIVE_INFINITY;
  if (text === "nan") return Number.NaN;
  return Number(text);
}

describe("formatPythonFloat", () => {
  it("writes floats as Python's repr does", () => {
    const cases: [number, string][] = [
      [1, "1.0"],
      [0, "0.0"],
      [-0, "-0.0"],
      [0.33333, "0.33333"],
      [1e-5, "1e-05"],
      [1.5e-5, "1.5e-05"],
      [0.0001, "0.0001"],
      [1e16, "1e+16"],
      [1234567890123456, "1234567890123456.0"],
      [1.2345678901234567e20, "1.2345678901234567e+20"],
      [1e22, "1e+22"],
      [5e-324, "5e-324"],
      [Number.POSITIVE_INFINITY, "inf"],
      [Number.NEGATIVE_INFINITY, "-inf"],
      [Number.NaN, "nan"],
      [-2.5, "-2.5"],
      [100, "100.0"],
    ];
    for (const [x, text] of cases) expect(formatPythonFloat(x)).toBe(text);
  });

  it("round-trips every golden value's repr", () => {
    for (const [input, rounded] of goldens.floats) {
      expect(formatPythonFloat(fromRepr(input))).toBe(input);
      expect(formatPythonFloat(fromRepr(rounded))).toBe(rounded);
    }
  });
});

describe("pythonRound", () => {
  it("rounds exact ties to even, unlike toFixed", () => {
    expect((0.015625).toFixed(5)).toBe("0.01563");
    expect(pythonRound(0.015625, 5)).toBe(0.01562);
    expect(pythonRound(0.046875, 5)).toBe(0.04688);
    expect(pythonRound(-0.015625, 5)).toBe(-0.01562);
    expect(pythonRound(2.5, 0)).toBe(2);
    expect(pythonRound(3.5, 0)).toBe(4);
  });

  it("rounds the binary value, not the decimal text", () => {
    expect(pythonRound(2.675, 2)).toBe(2.67);
    expect(pythonRound(1.000005, 5)).toBe(1.00001);
  });

  it("keeps infinities, NaN, huge values and the sign of zero", () => {
    expect(pythonRound(Number.POSITIVE_INFINITY, 5)).toBe(Number.POSITIVE_INFINITY);
    expect(Number.isNaN(pythonRound(Number.NaN, 5))).toBe(true);
    expect(pythonRound(1e300, 5)).toBe(1e300);
    expect(Object.is(pythonRound(-1e-7, 5), -0)).toBe(true);
    expect(Object.is(pythonRound(-0, 5), -0)).toBe(true);
  });

  it("supports negative digits", () => {
    expect(pythonRound(1250, -2)).toBe(1200);
    expect(pythonRound(1350, -2)).toBe(1400);
  });

  it("matches Python's round(x, 5) on every golden case", () => {
    expect(goldens.floats.length).toBeGreaterThan(1000);
    for (const [input, rounded] of goldens.floats) {
      expect(formatPythonFloat(pythonRound(fromRepr(input), 5)), input).toBe(rounded);
    }
  });
});
