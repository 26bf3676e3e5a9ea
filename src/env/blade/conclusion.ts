/**
 * Conclusion correctness on clade's own datasets, where the true effect behind the data is
 * known (TrueEffect in specs.ts). BLADE itself cannot score conclusions (its datasets have no
 * ground-truth effect); this is clade's addition: did the agent's fitted model find the effect
 * in the right direction, and, where the model's scale allows, of the right size?
 *
 * Which coefficient is the IV's effect:
 * 1. the term named exactly truth.iv, else the first term named exactly one of the agent's IV
 *    columns (a derived column such as a standardised or logged IV: its sign is read as the
 *    IV's, which holds for increasing transforms);
 * 2. else a categorical IV (truth.iv first, then the agent's IV columns) with exactly one
 *    non-reference level, e.g. `C(treated)[T.1]` or `treated[T.True]`: the sign compares that
 *    level with the reference level (patsy's first in sorted order), which is the truth's
 *    direction when the IV is coded 0/1 or False/True. A categorical with several levels has
 *    no single effect and is skipped;
 * 3. else nothing can be judged ("undetermined").
 */
import type { FittedModel } from "./runtime/types.js";
import type { TrueEffect } from "./specs.js";

/** Conventional two-sided significance level; p at or above it is "not significant". */
export const SIGNIFICANCE_LEVEL = 0.05;

export type ConclusionDirection = "right" | "wrong" | "not significant" | "undetermined";
export type ConclusionSize = "within" | "outside" | "not comparable";

export interface ConclusionVerdict {
  /** The term read as the IV's effect; undefined when none could be chosen. */
  term?: string;
  estimate?: number;
  pValue?: number;
  /**
   * right: significant with the true sign, or not significant where the truth has no effect;
   * wrong: significant with the wrong sign, or significant where the truth has no effect;
   * not significant: p ≥ SIGNIFICANCE_LEVEL where the truth has an effect;
   * undetermined: no term for the IV, or no usable estimate.
   */
  direction: ConclusionDirection;
  /**
   * Comparable only when the model's family and link match one of truth.sizes, the term is
   * the untransformed truth.iv itself, and no interaction involves it (its coefficient would
   * then be a conditional effect).
   */
  size: ConclusionSize;
  reason: string;
}

/** A term's factors without level suffixes: "C(g)[T.b]:x" → ["C(g)", "x"]. */
function termFactors(term: string): string[] {
  return term.split(":").map((piece) => piece.replace(/\[[^\]]*\]$/, ""));
}

/** Whether a factor stands for the column (bare or within C()). */
function isColumnFactor(factor: string, column: string): boolean {
  return factor === column || factor === `C(${column})`;
}

/** The single non-reference level term of a categorical column, if it has exactly one. */
function levelTerm(model: FittedModel, column: string): { term?: string; levels: number } {
  const terms = model.terms.filter((t) => {
    const factors = termFactors(t);
    return factors.length === 1 && t !== factors[0] && isColumnFactor(factors[0] as string, column);
  });
  return { term: terms.length === 1 ? terms[0] : undefined, levels: terms.length };
}

function chooseTerm(
  model: FittedModel,
  truth: TrueEffect,
  ivColumns: string[],
): { term: string; column: string; categorical: boolean } | { note: string } {
  const columns = [...new Set([truth.iv, ...ivColumns])];
  for (const column of columns) {
    if (model.terms.includes(column)) return { term: column, column, categorical: false };
  }
  const notes: string[] = [];
  for (const column of columns) {
    const { term, levels } = levelTerm(model, column);
    if (term) return { term, column, categorical: true };
    if (levels > 1)
      notes.push(`"${column}" is categorical with ${levels + 1} levels (no single effect)`);
  }
  const tried = columns.map((c) => `"${c}"`).join(", ");
  return {
    note: notes.length ? notes.join("; ") : `no model term for the IV (looked for ${tried})`,
  };
}

const format = (x: number): string =>
  Math.abs(x) >= 1e-3 || x === 0 ? x.toFixed(3) : x.toExponential(2);

/** Judges a fitted model's conclusion about the IV against the known true effect. Pure. */
export function judgeConclusion(
  model: FittedModel,
  truth: TrueEffect,
  ivColumns: string[],
): ConclusionVerdict {
  const chosen = chooseTerm(model, truth, ivColumns);
  if ("note" in chosen) {
    return { direction: "undetermined", size: "not comparable", reason: chosen.note };
  }
  const { term, column } = chosen;
  const estimate = model.params[term];
  const pValue = model.pValues[term];
  if (
    estimate === undefined ||
    pValue === undefined ||
    !Number.isFinite(estimate) ||
    Number.isNaN(pValue)
  ) {
    return {
      term,
      direction: "undetermined",
      size: "not comparable",
      reason: `term "${term}" has no usable estimate or p-value`,
    };
  }

  const significant = pValue < SIGNIFICANCE_LEVEL;
  const sign = estimate > 0 ? "positive" : "negative";
  const found = `"${term}" = ${format(estimate)} (p = ${format(pValue)})`;
  let direction: ConclusionDirection;
  let why: string;
  if (truth.direction === "none") {
    direction = significant ? "wrong" : "right";
    why = significant
      ? `${found}: a significant ${sign} effect where there is none`
      : `${found}: not significant, and there is no true effect`;
  } else if (!significant) {
    direction = "not significant";
    why = `${found}: not significant at ${SIGNIFICANCE_LEVEL}; the true effect is ${truth.direction}`;
  } else {
    direction = sign === truth.direction ? "right" : "wrong";
    why = `${found}: significant and ${sign}; the true effect is ${truth.direction}`;
  }

  const interactions = model.terms.filter((t) => {
    const factors = termFactors(t);
    return factors.length > 1 && factors.some((f) => isColumnFactor(f, column));
  });
  if (interactions.length)
    why += `; note the interaction ${interactions.map((t) => `"${t}"`).join(", ")}`;

  const family = model.family.toLowerCase();
  const link = model.link.toLowerCase();
  const scale = truth.sizes.find(
    (s) => s.family.toLowerCase() === family && s.link.toLowerCase() === link,
  );
  let size: ConclusionSize = "not comparable";
  if (!scale) {
    why += `; size not comparable: no true size on the ${family}/${link} scale`;
  } else if (term !== truth.iv) {
    why += `; size not comparable: the term is not the untransformed "${truth.iv}"`;
  } else if (interactions.length) {
    why += "; size not comparable: an interaction makes the coefficient conditional";
  } else {
    size = Math.abs(estimate - scale.value) <= scale.tolerance ? "within" : "outside";
    why += `; size ${size} ${format(scale.value)} ± ${format(scale.tolerance)} on the ${family}/${link} scale`;
  }
  return { term, estimate, pValue, direction, size, reason: why };
}
