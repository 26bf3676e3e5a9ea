/**
 * The job's report on small stores whose every figure is worked by hand: the judges' GSR with
 * and without reviews, the ground truth's GSR, each judge and the ensemble against per-turn
 * ground truth and against τ-bench-style outcomes, Fleiss' κ among the judges, the judges
 * against the reviewers, the review queue, spend and errors.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { voteTurns } from "../../../src/eval/goals/agreement.js";
import type { Conversation, GroundTruth } from "../../../src/eval/goals/conversation.js";
import type { TurnLabel } from "../../../src/eval/goals/labels.js";
import {
  buildGoalReport,
  groundTruthTurns,
  readRunConfig,
} from "../../../src/eval/goals/report.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";
import { GoalStore } from "../../../src/store/goal-log.js";
import type { JsonValue } from "../../../src/store/search-log.js";
import { conversation, labels } from "../../fixtures/goals/judging.js";

const rcof = builtinTaxonomy("rcof");
const OPTIONS = { resamples: 200, seed: 1 };

let dir: string;
let store: GoalStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-goal-report-"));
  store = GoalStore.open(join(dir, "clade.db"));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const truthTurns = (turns: TurnLabel[]): GroundTruth => ({
  kind: "turns",
  labels: turns.map(({ rationale: _, ...label }) => label),
});
const outcome = (success: boolean): GroundTruth => ({
  kind: "outcome",
  reward: success ? 1 : 0,
  success,
});

interface Seed {
  conversation: Conversation;
  /** Each judge's labels, or its error; absent: the conversation is still pending. */
  judges?: (TurnLabel[] | string)[];
}

/** A job as runGoalJob would leave it: judgements ($0.01 each), then the vote or the error. */
function seed(runId: string, judges: string[], seeds: Seed[]): void {
  store.beginRun(
    runId,
    { judges, taxonomy: rcof as unknown as JsonValue },
    seeds.map((s) => ({
      id: s.conversation.id,
      conversation: s.conversation as unknown as JsonValue,
    })),
  );
  seeds.forEach((s, position) => {
    if (!s.judges) return;
    s.judges.forEach((made, judge) => {
      const ok = typeof made !== "string";
      store.saveJudgement(runId, {
        position,
        judge,
        model: judges[judge] as string,
        status: ok ? "labelled" : "errored",
        labels: ok ? (made as unknown as JsonValue) : null,
        reasoning: ok ? "because" : null,
        error: ok ? null : made,
        rejected: [],
        answers: 1,
        calls: 1,
        inputTokens: 100,
        outputTokens: 10,
        costUsd: 0.01,
        unpriced: false,
        latencyMs: 5,
        cacheHits: 0,
        providerAttempts: 1,
      });
    });
    const errors = s.judges.filter((j): j is string => typeof j === "string");
    if (errors.length > 0) {
      store.setVerdict(runId, position, { status: "errored", error: errors.join("; ") });
      return;
    }
    const { labels: vote, queue } = voteTurns(s.judges as TurnLabel[][]);
    store.setVerdict(runId, position, {
      status: "judged",
      labels: vote as unknown as JsonValue,
      queue: queue as unknown as JsonValue,
    });
  });
}

const JUDGES = ["openai:a", "openai:b", "anthropic:c"];

/**
 * A: ground truth N s | . s | N f E3; judges 1 and 2 say the same, judge 3 N s | . f E1 | N s.
 *    Vote = the truth, nothing queued.
 * B: ground truth N s | N f E4; judges N s | N f E3, N s | N f E4, N s | . s. Vote N s | N f E3,
 *    queued: turn 2's segmentation (true, true, false) and its cause (E3, E4, success).
 * C: errored (judge 2 failed); ground truth N s.
 * D: pending; ground truth N f E2.
 */
function seedTurnJob(): void {
  const gtA = labels("N s", ". s", "N f E3");
  const gtB = labels("N s", "N f E4");
  seed("job", JUDGES, [
    {
      conversation: conversation("A", 3, { groundTruth: truthTurns(gtA) }),
      judges: [gtA, gtA, labels("N s", ". f E1", "N s")],
    },
    {
      conversation: conversation("B", 2, { groundTruth: truthTurns(gtB) }),
      judges: [labels("N s", "N f E3"), labels("N s", "N f E4"), labels("N s", ". s")],
    },
    {
      conversation: conversation("C", 1, { groundTruth: truthTurns(labels("N s")) }),
      judges: [labels("N s"), "judge 2 (openai:b): model call failed: HTTP 503", labels("N s")],
    },
    { conversation: conversation("D", 1, { groundTruth: truthTurns(labels("N f E2")) }) },
  ]);
}

describe("the report of a job with per-turn ground truth", () => {
  it("gives the judges' GSR from the vote, errored conversations apart", () => {
    seedTurnJob();
    const report = buildGoalReport(store, "job", OPTIONS);
    expect(report).toMatchObject({
      runId: "job",
      status: "running",
      stopReason: null,
      taxonomy: "rcof",
      judges: JUDGES,
      counts: { conversations: 4, pending: 1, judged: 1 + 1, errored: 1 },
    });
    const judged = report.judged;
    if (!judged) throw new Error("no judged metrics");
    // A: goals (1-2) success, (3) failure E3; B: (1) success, (2) failure E3 (provisional).
    expect(judged.sessions).toBe(2);
    expect(judged.erroredSessions).toBe(1);
    expect(judged.gsr).toMatchObject({ count: 2, total: 4, percent: 50 });
    expect(judged.multiTurnGsr).toMatchObject({ count: 1, total: 1, percent: 100 });
    expect(judged.turnSuccessRate).toMatchObject({ count: 3, total: 5, percent: 60 });
    expect(judged.failedGoals).toBe(2);
    expect(judged.causes.find((c) => c.code === "E3")).toMatchObject({ count: 2, percent: 100 });
    expect(judged.gsr.interval.low).toBeLessThanOrEqual(50);
    expect(judged.gsr.interval.high).toBeGreaterThanOrEqual(50);
    expect(report.review).toEqual({ queued: 2, open: 2, reviewed: 0 });
    expect(report.human).toBeNull();
    expect(report.errors).toEqual([
      { conversation: "C", error: "judge 2 (openai:b): model call failed: HTTP 503" },
    ]);
    // 3 + 3 + 3 judgements stored (C's failed one included), $0.01 each; D has none.
    expect(report.spend).toMatchObject({
      calls: 9,
      inputTokens: 900,
      outputTokens: 90,
      unpriced: false,
      cacheHits: 0,
    });
    expect(report.spend.costUsd).toBeCloseTo(0.09, 12);
  });

  it("gives the ground truth's GSR over every conversation that carries it", () => {
    seedTurnJob();
    const truth = buildGoalReport(store, "job", OPTIONS).groundTruth;
    // A 1/2, B 1/2, C 1/1, D 0/1.
    expect(truth).toMatchObject({
      turnLevel: true,
      sessions: 4,
      erroredSessions: 0,
      gsr: { count: 3, total: 6, percent: 50 },
      failedGoals: 3,
    });
    expect(truth?.causes.filter((c) => c.count > 0).map((c) => [c.code, c.count])).toEqual([
      ["E2", 1],
      ["E3", 1],
      ["E4", 1],
    ]);
  });

  it("compares each judge and the ensemble with the ground truth, per field", () => {
    seedTurnJob();
    const agreement = buildGoalReport(store, "job", OPTIONS).agreement;
    expect(agreement?.outcome).toBeNull();
    const turns = agreement?.turns;
    if (!turns) throw new Error("no turn agreement");
    const [j1, j2, j3] = turns.judges;
    // Judge 1 vs truth over A and B (C and D have no vote): qualities agree on all 5 turns;
    // is_new_goal on A2, A3, B2 (F/T/T on both sides): κ 1; causes on A3 (E3 = E3) and B2
    // (E3 ≠ E4): 1 of 2, p_e = 1·½ → κ 0.
    expect(j1).toMatchObject({ sessions: 2, turns: 5 });
    expect(j1?.fields.quality).toMatchObject({ items: 5, agreed: 5, accuracy: 1, kappa: 1 });
    expect(j1?.fields.is_new_goal).toMatchObject({ items: 3, agreed: 3, accuracy: 1, kappa: 1 });
    expect(j1?.fields.rcof).toMatchObject({ items: 2, agreed: 1, accuracy: 0.5, kappa: 0 });
    // Judge 2 is the truth itself.
    expect(j2?.fields.rcof).toMatchObject({ items: 2, agreed: 2, accuracy: 1 });
    // Judge 3: quality s/s, f/s, s/f, s/s, s/f → 2 of 5; no turn both call a failure.
    expect(j3?.fields.quality).toMatchObject({ items: 5, agreed: 2, accuracy: 0.4 });
    expect(j3?.fields.is_new_goal).toMatchObject({ items: 3, agreed: 2 });
    expect(j3?.fields.rcof.items).toBe(0);
    expect(j3?.fields.rcof.accuracy).toBeNaN();
    // The vote (no reviews yet) is judge 1's labels.
    expect(turns.ensemble.fields).toEqual(j1?.fields);
  });

  it("gives Fleiss' κ among the judges", () => {
    seedTurnJob();
    const among = buildGoalReport(store, "job", OPTIONS).among;
    /*
     * quality over A1 sss, A2 ssf, A3 ffs, B1 sss, B2 ffs: P_i = 1, ⅓, ⅓, 1, ⅓ → P̄ = 0.6;
     * p_s = 10/15, p_f = 5/15 → P̄_e = 5/9; κ = (0.6 − 5/9)/(4/9) = 0.1.
     */
    expect(among).toMatchObject({ labellers: 3, sessions: 2, turns: 5 });
    expect(among?.fields.quality.items).toBe(5);
    expect(among?.fields.quality.unanimous).toBe(2);
    expect(among?.fields.quality.kappa).toBeCloseTo(0.1, 12);
  });

  it("applies the reviews: GSR, queue, ensemble agreement and the judges against the reviewers", () => {
    seedTurnJob();
    const review = (
      position: number,
      turnNumber: number,
      field: "is_new_goal" | "quality" | "rcof",
      value: JsonValue,
    ) => store.addReview("job", { position, turnNumber, field, value, reviewer: "ana" });
    review(1, 2, "rcof", "E3");
    review(1, 2, "rcof", "E4"); // changed its mind: the latest is in force
    review(1, 2, "is_new_goal", false);
    review(0, 3, "quality", "success");
    const report = buildGoalReport(store, "job", OPTIONS);
    // A: N s | . s | N s → 2 goals, both succeed; B: N s | . f E4 → 1 multi-turn goal, failed.
    expect(report.judged?.gsr).toMatchObject({ count: 2, total: 3 });
    expect(report.judged?.gsr.percent).toBeCloseTo(200 / 3, 10);
    expect(report.judged?.multiTurnGsr).toMatchObject({ count: 1, total: 2, percent: 50 });
    expect(report.judged?.causes.filter((c) => c.count > 0).map((c) => c.code)).toEqual(["E4"]);
    expect(report.review).toEqual({ queued: 2, open: 0, reviewed: 2 });
    // The ensemble (reviewed) against the truth: B2's cause is now E4 = truth; A3 a success ≠ truth.
    const ensemble = report.agreement?.turns?.ensemble;
    expect(ensemble?.fields.quality).toMatchObject({ items: 5, agreed: 4 });
    expect(ensemble?.fields.rcof).toMatchObject({ items: 1, agreed: 1 });
    // B2 now continues the goal (false) where the truth starts one (true).
    expect(ensemble?.fields.is_new_goal).toMatchObject({ items: 3, agreed: 2 });
    // The judges' own labels are unchanged by reviews: Fleiss' κ too.
    expect(report.among?.fields.quality.kappa).toBeCloseTo(0.1, 12);

    // Against the reviewers (3 fields in force): A3 quality success; B2 rcof E4; B2 segment false.
    const human = report.human;
    expect(human?.reviews).toBe(3);
    const got = human?.judges.map((fields) => [
      fields.quality.agreed,
      fields.rcof.agreed,
      fields.is_new_goal.agreed,
    ]);
    // judge 1: f≠s, E3≠E4, true≠false; judge 2: f≠s, E4=E4, true≠false; judge 3: s=s,
    // success≠E4, false=false.
    expect(got).toEqual([
      [0, 0, 0],
      [0, 1, 0],
      [1, 0, 1],
    ]);
    expect(human?.judges.every((f) => f.quality.items === 1 && f.rcof.items === 1)).toBe(true);
    expect(human?.judges[2]?.quality.accuracy).toBe(1);
    // The vote as cast (f for A3, E3 the first-listed of a three-way split, true for B2): the
    // reviewers overturned all three.
    expect(human?.ensemble).toMatchObject({
      quality: { items: 1, agreed: 0 },
      rcof: { items: 1, agreed: 0 },
      is_new_goal: { items: 1, agreed: 0 },
    });
  });
});

describe("the report of a job with outcome ground truth (τ-bench)", () => {
  /**
   * T1 ✓, T2 ✗, T3 ✓, T4 ✗ by reward. Judge 1 sees a failure in T2, T3 and T4; judge 2 only in
   * T4. Two judges: where they split, the vote keeps judge 1's value (and queues it).
   */
  function seedTau(): void {
    const ok = labels("N s", ". s");
    seed(
      "tau",
      ["openai:a", "openai:b"],
      [
        { conversation: conversation("T1", 2, { groundTruth: outcome(true) }), judges: [ok, ok] },
        {
          conversation: conversation("T2", 2, { groundTruth: outcome(false) }),
          judges: [labels("N s", ". f E5"), ok],
        },
        {
          conversation: conversation("T3", 2, { groundTruth: outcome(true) }),
          judges: [labels("N f E1", ". s"), ok],
        },
        {
          conversation: conversation("T4", 2, { groundTruth: outcome(false) }),
          judges: [labels("N s", ". f E5"), labels("N s", ". f E5")],
        },
      ],
    );
  }

  it("compares outcomes, not turns, and says the ground truth is not turn-level", () => {
    seedTau();
    const report = buildGoalReport(store, "tau", OPTIONS);
    // One goal per conversation; its failure unattributed.
    expect(report.groundTruth).toMatchObject({
      turnLevel: false,
      gsr: { count: 2, total: 4, percent: 50 },
      failedGoals: 2,
      unattributed: { count: 2, percent: 100 },
    });
    expect(report.agreement?.turns).toBeNull();
    const result = report.agreement?.outcome;
    if (!result) throw new Error("no outcome agreement");
    /*
     * judge 1: ✓✗✗✗ vs ✓✗✓✗ → 3 of 4; p_e = ¼·½ + ¾·½ = ½ → κ = (¾ − ½)/½ = 0.5.
     * judge 2: ✓✓✓✗ vs ✓✗✓✗ → 3 of 4; p_e = ¾·½ + ¼·½ = ½ → κ = 0.5.
     */
    expect(result.judges).toEqual([
      { items: 4, agreed: 3, accuracy: 0.75, kappa: 0.5 },
      { items: 4, agreed: 3, accuracy: 0.75, kappa: 0.5 },
    ]);
    expect(result.ensemble).toEqual({ items: 4, agreed: 3, accuracy: 0.75, kappa: 0.5 });
    // The judges' GSR: one goal per conversation, judge 1's failures won the splits: only T1
    // succeeds → 1 of 4; each split turn is queued (quality and cause).
    expect(report.judged?.gsr).toMatchObject({ count: 1, total: 4 });
    expect(report.review.queued).toBe(4);
  });

  it("turns an outcome into one goal, its failure on the last turn", () => {
    const failed = groundTruthTurns(conversation("x", 3, { groundTruth: outcome(false) }));
    expect(failed).toEqual([
      { turn_number: 1, is_new_goal: true, quality: "success", rcof: null },
      { turn_number: 2, is_new_goal: false, quality: "success", rcof: null },
      { turn_number: 3, is_new_goal: false, quality: "failure", rcof: null },
    ]);
    const won = groundTruthTurns(conversation("y", 2, { groundTruth: outcome(true) }));
    expect(won?.every((t) => t.quality === "success")).toBe(true);
    expect(groundTruthTurns(conversation("z", 2))).toBeUndefined();
  });
});

describe("reports without judges or without ground truth", () => {
  it("with no judges, give the ground truth alone", () => {
    seed(
      "truth-only",
      [],
      [
        { conversation: conversation("A", 1, { groundTruth: truthTurns(labels("N s")) }) },
        { conversation: conversation("B", 1, { groundTruth: truthTurns(labels("N f E7")) }) },
      ],
    );
    const report = buildGoalReport(store, "truth-only", OPTIONS);
    expect(report.judged).toBeNull();
    expect(report.agreement).toBeNull();
    expect(report.among).toBeNull();
    expect(report.human).toBeNull();
    expect(report.groundTruth?.gsr).toMatchObject({ count: 1, total: 2, percent: 50 });
    expect(report.spend).toMatchObject({ costUsd: 0, calls: 0 });
  });

  it("with no ground truth, give the judges alone", () => {
    seed(
      "judges-only",
      ["openai:a", "openai:b", "openai:c"],
      [
        {
          conversation: conversation("A", 1),
          judges: [labels("N s"), labels("N s"), labels("N f E2")],
        },
      ],
    );
    const report = buildGoalReport(store, "judges-only", OPTIONS);
    expect(report.groundTruth).toBeNull();
    expect(report.agreement).toBeNull();
    expect(report.judged?.gsr).toMatchObject({ count: 1, total: 1, percent: 100 });
    expect(report.among?.fields.quality).toMatchObject({ items: 1, unanimous: 0 });
  });

  it("counts ground-truth causes outside the job's taxonomy as they came", () => {
    // Helpdesk's RCOF causes, judged under MAST: the report shows them rather than failing.
    const mast = builtinTaxonomy("mast");
    store.beginRun("mast", { judges: [], taxonomy: mast as unknown as JsonValue }, [
      {
        id: "A",
        conversation: conversation("A", 2, {
          groundTruth: truthTurns(labels("N s", "N f E2")),
        }) as unknown as JsonValue,
      },
    ]);
    const truth = buildGoalReport(store, "mast", OPTIONS).groundTruth;
    expect(truth?.taxonomy).toBe("mast");
    expect(truth?.gsr).toMatchObject({ count: 1, total: 2 });
    expect(truth?.causes.map((c) => c.code)).toEqual([...mast.codes.map((c) => c.code), "E2"]);
    expect(truth?.causes.at(-1)).toMatchObject({ code: "E2", count: 1, percent: 100 });
  });

  it("is the same for the same seed", () => {
    seedTurnJob();
    expect(buildGoalReport(store, "job", OPTIONS)).toEqual(buildGoalReport(store, "job", OPTIONS));
  });

  it("refuses an unknown job and a stored taxonomy that does not validate", () => {
    expect(() => buildGoalReport(store, "nope")).toThrow(/no goal evaluation "nope"/);
    expect(() => readRunConfig({ judges: ["a"], taxonomy: { name: "x" } }, "r1")).toThrow(
      /^goal evaluation r1: stored taxonomy: codes: /,
    );
    expect(readRunConfig({ judges: ["a", "b"], taxonomy: rcof as never }, "r1")).toEqual({
      judges: ["a", "b"],
      taxonomy: rcof,
    });
  });
});
