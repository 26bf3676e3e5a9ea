/**
 * Analyses as agents submit them: BLADE's `EntireAnalysis` JSON (docs/blade-spec.md §5), and a
 * file of them (`DatasetSubmission`: `dataset_name` and `analyses`, one per run). clade accepts
 * two optional additions: `transform_units` (the transform as explicit units, so no model is
 * needed to split it) and `m_spec` (the model in words).
 */
import { z } from "zod";
import { zodIssue } from "./annotations.js";
import {
  type AgentControl,
  type Analysis,
  type DatasetSubmission,
  type TransformUnit,
  UNIT_VERBS,
} from "./specs.js";

export class SubmissionError extends Error {
  override name = "SubmissionError";
}

const columns = z.array(z.string().min(1, "a column name must not be empty"));

const variable = z.object({ description: z.string(), columns });

const control = variable.extend({
  is_moderator: z.boolean(),
  moderator_on: z.string().nullable().optional(),
});

const unit = z
  .object({
    verb: z.enum(UNIT_VERBS),
    code: z.string().min(1, "a unit's code must not be empty"),
    mapping: z.array(z.tuple([columns, z.string()])).default([]),
    groupby_cols: columns.default([]),
  })
  .superRefine((value, ctx) => {
    for (const [i, [, output]] of value.mapping.entries()) {
      if (output === "ALL" && value.verb !== "filter" && value.verb !== "orderby") {
        ctx.addIssue({
          code: "custom",
          path: ["mapping", i, 1],
          message: `output "ALL" is for filter and orderby units only, not ${value.verb}`,
        });
      }
    }
  });

const analysisSchema = z
  .object({
    cvars: z.object({ ivs: z.array(variable), dv: variable, controls: z.array(control) }),
    transform_code: z.string().default(""),
    transform_units: z.array(unit).optional(),
    m_code: z.string(),
    m_spec: z.string().optional(),
  })
  .superRefine((value, ctx) => {
    if (value.transform_units !== undefined && value.transform_code.trim() !== "") {
      ctx.addIssue({
        code: "custom",
        path: ["transform_units"],
        message: "give the transform either as transform_code or as transform_units, not both",
      });
    }
  });

/** A DatasetSubmission's envelope; the analyses are checked one by one, to name each. */
const envelopeSchema = z.object({ dataset_name: z.string(), analyses: z.array(z.unknown()) });

function toAnalysis(value: z.infer<typeof analysisSchema>): Analysis {
  const controls: AgentControl[] = value.cvars.controls.map((c) => ({
    description: c.description,
    columns: c.columns,
    isModerator: c.is_moderator,
    moderatorOn: c.moderator_on ?? "",
  }));
  const units: TransformUnit[] | undefined = value.transform_units?.map((u) => ({
    verb: u.verb,
    code: u.code,
    mapping: u.mapping,
    groupbyCols: u.groupby_cols,
  }));
  return {
    cvars: { ivs: value.cvars.ivs, dv: value.cvars.dv, controls },
    transformCode: value.transform_code,
    ...(units ? { transformUnits: units } : {}),
    modelCode: value.m_code,
    ...(value.m_spec !== undefined ? { modelSpecification: value.m_spec } : {}),
  };
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // V8's message quotes the input, newlines included: one line it must stay.
    const why = (error as Error).message.replace(/\s+/g, " ").slice(0, 200);
    throw new SubmissionError(`${source}: not JSON (${why})`);
  }
}

/** One analysis (BLADE's EntireAnalysis) from its JSON value; `source` names it in errors. */
export function parseAnalysis(value: unknown, source: string): Analysis {
  const parsed = analysisSchema.safeParse(value);
  if (!parsed.success) throw new SubmissionError(`${source}: ${zodIssue(parsed.error)}`);
  return toAnalysis(parsed.data);
}

/** One analysis from JSON text. */
export function parseAnalysisText(text: string, source: string): Analysis {
  return parseAnalysis(parseJson(text, source), source);
}

/**
 * A submissions file: BLADE's DatasetSubmission, or a bare list of analyses (then `datasetName`
 * is empty and the caller names the dataset). Errors name the analysis by its position.
 */
export function parseSubmissionFile(text: string, source: string): DatasetSubmission {
  const value = parseJson(text, source);
  if (Array.isArray(value)) {
    return {
      datasetName: "",
      analyses: value.map((item, i) => parseAnalysis(item, `${source}: analyses[${i}]`)),
    };
  }
  const outer = envelopeSchema.safeParse(value);
  if (!outer.success) throw new SubmissionError(`${source}: ${zodIssue(outer.error)}`);
  const analyses = outer.data.analyses.map((item, i) =>
    parseAnalysis(item, `${source}: analyses[${i}]`),
  );
  if (outer.data.dataset_name === "") {
    throw new SubmissionError(`${source}: dataset_name must not be empty`);
  }
  return { datasetName: outer.data.dataset_name, analyses };
}

/** The analysis as BLADE's JSON (snake_case), for storing and showing. */
export function analysisJson(analysis: Analysis): Record<string, unknown> {
  return {
    cvars: {
      ivs: analysis.cvars.ivs,
      dv: analysis.cvars.dv,
      controls: analysis.cvars.controls.map((c) => ({
        description: c.description,
        columns: c.columns,
        is_moderator: c.isModerator,
        moderator_on: c.moderatorOn,
      })),
    },
    transform_code: analysis.transformCode,
    ...(analysis.transformUnits
      ? {
          transform_units: analysis.transformUnits.map((u) => ({
            verb: u.verb,
            code: u.code,
            mapping: u.mapping,
            groupby_cols: u.groupbyCols,
          })),
        }
      : {}),
    m_code: analysis.modelCode,
    ...(analysis.modelSpecification !== undefined ? { m_spec: analysis.modelSpecification } : {}),
  };
}

const DEF_START = /^def\s+([A-Za-z_]\w*)\s*\(/;

/** Replaces a name outside string literals and comments, as a rename on Python's AST would. */
function renameOutsideStrings(code: string, from: string, to: string): string {
  const word = new RegExp(`\\b${from}\\b`, "g");
  // Strings (with their prefixes and triple quotes) and comments are kept as they are.
  const literal =
    /([rRbBuUfF]{0,2}(?:"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))|(#[^\n]*)/g;
  let out = "";
  let last = 0;
  for (const match of code.matchAll(literal)) {
    out += code.slice(last, match.index).replace(word, to) + match[0];
    last = (match.index ?? 0) + match[0].length;
  }
  return out + code.slice(last).replace(word, to);
}

/**
 * BLADE's reading of submitted Python code (§5): when the code defines functions and one of
 * their names contains `nameIncludes`, the body of the first function defined is used, up to
 * its first top-level `return`, dedented; for transforms the function's first parameter is
 * renamed to `df` (outside strings and comments). Otherwise the code as is. BLADE does this on
 * Python's AST; clade reads the function by indentation, which gives the same body for code
 * that Python would parse.
 */
export function codeInsideFunction(
  code: string,
  nameIncludes: "transform" | "model",
  renameParameterToDf: boolean,
): string {
  const lines = code.split("\n");
  const defs = lines
    .map((line, index) => ({ index, match: DEF_START.exec(line) }))
    .filter((d): d is { index: number; match: RegExpExecArray } => d.match !== null);
  if (!defs.some((d) => (d.match[1] as string).includes(nameIncludes))) return code;
  const first = defs[0] as { index: number; match: RegExpExecArray };
  // The signature may span lines: the body starts after the line that closes it with ":".
  let end = first.index;
  while (end < lines.length && !/\)\s*(->[^:]*)?:\s*(#.*)?$/.test(lines[end] as string)) end++;
  const signature = lines.slice(first.index, end + 1).join(" ");
  const parameter = /\(\s*([A-Za-z_]\w*)/.exec(signature)?.[1];
  const body: string[] = [];
  let indent: string | undefined;
  for (let i = end + 1; i < lines.length; i++) {
    const line = lines[i] as string;
    // Blank and comment-only lines never decide where the body ends.
    if (line.trim() === "" || line.trim().startsWith("#")) {
      if (indent !== undefined)
        body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trim());
      continue;
    }
    const lead = /^[ \t]*/.exec(line)?.[0] ?? "";
    if (indent === undefined) {
      if (lead === "") break;
      indent = lead;
    }
    if (lead.length < indent.length) break;
    const text = line.slice(indent.length);
    if (/^return\b/.test(text)) break;
    body.push(text);
  }
  let result = body.join("\n").trim();
  if (renameParameterToDf && parameter && parameter !== "df") {
    result = renameOutsideStrings(result, parameter, "df");
  }
  return result;
}
