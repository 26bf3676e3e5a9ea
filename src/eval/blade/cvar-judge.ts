/**
 * The conceptual-variable judge (docs/blade-spec.md §6.2, BLADE's ConceptualVarSimilarity): per
 * role group present in the ground truth, one question with the research question, the dataset
 * schema (info.json's data_desc without semantic_type), the ground truth's variables of that group
 * as A1..An and the agent's as B1..Bm (BLADE's text forms). The answer names the related pairs only,
 * `{"A<i>-B<j>": {"rationale", "similarity": 5..10}}`; keys outside the lists, bad shapes or a
 * similarity outside 5–10 send the answer back (eval/judge-loop.ts), and answers that stay
 * unusable, or a provider error, make the judgement a JudgeError, never a 0.
 *
 * The result is the offline matcher's CvarMatch (env/blade/cvar-match.ts) plus the spend, so a
 * caller can use either. One difference from BLADE, same outcome: a group in which the agent has
 * no variable is not asked about (BLADE asks with an empty B list, and nothing can match).
 */
import { z } from "zod";
import {
  type AgentCvarEntry,
  agentCvarEntries,
  buildCvarMatch,
  type CvarGroup,
  type CvarMatch,
  type CvarPair,
  gtCvarRole,
  gtCvarText,
  gtRoles,
} from "../../env/blade/cvar-match.js";
import type { AgentCvars, BladeDataset, ConceptualVarSpec } from "../../env/blade/specs.js";
import {
  AnswerCheckError,
  type AskOptions,
  askForAnswer,
  emptySpend,
  type Judge,
  type JudgeUsage,
} from "../judge-loop.js";
import { checkPairs } from "./answer-loop.js";
import { loadPrompt, renderPrompt } from "./prompts.js";

/** The judge's similarity scale (the prompt's 5..10). */
export const MIN_SIMILARITY = 5;
export const MAX_SIMILARITY = 10;
/** The schema field BLADE leaves out of prompts. */
const OMITTED_FIELD_PROPERTY = "semantic_type";

const ROLE_WORDS: Record<CvarGroup, string> = {
  IV: "independent variables (IV)",
  DV: "dependent variables (DV)",
  Control: "control variables",
  Moderator: "moderators (control variables that interact with another variable)",
};

/** What the judge reads of the dataset. */
export type DatasetForJudging = Pick<
  BladeDataset,
  "questions" | "description" | "fields" | "fieldNames" | "rowCount"
>;

/** One role group's question and how it went. */
export interface CvarQuestion {
  role: CvarGroup;
  /** Ground-truth indices listed as A1..An, in order. */
  gtIndices: number[];
  /** Agent entry indices listed as B1..Bm, in order. */
  agentIndices: number[];
  answers: number;
  rejected: string[];
  reasoning: string;
}

export interface CvarJudgement extends CvarMatch {
  questions: CvarQuestion[];
  spend: JudgeUsage;
}

/** info.json's data_desc as BLADE's prompts show it: without semantic_type, indented 2. */
export function datasetSchema(dataset: DatasetForJudging): string {
  const fields = dataset.fields.map((field) => {
    const { [OMITTED_FIELD_PROPERTY]: _omitted, ...rest } = field.properties;
    return {
      column: field.column,
      properties: { dtype: field.dtype, ...rest, description: field.description },
    };
  });
  return JSON.stringify(
    {
      dataset_description: dataset.description,
      fields,
      num_rows: dataset.rowCount,
      field_names: dataset.fieldNames,
    },
    null,
    2,
  );
}

function numbered(texts: readonly string[]): string {
  return JSON.stringify(Object.fromEntries(texts.map((text, i) => [String(i + 1), text])), null, 2);
}

const pairValueSchema = z.object({
  rationale: z.string(),
  // BLADE reads the number with int(), so "9" counts as 9.
  similarity: z.union([
    z.number(),
    z
      .string()
      .regex(/^\s*\d+\s*$/)
      .transform(Number),
  ]),
});

/** Checks a role group's answer: pairs within the lists, similarities 5..10. */
export function checkCvarAnswer(
  value: unknown,
  sizes: { a: number; b: number },
): { a: number; b: number; similarity: number; rationale: string }[] {
  return checkPairs(value, sizes, pairValueSchema).map(({ a, b, key, value: pair }) => {
    const { similarity, rationale } = pair;
    if (
      !Number.isInteger(similarity) ||
      similarity < MIN_SIMILARITY ||
      similarity > MAX_SIMILARITY
    ) {
      throw new AnswerCheckError(
        `key "${key}": similarity must be an integer from ${MIN_SIMILARITY} to ${MAX_SIMILARITY}, got ${similarity}`,
      );
    }
    return { a, b, similarity, rationale };
  });
}

const REMINDER =
  'one JSON object of related pairs, e.g. {"A1-B2": {"rationale": "...", "similarity": 8}}, using only the listed numbers and similarities from 5 to 10 ({} for none).';

/** The messages of one role group's question (exported for tests and reports). */
export function cvarQuestionPrompt(
  dataset: DatasetForJudging,
  role: CvarGroup,
  gtTexts: readonly string[],
  agentTexts: readonly string[],
): { system: string; user: string } {
  return renderPrompt(loadPrompt("cvar-judge"), {
    question: dataset.questions[0] ?? "",
    schema: datasetSchema(dataset),
    role: ROLE_WORDS[role],
    variables_a: numbered(gtTexts),
    variables_b: numbered(agentTexts),
  });
}

/** The judge's match of the agent's variables to the ground truth's, or a JudgeError. */
export async function judgeCvars(
  judge: Judge,
  dataset: DatasetForJudging,
  gt: readonly ConceptualVarSpec[],
  agent: AgentCvars,
  options: AskOptions = {},
): Promise<CvarJudgement> {
  const spend = options.spend ?? emptySpend();
  const entries = agentCvarEntries(agent);
  const pairs: CvarPair[] = [];
  const questions: CvarQuestion[] = [];
  for (const role of gtRoles(gt)) {
    const gtIndices = gt.flatMap((spec, i) => (gtCvarRole(spec) === role ? [i] : []));
    const agentSide: AgentCvarEntry[] = entries.filter((entry) => entry.role === role);
    if (agentSide.length === 0) continue;
    const gtTexts = gtIndices.map((i) => gtCvarText(gt[i] as ConceptualVarSpec));
    const prompt = cvarQuestionPrompt(
      dataset,
      role,
      gtTexts,
      agentSide.map((entry) => entry.text),
    );
    const answered = await askForAnswer(
      judge,
      {
        ...prompt,
        check: (value) => checkCvarAnswer(value, { a: gtTexts.length, b: agentSide.length }),
        reminder: REMINDER,
      },
      { ...options, spend, what: `${role} variables` },
    );
    for (const pair of answered.value) {
      pairs.push({
        gtIndex: gtIndices[pair.a - 1] as number,
        agentIndex: (agentSide[pair.b - 1] as AgentCvarEntry).index,
        role,
        similarity: pair.similarity,
        rationale: pair.rationale,
      });
    }
    questions.push({
      role,
      gtIndices,
      agentIndices: agentSide.map((entry) => entry.index),
      answers: answered.answers,
      rejected: answered.rejected,
      reasoning: answered.reasoning,
    });
  }
  return { ...buildCvarMatch(gt, agent, pairs, "judge"), questions, spend };
}
