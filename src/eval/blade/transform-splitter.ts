/**
 * The transform splitter model role (docs/blade-spec.md §2.2 step 3, BLADE's CodeToTransformsLLM):
 * monolithic pandas transform code and the data's columns in, the same transform as a list of
 * units out (TransformUnit: verb, code, input → output mapping, groupby columns). The model
 * answers `{"units": [{verb, code, mapping, groupby_cols}]}`; an answer is sent back
 * (eval/judge-loop.ts) when it breaks the shape or a rule:
 * - the verb is one of UNIT_VERBS; the code is non-empty and works on `df`;
 * - every mapping output is a non-empty column name, and "ALL" only for filter and orderby;
 * - every input is a column of the data or an output of an earlier mapping entry or unit;
 * - a groupby unit names its groupby columns.
 * BLADE asks for Python functions and executes them; clade asks for data and executes nothing
 * here. The caller must run the units in order (each on the previous unit's frame) and check that
 * every mapped output column exists and that the last frame equals the one the monolithic code
 * gives; when it does not, the split is a conversion failure (BLADE's
 * LM_SUBMISSION_CONVERSION_FAILED), or the caller asks again with the failure as feedback.
 * `split-units.ts` in the environment is the offline splitter that needs no model.
 */
import { z } from "zod";
import { type TransformUnit, UNIT_VERBS } from "../../env/blade/specs.js";
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

/** The mapping output that stands for the whole frame. */
export const ALL_COLUMNS = "ALL";
const WHOLE_FRAME_VERBS: readonly string[] = ["filter", "orderby"];
const USES_DF = /\bdf\b/;

const name = z.string().trim().min(1, "a column name must not be empty");

const answerSchema = z.object({
  units: z.array(
    z.object({
      verb: z.enum(UNIT_VERBS),
      code: z.string().trim().min(1, "a unit's code must not be empty"),
      mapping: z.array(z.tuple([z.array(name), z.string().trim()])),
      groupby_cols: z.array(name).default([]),
    }),
  ),
});

export interface TransformSplit {
  units: TransformUnit[];
  answers: number;
  rejected: string[];
  reasoning: string;
  spend: JudgeUsage;
}

/** Checks an answer against the shape and the rules; returns the units. */
export function checkSplitAnswer(value: unknown, columns: readonly string[]): TransformUnit[] {
  const parsed = answerSchema.safeParse(value);
  if (!parsed.success) throw new AnswerCheckError(firstIssue(parsed.error.issues));
  const known = new Set(columns);
  return parsed.data.units.map((unit, u) => {
    const where = `units.${u}`;
    if (!USES_DF.test(unit.code)) {
      throw new AnswerCheckError(`${where}.code: must work on \`df\``);
    }
    if (unit.verb === "groupby" && unit.groupby_cols.length === 0) {
      throw new AnswerCheckError(`${where}.groupby_cols: a groupby unit names its key columns`);
    }
    for (const column of unit.groupby_cols) {
      if (!known.has(column)) {
        throw new AnswerCheckError(`${where}.groupby_cols: "${column}" is not a known column`);
      }
    }
    for (const [m, [inputs, output]] of unit.mapping.entries()) {
      if (output === "") {
        throw new AnswerCheckError(`${where}.mapping.${m}: the output column must not be empty`);
      }
      if (output === ALL_COLUMNS && !WHOLE_FRAME_VERBS.includes(unit.verb)) {
        throw new AnswerCheckError(
          `${where}.mapping.${m}: output "ALL" is for filter and orderby units only, not ${unit.verb}`,
        );
      }
      for (const input of inputs) {
        if (!known.has(input)) {
          throw new AnswerCheckError(
            `${where}.mapping.${m}: input "${input}" is neither a column of the data nor an output of an earlier unit`,
          );
        }
      }
      if (output !== ALL_COLUMNS) known.add(output);
    }
    return {
      verb: unit.verb,
      code: unit.code,
      mapping: unit.mapping.map(([inputs, output]): [string[], string] => [inputs, output]),
      groupbyCols: unit.groupby_cols,
    };
  });
}

const REMINDER =
  'one JSON object {"units": [{"verb": ..., "code": ..., "mapping": [[[inputs], output]], "groupby_cols": [...]}]} that follows the rules.';

/** The messages of the question (exported for tests and reports). */
export function splitQuestionPrompt(
  code: string,
  columns: readonly string[],
): { system: string; user: string } {
  return renderPrompt(loadPrompt("transform-splitter"), {
    columns: JSON.stringify(columns),
    code,
  });
}

/** The units of monolithic transform code, by the model role, or a JudgeError. */
export async function splitTransformCodeByModel(
  judge: Judge,
  code: string,
  columns: readonly string[],
  options: AskOptions = {},
): Promise<TransformSplit> {
  const spend = options.spend ?? emptySpend();
  const answered = await askForAnswer(
    judge,
    {
      ...splitQuestionPrompt(code, columns),
      check: (value) => checkSplitAnswer(value, columns),
      reminder: REMINDER,
    },
    { ...options, spend, what: "transform units" },
  );
  return {
    units: answered.value,
    answers: answered.answers,
    rejected: answered.rejected,
    reasoning: answered.reasoning,
    spend,
  };
}
