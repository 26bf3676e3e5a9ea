/**
 * Generates clade's own BLADE datasets (issue 14) from the data-generating processes in
 * data/blade/processes/<name>.json and writes each one in BLADE's layout (docs/blade-spec.md §4)
 * to data/blade/datasets/<name>/: data.csv, info.json (with clade's "clade" key holding the true
 * effect) and annotations.csv (the merged expert ground truth).
 *
 * Run: `npx tsx scripts/blade-datasets.ts [name ...]` (all datasets when no name is given).
 * Deterministic: every random draw comes from src/env/rng.ts seeded with the process's seed, and
 * spec ids are hashes of the dataset and spec names, so a rerun rewrites identical files.
 *
 * The process files hold everything that is data (variables and their parameters, column
 * descriptions, questions, the expert specs); this file holds only the sampling and writing code.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { createRng, type Rng } from "../src/env/rng.js";

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const PROCESS_DIR = join(REPO_ROOT, "data/blade/processes");
export const DATASETS_DIR = join(REPO_ROOT, "data/blade/datasets");

/** BLADE's spec-id of the data as read, and the prefixes of column names inside its JSON (§4.3). */
const ROOT_SPEC_ID = "ROOT_SPEC_ID";
const ORIGINAL_PREFIX = "\u{1F7E8} ";
const DERIVED_PREFIX = "\u{1F7E9} ";
/** Mixed into every spec id so that ids of different datasets never collide. */
const ID_NAMESPACE = "clade-blade-dataset";
/** Number of sample values info.json shows per column (BLADE shows 3). */
const SAMPLE_COUNT = 3;
/** A text column with at most this share of distinct values is a "category", else a "string". */
const CATEGORY_UNIQUE_SHARE = 0.5;
/** Seed key that separates the draws of info.json samples from the data's draws. */
const SAMPLES_SEED_KEY = 7919;
/** The repository formatter's line width (biome.json), for laying out info.json. */
const LINE_WIDTH = 100;
const MS_PER_DAY = 86_400_000;
const ANNOTATION_HEADER = [
  "spec_id",
  "dependency_graph",
  "conceptual_spec_json",
  "transform_spec_json",
  "model_spec_json",
  "tisane_spec_json",
  "annotate_cvar_spec_json",
  "annotate_transform_spec_json",
];

// ---------------------------------------------------------------- process file schema

const TermSchema = z
  .object({
    var: z.string(),
    coef: z.number().optional(),
    /** Applied to the variable before centring: log, or a feature of a date variable. */
    fn: z.enum(["log", "weekend", "winter", "month_index", "season"]).optional(),
    center: z.number().optional(),
    /** Effects by level of a categorical variable (levels not listed: 0). */
    levels: z.record(z.string(), z.number()).optional(),
    /** Multiplies the term by another variable (minus times_center): an interaction. */
    times: z.string().optional(),
    times_center: z.number().optional(),
    /** For fn "season": day of the year of the peak (cosine wave). */
    peak_day: z.number().optional(),
    /** For fn "month_index": months are counted from this date's month. */
    origin: z.string().optional(),
  })
  .strict();
const LinearSchema = z
  .object({ intercept: z.number(), terms: z.array(TermSchema).default([]) })
  .strict();
type Linear = z.infer<typeof LinearSchema>;

const VariableSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]*$/),
    kind: z.enum([
      "id",
      "categorical",
      "integer",
      "normal",
      "lognormal",
      "bernoulli",
      "poisson",
      "ordinal",
      "date",
    ]),
    description: z.string().optional(),
    hidden: z.boolean().default(false),
    start: z.union([z.number(), z.string()]).optional(),
    end: z.string().optional(),
    min: z.number().optional(),
    max: z.number().optional(),
    levels: z.array(z.union([z.string(), z.number()])).optional(),
    weights: z.array(z.number()).optional(),
    mean: LinearSchema.optional(),
    sd: z.number().optional(),
    meanlog: LinearSchema.optional(),
    sdlog: z.number().optional(),
    logit: LinearSchema.optional(),
    log: LinearSchema.optional(),
    latent: LinearSchema.optional(),
    noise_sd: z.number().optional(),
    cutpoints: z.array(z.number()).optional(),
    round: z.number().int().min(0).optional(),
    clip: z.tuple([z.number(), z.number()]).optional(),
    /** The variable is drawn only where another variable has this value; elsewhere `otherwise`. */
    when: z.object({ var: z.string(), equals: z.union([z.number(), z.string()]) }).optional(),
    otherwise: z.number().optional(),
    /**
     * Missing values, decided after everything else was drawn from the true values: with a
     * probability (logit), or exactly where another (usually hidden) 0/1 variable is 1 (if).
     */
    missing: z
      .union([z.object({ logit: LinearSchema }).strict(), z.object({ if: z.string() }).strict()])
      .optional(),
  })
  .strict();
type Variable = z.infer<typeof VariableSchema>;

const TransformSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]*$/),
    verb: z.enum(["derive", "filter", "deduplicate", "impute", "groupby", "orderby", "rollup"]),
    specification: z.string(),
    rationale: z.string(),
    code: z.string(),
    code_sql: z.string(),
    /** [[input columns], output column]; output "" for filters and deduplication. */
    mapping: z.array(z.tuple([z.array(z.string()), z.string()])),
    /** Alternative parent sets, by transform name ("ROOT" for the data as read). */
    branches: z.array(z.array(z.string()).min(1)).min(1),
    annotator: z.string(),
  })
  .strict();
type TransformDef = z.infer<typeof TransformSchema>;

const ModelSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]*$/),
    specification: z.string(),
    rationale: z.string(),
    code: z.string(),
    code_sql: z.string(),
    /** Transform paths (names, in order) after which the model can be fitted; for the check. */
    fits: z.array(z.array(z.string())).min(1),
    /** The analysis that should recover the true effect (exactly one per dataset). */
    reference: z.boolean().default(false),
    annotator: z.string(),
  })
  .strict();
type ModelDef = z.infer<typeof ModelSchema>;

const CvarSchema = z
  .object({
    role: z.enum(["IV", "DV", "Control"]),
    concept: z.string(),
    interaction: z.boolean().default(false),
    on: z.string().default(""),
    rationale: z.string(),
    columns: z.array(z.string()).min(1),
    column_rationales: z.record(z.string(), z.string()).default({}),
    annotator: z.string(),
  })
  .strict();
type CvarDef = z.infer<typeof CvarSchema>;

const ProcessSchema = z
  .object({
    name: z.string().regex(/^[a-z]+$/),
    seed: z.number().int(),
    rows: z.number().int().positive().optional(),
    /** A panel: every unit observed on every day; unit variables are drawn once per unit. */
    panel: z
      .object({
        units: z.number().int().positive(),
        unit_variables: z.array(VariableSchema),
        date: z
          .object({
            name: z.string(),
            start: z.string(),
            days: z.number().int().positive(),
            description: z.string(),
          })
          .strict(),
      })
      .strict()
      .optional(),
    research_questions: z.array(z.string()).min(1),
    dataset_description: z.string(),
    variables: z.array(VariableSchema),
    /** Output columns in file order. */
    columns: z.array(z.string()),
    /** Rows whose column is overwritten with an impossible code (e.g. a device error). */
    invalid: z
      .array(z.object({ column: z.string(), value: z.number(), count: z.number().int() }).strict())
      .default([]),
    /** Rows entered twice (an exact copy right after the original). */
    duplicates: z.number().int().min(0).default(0),
    true_effect: z
      .object({
        iv: z.string(),
        dv: z.string(),
        direction: z.enum(["positive", "negative", "none"]),
        sizes: z.array(
          z.object({
            family: z.string(),
            link: z.string(),
            value: z.number(),
            tolerance: z.number(),
          }),
        ),
        process: z.string(),
      })
      .strict(),
    naive: z.object({ code: z.string(), description: z.string() }).strict(),
    runtime_note: z.string(),
    ground_truth: z
      .object({
        transforms: z.array(TransformSchema).min(1),
        models: z.array(ModelSchema).min(1),
        cvars: z.array(CvarSchema).min(1),
      })
      .strict(),
  })
  .strict();
export type Process = z.infer<typeof ProcessSchema>;

/** A process file that does not say what the generator needs: one line naming file and field. */
export class ProcessFileError extends Error {
  override name = "ProcessFileError";
}

export function loadProcess(path: string): Process {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ProcessFileError(`${path}: not readable JSON (${(error as Error).message})`);
  }
  const parsed = ProcessSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join(".") : "?";
    throw new ProcessFileError(`${path}: ${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

// ---------------------------------------------------------------- sampling

type Value = number | string | null;
type Row = Map<string, Value>;

function normal(rng: Rng): number {
  // Box–Muller; 1 - next() keeps the logarithm's argument in (0, 1].
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

function poisson(rng: Rng, lambda: number): number {
  // Knuth's product of uniforms; the rates here stay far below where exp(-lambda) underflows.
  const limit = Math.exp(-lambda);
  let k = 0;
  let product = rng.next();
  while (product > limit) {
    k++;
    product *= rng.next();
  }
  return k;
}

function weightedIndex(rng: Rng, weights: readonly number[]): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let u = rng.next() * total;
  for (let i = 0; i < weights.length; i++) {
    u -= weights[i] as number;
    if (u < 0) return i;
  }
  return weights.length - 1;
}

const logistic = (x: number): number => 1 / (1 + Math.exp(-x));

function dayNumber(iso: string): number {
  const ms = Date.parse(`${iso}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new ProcessFileError(`not a date: "${iso}"`);
  return Math.round(ms / MS_PER_DAY);
}

function isoDate(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

/** The value of one date feature for a day number. */
function dateFeature(day: number, term: z.infer<typeof TermSchema>): number {
  const date = new Date(day * MS_PER_DAY);
  const month = date.getUTCMonth() + 1;
  switch (term.fn) {
    case "weekend": {
      const weekday = date.getUTCDay();
      return weekday === 0 || weekday === 6 ? 1 : 0;
    }
    case "winter":
      return month === 12 || month <= 2 ? 1 : 0;
    case "month_index": {
      const origin = new Date(dayNumber(term.origin ?? "2000-01-01") * MS_PER_DAY);
      return (
        (date.getUTCFullYear() - origin.getUTCFullYear()) * 12 +
        (date.getUTCMonth() - origin.getUTCMonth())
      );
    }
    case "season": {
      const yearStart = Date.UTC(date.getUTCFullYear(), 0, 1) / MS_PER_DAY;
      const dayOfYear = day - yearStart + 1;
      return Math.cos((2 * Math.PI * (dayOfYear - (term.peak_day ?? 200))) / 365.25);
    }
    default:
      throw new ProcessFileError(`date feature "${term.fn}" unknown`);
  }
}

function numeric(row: Row, name: string): number {
  const value = row.get(name);
  if (typeof value !== "number") {
    throw new ProcessFileError(`variable "${name}" is used before it is drawn or is not numeric`);
  }
  return value;
}

function evaluate(linear: Linear, row: Row, dateVars: ReadonlySet<string>): number {
  let total = linear.intercept;
  for (const term of linear.terms) {
    if (term.levels) {
      total += term.levels[String(row.get(term.var))] ?? 0;
      continue;
    }
    const raw = numeric(row, term.var);
    let x: number;
    if (term.fn === "log") x = Math.log(raw);
    else if (term.fn !== undefined) {
      if (!dateVars.has(term.var)) {
        throw new ProcessFileError(`fn "${term.fn}" needs a date variable, "${term.var}" is not`);
      }
      x = dateFeature(raw, term);
    } else x = raw;
    x -= term.center ?? 0;
    if (term.times) x *= numeric(row, term.times) - (term.times_center ?? 0);
    total += (term.coef ?? 1) * x;
  }
  return total;
}

function finish(variable: Variable, x: number): number {
  let value = x;
  if (variable.clip) value = Math.min(variable.clip[1], Math.max(variable.clip[0], value));
  if (variable.round !== undefined) value = Number(value.toFixed(variable.round));
  return value;
}

function required<T>(value: T | undefined, variable: Variable, field: string): T {
  if (value === undefined) {
    throw new ProcessFileError(`variable "${variable.name}" (${variable.kind}) needs "${field}"`);
  }
  return value;
}

function drawVariable(
  variable: Variable,
  row: Row,
  rng: Rng,
  index: number,
  dateVars: Set<string>,
): Value {
  if (variable.when && row.get(variable.when.var) !== variable.when.equals) {
    return variable.otherwise ?? 0;
  }
  switch (variable.kind) {
    case "id":
      return Number(variable.start ?? 1) + index;
    case "categorical": {
      const levels = required(variable.levels, variable, "levels");
      const weights = variable.weights ?? levels.map(() => 1);
      return levels[weightedIndex(rng, weights)] as string | number;
    }
    case "integer": {
      const min = required(variable.min, variable, "min");
      const max = required(variable.max, variable, "max");
      return min + rng.int(max - min + 1);
    }
    case "normal": {
      const mean = evaluate(required(variable.mean, variable, "mean"), row, dateVars);
      return finish(variable, mean + required(variable.sd, variable, "sd") * normal(rng));
    }
    case "lognormal": {
      const meanlog = evaluate(required(variable.meanlog, variable, "meanlog"), row, dateVars);
      const sdlog = required(variable.sdlog, variable, "sdlog");
      return finish(variable, Math.exp(meanlog + sdlog * normal(rng)));
    }
    case "bernoulli": {
      const p = logistic(evaluate(required(variable.logit, variable, "logit"), row, dateVars));
      return rng.next() < p ? 1 : 0;
    }
    case "poisson": {
      const rate = Math.exp(evaluate(required(variable.log, variable, "log"), row, dateVars));
      return finish(variable, poisson(rng, rate));
    }
    case "ordinal": {
      const latent =
        evaluate(required(variable.latent, variable, "latent"), row, dateVars) +
        (variable.noise_sd ?? 1) * normal(rng);
      const cutpoints = required(variable.cutpoints, variable, "cutpoints");
      const levels = required(variable.levels, variable, "levels");
      const index = cutpoints.filter((c) => latent > c).length;
      return levels[index] as string | number;
    }
    case "date": {
      dateVars.add(variable.name);
      const first = dayNumber(String(required(variable.start, variable, "start")));
      const last = dayNumber(required(variable.end, variable, "end"));
      return first + rng.int(last - first + 1);
    }
  }
}

/** Draws the dataset's rows, then missing values, invalid codes and duplicate entries. */
export function sampleRows(process: Process): { rows: Row[]; dateVars: Set<string> } {
  const rng = createRng(process.seed);
  const dateVars = new Set<string>();
  const base: Row[] = [];
  if (process.panel) {
    const { panel } = process;
    const units: Row[] = [];
    for (let u = 0; u < panel.units; u++) {
      const unit: Row = new Map();
      for (const variable of panel.unit_variables) {
        unit.set(variable.name, drawVariable(variable, unit, rng, u, dateVars));
      }
      units.push(unit);
    }
    dateVars.add(panel.date.name);
    const firstDay = dayNumber(panel.date.start);
    for (let d = 0; d < panel.date.days; d++) {
      for (const unit of units) {
        const row: Row = new Map(unit);
        row.set(panel.date.name, firstDay + d);
        base.push(row);
      }
    }
  } else {
    const count = process.rows;
    if (count === undefined) throw new ProcessFileError(`${process.name}: needs rows or panel`);
    for (let i = 0; i < count; i++) base.push(new Map());
  }
  base.forEach((row, i) => {
    for (const variable of process.variables) {
      row.set(variable.name, drawVariable(variable, row, rng, i, dateVars));
    }
  });
  // Missingness is decided on the complete data, so every draw above saw the true values.
  const allVariables = [...(process.panel?.unit_variables ?? []), ...process.variables];
  for (const variable of allVariables) {
    const missing = variable.missing;
    if (!missing) continue;
    const masked = base.map((row) =>
      "if" in missing
        ? numeric(row, missing.if) === 1
        : rng.next() < logistic(evaluate(missing.logit, row, dateVars)),
    );
    base.forEach((row, i) => {
      if (masked[i]) row.set(variable.name, null);
    });
  }
  for (const invalid of process.invalid) {
    for (const i of rng.shuffle(base.map((_, i) => i)).slice(0, invalid.count)) {
      (base[i] as Row).set(invalid.column, invalid.value);
    }
  }
  const duplicated = new Set(rng.shuffle(base.map((_, i) => i)).slice(0, process.duplicates));
  const rows: Row[] = [];
  base.forEach((row, i) => {
    rows.push(row);
    if (duplicated.has(i)) rows.push(new Map(row));
  });
  return { rows, dateVars };
}

// ---------------------------------------------------------------- Python-compatible JSON

/** A float that must print as a Python float (`1.0`, not `1`). */
class PyFloat {
  constructor(readonly value: number) {}
}

/** Python's repr of a float: shortest round-trip digits, always a point or an exponent. */
export function pythonFloat(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (Object.is(x, -0)) return "-0.0";
  const exp = x === 0 ? 0 : Math.floor(Math.log10(Math.abs(x)));
  if (x !== 0 && (exp < -4 || exp >= 16)) {
    const [mantissa, e] = x.toExponential().split("e") as [string, string];
    const sign = e.startsWith("-") ? "-" : "+";
    const digits = e.replace(/^[+-]/, "").padStart(2, "0");
    return `${mantissa}e${sign}${digits}`;
  }
  const text = String(x);
  if (text.includes("e")) {
    // JS writes 1e-7-style exponents earlier than Python; the range above excludes them.
    return x.toFixed(20).replace(/0+$/, "0");
  }
  return text.includes(".") ? text : `${text}.0`;
}

function pythonString(s: string): string {
  // JSON.stringify escapes quotes, backslashes and controls like Python; ensure_ascii escapes the rest.
  return JSON.stringify(s).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const isScalar = (v: unknown): boolean =>
  v === null || v instanceof PyFloat || typeof v !== "object";

/**
 * json.dumps(value) when indent is undefined (the one-line form BLADE's spec JSON uses), else
 * json.dumps(value, indent=n) — except that an array of scalars that fits on its line within
 * LINE_WIDTH is written on one line, which is how the repository's formatter (biome) lays out
 * JSON, so that the written info.json files pass `biome check`. ensure_ascii is on either way.
 */
export function pythonJson(value: unknown, indent?: number, depth = 0, column = 0): string {
  if (value === null || value === undefined) return "null";
  if (value instanceof PyFloat) return pythonFloat(value.value);
  if (typeof value === "number") {
    return Number.isInteger(value) ? String(value) : pythonFloat(value);
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return pythonString(value);
  const inner = indent === undefined ? 0 : indent * (depth + 1);
  const pad = indent === undefined ? "" : `\n${" ".repeat(inner)}`;
  const end = indent === undefined ? "" : `\n${" ".repeat(indent * depth)}`;
  const sep = indent === undefined ? ", " : ",";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (indent !== undefined && value.every(isScalar)) {
      const oneLine = `[${value.map((v) => pythonJson(v)).join(", ")}]`;
      // The trailing comma after the array counts towards the line, as the formatter counts it.
      if (column + oneLine.length + 1 <= LINE_WIDTH) return oneLine;
    }
    const items = value.map((v) => pad + pythonJson(v, indent, depth + 1, inner));
    return `[${items.join(sep)}${end}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  const items = entries.map(([k, v]) => {
    const key = `${pythonString(k)}: `;
    return `${pad}${key}${pythonJson(v, indent, depth + 1, inner + key.length)}`;
  });
  return `{${items.join(sep)}${end}}`;
}

// ---------------------------------------------------------------- CSV

function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(",")}\n`;
}

// ---------------------------------------------------------------- data.csv and info.json

interface ColumnData {
  name: string;
  kind: "int" | "float" | "text" | "date";
  cells: Value[];
  description: string;
}

function columnData(process: Process, rows: Row[], dateVars: Set<string>): ColumnData[] {
  const allVariables = [...(process.panel?.unit_variables ?? []), ...process.variables];
  const descriptions = new Map(allVariables.map((v) => [v.name, v.description ?? ""]));
  const panelDate = process.panel?.date.name;
  if (process.panel) descriptions.set(process.panel.date.name, process.panel.date.description);
  return process.columns.map((name) => {
    const variable = allVariables.find((v) => v.name === name);
    if (!variable && name !== panelDate) {
      throw new ProcessFileError(`${process.name}: column "${name}" is not a variable`);
    }
    if (variable?.hidden) throw new ProcessFileError(`${process.name}: "${name}" is hidden`);
    let cells: Value[] = rows.map((row) => row.get(name) ?? null);
    let kind: ColumnData["kind"];
    if (dateVars.has(name)) {
      kind = "date";
      cells = cells.map((c) => (c === null ? null : isoDate(c as number)));
    } else if (cells.every((c) => c === null || typeof c === "number")) {
      const whole = cells.every((c) => c === null || Number.isInteger(c));
      const hasMissing = cells.some((c) => c === null);
      if (whole && hasMissing) {
        // pandas would read it as float64 but DuckDB as a nullable BIGINT: keep the engines apart.
        throw new ProcessFileError(
          `${process.name}: column "${name}" has missing values but only whole numbers; give it decimals ("round" ≥ 1)`,
        );
      }
      kind = whole ? "int" : "float";
    } else kind = "text";
    return { name, kind, cells, description: descriptions.get(name) ?? "" };
  });
}

function cellText(cell: Value): string {
  if (cell === null) return "";
  return typeof cell === "number" ? String(cell) : cell;
}

function fieldInfo(column: ColumnData, rng: Rng): Record<string, unknown> {
  const present = column.cells.filter((c): c is number | string => c !== null);
  const unique = [...new Set(present)];
  const samples = rng.shuffle(unique).slice(0, SAMPLE_COUNT);
  const asJson = (v: number | string): unknown =>
    column.kind === "float" ? new PyFloat(v as number) : v;
  if (column.kind === "int" || column.kind === "float") {
    const values = present as number[];
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
    return {
      dtype: "number",
      std: new PyFloat(Math.sqrt(variance)),
      min: asJson(Math.min(...values)),
      max: asJson(Math.max(...values)),
      samples: samples.map(asJson),
      num_unique_values: unique.length,
      semantic_type: "",
      description: column.description,
    };
  }
  if (column.kind === "date") {
    const sorted = [...(unique as string[])].sort();
    return {
      dtype: "date",
      min: sorted[0],
      max: sorted[sorted.length - 1],
      samples,
      num_unique_values: unique.length,
      semantic_type: "",
      description: column.description,
    };
  }
  const isCategory = unique.length <= CATEGORY_UNIQUE_SHARE * present.length;
  return {
    dtype: isCategory ? "category" : "string",
    samples,
    num_unique_values: unique.length,
    semantic_type: "",
    description: column.description,
  };
}

function infoJson(process: Process, columns: ColumnData[], rowCount: number): string {
  const rng = createRng(process.seed, SAMPLES_SEED_KEY);
  const effect = process.true_effect;
  const info = {
    research_questions: process.research_questions,
    data_desc: {
      dataset_description: process.dataset_description,
      fields: columns.map((c) => ({ column: c.name, properties: fieldInfo(c, rng) })),
      num_rows: rowCount,
      field_names: columns.map((c) => c.name),
    },
    clade: {
      true_effect: {
        iv: effect.iv,
        dv: effect.dv,
        direction: effect.direction,
        sizes: effect.sizes.map((s) => ({
          family: s.family,
          link: s.link,
          value: new PyFloat(s.value),
          tolerance: new PyFloat(s.tolerance),
        })),
        process: effect.process,
      },
      runtime_note: process.runtime_note,
    },
  };
  return `${pythonJson(info, 2)}\n`;
}

// ---------------------------------------------------------------- annotations.csv

/** A deterministic 32-hex spec id (BLADE's ids are uuid4 hex; ours are name hashes). */
export function specId(dataset: string, kind: string, name: string): string {
  return createHash("sha256")
    .update(`${ID_NAMESPACE}:${dataset}:${kind}:${name}`)
    .digest("hex")
    .slice(0, 32);
}

/** The DV and the column names of an engine model line such as `logit(y ~ x + C(g), ...)`. */
export function formulaColumns(modelSql: string): { dv: string; columns: string[] } {
  const open = modelSql.indexOf("(");
  let depth = 0;
  let end = -1;
  for (let i = open + 1; open >= 0 && i < modelSql.length; i++) {
    const c = modelSql[i];
    if (c === "(") depth++;
    else if (c === ")" && depth-- === 0) end = i;
    else if (c === "," && depth === 0) end = i;
    if (end >= 0) break;
  }
  const formula = end > open ? modelSql.slice(open + 1, end) : "";
  const [lhs, rhs] = formula.split("~");
  const dv = lhs?.trim() ?? "";
  if (!/^[A-Za-z_]\w*$/.test(dv) || rhs === undefined) {
    throw new ProcessFileError(`model code_sql "${modelSql}" is not "fn(y ~ terms, ...)"`);
  }
  const names = rhs.replace(/\bC\(/g, "(").match(/[A-Za-z_]\w*/g) ?? [];
  return { dv, columns: [...new Set([dv, ...names])] };
}

interface Resolved {
  process: Process;
  /** Transform name → spec id (ROOT included). */
  ids: Map<string, string>;
  /** Derived column → name of the transform that creates it. */
  producers: Map<string, string>;
  dataColumns: Set<string>;
}

function resolve(process: Process): Resolved {
  const ids = new Map<string, string>([["ROOT", ROOT_SPEC_ID]]);
  for (const t of process.ground_truth.transforms) {
    if (ids.has(t.name)) throw new ProcessFileError(`${process.name}: transform "${t.name}" twice`);
    ids.set(t.name, specId(process.name, "transform", t.name));
  }
  const dataColumns = new Set(process.columns);
  const producers = new Map<string, string>();
  const seen = new Set<string>(["ROOT"]);
  for (const t of process.ground_truth.transforms) {
    for (const branch of t.branches) {
      for (const dep of branch) {
        if (!seen.has(dep)) {
          throw new ProcessFileError(
            `${process.name}: transform "${t.name}" depends on "${dep}", which is not an earlier transform`,
          );
        }
      }
    }
    seen.add(t.name);
    for (const [, out] of t.mapping) {
      if (out === "" || dataColumns.has(out)) continue;
      const other = producers.get(out);
      if (other && other !== t.name) {
        throw new ProcessFileError(
          `${process.name}: "${out}" is derived by "${other}" and "${t.name}"`,
        );
      }
      producers.set(out, t.name);
    }
  }
  return { process, ids, producers, dataColumns };
}

/** The transforms a derived column needs: its producer and all their ancestors (every branch). */
function ancestorsOf(resolved: Resolved, names: readonly string[]): string[] {
  const byName = new Map(resolved.process.ground_truth.transforms.map((t) => [t.name, t]));
  const out = new Set<string>();
  const visit = (name: string): void => {
    if (out.has(name)) return;
    out.add(name);
    for (const branch of byName.get(name)?.branches ?? []) for (const dep of branch) visit(dep);
  };
  for (const name of names) visit(name);
  return [...out];
}

function splitColumns(resolved: Resolved, columns: readonly string[], where: string) {
  const orig: string[] = [];
  const derived: string[] = [];
  const leaves: string[] = [];
  for (const column of columns) {
    if (resolved.dataColumns.has(column)) orig.push(column);
    else {
      const producer = resolved.producers.get(column);
      if (!producer) {
        throw new ProcessFileError(
          `${resolved.process.name}: ${where} uses "${column}", neither a data column nor derived by a transform`,
        );
      }
      derived.push(column);
      if (!leaves.includes(producer)) leaves.push(producer);
    }
  }
  const idOf = (name: string) => resolved.ids.get(name) as string;
  return {
    orig: orig.map((c) => ORIGINAL_PREFIX + c),
    derived: derived.map((c) => DERIVED_PREFIX + c),
    derivedSpecIds: leaves.length === 0 ? [] : ancestorsOf(resolved, leaves).map(idOf),
    leafSpecIds: leaves.map(idOf),
  };
}

function transformJson(resolved: Resolved, t: TransformDef): string {
  return pythonJson({
    time_stamp: null,
    tags: [],
    read_only_tags: [],
    is_negative: false,
    specification: t.specification,
    spec_name: t.name,
    trans_verb: [t.verb],
    code: t.code,
    code_sql: t.code_sql,
    rationale: t.rationale,
    conditions: "",
    input_cols_to_output_col_mapping: t.mapping,
    branches: t.branches.map((deps) => ({
      dependencies: deps.map((d) => resolved.ids.get(d) as string),
      condition: "",
    })),
    annotator: t.annotator,
  });
}

function modelJson(resolved: Resolved, m: ModelDef): string {
  const { columns } = formulaColumns(m.code_sql);
  const cols = splitColumns(resolved, columns, `model "${m.name}"`);
  return pythonJson({
    time_stamp: null,
    tags: [],
    read_only_tags: [],
    is_negative: false,
    specification: m.specification,
    spec_name: m.name,
    rationale: m.rationale,
    dependencies: [],
    code: m.code,
    code_sql: m.code_sql,
    associated_columns_derived_spec_ids: cols.derivedSpecIds,
    associated_columns_orig: cols.orig,
    associated_columns_derived: cols.derived,
    associated_columns_leaf_spec_ids: cols.leafSpecIds,
    associated_specified_spec_ids: cols.leafSpecIds,
    annotator: m.annotator,
  });
}

function cvarJson(resolved: Resolved, c: CvarDef): string {
  const cols = splitColumns(resolved, c.columns, `variable "${c.concept}"`);
  const rationales: Record<string, string> = {};
  for (const [column, text] of Object.entries(c.column_rationales)) {
    if (!c.columns.includes(column)) {
      throw new ProcessFileError(
        `${resolved.process.name}: variable "${c.concept}" explains column "${column}" it does not use`,
      );
    }
    const prefix = resolved.dataColumns.has(column) ? ORIGINAL_PREFIX : DERIVED_PREFIX;
    rationales[prefix + column] = text;
  }
  return pythonJson({
    time_stamp: null,
    tags: [],
    read_only_tags: [],
    is_negative: false,
    variable_type: c.role,
    concept: c.concept,
    final_columns_derived_spec_ids: cols.derivedSpecIds,
    final_columns_orig: cols.orig,
    final_columns_derived: cols.derived,
    final_columns_leaf_spec_ids: cols.leafSpecIds,
    column_rationales: rationales,
    interaction: c.interaction,
    rationale: c.rationale,
    on: c.on,
    random_effect: false,
    annotator: c.annotator,
  });
}

function annotationsCsv(resolved: Resolved): string {
  const { process, ids } = resolved;
  const gt = process.ground_truth;
  const row = (id: string, column: string, json: string): string[] =>
    ANNOTATION_HEADER.map((h) => (h === "spec_id" ? id : h === column ? json : ""));
  const graph = {
    directed: true,
    multigraph: false,
    graph: {},
    nodes: [{ id: ROOT_SPEC_ID }, ...gt.transforms.map((t) => ({ id: ids.get(t.name) }))],
    links: gt.transforms.flatMap((t) => {
      const parents = [...new Set(t.branches.flat())];
      return parents.map((p) => ({ source: ids.get(p), target: ids.get(t.name) }));
    }),
  };
  const lines = [
    csvLine(ANNOTATION_HEADER),
    csvLine(
      row(
        specId(process.name, "graph", "dependency_graph"),
        "dependency_graph",
        pythonJson(graph, 2),
      ),
    ),
    csvLine(row(ROOT_SPEC_ID, "transform_spec_json", pythonJson({ spec_name: "ROOT" }))),
    ...gt.transforms.map((t) =>
      csvLine(row(ids.get(t.name) as string, "transform_spec_json", transformJson(resolved, t))),
    ),
    ...gt.cvars.map((c) =>
      csvLine(
        row(
          specId(process.name, "cvar", `${c.role}:${c.concept}`),
          "conceptual_spec_json",
          cvarJson(resolved, c),
        ),
      ),
    ),
    ...gt.models.map((m) =>
      csvLine(
        row(specId(process.name, "model", m.name), "model_spec_json", modelJson(resolved, m)),
      ),
    ),
  ];
  return lines.join("");
}

function checkGroundTruth(resolved: Resolved): void {
  const { process } = resolved;
  const names = new Set(process.ground_truth.transforms.map((t) => t.name));
  if (process.ground_truth.models.filter((m) => m.reference).length !== 1) {
    throw new ProcessFileError(`${process.name}: exactly one model must be the reference`);
  }
  for (const model of process.ground_truth.models) {
    for (const path of model.fits) {
      for (const name of path) {
        if (!names.has(name)) {
          throw new ProcessFileError(
            `${process.name}: model "${model.name}" fits after unknown "${name}"`,
          );
        }
      }
    }
  }
  for (const role of ["IV", "DV"] as const) {
    if (!process.ground_truth.cvars.some((c) => c.role === role)) {
      throw new ProcessFileError(`${process.name}: no ${role} variable`);
    }
  }
}

// ---------------------------------------------------------------- main

export function writeDataset(process: Process, outDir: string): { rows: number } {
  const resolved = resolve(process);
  checkGroundTruth(resolved);
  const { rows, dateVars } = sampleRows(process);
  const columns = columnData(process, rows, dateVars);
  const dir = join(outDir, process.name);
  mkdirSync(dir, { recursive: true });
  const lines = [csvLine(columns.map((c) => c.name))];
  for (let i = 0; i < rows.length; i++) {
    lines.push(csvLine(columns.map((c) => cellText(c.cells[i] ?? null))));
  }
  writeFileSync(join(dir, "data.csv"), lines.join(""));
  writeFileSync(join(dir, "info.json"), infoJson(process, columns, rows.length));
  writeFileSync(join(dir, "annotations.csv"), annotationsCsv(resolved));
  return { rows: rows.length };
}

function main(): void {
  const wanted = new Set(process.argv.slice(2));
  const files = readdirSync(PROCESS_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();
  const known = new Set(files.map((f) => basename(f, ".json")));
  for (const name of wanted) {
    if (!known.has(name))
      throw new ProcessFileError(`no process file ${name}.json in ${PROCESS_DIR}`);
  }
  for (const file of files) {
    const name = basename(file, ".json");
    if (wanted.size > 0 && !wanted.has(name)) continue;
    const spec = loadProcess(join(PROCESS_DIR, file));
    if (spec.name !== name) throw new ProcessFileError(`${file}: name "${spec.name}" ≠ file name`);
    const { rows } = writeDataset(spec, DATASETS_DIR);
    console.log(`${name}: ${rows} rows → ${join("data/blade/datasets", name)}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main();
  } catch (error) {
    if (error instanceof ProcessFileError) {
      console.error(`blade-datasets: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}
