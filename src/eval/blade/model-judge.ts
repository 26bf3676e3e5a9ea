/**
 * Matching the agent's statistical model to the ground truth's (docs/blade-spec.md §6.1). As in
 * BLADE, only the specifications in words are compared, trimmed and lower-cased, and the ground
 * truth's are de-duplicated by that text (the first of each text, in file order, represents it).
 * clade first lets rules decide (env/blade/model-canon.ts: `compareModels` reads both texts into
 * a canonical family/link/method and says "same", "different" or "undecided"); only the ground
 * truth's models left undecided go to the model judge, in one question: A1..Ak against the
 * agent's B1, answered `{"A<i>-B1": {"rationale"}}` for the equivalent ones (equivalent = the same
 * data give the same results). Unusable answers are sent back (eval/judge-loop.ts); a provider
 * error or answers that stay unusable make a JudgeError. Without a judge (offline), undecided
 * models stay unmatched and say so (`by: "none"`). Every decision records where it came from, for
 * the report.
 *
 * The rules' part lives in the environment (env/blade/model-match.ts), so that its offline reward
 * and this judge share it; the comparator is passed in (`compareModelTexts` from model-canon.ts).
 */
import { z } from "zod";
import {
  decideModelsByRules,
  type ModelComparator,
  type ModelDecision,
  matchedIndices,
  normaliseSpecification,
} from "../../env/blade/model-match.js";
import type { ModelSpec } from "../../env/blade/specs.js";
import {
  type AskOptions,
  askForAnswer,
  emptySpend,
  type Judge,
  type JudgeUsage,
} from "../judge-loop.js";
import { checkPairs } from "./answer-loop.js";
import { loadPrompt, renderPrompt } from "./prompts.js";

export interface ModelJudgement {
  /** The agent's specification, trimmed and lower-cased. */
  agentText: string;
  /** One per unique ground-truth specification, in file order. */
  decisions: ModelDecision[];
  /** Every ground-truth index whose specification matched (duplicates included), ascending. */
  matchedGtIndices: number[];
  /** The judge's question, when one was asked. */
  judged: { answers: number; rejected: string[]; reasoning: string } | null;
  spend: JudgeUsage;
}

export class ModelMatchError extends Error {
  override name = "ModelMatchError";
}

const equivalentSchema = z.object({ rationale: z.string() });

const REMINDER =
  'one JSON object with a key "A<number>-B1" per equivalent model of A, e.g. {"A2-B1": {"rationale": "..."}}, using only the listed numbers ({} for none).';

/** The messages of the judge's question (exported for tests and reports). */
export function modelQuestionPrompt(
  undecided: readonly string[],
  agentText: string,
): { system: string; user: string } {
  const numbered = Object.fromEntries(undecided.map((text, i) => [String(i + 1), text]));
  return renderPrompt(loadPrompt("model-judge"), {
    models_a: JSON.stringify(numbered, null, 2),
    model_b: JSON.stringify({ "1": agentText }, null, 2),
  });
}

/**
 * Which ground-truth models the agent's specification matches: rules first, the judge for the
 * rest (`judge` null: no judge, offline).
 */
export async function judgeModels(
  judge: Judge | null,
  gt: readonly Pick<ModelSpec, "specification">[],
  agentSpecification: string,
  compare: ModelComparator,
  options: AskOptions = {},
): Promise<ModelJudgement> {
  const agentText = normaliseSpecification(agentSpecification);
  if (agentText === "") throw new ModelMatchError("the agent's model specification is empty");
  const spend = options.spend ?? emptySpend();
  const decisions = decideModelsByRules(gt, agentText, compare);
  const undecided = decisions.filter((d) => d.by === "none");
  let judged: ModelJudgement["judged"] = null;
  if (judge && undecided.length > 0) {
    const answered = await askForAnswer(
      judge,
      {
        ...modelQuestionPrompt(
          undecided.map((d) => d.text),
          agentText,
        ),
        check: (value) => checkPairs(value, { a: undecided.length, b: 1 }, equivalentSchema),
        reminder: REMINDER,
      },
      { ...options, spend, what: "models" },
    );
    for (const decision of undecided) {
      decision.by = "judge";
      decision.rationale = "judge: not equivalent";
    }
    for (const pair of answered.value) {
      const decision = undecided[pair.a - 1] as ModelDecision;
      decision.matched = true;
      decision.rationale = `judge: ${pair.value.rationale}`;
    }
    judged = {
      answers: answered.answers,
      rejected: answered.rejected,
      reasoning: answered.reasoning,
    };
  }
  return { agentText, decisions, matchedGtIndices: matchedIndices(decisions), judged, spend };
}
