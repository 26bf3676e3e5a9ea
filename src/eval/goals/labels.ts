/**
 * Per-turn labels of a conversation, in the published judge output shape (snake_case, as
 * "Mind the Goal" prints it): `{dialog_id, turns: [{turn_number, is_new_goal, quality, rcof,
 * rationale}]}`. The schemas check the shape; `checkTurnLabels` checks the rules that tie turns
 * together, so a judge's answer, an import's ground truth and a reviewer's label pass one gate.
 */
import { z } from "zod";
import { findCode, type Taxonomy, taxonomyCodes } from "./taxonomy.js";

export const QUALITIES = ["success", "failure"] as const;
export type Quality = (typeof QUALITIES)[number];

export const turnLabelSchema = z.object({
  turn_number: z.number().int().min(1),
  is_new_goal: z.boolean(),
  quality: z.enum(QUALITIES),
  // An absent rcof reads as null: on a success that is what the shape asks for, and on a
  // failure the rule below still demands a code.
  rcof: z.string().nullable().default(null),
  rationale: z.string(),
});

/** One turn's label; `rcof` is a code of the active taxonomy on a failure, null on a success. */
export type TurnLabel = z.output<typeof turnLabelSchema>;

/**
 * The fields that carry a label's meaning. Goals, metrics and agreement need no more, so ground
 * truth that came with the data (without a rationale) is taken as it is.
 */
export type TurnLabelFields = Omit<TurnLabel, "rationale">;

/** A judge's whole answer, as the issue asks judges for it. */
export const judgeAnswerSchema = z.object({ turns: z.array(turnLabelSchema) });

/** The reference's variant with the conversation's id; numeric ids are read as text. */
export const dialogLabelsSchema = z.object({
  dialog_id: z.union([z.string().min(1), z.number().int()]).transform(String),
  turns: z.array(turnLabelSchema),
});

export class LabelError extends Error {
  override name = "LabelError";
  constructor(
    message: string,
    /** The turn the problem is in, when it is in one. */
    readonly turnNumber?: number,
    /** The field (`turn_number`, `is_new_goal`, `quality`, `rcof`, `rationale`, `turns`, ...). */
    readonly field?: string,
  ) {
    super(message);
  }
}

export interface LabelCheckOptions {
  /** The active taxonomy: every rcof must be one of its codes. */
  taxonomy: Taxonomy;
  /** The conversation's number of turns, when known: the labels must cover exactly these. */
  expectedTurns?: number;
  /**
   * Accept a failure without a cause (rcof null). Off for judges; on for ground truth that
   * knows only that a goal failed (τ-bench's reward), whose failures count as unattributed.
   */
  allowMissingCause?: boolean;
  /** Where the labels come from (a file and record, a judge), put at the start of an error. */
  source?: string;
}

/** A change `checkTurnLabels` made instead of rejecting, kept so reports can say so. */
export interface LabelNormalisation {
  turn_number: number;
  field: "is_new_goal";
  from: boolean;
  to: boolean;
  reason: string;
}

export interface CheckedLabels<T extends TurnLabelFields = TurnLabel> {
  turns: T[];
  normalised: LabelNormalisation[];
}

function fail(
  options: LabelCheckOptions,
  where: string,
  field: string,
  message: string,
  turn?: number,
): never {
  const prefix = options.source ? `${options.source}: ` : "";
  throw new LabelError(`${prefix}${where}: ${field}: ${message}`, turn, field);
}

/**
 * The rules across turns, on shape-checked labels:
 * - there is at least one turn, numbered 1..n in order (n = `expectedTurns` when given);
 * - the first turn starts a goal: an `is_new_goal: false` there is set to true and recorded in
 *   `normalised`, since a conversation's first turn opens a goal by definition and the false
 *   carries no other claim that could be judged;
 * - a failure names a code of the taxonomy in `rcof` (unless `allowMissingCause`), a success
 *   has `rcof: null`; anything else is rejected with one line naming the turn and the field.
 */
export function checkTurnLabels<T extends TurnLabelFields>(
  turns: readonly T[],
  options: LabelCheckOptions,
): CheckedLabels<T> {
  if (turns.length === 0) fail(options, "labels", "turns", "at least one turn is needed");
  if (options.expectedTurns !== undefined && turns.length !== options.expectedTurns) {
    fail(
      options,
      "labels",
      "turns",
      `expected ${options.expectedTurns} turns (one per turn of the conversation), got ${turns.length}`,
    );
  }
  const out: T[] = [];
  const normalised: LabelNormalisation[] = [];
  turns.forEach((label, i) => {
    if (label.turn_number !== i + 1) {
      fail(
        options,
        `turns[${i}]`,
        "turn_number",
        `expected ${i + 1} (turns are numbered 1..n in order), got ${label.turn_number}`,
      );
    }
    const where = `turn ${label.turn_number}`;
    if (label.quality === "failure") {
      if (label.rcof === null) {
        if (!options.allowMissingCause) {
          fail(options, where, "rcof", 'required when quality is "failure"', label.turn_number);
        }
      } else if (!findCode(options.taxonomy, label.rcof)) {
        fail(
          options,
          where,
          "rcof",
          `"${label.rcof}" is not a code of taxonomy ${options.taxonomy.name} (${taxonomyCodes(options.taxonomy).join(", ")})`,
          label.turn_number,
        );
      }
    } else if (label.rcof !== null) {
      fail(
        options,
        where,
        "rcof",
        `must be null when quality is "success", got "${label.rcof}"`,
        label.turn_number,
      );
    }
    if (i === 0 && !label.is_new_goal) {
      normalised.push({
        turn_number: 1,
        field: "is_new_goal",
        from: false,
        to: true,
        reason: "the first turn always starts a goal",
      });
      out.push({ ...label, is_new_goal: true });
    } else {
      out.push({ ...label });
    }
  });
  return { turns: out, normalised };
}

/** The first shape problem as `turn N: field: message` (or `turns[i]` when N is unusable). */
function describeShapeIssue(
  error: z.ZodError,
  raw: unknown,
): { where: string; field: string; message: string; turn?: number } {
  const issue = error.issues[0];
  if (!issue) return { where: "labels", field: "(top level)", message: "invalid" };
  const [head, index, field, ...rest] = issue.path;
  if (head === "turns" && typeof index === "number" && field !== undefined) {
    const rawTurn = raw && typeof raw === "object" ? (raw as { turns?: unknown }).turns : undefined;
    const element = Array.isArray(rawTurn) ? (rawTurn[index] as unknown) : undefined;
    const number =
      element && typeof element === "object"
        ? (element as { turn_number?: unknown }).turn_number
        : undefined;
    const usable = typeof number === "number" && Number.isInteger(number) && number >= 1;
    const fieldPath = [field, ...rest].map(String).join(".");
    return usable
      ? { where: `turn ${number}`, field: fieldPath, message: issue.message, turn: number }
      : { where: `turns[${index}]`, field: fieldPath, message: issue.message };
  }
  const path = issue.path.length ? issue.path.map(String).join(".") : "(top level)";
  return { where: "labels", field: path, message: issue.message };
}

function parseWith<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  options: LabelCheckOptions,
): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const { where, field, message, turn } = describeShapeIssue(parsed.error, raw);
    fail(options, where, field, message, turn);
  }
  return parsed.data;
}

/** A judge's answer `{turns: [...]}`: shape, then the rules of `checkTurnLabels`. */
export function parseJudgeAnswer(raw: unknown, options: LabelCheckOptions): CheckedLabels {
  const answer = parseWith(judgeAnswerSchema, raw, options);
  return checkTurnLabels(answer.turns, options);
}

/** The reference's `{dialog_id, turns: [...]}`: shape, then the rules of `checkTurnLabels`. */
export function parseDialogLabels(
  raw: unknown,
  options: LabelCheckOptions,
): CheckedLabels & { dialog_id: string } {
  const labels = parseWith(dialogLabelsSchema, raw, options);
  // Once the id is known, a rule's error names the dialog when the caller named no source.
  const source = options.source ?? `dialog ${labels.dialog_id}`;
  return { dialog_id: labels.dialog_id, ...checkTurnLabels(labels.turns, { ...options, source }) };
}
