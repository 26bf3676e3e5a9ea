import { describe, expect, it } from "vitest";
import {
  agreementAmong,
  agreementWithReference,
  cohensKappa,
  fleissKappa,
  formatKappa,
  type SessionTurns,
  voteTurns,
} from "../../../src/eval/goals/agreement.js";
import { checkTurnLabels, type TurnLabel } from "../../../src/eval/goals/labels.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";

/** "N s" / ". f E3": is_new_goal (N new, . continues), quality (s/f), cause. */
function turns(...specs: string[]): TurnLabel[] {
  return specs.map((spec, i) => {
    const [goal, quality, cause] = spec.split(" ");
    return {
      turn_number: i + 1,
      is_new_goal: goal === "N",
      quality: quality === "f" ? "failure" : "success",
      rcof: cause ?? null,
      rationale: `why ${spec}`,
    };
  });
}

const pairs = (spec: [string, string, number][]): [string, string][] =>
  spec.flatMap(([a, b, n]) => Array.from({ length: n }, (): [string, string] => [a, b]));

describe("Cohen's κ", () => {
  it("matches a 2×2 table worked by hand", () => {
    /*
     *            B yes  B no
     *   A yes      4      1     A yes 5/10
     *   A no       2      3     A no  5/10
     *   B yes 6/10, B no 4/10
     * p_o = (4 + 3)/10 = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5)/(1 − 0.5) = 0.4
     */
    const table = pairs([
      ["yes", "yes", 4],
      ["yes", "no", 1],
      ["no", "yes", 2],
      ["no", "no", 3],
    ]);
    expect(cohensKappa(table)).toBeCloseTo(0.4, 12);
    expect(formatKappa(cohensKappa(table))).toBe("0.400");
  });

  it("is 1 for perfect agreement over two classes and 0 at chance", () => {
    expect(
      cohensKappa(
        pairs([
          ["a", "a", 3],
          ["b", "b", 2],
        ]),
      ),
    ).toBe(1);
    // A says yes to all; B is split: p_o = 0.5 = p_e = 1·0.5 → κ = 0.
    expect(
      cohensKappa(
        pairs([
          ["yes", "yes", 2],
          ["yes", "no", 2],
        ]),
      ),
    ).toBe(0);
  });

  it("is NaN (n/a) when every label is one class, or nothing is compared", () => {
    const allOne = cohensKappa(pairs([["success", "success", 5]]));
    expect(allOne).toBeNaN();
    expect(formatKappa(allOne)).toBe("n/a");
    expect(cohensKappa([])).toBeNaN();
  });
});

describe("Fleiss' κ", () => {
  it("matches a 4-item, 3-rater example worked by hand", () => {
    /*
     * items: (s s s) (s s f) (f f f) (s f f); m = 3
     * P_i = (Σ n_ij² − 3)/6: (9 − 3)/6 = 1, (4 + 1 − 3)/6 = 1/3, 1, 1/3 → P̄ = (8/3)/4 = 2/3
     * p_s = 6/12, p_f = 6/12 → P̄_e = 0.25 + 0.25 = 0.5
     * κ = (2/3 − 1/2)/(1 − 1/2) = 1/3
     */
    const ratings = [
      ["s", "s", "s"],
      ["s", "s", "f"],
      ["f", "f", "f"],
      ["s", "f", "f"],
    ];
    expect(fleissKappa(ratings)).toBeCloseTo(1 / 3, 12);
  });

  it("is NaN (n/a) when every rating is one class, and refuses uneven raters", () => {
    expect(
      fleissKappa([
        ["s", "s", "s"],
        ["s", "s", "s"],
      ]),
    ).toBeNaN();
    expect(fleissKappa([])).toBeNaN();
    expect(() => fleissKappa([["s", "s"], ["s"]])).toThrow(RangeError);
    expect(() => fleissKappa([["s"], ["f"]])).toThrow(RangeError);
  });
});

describe("agreement with reference labels", () => {
  const reference: SessionTurns[] = [
    { id: "r1", turns: turns("N s", ". f E3", "N f E4", ". s") },
    { id: "r2", turns: turns("N f E2", ". s") },
  ];
  const judge: SessionTurns[] = [
    { id: "r1", turns: turns("N s", "N f E3", "N f E1", ". f E5") },
    { id: "r2", turns: turns("N f E2", ". s") },
    { id: "only-judged", turns: turns("N s") },
  ];

  it("gives per-field accuracy and κ worked by hand", () => {
    const result = agreementWithReference(judge, reference);
    expect(result.sessions).toBe(2);
    expect(result.turns).toBe(6);
    /*
     * is_new_goal, turns after the first (judge, reference): (T,F) (T,T) (F,F) | (F,F)
     * accuracy 3/4; judge T 2/4, reference T 1/4: p_e = ½·¼ + ½·¾ = ½; κ = (¾ − ½)/½ = ½
     */
    expect(result.fields.is_new_goal).toMatchObject({ items: 4, agreed: 3, accuracy: 0.75 });
    expect(result.fields.is_new_goal.kappa).toBeCloseTo(0.5, 12);
    /*
     * quality over all 6 turns: (s,s) (f,f) (f,f) (f,s) | (f,f) (s,s): accuracy 5/6
     * judge f 4/6, reference f 3/6: p_e = (4/6)(3/6) + (2/6)(3/6) = ½; κ = (5/6 − ½)/½ = 2/3
     */
    expect(result.fields.quality).toMatchObject({ items: 6, agreed: 5 });
    expect(result.fields.quality.accuracy).toBeCloseTo(5 / 6, 12);
    expect(result.fields.quality.kappa).toBeCloseTo(2 / 3, 12);
    /*
     * rcof, only on turns both call failures: (E3,E3) (E1,E4) | (E2,E2) — not turn 4 of r1,
     * which only the judge failed. accuracy 2/3; p_e = ⅓·⅓ (E3) + ⅓·⅓ (E2) = 2/9;
     * κ = (2/3 − 2/9)/(1 − 2/9) = 4/7
     */
    expect(result.fields.rcof).toMatchObject({ items: 3, agreed: 2 });
    expect(result.fields.rcof.accuracy).toBeCloseTo(2 / 3, 12);
    expect(result.fields.rcof.kappa).toBeCloseTo(4 / 7, 12);
  });

  it("compares against ground truth that has no rationales", () => {
    const truth = reference.map((s) => ({
      id: s.id,
      turns: s.turns.map((t) => ({
        turn_number: t.turn_number,
        is_new_goal: t.is_new_goal,
        quality: t.quality,
        rcof: t.rcof,
      })),
    }));
    expect(agreementWithReference(judge, truth)).toEqual(agreementWithReference(judge, reference));
  });

  it("reports κ n/a, not a crash, when everything is one class", () => {
    const same = [{ id: "a", turns: turns("N s", ". s") }];
    const result = agreementWithReference(same, same);
    expect(result.fields.quality).toMatchObject({ items: 2, agreed: 2, accuracy: 1 });
    expect(formatKappa(result.fields.quality.kappa)).toBe("n/a");
    expect(result.fields.rcof.items).toBe(0);
    expect(result.fields.rcof.accuracy).toBeNaN();
    expect(formatKappa(result.fields.rcof.kappa)).toBe("n/a");
  });

  it("refuses sessions whose turn counts differ", () => {
    expect(() =>
      agreementWithReference(
        [{ id: "a", turns: turns("N s") }],
        [{ id: "a", turns: turns("N s", ". s") }],
      ),
    ).toThrow("session a: labelling 2 has 2 turns, labelling 1 has 1");
  });
});

describe("agreement among judges", () => {
  it("gives Fleiss' κ per field, worked by hand", () => {
    // Quality ratings per turn are the hand-worked Fleiss example above: κ = 1/3.
    const a = [{ id: "c", turns: turns("N s", ". s", "N f E3", ". s") }];
    const b = [{ id: "c", turns: turns("N s", ". s", "N f E3", ". f E1") }];
    const c = [{ id: "c", turns: turns("N s", ". f E2", "N f E4", ". f E1") }];
    const result = agreementAmong([a, b, c]);
    expect(result).toMatchObject({ labellers: 3, sessions: 1, turns: 4 });
    expect(result.fields.quality).toMatchObject({ items: 4, unanimous: 2 });
    expect(result.fields.quality.kappa).toBeCloseTo(1 / 3, 12);
    /*
     * is_new_goal on turns 2–4, unanimous (F) (T) (F): P̄ = 1; p_T = 3/9, p_F = 6/9,
     * P̄_e = 1/9 + 4/9 = 5/9; κ = (1 − 5/9)/(1 − 5/9) = 1
     */
    expect(result.fields.is_new_goal).toMatchObject({ items: 3, unanimous: 3, kappa: 1 });
    /*
     * rcof only on turn 3 (all three call it a failure): (E3 E3 E4): P = (4 + 1 − 3)/6 = 1/3;
     * p_E3 = 2/3, p_E4 = 1/3: P̄_e = 5/9; κ = (1/3 − 5/9)/(4/9) = −1/2
     */
    expect(result.fields.rcof).toMatchObject({ items: 1, unanimous: 0 });
    expect(result.fields.rcof.kappa).toBeCloseTo(-0.5, 12);
  });

  it("needs at least two labellers", () => {
    expect(() => agreementAmong([[{ id: "c", turns: turns("N s") }]])).toThrow(RangeError);
  });
});

describe("voteTurns", () => {
  it("accepts 2-of-3 majorities per field and queues nothing", () => {
    const { labels, queue } = voteTurns([
      turns("N s", ". f E3", "N s"),
      turns("N s", ". f E3", "N s"),
      turns("N s", ". s", "N f E1"),
    ]);
    expect(queue).toEqual([]);
    expect(labels.map((l) => [l.is_new_goal, l.quality, l.rcof])).toEqual([
      [true, "success", null],
      [false, "failure", "E3"],
      [true, "success", null],
    ]);
    // The rationale comes from the first judge whose label won.
    expect(labels[1]?.rationale).toBe("why . f E3");
    expect(labels[2]?.rationale).toBe("why N s");
  });

  it("queues a three-way split of the cause, keeping the first judge's cause for now", () => {
    const { labels, queue } = voteTurns([
      turns("N s", ". f E3"),
      turns("N s", ". f E4"),
      turns("N s", ". s"),
    ]);
    expect(labels[1]).toMatchObject({ quality: "failure", rcof: "E3", rationale: "why . f E3" });
    expect(queue).toEqual([
      {
        turn_number: 2,
        field: "rcof",
        reason: "three-way disagreement: rcof E3 (1), E4 (2), (success) (3)",
      },
    ]);
    const allFail = voteTurns([turns("N f E5"), turns("N f E1"), turns("N f E1")]);
    expect(allFail.labels[0]?.rcof).toBe("E1");
    expect(allFail.queue).toEqual([]);
    const threeCauses = voteTurns([turns("N f E5"), turns("N f E1"), turns("N f E2")]);
    expect(threeCauses.labels[0]?.rcof).toBe("E5");
    expect(threeCauses.queue.map((q) => q.field)).toEqual(["rcof"]);
  });

  it("queues any segmentation disagreement, even a 2-of-3 one", () => {
    const { labels, queue } = voteTurns([
      turns("N s", "N s"),
      turns("N s", "N s"),
      turns("N s", ". s"),
    ]);
    expect(labels[1]?.is_new_goal).toBe(true);
    expect(queue).toEqual([
      {
        turn_number: 2,
        field: "is_new_goal",
        reason: "segmentation disagreement: is_new_goal true (1, 2), false (3)",
      },
    ]);
  });

  it("never queues the first turn's is_new_goal, which is true by definition", () => {
    const { labels, queue } = voteTurns([turns(". s"), turns("N s"), turns(". s")]);
    expect(labels[0]?.is_new_goal).toBe(true);
    expect(queue).toEqual([]);
  });

  it("queues a tie between two judges on quality and cause", () => {
    const { labels, queue } = voteTurns([turns("N f E2"), turns("N s")]);
    expect(labels[0]).toMatchObject({ quality: "failure", rcof: "E2" });
    expect(queue.map((q) => [q.field, q.reason])).toEqual([
      ["quality", "no majority: quality failure (1), success (2)"],
      ["rcof", "no majority: rcof E2 (1), (success) (2)"],
    ]);
  });

  it("gives labels that pass the label rules, and refuses uneven labellings", () => {
    const { labels } = voteTurns([
      turns("N s", ". f E3", "N f E6"),
      turns("N s", "N f E4", "N f E6"),
      turns(". s", ". f E5", ". s"),
    ]);
    expect(() => checkTurnLabels(labels, { taxonomy: builtinTaxonomy("rcof") })).not.toThrow();
    expect(() => voteTurns([turns("N s"), turns("N s", ". s")])).toThrow(RangeError);
    expect(() => voteTurns([])).toThrow(RangeError);
  });
});
