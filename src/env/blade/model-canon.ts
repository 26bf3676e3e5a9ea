/**
 * Rule-based canonicalisation of statistical models: what clade decides itself before asking
 * a model judge. BLADE compares only the models' natural-language specifications, with an LLM
 * and the criterion "same data → same results" (logistic regression ≡ binomial GLM with logit
 * link, ≢ linear regression; docs/blade-spec.md §6.1). This module reduces a specification (or
 * a model call, or a fitted model) to family, link and kind, and says "same" or "different"
 * only where that reduction is certain; every text it does not fully understand is
 * "undecided" and goes to the judge. The words live in data/blade/model-vocabulary.json.
 * BLADE has no such rules: this is a clade addition, meant to agree with the judge wherever it
 * decides.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  canonicalLink,
  MODEL_FAMILIES,
  type ModelCall,
  type ModelFamily,
} from "./model-formula.js";
import type { FittedModel } from "./runtime/types.js";

export class ModelVocabularyError extends Error {
  override name = "ModelVocabularyError";
}

export const MODEL_KINDS = [
  "glm",
  "mixed",
  "gee",
  "ordinal",
  "multinomial",
  "survival",
  "test",
] as const;
/**
 * glm: a (generalised) linear model without random effects; mixed: with random effects;
 * gee: generalised estimating equations; ordinal / multinomial: models of a categorical
 * outcome; survival: Cox models; test: a statistical test or a correlation.
 */
export type ModelKind = (typeof MODEL_KINDS)[number];

export interface CanonicalModel {
  kind: ModelKind;
  /** "gaussian", "binomial", "poisson", "negativebinomial", "ordinal", "multinomial", "cox". */
  family?: string;
  /** "identity", "logit", "probit", "log", "cloglog". */
  link?: string;
  /** For kind "test": a path, general to specific ("t-test", "t-test/paired", "correlation/spearman"). */
  test?: string;
  /**
   * A detail the words cannot express but that changes results; models with different variants
   * are never called the same. Only code gives one: "alpha=1" for statsmodels' GLM negative
   * binomial (alpha fixed), against negativebinomial() which estimates alpha.
   */
  variant?: string;
  /** From code only: the dependent variable and the terms (factor sets, sorted), intercept. */
  dv?: string;
  terms?: string[];
  intercept?: boolean;
}

export type ModelComparison = "same" | "different" | "undecided";

// ---- The vocabulary ----

const phraseSchema = z
  .object({
    phrase: z
      .string()
      .regex(/^[a-z0-9]+( [a-z0-9]+)*$/, "must be lower-case words separated by single spaces"),
    family: z.string().min(1).optional(),
    link: z.string().min(1).optional(),
    kind: z.enum(MODEL_KINDS).optional(),
    test: z.string().min(1).optional(),
  })
  .strict()
  .refine(
    (p) => p.family || p.link || p.kind || p.test,
    "a phrase must say something about the model",
  );

const vocabularySchema = z
  .object({
    description: z.string().optional(),
    fillers: z.array(z.string().regex(/^[a-z0-9]+$/, "a filler is one lower-case word")),
    phrases: z.array(phraseSchema).min(1),
  })
  .strict()
  .superRefine((vocabulary, ctx) => {
    const seen = new Set<string>();
    vocabulary.phrases.forEach((p, i) => {
      if (seen.has(p.phrase)) {
        ctx.addIssue({
          code: "custom",
          path: ["phrases", i, "phrase"],
          message: `duplicate phrase "${p.phrase}"`,
        });
      }
      seen.add(p.phrase);
    });
  });

export type ModelVocabulary = z.output<typeof vocabularySchema>;
type Phrase = ModelVocabulary["phrases"][number];

// src/env/blade/x.ts and dist/env/blade/x.js are both three levels below the package.
const VOCABULARY_PATH = fileURLToPath(
  new URL("../../../data/blade/model-vocabulary.json", import.meta.url),
);

/** Validates a vocabulary's JSON value; `source` starts the error line. */
export function parseModelVocabulary(raw: unknown, source: string): ModelVocabulary {
  const parsed = vocabularySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.map(String).join(".") : "(top level)";
    throw new ModelVocabularyError(`${source}: ${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

let builtin: ModelVocabulary | undefined;

/** The shipped vocabulary, read and checked once. */
export function modelVocabulary(): ModelVocabulary {
  if (!builtin) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(VOCABULARY_PATH, "utf8"));
    } catch (error) {
      throw new ModelVocabularyError(`${VOCABULARY_PATH}: ${(error as Error).message}`);
    }
    builtin = parseModelVocabulary(json, VOCABULARY_PATH);
  }
  return builtin;
}

// ---- Text → canonical model ----

/** Lower case, apostrophes dropped, χ² spelled out, punctuation and hyphens to spaces. */
export function normalizeModelText(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/χ\s*²|χ\s*2|χ/g, " chi squared ")
    .replace(/²/g, "2")
    .replace(/['’`]/g, "")
    .replace(/[^a-z0-9]+/g, " ")
    .trim()
    .split(" ")
    .filter((w) => w !== "");
}

/** Whether test path a is b or more general than b ("t-test" ⊑ "t-test/paired"). */
function testCovers(a: string, b: string): boolean {
  return a === b || b.startsWith(`${a}/`);
}

/** Adds what one phrase says to what is known; undefined on a contradiction. */
function merge(
  known: Partial<CanonicalModel>,
  phrase: Phrase,
): Partial<CanonicalModel> | undefined {
  const out = { ...known };
  for (const field of ["family", "link"] as const) {
    const value = phrase[field];
    if (value === undefined) continue;
    if (out[field] !== undefined && out[field] !== value) return undefined;
    out[field] = value;
  }
  if (phrase.kind !== undefined) {
    const kinds = new Set([out.kind, phrase.kind]);
    if (out.kind === undefined || out.kind === phrase.kind) out.kind = phrase.kind;
    // "mixed effects" + "logistic regression": a GLM with random effects.
    else if (kinds.has("glm") && kinds.has("mixed")) out.kind = "mixed";
    else return undefined;
  }
  if (phrase.test !== undefined) {
    if (out.test === undefined || testCovers(out.test, phrase.test)) out.test = phrase.test;
    else if (!testCovers(phrase.test, out.test)) return undefined;
  }
  return out;
}

/**
 * The model a specification describes, when every word of it is understood and the words
 * agree; undefined otherwise (the judge decides).
 */
export function canonicalModel(
  text: string,
  vocabulary: ModelVocabulary = modelVocabulary(),
): CanonicalModel | undefined {
  const words = normalizeModelText(text);
  if (words.length === 0) return undefined;
  const fillers = new Set(vocabulary.fillers);
  const phrases = vocabulary.phrases.map((p) => ({ p, words: p.phrase.split(" ") }));
  let known: Partial<CanonicalModel> | undefined = {};
  let i = 0;
  while (i < words.length) {
    // The longest phrase starting here wins ("ordinal logistic" over "ordinal").
    let best: { p: Phrase; words: string[] } | undefined;
    for (const candidate of phrases) {
      if (best && candidate.words.length <= best.words.length) continue;
      if (candidate.words.every((w, k) => words[i + k] === w)) best = candidate;
    }
    if (best) {
      known = merge(known, best.p);
      if (!known) return undefined;
      i += best.words.length;
    } else if (fillers.has(words[i] as string)) {
      i++;
    } else {
      return undefined;
    }
  }
  return complete(known);
}

/** Fills the canonical link and the default kind; undefined when something stays unknown. */
function complete(known: Partial<CanonicalModel>): CanonicalModel | undefined {
  if (known.kind === "test" || (known.kind === undefined && known.test !== undefined)) {
    if (known.family !== undefined || known.link !== undefined || known.test === undefined)
      return undefined;
    return { kind: "test", test: known.test };
  }
  if (known.test !== undefined || known.family === undefined) return undefined;
  const kind = known.kind ?? "glm";
  let link = known.link;
  if (link === undefined && (MODEL_FAMILIES as readonly string[]).includes(known.family)) {
    link = canonicalLink(known.family as ModelFamily);
  }
  if (link === undefined) return kind === "survival" ? { kind, family: known.family } : undefined;
  return { kind, family: known.family, link };
}

// ---- Code → canonical model ----

/** A term as a sorted factor set, so that `x:z` and `z:x` compare equal. */
function termKey(term: string): string {
  return term.split(":").sort().join(":");
}

export function canonicalFromCall(call: ModelCall): CanonicalModel {
  return {
    kind: "glm",
    family: call.family,
    link: call.link,
    ...(call.method === "glm" && call.family === "negativebinomial" ? { variant: "alpha=1" } : {}),
    dv: call.dv,
    terms: [...new Set(call.terms.map(termKey))].sort(),
    intercept: call.intercept,
  };
}

/**
 * From a fitted model's term names: level suffixes dropped ("C(g)[T.b]" → "C(g)"), so each
 * term appears once whatever its number of columns. A fitted model does not say whether a
 * negative binomial's alpha was estimated, so it carries no variant; compare it with care.
 */
export function canonicalFromFitted(model: FittedModel): CanonicalModel {
  const terms = new Set<string>();
  let intercept = false;
  for (const name of model.terms) {
    if (name === "Intercept" || name === "const") {
      intercept = true;
      continue;
    }
    terms.add(
      termKey(
        name
          .split(":")
          .map((piece) => piece.replace(/\[[^\]]*\]$/, ""))
          .join(":"),
      ),
    );
  }
  return {
    kind: "glm",
    family: model.family.toLowerCase(),
    link: model.link.toLowerCase(),
    dv: model.dv,
    terms: [...terms].sort(),
    intercept,
  };
}

// ---- Comparison ----

const sameList = (a: string[], b: string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * "same" when kind, family and link (or the test) agree; "different" when both are decided
 * and disagree; "undecided" when either is unknown, when a test meets a model (a t-test is an
 * OLS with one binary regressor; a chi-squared test is a logistic regression's score test),
 * when one test is a more general name for the other, when variants differ, or when both
 * come from code and their variables differ (BLADE's judge compares specifications, which
 * rarely name variables; the rules leave that call to it).
 */
export function compareModels(
  a: CanonicalModel | undefined,
  b: CanonicalModel | undefined,
): ModelComparison {
  if (!a || !b) return "undecided";
  if ((a.kind === "test") !== (b.kind === "test")) return "undecided";
  if (a.kind === "test" && b.kind === "test") {
    if (a.test === undefined || b.test === undefined) return "undecided";
    if (a.test === b.test) return "same";
    if (testCovers(a.test, b.test) || testCovers(b.test, a.test)) return "undecided";
    return "different";
  }
  if (a.kind !== b.kind || a.family !== b.family || a.link !== b.link) return "different";
  if (a.variant !== b.variant) return "undecided";
  if (a.dv !== undefined && b.dv !== undefined && a.dv !== b.dv) return "undecided";
  if (a.terms && b.terms && !sameList(a.terms, b.terms)) return "undecided";
  if (a.intercept !== undefined && b.intercept !== undefined && a.intercept !== b.intercept) {
    return "undecided";
  }
  return "same";
}

/** compareModels on two specifications in words. */
export function compareModelTexts(a: string, b: string): ModelComparison {
  return compareModels(canonicalModel(a), canonicalModel(b));
}
