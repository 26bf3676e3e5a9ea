/**
 * BLADE's model roles as the scoring's options (env/blade/score.ts ScoringOptions): one judge
 * model matches the variables, decides the models the rules leave undecided, names a Python
 * model in words and splits monolithic pandas code into units. SQL code is split by statement
 * without a model (a SELECT is a unit). Every call's spend adds up in `spend`.
 */
import type { ScoringOptions } from "../../env/blade/score.js";
import { emptySpend, type Judge, type JudgeUsage } from "../judge-loop.js";
import { judgeCvars } from "./cvar-judge.js";
import { describeModel } from "./model-describer.js";
import { judgeModels } from "./model-judge.js";
import { splitTransformCodeByModel } from "./transform-splitter.js";

export interface ModelRoles {
  scoring: ScoringOptions;
  /** The judge's calls so far, over every analysis scored with these roles. */
  spend: JudgeUsage;
}

/** Scoring options whose model roles are played by `judge`. */
export function modelRoles(judge: Judge, base: ScoringOptions = {}): ModelRoles {
  const spend = emptySpend();
  const scoring: ScoringOptions = {
    ...base,
    matchCvars: (dataset, analysis) =>
      judgeCvars(judge, dataset, dataset.groundTruth.cvars, analysis.cvars, { spend }),
    // The judge sees only what the rules (which may have read the agent's code) left undecided.
    judgeModels: async (gt, agentSpecification, rules) => {
      const verdicts = new Map(
        rules.map((d) => [
          d.text,
          d.by === "none" ? "undecided" : d.matched ? "same" : "different",
        ]),
      );
      const compare = (gtText: string) =>
        (verdicts.get(gtText) ?? "undecided") as "same" | "different" | "undecided";
      return (await judgeModels(judge, gt, agentSpecification, compare, { spend })).decisions;
    },
    describeModel: async (code, dataset) =>
      (await describeModel(judge, code, dataset.fieldNames, { spend })).specification,
    splitTransforms: async (code, dataset, runtime) =>
      runtime === "python"
        ? (await splitTransformCodeByModel(judge, code, dataset.fieldNames, { spend })).units
        : undefined,
  };
  return { scoring, spend };
}
