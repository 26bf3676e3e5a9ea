import { describe, expect, it } from "vitest";
import { judgeConclusion } from "../../../src/env/blade/conclusion.js";
import type { FittedModel } from "../../../src/env/blade/runtime/types.js";
import type { TrueEffect } from "../../../src/env/blade/specs.js";

/** A fitted model from (term, estimate, p-value) rows; an intercept is added. */
function model(rows: [string, number, number][], family = "binomial", link = "logit"): FittedModel {
  const all: [string, number, number][] = [["Intercept", 0.1, 0.5], ...rows];
  return {
    family,
    link,
    dv: "y",
    terms: all.map(([t]) => t),
    params: Object.fromEntries(all.map(([t, b]) => [t, b])),
    stdErrors: Object.fromEntries(all.map(([t]) => [t, 0.1])),
    pValues: Object.fromEntries(all.map(([t, , p]) => [t, p])),
    observations: 500,
  };
}

const truth = (over: Partial<TrueEffect> = {}): TrueEffect => ({
  iv: "dose",
  dv: "y",
  direction: "positive",
  sizes: [{ family: "binomial", link: "logit", value: 0.4, tolerance: 0.15 }],
  process: "y ~ Bernoulli(logistic(-1 + 0.4 dose))",
  ...over,
});

describe("judgeConclusion", () => {
  it("right direction and size on the truth's scale", () => {
    const verdict = judgeConclusion(
      model([
        ["dose", 0.45, 0.001],
        ["age", 0.02, 0.3],
      ]),
      truth(),
      ["dose"],
    );
    expect(verdict).toMatchObject({
      term: "dose",
      estimate: 0.45,
      direction: "right",
      size: "within",
    });
    expect(verdict.reason).toContain('"dose" = 0.450');
  });

  it("size outside the tolerance, wrong sign, not significant", () => {
    expect(judgeConclusion(model([["dose", 0.9, 1e-6]]), truth(), []).size).toBe("outside");
    expect(judgeConclusion(model([["dose", -0.3, 0.01]]), truth(), []).direction).toBe("wrong");
    const weak = judgeConclusion(model([["dose", 0.3, 0.05]]), truth(), []);
    expect(weak.direction).toBe("not significant");
    // p exactly at the level is not significant; the size can still be read
    expect(weak.size).toBe("within");
  });

  it("a true null: right when not significant, wrong when significant", () => {
    const none = truth({ direction: "none", sizes: [] });
    expect(judgeConclusion(model([["dose", 0.05, 0.6]]), none, []).direction).toBe("right");
    expect(judgeConclusion(model([["dose", 0.05, 0.01]]), none, []).direction).toBe("wrong");
  });

  it("size not comparable on another scale or for a derived IV column", () => {
    const ols = judgeConclusion(
      model([["dose", 0.08, 0.001]], "gaussian", "identity"),
      truth(),
      [],
    );
    expect(ols).toMatchObject({ direction: "right", size: "not comparable" });
    expect(ols.reason).toContain("gaussian/identity");
    const derived = judgeConclusion(model([["dose_z", 0.4, 0.001]]), truth(), ["dose_z"]);
    expect(derived).toMatchObject({ term: "dose_z", direction: "right", size: "not comparable" });
  });

  it("family and link names compare case-insensitively", () => {
    expect(
      judgeConclusion(model([["dose", 0.4, 0.001]], "Binomial", "Logit"), truth(), []).size,
    ).toBe("within");
  });

  it("reads a binary categorical IV through its one non-reference level", () => {
    const t = truth({ iv: "treated", sizes: [] });
    expect(judgeConclusion(model([["C(treated)[T.1]", 0.7, 0.001]]), t, []).term).toBe(
      "C(treated)[T.1]",
    );
    expect(judgeConclusion(model([["treated[T.True]", -0.7, 0.001]]), t, []).direction).toBe(
      "wrong",
    );
    const many = judgeConclusion(
      model([
        ["g[T.b]", 0.7, 0.001],
        ["g[T.c]", 0.1, 0.5],
      ]),
      truth({ iv: "g" }),
      [],
    );
    expect(many).toMatchObject({ direction: "undetermined", size: "not comparable" });
    expect(many.reason).toContain("3 levels");
  });

  it("prefers the truth's IV, then the agent's IV columns", () => {
    const m = model([
      ["dose_log", -0.2, 0.001],
      ["dose", 0.4, 0.001],
    ]);
    expect(judgeConclusion(m, truth(), ["dose_log"]).term).toBe("dose");
    expect(
      judgeConclusion(model([["dose_log", 0.2, 0.001]]), truth(), ["other", "dose_log"]).term,
    ).toBe("dose_log");
  });

  it("an interaction with the IV makes the size not comparable", () => {
    const verdict = judgeConclusion(
      model([
        ["dose", 0.4, 0.001],
        ["dose:age", 0.1, 0.2],
      ]),
      truth(),
      [],
    );
    expect(verdict).toMatchObject({ direction: "right", size: "not comparable" });
    expect(verdict.reason).toContain('"dose:age"');
  });

  it("undetermined without a term or a usable estimate", () => {
    expect(judgeConclusion(model([["age", 0.4, 0.001]]), truth(), ["weight"])).toMatchObject({
      direction: "undetermined",
      size: "not comparable",
    });
    expect(judgeConclusion(model([["dose", Number.NaN, Number.NaN]]), truth(), []).direction).toBe(
      "undetermined",
    );
  });
});
