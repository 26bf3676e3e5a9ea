/**
 * Human review: reviewers' values are checked per field, the latest review of a field is the one
 * in force, reviews override the vote (a success has no cause, turn 1 always starts a goal), and
 * a queued field leaves the queue once reviewed.
 */
import { describe, expect, it } from "vitest";
import type { ReviewItem } from "../../../src/eval/goals/agreement.js";
import {
  applyReviews,
  checkReviewValue,
  fieldValue,
  latestReviews,
  openItems,
  ReviewValueError,
  type TurnReview,
} from "../../../src/eval/goals/review.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";
import { labels } from "../../fixtures/goals/judging.js";

const rcof = builtinTaxonomy("rcof");

let clock = 0;
function review(
  turn: number,
  field: TurnReview["field"],
  value: TurnReview["value"],
  reviewer = "ana",
): TurnReview {
  clock++;
  return {
    turn_number: turn,
    field,
    value,
    reviewer,
    at: `2026-01-01T00:00:${String(clock).padStart(2, "0")}Z`,
  };
}

describe("checkReviewValue", () => {
  it("accepts each field's values", () => {
    expect(checkReviewValue("is_new_goal", true, rcof, 1)).toBe(true);
    expect(checkReviewValue("is_new_goal", false, rcof, 2)).toBe(false);
    expect(checkReviewValue("quality", "success", rcof, 1)).toBe("success");
    expect(checkReviewValue("quality", "failure", rcof, 3)).toBe("failure");
    expect(checkReviewValue("rcof", "E7", rcof, 2)).toBe("E7");
    // No cause: a failure left unattributed.
    expect(checkReviewValue("rcof", null, rcof, 2)).toBeNull();
  });

  it.each<[string, Parameters<typeof checkReviewValue>[0], unknown, number, string]>([
    ["a string for is_new_goal", "is_new_goal", "true", 2, "is_new_goal takes true or false"],
    [
      "turn 1 not starting a goal",
      "is_new_goal",
      false,
      1,
      "turn 1 always starts a goal: is_new_goal must be true",
    ],
    ["another quality", "quality", "partial", 1, 'quality takes "success" or "failure"'],
    ["no quality", "quality", null, 1, 'quality takes "success" or "failure"'],
    [
      "a code of another taxonomy",
      "rcof",
      "X1",
      2,
      "rcof takes a code of taxonomy rcof (E1, E2, E3, E4, E5, E6, E7) or null",
    ],
    [
      "a number for rcof",
      "rcof",
      3,
      2,
      "rcof takes a code of taxonomy rcof (E1, E2, E3, E4, E5, E6, E7) or null",
    ],
  ])("refuses %s in one line", (_, field, value, turn, message) => {
    expect(() => checkReviewValue(field, value, rcof, turn)).toThrow(ReviewValueError);
    expect(() => checkReviewValue(field, value, rcof, turn)).toThrow(message);
  });

  it("checks codes against the job's taxonomy", () => {
    const tau = builtinTaxonomy("tau");
    const code = tau.codes[0]?.code as string;
    expect(checkReviewValue("rcof", code, tau, 2)).toBe(code);
    expect(() => checkReviewValue("rcof", "E3", tau, 2)).toThrow(/taxonomy tau/);
  });
});

describe("latestReviews", () => {
  it("keeps the last review of each turn and field", () => {
    const reviews = [
      review(2, "rcof", "E3", "ana"),
      review(2, "quality", "failure", "ana"),
      review(2, "rcof", "E4", "ben"),
      review(3, "rcof", "E1", "ana"),
    ];
    const latest = latestReviews(reviews);
    expect([...latest.keys()].sort()).toEqual(["2:quality", "2:rcof", "3:rcof"]);
    expect(latest.get("2:rcof")).toMatchObject({ value: "E4", reviewer: "ben" });
  });
});

describe("applyReviews", () => {
  const vote = labels("N s", ". f E3", "N s", ". f E4");

  it("leaves the vote as it is without reviews (a copy)", () => {
    const out = applyReviews(vote, []);
    expect(out).toEqual(vote);
    expect(out[1]).not.toBe(vote[1]);
  });

  it("takes the latest review of each field over the vote", () => {
    const out = applyReviews(vote, [
      review(2, "rcof", "E1"),
      review(2, "rcof", "E2", "ben"),
      review(3, "is_new_goal", false),
      review(4, "quality", "success"),
    ]);
    expect(out.map((l) => [l.is_new_goal, l.quality, l.rcof])).toEqual([
      [true, "success", null],
      [false, "failure", "E2"],
      [false, "success", null],
      // Reviewed a success: its cause goes.
      [false, "success", null],
    ]);
    // The rationale stays the vote's.
    expect(out[1]?.rationale).toBe("why . f E3");
    // The vote itself is untouched.
    expect(vote[1]?.rcof).toBe("E3");
  });

  it("makes a success reviewed as a failure unattributed, unless a cause is reviewed too", () => {
    expect(applyReviews(vote, [review(1, "quality", "failure")])[0]).toMatchObject({
      quality: "failure",
      rcof: null,
    });
    expect(
      applyReviews(vote, [review(1, "quality", "failure"), review(1, "rcof", "E5")])[0],
    ).toMatchObject({ quality: "failure", rcof: "E5" });
    // A cause reviewed away: unattributed failure.
    expect(applyReviews(vote, [review(2, "rcof", null)])[1]).toMatchObject({
      quality: "failure",
      rcof: null,
    });
  });

  it("ignores a cause given for a turn that stays a success", () => {
    expect(applyReviews(vote, [review(3, "rcof", "E1")])[2]).toMatchObject({
      quality: "success",
      rcof: null,
    });
  });

  it("keeps turn 1 starting a goal whatever a review says", () => {
    const out = applyReviews(vote, [review(1, "is_new_goal", false)]);
    expect(out[0]?.is_new_goal).toBe(true);
  });

  it("ignores a value of the wrong type for its field", () => {
    const out = applyReviews(vote, [review(2, "quality", true), review(3, "is_new_goal", "no")]);
    expect(out).toEqual(vote);
  });
});

describe("openItems", () => {
  const queue: ReviewItem[] = [
    { turn_number: 2, field: "is_new_goal", reason: "segmentation disagreement" },
    { turn_number: 2, field: "rcof", reason: "three-way disagreement" },
    { turn_number: 4, field: "rcof", reason: "three-way disagreement" },
  ];

  it("are the queued fields no review has settled", () => {
    expect(openItems(queue, [])).toEqual(queue);
    expect(openItems(queue, [review(2, "rcof", "E3")])).toEqual([queue[0], queue[2]]);
    // A review of another field of the turn does not settle it.
    expect(openItems(queue, [review(4, "quality", "failure")])).toEqual(queue);
    // A review of an unqueued field is kept, but settles nothing.
    expect(openItems(queue, [review(3, "quality", "success")])).toEqual(queue);
    // A review that agrees with the vote settles the item all the same.
    expect(
      openItems(queue, [
        review(2, "is_new_goal", false),
        review(2, "rcof", null),
        review(4, "rcof", "E4"),
      ]),
    ).toEqual([]);
  });

  it("settles a queued cause when the reviewer calls the turn a success", () => {
    // The turn has no cause to decide once it succeeded.
    expect(openItems(queue, [review(4, "quality", "success")])).toEqual([queue[0], queue[1]]);
  });
});

describe("fieldValue", () => {
  it("reads each field of a label", () => {
    const [label] = labels("N f E6");
    if (!label) throw new Error("no label");
    expect(fieldValue(label, "is_new_goal")).toBe(true);
    expect(fieldValue(label, "quality")).toBe("failure");
    expect(fieldValue(label, "rcof")).toBe("E6");
  });
});
