/**
 * Matching the agent's statistical model to the ground truth's by rules alone (docs/blade-spec.md
 * §6.1): BLADE compares the specifications in words, trimmed and lower-cased, with the ground
 * truth's de-duplicated by that text (the first of each text, in file order, represents it).
 * model-canon.ts reads both texts into a canonical family/link/method and says "same",
 * "different" or "undecided". This is the environment's offline decision; eval/blade's model
 * judge asks a model about the undecided ones.
 */
import type { ModelSpec } from "./specs.js";

export type ModelVerdict = "same" | "different" | "undecided";
/** model-canon.ts's `compareModels(a, b)`, on two specifications in words. */
export type ModelComparator = (a: string, b: string) => ModelVerdict;

/** One de-duplicated ground-truth specification. */
export interface UniqueModel {
  /** The specification trimmed and lower-cased (BLADE's key). */
  text: string;
  /** Indices into the ground truth's model list with this text, in file order. */
  gtIndices: number[];
}

export interface ModelDecision extends UniqueModel {
  matched: boolean;
  /** Who decided: the rules, the judge, or nobody (undecided by rules and no judge given). */
  by: "rules" | "judge" | "none";
  rationale: string;
}

/** BLADE's normalisation of a specification before comparing and de-duplicating. */
export function normaliseSpecification(specification: string): string {
  return specification.trim().toLowerCase();
}

/** The ground truth's specifications de-duplicated by normalised text, first kept, file order. */
export function uniqueModels(gt: readonly Pick<ModelSpec, "specification">[]): UniqueModel[] {
  const byText = new Map<string, UniqueModel>();
  for (const [i, spec] of gt.entries()) {
    const text = normaliseSpecification(spec.specification);
    const found = byText.get(text);
    if (found) found.gtIndices.push(i);
    else byText.set(text, { text, gtIndices: [i] });
  }
  return [...byText.values()];
}

/** The rules' decision on every unique ground-truth model; undecided ones unmatched, by "none". */
export function decideModelsByRules(
  gt: readonly Pick<ModelSpec, "specification">[],
  agentText: string,
  compare: ModelComparator,
): ModelDecision[] {
  return uniqueModels(gt).map((unique): ModelDecision => {
    // The same words name the same model, whatever the rules make of them.
    const verdict = unique.text === agentText ? "same" : compare(unique.text, agentText);
    return verdict === "undecided"
      ? { ...unique, matched: false, by: "none", rationale: "rules: undecided" }
      : {
          ...unique,
          matched: verdict === "same",
          by: "rules",
          rationale: verdict === "same" ? "rules: the same model" : "rules: different models",
        };
  });
}

/** Every ground-truth index whose specification matched (duplicates included), ascending. */
export function matchedIndices(decisions: readonly ModelDecision[]): number[] {
  return decisions
    .filter((d) => d.matched)
    .flatMap((d) => d.gtIndices)
    .sort((a, b) => a - b);
}
