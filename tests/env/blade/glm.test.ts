import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Cell, Column, Dtype, Frame } from "../../../src/env/blade/frame.js";
import {
  buildDesign,
  fitModel,
  fitModelCode,
  normalCdf,
  normalTwoSidedP,
  tTwoSidedP,
} from "../../../src/env/blade/glm.js";
import { parseModelCall } from "../../../src/env/blade/model-formula.js";

const FIXTURES = fileURLToPath(new URL("../../fixtures/blade/glm/", import.meta.url));

interface GoldenCase {
  name: string;
  data: string;
  code: string;
  names: string[];
  params: number[];
  bse: number[];
  pvalues: number[];
  nobs: number;
  converged: boolean;
}

const golden = JSON.parse(readFileSync(`${FIXTURES}goldens.json`, "utf8")) as {
  dtypes: Record<string, Record<string, string>>;
  cases: GoldenCase[];
  patsyNames: { rhs: string; names: string[] }[];
};

/** Reads a fixture CSV (no quoting in these files) with the dtypes pandas gave its columns. */
function readFixture(file: string): Frame {
  const lines = readFileSync(`${FIXTURES}${file}`, "utf8").trimEnd().split("\n");
  const header = (lines[0] as string).split(",");
  const dtypes = golden.dtypes[file] as Record<string, string>;
  const rows = lines.slice(1).map((line) => line.split(","));
  const columns: Column[] = header.map((name, j) => {
    const dtype = dtypes[name] as Dtype;
    const values: Cell[] = rows.map((row) => {
      const text = row[j] as string;
      if (dtype === "int64") return Number.parseInt(text, 10);
      if (dtype === "float64") return text === "" ? Number.NaN : Number.parseFloat(text);
      if (dtype === "bool") return text === "True";
      return text === "" ? null : text;
    });
    return { name, dtype, values };
  });
  return { columns, rowCount: rows.length };
}

function expectClose(actual: number, expected: number, what: string): void {
  const tolerance = 1e-6 * Math.abs(expected) + 1e-12;
  if (!(Math.abs(actual - expected) <= tolerance)) {
    throw new Error(`${what}: ${actual} vs statsmodels ${expected}`);
  }
}

describe("fitModel against statsmodels 0.13.5", () => {
  for (const c of golden.cases.filter((g) => g.converged)) {
    it(`${c.name}: ${c.code}`, () => {
      const model = fitModel(readFixture(c.data), parseModelCall(c.code));
      expect(model.terms).toEqual(c.names);
      expect(model.observations).toBe(c.nobs);
      c.names.forEach((name, j) => {
        expectClose(model.params[name] as number, c.params[j] as number, `${name} estimate`);
        expectClose(model.stdErrors[name] as number, c.bse[j] as number, `${name} std error`);
        expectClose(model.pValues[name] as number, c.pvalues[j] as number, `${name} p-value`);
      });
    });
  }

  it("refuses what statsmodels only warns about (no convergence under separation)", () => {
    const failing = golden.cases.filter((g) => !g.converged);
    expect(failing.length).toBeGreaterThan(0);
    for (const c of failing) {
      const outcome = fitModelCode(readFixture(c.data), c.code);
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.error).toMatch(/separation|converge/);
    }
  });

  it("reports family and link in lower case", () => {
    const model = fitModel(readFixture("main.csv"), parseModelCall("probit(yp ~ x)"));
    expect([model.family, model.link, model.dv]).toEqual(["binomial", "probit", "yp"]);
  });
});

function frameOf(columns: Record<string, { dtype: Dtype; values: Cell[] }>): Frame {
  const list = Object.entries(columns).map(([name, c]) => ({ name, ...c }));
  return { columns: list, rowCount: list[0]?.values.length ?? 0 };
}

describe("fitModel errors", () => {
  const base = {
    x: { dtype: "float64" as Dtype, values: [1, 2, 3, 4, 5, 6, 7, 8] },
    x2: { dtype: "float64" as Dtype, values: [2, 4, 6, 8, 10, 12, 14, 16] },
    y: { dtype: "float64" as Dtype, values: [1.2, 1.9, 3.4, 3.8, 5.1, 6.3, 6.8, 8.4] },
    s: { dtype: "object" as Dtype, values: ["a", "b", "a", "b", "a", "b", "a", "b"] },
    d: { dtype: "datetime64" as Dtype, values: Array(8).fill("2020-01-01 00:00:00") },
    yb: { dtype: "int64" as Dtype, values: [0, 0, 0, 0, 1, 1, 1, 1] },
    y3: { dtype: "int64" as Dtype, values: [0, 1, 2, 0, 1, 2, 0, 1] },
  };
  const frame = frameOf(base);
  const fail = (code: string) => {
    const outcome = fitModelCode(frame, code);
    expect(outcome.ok).toBe(false);
    return outcome.ok ? "" : outcome.error;
  };

  it("names a collinear column", () => {
    expect(fail("ols(y ~ x + x2)")).toMatch(/singular design: column "x2"/);
  });
  it("names an unknown column", () => {
    expect(fail("ols(y ~ nope)")).toMatch(/column "nope" is not in the data/);
  });
  it("refuses dates and text outcomes", () => {
    expect(fail("ols(y ~ d)")).toMatch(/holds dates/);
    expect(fail("ols(s ~ x)")).toMatch(/must be numeric/);
  });
  it("checks the outcome's range for the family", () => {
    expect(fail("logit(y3 ~ x)")).toMatch(/must be 0 or 1/);
    expect(fail("glm(y3 ~ x, family = binomial)")).toMatch(/between 0 and 1/);
  });
  it("detects perfect separation", () => {
    expect(fail("logit(yb ~ x)")).toMatch(/separation|converge/);
    expect(fail("glm(yb ~ x, family = binomial)")).toMatch(/separation|converge/);
  });
  it("passes formula errors through as outcomes", () => {
    expect(fail("ols(y ~ log(x))")).toMatch(/transform unit/);
  });
  it("needs more rows than parameters", () => {
    const tiny = frameOf({ x: base.x, y: base.y, s: base.s });
    const small = {
      ...tiny,
      rowCount: 2,
      columns: tiny.columns.map((c) => ({ ...c, values: c.values.slice(0, 2) })),
    };
    const outcome = fitModelCode(small, "ols(y ~ x)");
    expect(outcome.ok ? "" : outcome.error).toMatch(/too few observations/);
  });
});

describe("design matrix", () => {
  it("names and orders columns as patsy does", () => {
    const frame = readFixture("main.csv");
    expect(golden.patsyNames.length).toBeGreaterThan(10);
    for (const { rhs, names } of golden.patsyNames) {
      expect(buildDesign(frame, parseModelCall(`ols(y ~ ${rhs})`)).names, rhs).toEqual(names);
    }
  });

  it("treats bool and object columns as categorical, drops incomplete rows", () => {
    const frame = frameOf({
      y: { dtype: "float64", values: [1, 2, Number.NaN, 4, 5] },
      b: { dtype: "bool", values: [true, false, true, false, true] },
      g: { dtype: "object", values: ["z", "y", "y", null, "x"] },
    });
    const design = buildDesign(frame, parseModelCall("ols(y ~ b + g)"));
    expect(design.names).toEqual(["Intercept", "b[T.True]", "g[T.y]", "g[T.z]"]);
    expect(design.rows).toBe(3);
    // rows 0, 1, 4: (b, g) = (True, z), (False, y), (True, x)
    expect(design.columns.map((c) => Array.from(c))).toEqual([
      [1, 1, 1],
      [1, 0, 1],
      [0, 1, 0],
      [1, 0, 0],
    ]);
  });

  it("writes float levels as Python does", () => {
    const frame = frameOf({
      y: { dtype: "float64", values: [1, 2, 3, 4] },
      f: { dtype: "float64", values: [0.5, 2, 0.5, 1e-5] },
    });
    expect(buildDesign(frame, parseModelCall("ols(y ~ C(f))")).names).toEqual([
      "Intercept",
      "C(f)[T.0.5]",
      "C(f)[T.2.0]",
    ]);
  });
});

describe("distributions", () => {
  it("matches scipy's tails", () => {
    // scipy.stats.norm.sf(x) * 2 and t.sf(x, df) * 2
    expect(normalTwoSidedP(1.959963984540054)).toBeCloseTo(0.05, 14);
    expect(normalTwoSidedP(10) / 1.523970604832094e-23).toBeCloseTo(1, 9);
    expect(tTwoSidedP(2.0, 10) / 0.07338803477074039).toBeCloseTo(1, 10);
    expect(tTwoSidedP(8, 30) / 6.265822475700772e-9).toBeCloseTo(1, 8);
    expect(normalCdf(-1)).toBeCloseTo(0.15865525393145707, 15);
  });
});

describe("speed", () => {
  it("fits 5000 rows × 10 parameters by IRLS in well under a second", () => {
    const rows = 5000;
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const columns: Record<string, { dtype: Dtype; values: Cell[] }> = {};
    for (let k = 0; k < 7; k++) {
      columns[`x${k}`] = {
        dtype: "float64",
        values: Array.from({ length: rows }, () => random() * 2 - 1),
      };
    }
    columns.g = {
      dtype: "object",
      values: Array.from({ length: rows }, () => "abc"[Math.floor(random() * 3)] as string),
    };
    columns.y = {
      dtype: "int64",
      values: Array.from({ length: rows }, (_, i) =>
        random() < 1 / (1 + Math.exp(-(columns.x0?.values[i] as number))) ? 1 : 0,
      ),
    };
    const frame = frameOf(columns);
    const started = performance.now();
    const model = fitModel(
      frame,
      parseModelCall("glm(y ~ x0 + x1 + x2 + x3 + x4 + x5 + x6 + g, family = binomial)"),
    );
    const elapsed = performance.now() - started;
    expect(model.terms).toHaveLength(10);
    expect(model.params.x0).toBeGreaterThan(0.5);
    expect(elapsed).toBeLessThan(500);
  });
});
