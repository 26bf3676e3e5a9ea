import { describe, expect, it } from "vitest";
import type { TurnLabel } from "../../../src/eval/goals/labels.js";
import { computeGoalMetrics, type SessionLabels } from "../../../src/eval/goals/metrics.js";
import { segmentGoals } from "../../../src/eval/goals/segment.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";
import { bootstrapInterval } from "../../../src/eval/metrics.js";

const rcof = builtinTaxonomy("rcof");

/** Compact turns: "N+" a new goal's success, "N-E3" a new goal's failure with E3; "." continues. */
function turns(...specs: string[]): TurnLabel[] {
  return specs.map((spec, i) => {
    const isNew = spec.startsWith("N");
    const rest = spec.slice(1);
    const failed = rest.startsWith("-");
    return {
      turn_number: i + 1,
      is_new_goal: isNew,
      quality: failed ? "failure" : "success",
      rcof: failed ? rest.slice(1) || null : null,
      rationale: "",
    };
  });
}

const labelled = (id: string, ts: TurnLabel[]): SessionLabels => ({
  id,
  status: "labelled",
  turns: ts,
});

describe("segmentGoals", () => {
  it("cuts at is_new_goal turns; a goal fails on any failed turn, with its earliest cause", () => {
    const goals = segmentGoals(turns("N+", ".+", "N-E3", ".-E1", "N+"));
    expect(goals.map((g) => [g.goalNumber, g.firstTurn, g.lastTurn])).toEqual([
      [1, 1, 2],
      [2, 3, 4],
      [3, 5, 5],
    ]);
    expect(goals.map((g) => g.success)).toEqual([true, false, true]);
    expect(goals.map((g) => g.multiTurn)).toEqual([true, true, false]);
    // Turn 3 (E3) fails before turn 4 (E1): the goal's cause is E3.
    expect(goals[1]?.firstFailedTurn).toBe(3);
    expect(goals[1]?.rootCause).toBe("E3");
    expect(goals[0]?.rootCause).toBeNull();
    expect(goals[0]?.firstFailedTurn).toBeNull();
  });

  it("takes the cause of a failure that follows a success inside the goal", () => {
    const [goal] = segmentGoals(turns("N+", ".-E5", ".-E4"));
    expect(goal?.success).toBe(false);
    expect(goal?.firstFailedTurn).toBe(2);
    expect(goal?.rootCause).toBe("E5");
  });

  it("opens the first goal at the first turn even when it is not marked", () => {
    const goals = segmentGoals(turns(".+", ".+", "N+"));
    expect(goals.map((g) => g.turns.length)).toEqual([2, 1]);
    expect(segmentGoals([])).toEqual([]);
  });
});

/*
 * Four scored sessions and one errored, by hand:
 *   s1: goal 1 = turns 1–2 (success, multi); goal 2 = turns 3–4 (fails at 3: E3, multi)
 *   s2: goal 1 = turn 1 (success); goal 2 = turns 2–3 (fails at 2: E2, multi)
 *   s3: goal 1 = turns 1–3 (fails at 2: E5 — not E4, turn 3's cause; multi)
 *   s4: goal 1 = turn 1 (fails: E3)
 * Goals 6, successful 2 → GSR 33.33 %. Multi-turn goals 4 (s1g1, s1g2, s2g2, s3g1), successful 1
 * → 25 %. Turns 4 + 3 + 3 + 1 = 11, successful 2 + 2 + 1 + 0 = 5 → 45.45 %.
 * Failed goals 4: E3 ×2 (50 %), E2 ×1 (25 %), E5 ×1 (25 %), other codes 0.
 */
const sessions: SessionLabels[] = [
  labelled("s1", turns("N+", ".+", "N-E3", ".-E1")),
  labelled("s2", turns("N+", "N-E2", ".+")),
  labelled("s3", turns("N+", ".-E5", ".-E4")),
  labelled("s4", turns("N-E3")),
  { id: "s5", status: "errored", error: "judge 2: HTTP 500" },
];

describe("computeGoalMetrics", () => {
  const report = computeGoalMetrics(sessions, rcof, { seed: 7 });

  it("computes GSR overall and multi-turn, turn success and the RCOF distribution by hand", () => {
    expect(report.sessions).toBe(4);
    expect(report.erroredSessions).toBe(1);
    expect(report.gsr).toMatchObject({ count: 2, total: 6 });
    expect(report.gsr.percent).toBeCloseTo(100 / 3, 10);
    expect(report.multiTurnGsr).toMatchObject({ count: 1, total: 4, percent: 25 });
    expect(report.turnSuccessRate).toMatchObject({ count: 5, total: 11 });
    expect(report.turnSuccessRate.percent).toBeCloseTo(500 / 11, 10);
    expect(report.failedGoals).toBe(4);
    expect(report.causes.map((c) => [c.code, c.count, c.percent])).toEqual([
      ["E1", 0, 0],
      ["E2", 1, 25],
      ["E3", 2, 50],
      ["E4", 0, 0],
      ["E5", 1, 25],
      ["E6", 0, 0],
      ["E7", 0, 0],
    ]);
    expect(report.causes[2]?.name).toBe("Incorrect retrieval");
    expect(report.unattributed).toMatchObject({ count: 0, percent: 0 });
  });

  it("leaves an errored session out of every denominator", () => {
    const without = computeGoalMetrics(sessions.slice(0, 4), rcof, { seed: 7 });
    expect(without.gsr).toEqual(report.gsr);
    expect(without.causes).toEqual(report.causes);
    expect(without.erroredSessions).toBe(0);
  });

  it("gives deterministic bootstrap intervals over sessions that contain the estimate", () => {
    const again = computeGoalMetrics(sessions, rcof, { seed: 7 });
    expect(again).toEqual(report);
    for (const rate of [report.gsr, report.multiTurnGsr, report.turnSuccessRate]) {
      expect(rate.interval.low).toBeLessThanOrEqual(rate.percent);
      expect(rate.interval.high).toBeGreaterThanOrEqual(rate.percent);
      expect(rate.interval.low).toBeGreaterThanOrEqual(0);
      expect(rate.interval.high).toBeLessThanOrEqual(100);
      expect(rate.interval.high).toBeGreaterThan(rate.interval.low);
    }
    const e3 = report.causes[2];
    expect(e3?.interval.low).toBeLessThanOrEqual(50);
    expect(e3?.interval.high).toBeGreaterThanOrEqual(50);
  });

  it("draws its resamples from the seed", () => {
    // 30 sessions of 1 to 7 goals and varied outcomes, so the resampled GSRs take many values.
    const many = Array.from({ length: 30 }, (_, i) =>
      labelled(
        `m${i}`,
        turns(
          "N+",
          i % 3 === 0 ? ".-E3" : ".+",
          ...Array.from({ length: i % 7 }, (_, j) => ((i + j) % 4 === 0 ? "N-E1" : "N+")),
        ),
      ),
    );
    const a = computeGoalMetrics(many, rcof, { seed: 1 });
    const b = computeGoalMetrics(many, rcof, { seed: 2 });
    expect(b.gsr.percent).toBe(a.gsr.percent);
    expect(b.gsr.interval).not.toEqual(a.gsr.interval);
    expect(computeGoalMetrics(many, rcof, { seed: 1 }).gsr.interval).toEqual(a.gsr.interval);
  });

  it("resamples as eval/metrics.ts's bootstrapInterval does over sessions", () => {
    // GSR recomputed from the labels of each resample of sessions, through the generic bootstrap.
    const scored = sessions.filter((s) => s.status === "labelled");
    const gsrOf = (sample: readonly SessionLabels[]) => {
      let goals = 0;
      let successes = 0;
      for (const s of sample) {
        if (s.status !== "labelled") continue;
        for (const g of segmentGoals(s.turns)) {
          goals++;
          if (g.success) successes++;
        }
      }
      return goals === 0 ? Number.NaN : (successes / goals) * 100;
    };
    expect(report.gsr.interval).toEqual(bootstrapInterval(scored, gsrOf, { seed: 7 }));
  });

  it("resamples whole sessions: one session's goals give a zero-width interval", () => {
    // Two goals (one success) in one session: resampling goals would spread 0–100 %.
    const one = computeGoalMetrics([labelled("only", turns("N+", "N-E1"))], rcof);
    expect(one.gsr.percent).toBe(50);
    expect(one.gsr.interval).toEqual({ low: 50, high: 50 });
  });

  it("counts failures without a cause as unattributed, so shares still add to 100", () => {
    const tau = computeGoalMetrics(
      [labelled("t1", turns("N-")), labelled("t2", turns("N+")), labelled("t3", turns("N-E1"))],
      rcof,
    );
    expect(tau.failedGoals).toBe(2);
    expect(tau.unattributed).toMatchObject({ count: 1, percent: 50 });
    const total = tau.causes.reduce((s, c) => s + c.percent, 0) + tau.unattributed.percent;
    expect(total).toBe(100);
  });

  it("takes ground truth as it comes, without rationales", () => {
    const truth = [
      { turn_number: 1, is_new_goal: true, quality: "success" as const, rcof: null },
      { turn_number: 2, is_new_goal: false, quality: "failure" as const, rcof: "E4" },
    ];
    const report = computeGoalMetrics([{ id: "g", status: "labelled", turns: truth }], rcof);
    expect(report.gsr).toMatchObject({ count: 0, total: 1, percent: 0 });
    expect(report.causes[3]).toMatchObject({ code: "E4", count: 1, percent: 100 });
  });

  it("reports n/a (NaN) when nothing was scored, never 0", () => {
    const none = computeGoalMetrics([{ id: "x", status: "errored", error: "timeout" }], rcof);
    expect(none.sessions).toBe(0);
    expect(none.erroredSessions).toBe(1);
    expect(none.gsr.percent).toBeNaN();
    expect(none.gsr.interval.low).toBeNaN();
    expect(none.causes.every((c) => Number.isNaN(c.percent))).toBe(true);
    // No multi-turn goal: that rate alone is n/a.
    const single = computeGoalMetrics([labelled("a", turns("N+", "N+"))], rcof);
    expect(single.gsr.percent).toBe(100);
    expect(single.multiTurnGsr.percent).toBeNaN();
  });

  it("refuses a cause outside the taxonomy", () => {
    expect(() => computeGoalMetrics([labelled("z", turns("N+", ".-E9"))], rcof)).toThrow(
      'session z: turn 2: rcof: "E9" is not a code of taxonomy rcof',
    );
  });
});
