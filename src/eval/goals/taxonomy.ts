/**
 * Taxonomies of root causes of failure: the codes a judge may put in a failed turn's `rcof`.
 * The built-ins (RCOF E1–E7, τ-bench fault attribution, MAST) are data files under
 * `data/goals/taxonomies/`, in the same shape as a user's own file, so one schema checks both.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";

export class TaxonomyError extends Error {
  override name = "TaxonomyError";
}

/**
 * A code is one token (letters, digits, `_ . / -`): judges write it back verbatim in JSON and
 * reports print it in a column, so spaces and punctuation would only invite near-misses.
 */
const codeSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_./-]*$/, "must be one token of letters, digits, _ . / -");

const nonEmpty = (what: string) => z.string().trim().min(1, `${what} must not be empty`);

export const taxonomyCodeSchema = z
  .object({
    code: codeSchema,
    name: nonEmpty("name"),
    definition: nonEmpty("definition"),
    /** An optional heading the code sits under (MAST's three groups, τ-bench's fault author). */
    group: nonEmpty("group").optional(),
  })
  .strict();

export const taxonomySchema = z
  .object({
    name: nonEmpty("name"),
    description: z.string().optional(),
    codes: z.array(taxonomyCodeSchema).min(1, "a taxonomy needs at least one code"),
  })
  .strict()
  .superRefine((taxonomy, ctx) => {
    const seen = new Set<string>();
    taxonomy.codes.forEach((entry, i) => {
      if (seen.has(entry.code)) {
        ctx.addIssue({
          code: "custom",
          path: ["codes", i, "code"],
          message: `duplicate code "${entry.code}"`,
        });
      }
      seen.add(entry.code);
    });
  });

export type TaxonomyCode = z.output<typeof taxonomyCodeSchema>;
export type Taxonomy = z.output<typeof taxonomySchema>;

export const BUILTIN_TAXONOMIES = ["rcof", "tau", "mast"] as const;
export type BuiltinTaxonomyName = (typeof BUILTIN_TAXONOMIES)[number];

/** The default taxonomy: RCOF E1–E7. */
export const DEFAULT_TAXONOMY: BuiltinTaxonomyName = "rcof";

// src/eval/goals/x.ts and dist/eval/goals/x.js are both three levels below the package.
const TAXONOMY_DIR = new URL("../../../data/goals/taxonomies/", import.meta.url);

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const where = issue.path.length ? issue.path.map(String).join(".") : "(top level)";
  return `${where}: ${issue.message}`;
}

/** Validates a taxonomy's JSON value; `source` (a file name, a config key) starts the error line. */
export function parseTaxonomy(raw: unknown, source: string): Taxonomy {
  const parsed = taxonomySchema.safeParse(raw);
  if (!parsed.success) throw new TaxonomyError(`${source}: ${firstIssue(parsed.error)}`);
  return parsed.data;
}

/** Reads and validates a taxonomy file `{name, description?, codes: [{code, name, definition, group?}]}`. */
export function loadTaxonomyFile(path: string): Taxonomy {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new TaxonomyError(`${path}: cannot read: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TaxonomyError(`${path}: not JSON: ${(error as Error).message}`);
  }
  return parseTaxonomy(json, path);
}

const builtins = new Map<BuiltinTaxonomyName, Taxonomy>();

export function isBuiltinTaxonomy(name: string): name is BuiltinTaxonomyName {
  return (BUILTIN_TAXONOMIES as readonly string[]).includes(name);
}

/** A shipped taxonomy, read from the package's data folder once. */
export function builtinTaxonomy(name: BuiltinTaxonomyName): Taxonomy {
  let taxonomy = builtins.get(name);
  if (!taxonomy) {
    taxonomy = loadTaxonomyFile(fileURLToPath(new URL(`${name}.json`, TAXONOMY_DIR)));
    builtins.set(name, taxonomy);
  }
  return taxonomy;
}

/**
 * `--taxonomy rcof|tau|mast|NAME|FILE`: a built-in by name, then one of clade.config's
 * `taxonomies` by name (checked here, the error naming the entry), anything else a file path.
 */
export function resolveTaxonomy(
  nameOrPath: string = DEFAULT_TAXONOMY,
  configured: Readonly<Record<string, unknown>> = {},
): Taxonomy {
  if (isBuiltinTaxonomy(nameOrPath)) return builtinTaxonomy(nameOrPath);
  if (Object.hasOwn(configured, nameOrPath)) {
    return parseTaxonomy(configured[nameOrPath], `clade.config: taxonomies.${nameOrPath}`);
  }
  return loadTaxonomyFile(nameOrPath);
}

/** The taxonomy's codes, in its own order (the order reports list them in). */
export function taxonomyCodes(taxonomy: Taxonomy): string[] {
  return taxonomy.codes.map((c) => c.code);
}

export function findCode(taxonomy: Taxonomy, code: string): TaxonomyCode | undefined {
  return taxonomy.codes.find((c) => c.code === code);
}
