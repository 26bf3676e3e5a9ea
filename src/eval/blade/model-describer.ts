/**
 * The model describer model role (docs/blade-spec.md §5, BLADE's CodeToModelLLM.
 * code_to_model_obj): model code in, `{specification, columns}` out: the model in words
 * ("Logistic regression") and the exact column names it uses. The answer is sent back
 * (eval/judge-loop.ts) when the specification is empty or the columns are not a list of names.
 * Columns the answer names that are not columns of the frame (a constant the code adds, a
 * misspelling) are kept apart in `unknownColumns` rather than sent back: BLADE takes them as
 * given, and a frame the caller knows only partly must not trap the model in corrections.
 *
 * Not needed for the embedded engine: its model is one call such as `logit(y ~ x + z)`, which
 * env/blade/model-formula.ts parses (family, link, method, DV, terms); the caller names the
 * specification from the parsed call and takes the columns from its DV and terms, with no model.
 * Nor when the agent gave the specification itself (Analysis.modelSpecification).
 */
import { z } from "zod";
import {
  AnswerCheckError,
  type AskOptions,
  askForAnswer,
  emptySpend,
  type Judge,
  type JudgeUsage,
} from "../judge-loop.js";
import { firstIssue } from "./answer-loop.js";
import { loadPrompt, renderPrompt } from "./prompts.js";

const answerSchema = z.object({
  specification: z.string().trim().min(1, "the specification must not be empty"),
  columns: z.array(z.string().trim().min(1, "a column name must not be empty")),
});

export interface ModelDescription {
  specification: string;
  /** Columns the model uses, each once, in the answer's order, all columns of the frame. */
  columns: string[];
  /** Names the answer gave that are not columns of the frame (empty when no frame was given). */
  unknownColumns: string[];
  answers: number;
  rejected: string[];
  reasoning: string;
  spend: JudgeUsage;
}

/** Checks an answer; `frameColumns` empty = the frame's columns are not known. */
export function checkDescriptionAnswer(
  value: unknown,
  frameColumns: readonly string[],
): Pick<ModelDescription, "specification" | "columns" | "unknownColumns"> {
  const parsed = answerSchema.safeParse(value);
  if (!parsed.success) throw new AnswerCheckError(firstIssue(parsed.error.issues));
  const named = [...new Set(parsed.data.columns)];
  const frame = new Set(frameColumns);
  const known = frameColumns.length === 0 ? named : named.filter((c) => frame.has(c));
  return {
    specification: parsed.data.specification,
    columns: known,
    unknownColumns: named.filter((c) => !known.includes(c)),
  };
}

const REMINDER =
  'one JSON object {"specification": "<the model in words>", "columns": ["<column>", ...]}.';

/** The messages of the question (exported for tests and reports). */
export function describeQuestionPrompt(
  code: string,
  frameColumns: readonly string[],
): { system: string; user: string } {
  return renderPrompt(loadPrompt("model-describer"), {
    columns: frameColumns.length > 0 ? JSON.stringify(frameColumns) : '"(not known)"',
    code,
  });
}

/** The model in words and its columns, by the model role, or a JudgeError. */
export async function describeModel(
  judge: Judge,
  code: string,
  frameColumns: readonly string[],
  options: AskOptions = {},
): Promise<ModelDescription> {
  const spend = options.spend ?? emptySpend();
  const answered = await askForAnswer(
    judge,
    {
      ...describeQuestionPrompt(code, frameColumns),
      check: (value) => checkDescriptionAnswer(value, frameColumns),
      reminder: REMINDER,
    },
    { ...options, spend, what: "model description" },
  );
  return {
    ...answered.value,
    answers: answered.answers,
    rejected: answered.rejected,
    reasoning: answered.reasoning,
    spend,
  };
}
