import { describe, expect, it } from "vitest";
import type { ConclusionVerdict } from "../../../src/env/blade/conclusion.js";
import {
  BladeMetricsError,
  bladeScores,
  CATEGORIES,
  coverageAtK,
  datasetRuns,
  f1,
  type RunMatch,
  runHitRates,
} from "../../../src/env/blade/scores.js";
import { bootstrapScores, conclusionRates } from "../../../src/eval/blade/metrics.js";
import { bootstrapInterval } from "../../../src/eval/metrics.js";

/** Ground truth used unless a test says otherwise: 4 variables, 3 models (2 distinct), 5 transforms. */
const GT = { gtCvarCount: 4, gtModelCount: 3, gtModelUniqueCount: 2, gtTransformCount: 5 };

function run(fields: Partial<RunMatch> = {}): RunMatch {
  return {
    status: "scored",
    matchedCvarsGt: [],
    matchedCvarsAgent: [],
    agentCvarCount: 0,
    matchedModels: [],
    matchedModelCvar: [],
    matchedValueGt: [],
    matchedGraphGt: [],
    matchedValueAgent: [],
    matchedGraphAgent: [],
    agentTransformCount: 0,
    ...GT,
    ...fields,
  };
}

const generationFailed = (fields: Partial<RunMatch> = {}) =>
  run({ status: "generation-failed", ...fields });

describe("runHitRates", () => {
  it("divides matched agent decisions by the agent's decisions", () => {
    const rates = runHitRates(
      run({
        // distinct agent texts {IV: a., DV: b.} = 2 over 4 judged → 0.5
        matchedCvarsAgent: ["IV: a.", "DV: b.", "IV: a."],
        agentCvarCount: 4,
        // one model → 1/1; no model+variables match → 0/1
        matchedModels: ["logistic regression"],
        // transforms keep duplicates: graph 3/4 = 0.75, value 1/4 = 0.25
        agentTransformCount: 4,
        matchedGraphAgent: ["x", "x", "y"],
        matchedValueAgent: ["x"],
      }),
    );
    expect(rates).toEqual({
      cvar: 0.5,
      model: 1,
      modelCvar: 0,
      transformGraph: 0.75,
      transformValue: 0.25,
    });
  });

  it("guards empty denominators with max(…, 1)", () => {
    // no agent variables or transforms judged: 0 / max(0, 1) = 0, not NaN
    expect(runHitRates(run())).toEqual({
      cvar: 0,
      model: 0,
      modelCvar: 0,
      transformGraph: 0,
      transformValue: 0,
    });
  });
});

describe("datasetRuns", () => {
  it("keeps scored runs in order, appends one zero run per generation failure, drops the rest", () => {
    const s1 = run({ matchedModels: ["m1"] });
    const s2 = run({ matchedModels: ["m2"] });
    const runs = datasetRuns([
      generationFailed({ gtCvarCount: 0, gtModelCount: 0, gtModelUniqueCount: 0 }),
      s1,
      run({ status: "failed", matchedModels: ["m3"] }),
      s2,
      generationFailed(),
    ]);
    expect(runs).toHaveLength(4);
    expect(runs[0]).toBe(s1);
    expect(runs[1]).toBe(s2);
    for (const zero of runs.slice(2)) {
      expect(zero.status).toBe("generation-failed");
      expect(Object.values(runHitRates(zero))).toEqual([0, 0, 0, 0, 0]);
      // the dataset's counts come from the first scored run, not the failure's record
      expect(zero.gtCvarCount).toBe(4);
      expect(zero.gtModelUniqueCount).toBe(2);
    }
  });

  it("uses the failure's own counts when no run was scored", () => {
    const runs = datasetRuns([generationFailed({ gtCvarCount: 7 })]);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.gtCvarCount).toBe(7);
  });
});

describe("coverageAtK", () => {
  const runs = [
    run({
      matchedCvarsGt: ["a", "b"],
      matchedModels: ["m1"],
      matchedModelCvar: ["m1 | a"],
      matchedGraphGt: ["t1", "t2"],
      matchedValueGt: ["t1"],
    }),
    run({
      matchedCvarsGt: ["b", "c"],
      matchedModels: ["m1"],
      matchedGraphGt: ["t2", "t3"],
      matchedValueGt: ["t1"],
    }),
    run({
      matchedCvarsGt: ["d"],
      matchedModels: ["m2"],
      matchedGraphGt: ["t4"],
      matchedValueGt: ["t2"],
    }),
  ];

  it("pools the first k runs over BLADE's denominators", () => {
    // k = 2: cvar |{a,b,c}| / 4 = 0.75; model |{m1}| / min(2 unique, 2 runs) = 0.5;
    // model_cvar |{m1 | a}| / min(3 models, 2 runs) = 0.5; graph |{t1,t2,t3}| / 5 = 0.6;
    // value |{t1}| / 5 = 0.2
    expect(coverageAtK(runs, 2)).toEqual({
      cvar: 0.75,
      model: 0.5,
      modelCvar: 0.5,
      transformGraph: 0.6,
      transformValue: 0.2,
    });
  });

  it("takes every run when k is larger than the run count", () => {
    // k = 3: cvar 4/4; model |{m1,m2}| / min(2, 3) = 1; model_cvar 1 / min(3, 3) = 1/3;
    // graph |{t1..t4}| / 5 = 0.8; value |{t1,t2}| / 5 = 0.4
    const all = coverageAtK(runs, 3);
    expect(all.cvar).toBe(1);
    expect(all.model).toBe(1);
    expect(all.modelCvar).toBeCloseTo(1 / 3, 12);
    expect(all.transformGraph).toBe(0.8);
    expect(all.transformValue).toBe(0.4);
    expect(coverageAtK(runs, 10)).toEqual(all);
  });

  it("shrinks the model denominator to the runs taken", () => {
    // k = 1: model |{m1}| / min(2, 1) = 1; model_cvar 1 / min(3, 1) = 1
    const one = coverageAtK(runs, 1);
    expect(one.model).toBe(1);
    expect(one.modelCvar).toBe(1);
  });

  it("gives 0, not NaN, when the ground truth has nothing in a category", () => {
    const none = coverageAtK(
      [run({ gtTransformCount: 0, gtModelCount: 0, gtModelUniqueCount: 0 })],
      10,
    );
    expect(none.transformGraph).toBe(0);
    expect(none.transformValue).toBe(0);
    expect(none.model).toBe(0);
  });

  it("rejects a k that is not a whole number ≥ 1, and no runs", () => {
    expect(() => coverageAtK(runs, 0)).toThrow(BladeMetricsError);
    expect(() => coverageAtK(runs, 2.5)).toThrow(/coverage k/);
    expect(() => coverageAtK([], 10)).toThrow(/no runs/);
  });
});

describe("f1", () => {
  it("is the harmonic mean, 0 when both parts are 0 (BLADE: NaN)", () => {
    // 2 · 0.5 · 0.25 / 0.75 = 0.25 / 0.75 = 1/3
    expect(f1(0.5, 0.25)).toBeCloseTo(1 / 3, 12);
    expect(f1(1, 0)).toBe(0);
    expect(f1(0, 0)).toBe(0);
  });
});

/**
 * Two datasets, k = 2, worked by hand.
 *
 * Dataset "a" (gt: 4 variables, 3 models / 2 distinct, 4 transforms); runs a1 scored, a2
 * generation failure (→ zero run after a1), a3 failed otherwise (dropped): runs [a1, zero].
 *   a1 hit rates: cvar 2/4 = 0.5, model 1, model_cvar 1, graph 2/2 = 1, value 1/2 = 0.5.
 *   hit rate (mean of a1 and zero): cvar 0.25, model 0.5, model_cvar 0.5, graph 0.5, value 0.25.
 *   coverage@2: cvar 2/4 = 0.5, model 1/min(2,2) = 0.5, model_cvar 1/min(3,2) = 0.5,
 *               graph 2/4 = 0.5, value 1/4 = 0.25.
 * Dataset "b" (gt: 2 variables, 1 model, 2 transforms); runs b1, b2, b3 scored.
 *   b1: cvar 1/2, model 0, model_cvar 0, transforms 0/max(0,1) = 0.
 *   b2: cvar 2/2, model 1, model_cvar 0, graph 2/4, value 2/4.
 *   b3: cvar 0/1, model 1, model_cvar 1, graph 1/1, value 0/1.
 *   hit rate: cvar 1.5/3 = 0.5, model 2/3, model_cvar 1/3, graph 1.5/3 = 0.5, value 0.5/3 = 1/6.
 *   coverage@2 (b1, b2): cvar |{d1,d2}|/2 = 1, model |{n1}|/min(1,2) = 1, model_cvar 0,
 *               graph |{s1}|/2 = 0.5, value |{s1,s2}|/2 = 1.
 * Means over datasets:
 *   hit rate: cvar 0.375, model 7/12, model_cvar 5/12, graph 0.5, value 5/24.
 *   coverage: cvar 0.75, model 0.75, model_cvar 0.25, graph 0.5, value 0.625.
 * F1: cvar 2·0.375·0.75/1.125 = 0.5; model 2·(7/12)(3/4)/(4/3) = 21/32;
 *     model_cvar 2·(5/12)(1/4)/(2/3) = 5/16; graph 0.5; value 2·(5/24)(5/8)/(5/6) = 5/16.
 * Totals: T = 4 + 2 = 6, C = 4 + 2 = 6, M = min(3,2) + min(1,2) = 3, U = min(2,2) + min(1,2) = 3;
 *   S = 18; weights cvar 6/18 = 1/3, model 3/18, model_cvar 3/18, graph 6/36, value 6/36 (all 1/6).
 * Weighted = 0.5/3 + (21/32 + 5/16 + 1/2 + 5/16)/6 = 32/192 + 57/192 = 89/192.
 * Unweighted (intended) = (16/32 + 21/32 + 10/32 + ½·16/32 + ½·10/32) / 4 = (60/32)/4 = 15/32.
 * As BLADE's code = (16/32 + 21/32 + 10/32 + 8/32 + 16/32 [the stray 0.5] + 10/32) / 4 = 81/128.
 */
const A_GT = { gtCvarCount: 4, gtModelCount: 3, gtModelUniqueCount: 2, gtTransformCount: 4 };
const B_GT = { gtCvarCount: 2, gtModelCount: 1, gtModelUniqueCount: 1, gtTransformCount: 2 };
const worked = new Map<string, RunMatch[]>([
  [
    "a",
    [
      run({
        ...A_GT,
        matchedCvarsGt: ["c1", "c2"],
        matchedCvarsAgent: ["x", "y"],
        agentCvarCount: 4,
        matchedModels: ["m1"],
        matchedModelCvar: ["m1 | c1"],
        agentTransformCount: 2,
        matchedGraphAgent: ["u1", "u2"],
        matchedValueAgent: ["u1"],
        matchedGraphGt: ["t1", "t2"],
        matchedValueGt: ["t1"],
      }),
      generationFailed({ ...A_GT }),
      run({ ...A_GT, status: "failed", matchedModels: ["m2"] }),
    ],
  ],
  [
    "b",
    [
      run({ ...B_GT, matchedCvarsGt: ["d1"], matchedCvarsAgent: ["p"], agentCvarCount: 2 }),
      run({
        ...B_GT,
        matchedCvarsGt: ["d1", "d2"],
        matchedCvarsAgent: ["p", "q"],
        agentCvarCount: 2,
        matchedModels: ["n1"],
        agentTransformCount: 4,
        matchedGraphAgent: ["v1", "v2"],
        matchedValueAgent: ["v1", "v2"],
        matchedGraphGt: ["s1"],
        matchedValueGt: ["s1", "s2"],
      }),
      run({
        ...B_GT,
        agentCvarCount: 1,
        matchedModels: ["n1"],
        matchedModelCvar: ["n1 | d1"],
        agentTransformCount: 1,
        matchedGraphAgent: ["v1"],
        matchedGraphGt: ["s2"],
      }),
    ],
  ],
]);

function expectClose(actual: Record<string, number>, expected: Record<string, number>) {
  for (const [key, value] of Object.entries(expected)) expect(actual[key]).toBeCloseTo(value, 12);
}

describe("bladeScores", () => {
  const scores = bladeScores(worked, { k: 2 });

  it("averages hit rates over runs, then datasets", () => {
    expectClose(scores.datasets[0]?.hitRate ?? {}, {
      cvar: 0.25,
      model: 0.5,
      modelCvar: 0.5,
      transformGraph: 0.5,
      transformValue: 0.25,
    });
    expect(scores.datasets[0]).toMatchObject({
      name: "a",
      runs: 2,
      generationFailures: 1,
      dropped: 1,
      coverageRuns: 2,
    });
    expectClose(scores.hitRate, {
      cvar: 0.375,
      model: 7 / 12,
      modelCvar: 5 / 12,
      transformGraph: 0.5,
      transformValue: 5 / 24,
    });
  });

  it("averages coverage@k over datasets", () => {
    expectClose(scores.coverage, {
      cvar: 0.75,
      model: 0.75,
      modelCvar: 0.25,
      transformGraph: 0.5,
      transformValue: 0.625,
    });
  });

  it("computes F1, weights and both scores", () => {
    expectClose(scores.f1, {
      cvar: 0.5,
      model: 21 / 32,
      modelCvar: 5 / 16,
      transformGraph: 0.5,
      transformValue: 5 / 16,
    });
    expect(scores.totals).toEqual({ transforms: 6, cvars: 6, models: 3, modelsUnique: 3 });
    expectClose(scores.weights, {
      cvar: 1 / 3,
      model: 1 / 6,
      modelCvar: 1 / 6,
      transformGraph: 1 / 6,
      transformValue: 1 / 6,
    });
    expect(scores.weighted).toBeCloseTo(89 / 192, 12);
  });

  it("computes the intended unweighted score and keeps BLADE's typo'd one apart", () => {
    expect(scores.unweighted).toBeCloseTo(15 / 32, 12);
    expect(scores.unweightedAsBladeCodes).toBeCloseTo(81 / 128, 12);
    // the typo adds (0.5 + ½·F1_value) / 4 = (1/2 + 5/32) / 4 = 21/128
    expect(scores.unweightedAsBladeCodes - scores.unweighted).toBeCloseTo(21 / 128, 12);
  });

  it("puts generation failures after the scored runs, so coverage@k sees the scored ones first", () => {
    // dataset runs: [s1, s2, zero]; with k = 2 coverage pools s1 and s2: |{a, b}| / 4 = 0.5.
    // Had the zero run stayed first, it would be |{a}| / 4 = 0.25.
    const scores2 = bladeScores(
      new Map([
        ["d", [generationFailed(), run({ matchedCvarsGt: ["a"] }), run({ matchedCvarsGt: ["b"] })]],
      ]),
      { k: 2 },
    );
    expect(scores2.coverage.cvar).toBe(0.5);
    expect(scores2.datasets[0]?.runs).toBe(3);
  });

  it("reports zeros, never NaN, for an agent that matched nothing", () => {
    const nothing = bladeScores(new Map([["d", [run(), generationFailed()]]]));
    for (const c of CATEGORIES) expect(nothing.f1[c]).toBe(0);
    expect(nothing.weighted).toBe(0);
    expect(nothing.unweighted).toBe(0);
    // BLADE's typo alone gives 0.5 / 4 (BLADE itself would give NaN here, from 0/0 F1s)
    expect(nothing.unweightedAsBladeCodes).toBe(0.125);
  });

  it("works with fewer runs than k (weights still use min(…, k))", () => {
    const few = bladeScores(new Map([["d", [run({ matchedModels: ["m1"] })]]]), { k: 10 });
    // one run: model coverage 1 / min(2, 1) = 1; M = min(3, 10) = 3, U = min(2, 10) = 2
    expect(few.coverage.model).toBe(1);
    expect(few.datasets[0]?.coverageRuns).toBe(1);
    expect(few.totals).toEqual({ transforms: 5, cvars: 4, models: 3, modelsUnique: 2 });
  });

  it("rejects bad input with one line naming the dataset, run and field", () => {
    const twoModels = new Map([["d", [run(), run({ matchedModels: ["m1", "m2"] })]]]);
    expect(() => bladeScores(twoModels)).toThrow("dataset d: run 1: matchedModels");
    const allFailed = new Map([["d", [run({ status: "failed" })]]]);
    expect(() => bladeScores(allFailed)).toThrow(/dataset d: no run to score/);
    const disagree = new Map([["d", [run(), run({ gtCvarCount: 5 })]]]);
    expect(() => bladeScores(disagree)).toThrow("dataset d: run 1: gtCvarCount: 5 differs");
    const negative = new Map([["d", [run({ agentCvarCount: -1 })]]]);
    expect(() => bladeScores(negative)).toThrow("dataset d: run 0: agentCvarCount");
    expect(() => bladeScores(new Map())).toThrow(BladeMetricsError);
  });
});

describe("bootstrapScores", () => {
  /** Twelve runs per dataset with varied matches (more than k, as BLADE requires). */
  function variedDataset(offset: number): RunMatch[] {
    return Array.from({ length: 12 }, (_, i) =>
      run({
        matchedCvarsGt: [`c${(i + offset) % 4}`],
        matchedCvarsAgent: i % 3 === 0 ? [] : ["x"],
        agentCvarCount: 2,
        matchedModels: i % 2 === 0 ? [`m${i % 4 === 0 ? 1 : 2}`] : [],
        matchedModelCvar: i % 4 === 0 ? ["m1 | c0"] : [],
        agentTransformCount: 3,
        matchedGraphAgent: i % 3 === 1 ? ["g", "h"] : ["g"],
        matchedValueAgent: i % 2 === 1 ? ["g"] : [],
        matchedGraphGt: [`t${(i + offset) % 5}`],
        matchedValueGt: i % 2 === 1 ? [`t${i % 3}`] : [],
      }),
    );
  }
  const varied = new Map([
    ["p", variedDataset(0)],
    ["q", [...variedDataset(1), generationFailed(), generationFailed()]],
  ]);

  it("repeats exactly for a seed, and its point is bladeScores'", () => {
    const first = bootstrapScores(varied, { seed: 7, resamples: 200 });
    const again = bootstrapScores(varied, { seed: 7, resamples: 200 });
    expect(again).toEqual(first);
    const other = bootstrapScores(varied, { seed: 8, resamples: 200 });
    expect(other.weighted.interval).not.toEqual(first.weighted.interval);
    const point = bladeScores(varied);
    expect(first.weighted.point).toBe(point.weighted);
    expect(first.unweighted.point).toBe(point.unweighted);
    expect(first.unweightedAsBladeCodes.point).toBe(point.unweightedAsBladeCodes);
    expect(first.f1.model.point).toBe(point.f1.model);
  });

  it("gives intervals that contain the point estimate on a sane example", () => {
    const boot = bootstrapScores(varied, { seed: 1 });
    expect(boot.resamples).toBe(1000);
    for (const value of [boot.weighted, boot.unweighted, boot.hitRate.cvar, boot.f1.cvar]) {
      expect(value.interval.low).toBeLessThan(value.interval.high);
      expect(value.interval.low).toBeLessThanOrEqual(value.point);
      expect(value.interval.high).toBeGreaterThanOrEqual(value.point);
    }
  });

  it("resamples each dataset within itself, to its own length", () => {
    // every run of "all" hits its one model, no run of "none" does: any resample keeps
    // the model hit rate at (1 + 0) / 2 = 0.5; mixing datasets would move it.
    const split = new Map([
      ["all", [run({ matchedModels: ["m"] }), run({ matchedModels: ["m"] })]],
      ["none", [run(), run(), run()]],
    ]);
    const boot = bootstrapScores(split, { seed: 3, resamples: 300 });
    expect(boot.hitRate.model.interval).toEqual({ low: 0.5, high: 0.5 });
  });

  it("takes coverage on the first k runs of each resample", () => {
    // four runs, each matching a different one of 4 variables.
    const runs = ["a", "b", "c", "d"].map((v) => run({ matchedCvarsGt: [v] }));
    // k = 1: whichever run comes first, coverage is 1/4.
    const one = bootstrapScores(new Map([["d", runs]]), { k: 1, seed: 2, resamples: 300 });
    expect(one.coverage.cvar.interval).toEqual({ low: 0.25, high: 0.25 });
    // k = 4: the point pools all four (1.0); a resample repeats runs, so its coverage is lower
    // (all four distinct has chance 4!/4⁴ ≈ 9 %): the 2.5 % bound is below 1, the 97.5 % one 1.
    const four = bootstrapScores(new Map([["d", runs]]), { k: 4, seed: 2, resamples: 300 });
    expect(four.coverage.cvar.point).toBe(1);
    expect(four.coverage.cvar.interval.low).toBeLessThan(1);
    expect(four.coverage.cvar.interval.high).toBe(1);
  });

  it("uses numpy's linear quantiles of the resampled values", () => {
    // one dataset, runs hit rates [1, 0] for the model: a resample's mean is 0, 0.5 or 1
    // with chances 1/4, 1/2, 1/4, so the 2.5 % and 97.5 % quantiles are 0 and 1.
    const boot = bootstrapScores(new Map([["d", [run({ matchedModels: ["m"] }), run()]]]), {
      seed: 5,
    });
    expect(boot.hitRate.model.interval).toEqual({ low: 0, high: 1 });
    expect(boot.hitRate.model.bootstrapMean).toBeGreaterThan(0.45);
    expect(boot.hitRate.model.bootstrapMean).toBeLessThan(0.55);
  });

  it("works with fewer runs than k", () => {
    const few = new Map([["d", [run({ matchedModels: ["m1"] }), run()]]]);
    const boot = bootstrapScores(few, { k: 10, seed: 0, resamples: 100 });
    expect(Number.isFinite(boot.weighted.interval.low)).toBe(true);
    expect(Number.isFinite(boot.weighted.interval.high)).toBe(true);
  });

  it("rejects a resample count below 1", () => {
    expect(() => bootstrapScores(varied, { resamples: 0 })).toThrow(/resamples/);
  });
});

describe("conclusionRates", () => {
  const verdicts: ConclusionVerdict[] = [
    { direction: "right", size: "not comparable", reason: "" },
    { direction: "right", size: "within", reason: "" },
    { direction: "wrong", size: "outside", reason: "" },
    { direction: "right", size: "not comparable", reason: "" },
    { direction: "not significant", size: "not comparable", reason: "" },
  ];

  it("shares of right direction over all runs and of size within tolerance over comparable ones", () => {
    const rates = conclusionRates(verdicts, { seed: 4 });
    // direction: 3 of 5 = 0.6; size: 1 of the 2 comparable runs = 0.5
    expect(rates.runs).toBe(5);
    expect(rates.direction).toMatchObject({ count: 3, total: 5, rate: 0.6 });
    expect(rates.size).toMatchObject({ count: 1, total: 2, rate: 0.5 });
    const share = (s: readonly boolean[]) => s.filter(Boolean).length / s.length;
    expect(rates.direction.interval).toEqual(
      bootstrapInterval([true, true, false, true, false], share, { seed: 4 }),
    );
    expect(rates.direction.interval.low).toBeLessThanOrEqual(0.6);
    expect(rates.direction.interval.high).toBeGreaterThanOrEqual(0.6);
  });

  it("reports n/a (NaN) when nothing is comparable", () => {
    const rates = conclusionRates([{ direction: "right", size: "not comparable", reason: "" }]);
    expect(rates.direction.rate).toBe(1);
    expect(rates.size.total).toBe(0);
    expect(rates.size.rate).toBeNaN();
    expect(rates.size.interval.low).toBeNaN();
  });
});
