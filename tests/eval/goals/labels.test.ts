import { describe, expect, it } from "vitest";
import {
  checkTurnLabels,
  LabelError,
  parseDialogLabels,
  parseJudgeAnswer,
  type TurnLabel,
} from "../../../src/eval/goals/labels.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";

const taxonomy = builtinTaxonomy("rcof");

/** The LabelError a call throws, checked to be one line. */
function labelError(call: () => unknown): LabelError {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(LabelError);
    expect((error as Error).message).not.toContain("\n");
    return error as LabelError;
  }
  throw new Error("expected a LabelError");
}

const turn = (n: number, fields: Partial<TurnLabel> = {}): TurnLabel => ({
  turn_number: n,
  is_new_goal: n === 1,
  quality: "success",
  rcof: null,
  rationale: `turn ${n}`,
  ...fields,
});

describe("judge answers", () => {
  it("parse the published shape; an absent rcof on a success reads as null", () => {
    const checked = parseJudgeAnswer(
      {
        turns: [
          { turn_number: 1, is_new_goal: true, quality: "success", rationale: "answered" },
          {
            turn_number: 2,
            is_new_goal: false,
            quality: "failure",
            rcof: "E3",
            rationale: "wrong passage",
            confidence: 0.9,
          },
        ],
      },
      { taxonomy },
    );
    expect(checked.normalised).toEqual([]);
    expect(checked.turns).toEqual([
      { turn_number: 1, is_new_goal: true, quality: "success", rcof: null, rationale: "answered" },
      {
        turn_number: 2,
        is_new_goal: false,
        quality: "failure",
        rcof: "E3",
        rationale: "wrong passage",
      },
    ]);
  });

  it("set a first turn's is_new_goal to true and record it", () => {
    const input = [turn(1, { is_new_goal: false }), turn(2)];
    const checked = checkTurnLabels(input, { taxonomy });
    expect(checked.turns[0]?.is_new_goal).toBe(true);
    expect(checked.normalised).toEqual([
      {
        turn_number: 1,
        field: "is_new_goal",
        from: false,
        to: true,
        reason: "the first turn always starts a goal",
      },
    ]);
    // The input is left as it was.
    expect(input[0]?.is_new_goal).toBe(false);
  });

  it("reject a failure without a cause, naming the turn and field", () => {
    const error = labelError(() =>
      checkTurnLabels([turn(1), turn(2, { quality: "failure" })], { taxonomy }),
    );
    expect(error.message).toBe('turn 2: rcof: required when quality is "failure"');
    expect(error.turnNumber).toBe(2);
    expect(error.field).toBe("rcof");
  });

  it("accept a failure without a cause when the source has none (ground truth)", () => {
    const checked = checkTurnLabels([turn(1, { quality: "failure" })], {
      taxonomy,
      allowMissingCause: true,
    });
    expect(checked.turns[0]?.rcof).toBeNull();
  });

  it("reject a cause on a success, and a cause outside the taxonomy", () => {
    expect(labelError(() => checkTurnLabels([turn(1, { rcof: "E2" })], { taxonomy })).message).toBe(
      'turn 1: rcof: must be null when quality is "success", got "E2"',
    );
    expect(
      labelError(() =>
        checkTurnLabels([turn(1), turn(2, { quality: "failure", rcof: "E9" })], {
          taxonomy,
          source: "judge openai:gpt-4o",
        }),
      ).message,
    ).toBe(
      'judge openai:gpt-4o: turn 2: rcof: "E9" is not a code of taxonomy rcof (E1, E2, E3, E4, E5, E6, E7)',
    );
    // A τ-bench code is not an RCOF code, and the other way round.
    const tau = builtinTaxonomy("tau");
    expect(() =>
      checkTurnLabels([turn(1, { quality: "failure", rcof: "agent/wrong_tool" })], {
        taxonomy: tau,
      }),
    ).not.toThrow();
    expect(
      labelError(() =>
        checkTurnLabels([turn(1, { quality: "failure", rcof: "E1" })], { taxonomy: tau }),
      ).field,
    ).toBe("rcof");
  });

  it("reject turn numbers that are not 1..n in order, and the wrong number of turns", () => {
    expect(labelError(() => checkTurnLabels([turn(1), turn(3)], { taxonomy })).message).toBe(
      "turns[1]: turn_number: expected 2 (turns are numbered 1..n in order), got 3",
    );
    expect(labelError(() => checkTurnLabels([turn(2), turn(1)], { taxonomy })).message).toBe(
      "turns[0]: turn_number: expected 1 (turns are numbered 1..n in order), got 2",
    );
    expect(
      labelError(() => checkTurnLabels([turn(1), turn(2)], { taxonomy, expectedTurns: 3 })).message,
    ).toBe("labels: turns: expected 3 turns (one per turn of the conversation), got 2");
    expect(labelError(() => parseJudgeAnswer({ turns: [] }, { taxonomy })).message).toBe(
      "labels: turns: at least one turn is needed",
    );
  });

  it("report shape errors as one line naming the turn and field", () => {
    const bad = labelError(() =>
      parseJudgeAnswer(
        { turns: [turn(1), { ...turn(2), quality: "ok" }] },
        { taxonomy, source: "conversation c7" },
      ),
    );
    expect(bad.message).toMatch(/^conversation c7: turn 2: quality: /);
    expect(bad.turnNumber).toBe(2);
    expect(bad.field).toBe("quality");

    const noNumber = labelError(() =>
      parseJudgeAnswer({ turns: [{ ...turn(1), turn_number: "one" }] }, { taxonomy }),
    );
    expect(noNumber.message).toMatch(/^turns\[0\]: turn_number: /);

    const noRationale = labelError(() =>
      parseJudgeAnswer(
        { turns: [{ turn_number: 1, is_new_goal: true, quality: "success" }] },
        {
          taxonomy,
        },
      ),
    );
    expect(noRationale.message).toMatch(/^turn 1: rationale: /);

    expect(labelError(() => parseJudgeAnswer({ labels: [] }, { taxonomy })).message).toMatch(
      /^labels: turns: /,
    );
    expect(labelError(() => parseJudgeAnswer("not an object", { taxonomy })).field).toBe(
      "(top level)",
    );
  });
});

describe("the reference's {dialog_id, turns} variant", () => {
  it("reads numeric ids as text", () => {
    const checked = parseDialogLabels({ dialog_id: 17, turns: [turn(1)] }, { taxonomy });
    expect(checked.dialog_id).toBe("17");
    expect(checked.turns).toHaveLength(1);
  });

  it("names the dialog in a rule's error", () => {
    expect(
      labelError(() =>
        parseDialogLabels(
          { dialog_id: "d-3", turns: [turn(1), turn(2, { quality: "failure" })] },
          { taxonomy },
        ),
      ).message,
    ).toBe('dialog d-3: turn 2: rcof: required when quality is "failure"');
    expect(labelError(() => parseDialogLabels({ turns: [turn(1)] }, { taxonomy })).message).toMatch(
      /^labels: dialog_id: /,
    );
  });
});
