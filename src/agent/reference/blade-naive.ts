/**
 * The blade environment's basic baseline: the analysis a hurried analyst writes without looking
 * at the data. It reads the independent and the dependent variable off the research question
 * ("Does X affect Y?", "the effect of X on Y"), picks the column whose name and description
 * share the most words with each (never a row identifier; the outcome a number or two
 * categories), and fits Y on X alone (logistic for a two-valued Y, else
 * linear), with no controls and no transforms. It sees only what the agent sees.
 */
import { bladeSourceOf } from "../../env/blade/index.js";
import type { RuntimeName } from "../../env/blade/runtime/types.js";
import type { BladeDataset, FieldInfo } from "../../env/blade/specs.js";
import { taskDataset } from "../../env/blade/tasks.js";
import type { Agent, AgentReply, ReferenceSolver } from "../types.js";

/** Words that join cause and effect in a question, longest first. */
const LINKS = [
  "associated with",
  "related to",
  "relate to",
  "lead to",
  "leads to",
  "contribute to",
  "affect",
  "affects",
  "influence",
  "influences",
  "increase",
  "increases",
  "reduce",
  "reduces",
  "lower",
  "lowers",
  "raise",
  "raises",
  "improve",
  "improves",
  "predict",
  "predicts",
  "cause",
  "causes",
  "change",
  "changes",
  "impact",
  "impacts",
];

const STOP = new Set(
  "a an the of on in to do does did is are was were be by for with and or their its at as than more less have has".split(
    " ",
  ),
);

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 1 && !STOP.has(w))
      .map((w) => w.replace(/(ies|es|s)$/, "")),
  );
}

/** The question's cause and effect sides; the whole question on both when no link is found. */
export function questionSides(question: string): { cause: string; effect: string } {
  const q = question.toLowerCase();
  const effectOf = /effect of (.+?) on (.+)/.exec(q);
  if (effectOf) return { cause: effectOf[1] as string, effect: effectOf[2] as string };
  for (const link of LINKS) {
    const at = q.search(new RegExp(`\\b${link}\\b`));
    if (at >= 0) return { cause: q.slice(0, at), effect: q.slice(at + link.length) };
  }
  return { cause: q, effect: q };
}

/** A row identifier: a name like id or rownames, or text with a distinct value in every row. */
function isIdentifier(field: FieldInfo, rows: number): boolean {
  if (/^(id|ind|index|rownames?|unnamed: ?\d+)$|_id$/i.test(field.column)) return true;
  return field.dtype !== "number" && Number(field.properties.num_unique_values) === rows;
}

/** An outcome a linear or logistic model can take: a number, or two categories. */
function isModelledOutcome(field: FieldInfo): boolean {
  return field.dtype === "number" || Number(field.properties.num_unique_values) === 2;
}

function bestColumn(fields: readonly FieldInfo[], side: string, exclude?: string): FieldInfo {
  const want = words(side);
  let best: FieldInfo | undefined;
  let bestScore = -1;
  for (const field of fields) {
    if (field.column === exclude) continue;
    const have = words(`${field.column.replace(/_/g, " ")} ${field.description}`);
    let score = 0;
    for (const w of want) if (have.has(w)) score++;
    if (score > bestScore) {
      best = field;
      bestScore = score;
    }
  }
  return best ?? (fields[0] as FieldInfo);
}

/** The naive analysis of a dataset, as BLADE's submission JSON. */
export function naiveAnalysis(
  dataset: BladeDataset,
  runtime: RuntimeName,
): Record<string, unknown> {
  const { cause, effect } = questionSides(dataset.questions[0] ?? "");
  const usable = dataset.fields.filter((f) => !isIdentifier(f, dataset.rowCount));
  const candidates = usable.length > 0 ? usable : dataset.fields;
  const outcomes = candidates.filter(isModelledOutcome);
  const dv = bestColumn(outcomes.length > 0 ? outcomes : candidates, effect);
  const iv = bestColumn(candidates, cause, dv.column);
  const binary = Number(dv.properties.num_unique_values) === 2;
  const formula = `${dv.column} ~ ${iv.column}`;
  const modelCode =
    runtime === "sql"
      ? `${binary ? "logit" : "ols"}(${formula})`
      : `smf.${binary ? "logit" : "ols"}('${formula}', data=df).fit()`;
  return {
    cvars: {
      ivs: [{ description: iv.description || iv.column, columns: [iv.column] }],
      dv: { description: dv.description || dv.column, columns: [dv.column] },
      controls: [],
    },
    transform_code: "",
    m_code: modelCode,
    m_spec: binary ? "Logistic regression" : "Linear regression",
  };
}

export const naiveBladeAnalyst: ReferenceSolver = (ctx): Agent => {
  const source = bladeSourceOf(ctx.env);
  if (!source) throw new Error("the naive analyst plays the blade environment only");
  const analysis = naiveAnalysis(taskDataset(source, ctx.taskIndex), source.runtime);
  const action = `submit: ${JSON.stringify(analysis)}`;
  return {
    async act(): Promise<AgentReply> {
      return {
        action,
        message: `Thought: The question names the cause and the effect; I fit one on the other.\n\nAction: ${action}`,
      };
    },
  };
};
