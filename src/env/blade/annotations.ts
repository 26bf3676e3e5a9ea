/**
 * BLADE's ground truth as stored in a dataset's `annotations.csv` (docs/blade-spec.md §4.3–4.5):
 * one spec per row, its JSON in the `transform_spec_json`, `model_spec_json` or
 * `conceptual_spec_json` cell. Read the way BLADE's `get_annotation_data_from_df` does (cells
 * that are empty or only whitespace count as missing; the row's `spec_id` overrides the JSON;
 * the old list-of-lists `branches` form is converted), with every spec validated by zod and
 * BLADE's 🟨/🟩 column prefixes stripped. Any problem is one BladeDatasetError line naming the
 * file, the row (1-based, header not counted), the spec id and the field.
 */
import { parse } from "csv-parse/sync";
import { z } from "zod";
import {
  type Branch,
  type ConceptualVarSpec,
  type GroundTruth,
  type ModelSpec,
  ROOT_SPEC_ID,
  TRANSFORM_VERBS,
  type TransformSpec,
  type TransformVerb,
} from "./specs.js";

/** A dataset folder (or one of its files) that clade cannot use: one line naming the file. */
export class BladeDatasetError extends Error {
  override name = "BladeDatasetError";
}

export const TRANSFORM_COLUMN = "transform_spec_json";
export const MODEL_COLUMN = "model_spec_json";
export const CVAR_COLUMN = "conceptual_spec_json";

/** BLADE marks original columns "🟨 col" and derived ones "🟩 col" inside the JSON values. */
const COLUMN_PREFIX = /^(?:\u{1F7E8}|\u{1F7E9}) ?/u;
/** BLADE's spec-name rule keeps at most this many words of the specification (then "etc"). */
const SPEC_NAME_MAX_WORDS = 10;
/** Python's string.punctuation, removed by BLADE's spec-name rule. */
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/** A column name without BLADE's 🟨 (original) / 🟩 (derived) prefix and its one space. */
export function stripColumnPrefix(name: string): string {
  return name.replace(COLUMN_PREFIX, "");
}

/**
 * BLADE's name for a spec whose `spec_name` is given as "": the specification without
 * punctuation, its first 10 words (then "etc") joined by "_", lower-cased
 * (specs.py: replace_spaces_with_underscore).
 */
export function specNameFromSpecification(specification: string): string {
  const words = specification.replace(PUNCTUATION, "").split(/\s+/).filter(Boolean);
  const kept =
    words.length > SPEC_NAME_MAX_WORDS ? [...words.slice(0, SPEC_NAME_MAX_WORDS), "etc"] : words;
  return kept.join("_").toLowerCase();
}

// ---- Schemas (pydantic's defaults: a missing or null optional field is its default) ----

const text = z.string({ error: "must be a string" });
const optionalText = text.nullish().transform((v) => v ?? "");
const columnList = z
  .array(text, { error: "must be a list of column names" })
  .nullish()
  .transform((v) => (v ?? []).map(stripColumnPrefix));
const idList = z
  .array(text, { error: "must be a list of spec ids" })
  .nullish()
  .transform((v) => v ?? []);

const branchSchema = z.object({
  dependencies: z.array(text, { error: "must be a list of spec ids" }).default([]),
  condition: optionalText,
});

const mappingSchema = z
  .array(
    z.tuple([z.array(text, { error: "must be a list of column names" }), text], {
      error: "must be a [[input columns], output column] pair",
    }),
    { error: "must be a list of [[input columns], output column] pairs" },
  )
  .nullish()
  .transform((v) =>
    (v ?? []).map(
      ([inputs, output]) =>
        [inputs.map(stripColumnPrefix), stripColumnPrefix(output)] as [string[], string],
    ),
  );

const transformSchema = z.object({
  specification: optionalText,
  spec_name: text.optional(),
  trans_verb: z.array(text, { error: "must be a list of verbs" }).nullish(),
  code: optionalText,
  code_sql: text.optional(),
  rationale: optionalText,
  input_cols_to_output_col_mapping: mappingSchema,
  // The old form (a list of dependency lists) is converted before validation.
  branches: z.array(branchSchema, { error: "must be a list of branches" }).default([]),
  annotator: optionalText,
});

const modelSchema = z.object({
  specification: optionalText,
  spec_name: text.optional(),
  rationale: optionalText,
  code: optionalText,
  code_sql: text.optional(),
  associated_columns_orig: columnList,
  associated_columns_derived: columnList,
  associated_columns_derived_spec_ids: idList,
  annotator: optionalText,
});

const cvarSchema = z.object({
  variable_type: z.enum(["IV", "DV", "Control"], { error: "must be IV, DV or Control" }),
  concept: text,
  interaction: z.boolean({ error: "must be true or false" }),
  on: optionalText,
  rationale: optionalText,
  final_columns_orig: columnList,
  final_columns_derived: columnList,
  final_columns_derived_spec_ids: idList,
  annotator: optionalText,
});

/** One data row of annotations.csv, with the cells that matter. */
interface AnnotationRow {
  /** 1-based, the header not counted. */
  row: number;
  specId: string;
  cells: Record<string, string | undefined>;
}

function isMissing(cell: string | undefined): boolean {
  return cell === undefined || /^\s*$/.test(cell);
}

/** pydantic validates spec_name only when given: "" then becomes the specification's name. */
function specName(given: string | undefined, specification: string): string {
  if (given === undefined) return "";
  return given === "" ? specNameFromSpecification(specification) : given;
}

/** The first zod issue as "path: message", indices as [i] (also for info.json and submissions). */
export function zodIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const path = issue.path
    .map((part, i) =>
      typeof part === "number" ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`,
    )
    .join("");
  return path ? `${path}: ${issue.message}` : issue.message;
}

function rowError(
  file: string,
  row: AnnotationRow,
  column: string,
  message: string,
): BladeDatasetError {
  return new BladeDatasetError(
    `${file} row ${row.row} (spec ${row.specId}): ${column}: ${message}`,
  );
}

function parseJsonCell<T extends z.ZodTypeAny>(
  file: string,
  row: AnnotationRow,
  column: string,
  schema: T,
  prepare: (json: Record<string, unknown>) => void = () => {},
): z.output<T> {
  let json: unknown;
  try {
    json = JSON.parse(row.cells[column] as string);
  } catch (error) {
    throw rowError(file, row, column, `not JSON (${(error as Error).message})`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw rowError(file, row, column, "must be a JSON object");
  }
  prepare(json as Record<string, unknown>);
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw rowError(file, row, column, zodIssue(parsed.error));
  return parsed.data;
}

/** BLADE's old branch form: a list of dependency lists. */
function convertOldBranches(json: Record<string, unknown>): void {
  const branches = json.branches;
  if (Array.isArray(branches) && Array.isArray(branches[0])) {
    json.branches = branches.map((dependencies) => ({ dependencies, condition: "" }));
  }
}

function transformSpec(file: string, row: AnnotationRow): TransformSpec {
  const data = parseJsonCell(file, row, TRANSFORM_COLUMN, transformSchema, convertOldBranches);
  const isRoot = row.specId === ROOT_SPEC_ID;
  const verbText = data.trans_verb?.[0];
  if (verbText === undefined && !isRoot) {
    throw rowError(file, row, TRANSFORM_COLUMN, "trans_verb must name at least one verb");
  }
  if (verbText !== undefined && !(TRANSFORM_VERBS as readonly string[]).includes(verbText)) {
    throw rowError(
      file,
      row,
      TRANSFORM_COLUMN,
      `trans_verb[0]: "${verbText}" is not one of ${TRANSFORM_VERBS.join(", ")}`,
    );
  }
  const branches: Branch[] = data.branches.map((b) => ({
    dependencies: b.dependencies,
    condition: b.condition,
  }));
  return {
    specId: row.specId,
    specName: specName(data.spec_name, data.specification),
    specification: data.specification,
    verb: verbText as TransformVerb | undefined,
    code: data.code,
    ...(data.code_sql !== undefined ? { codeSql: data.code_sql } : {}),
    rationale: data.rationale,
    mapping: data.input_cols_to_output_col_mapping,
    branches,
    annotator: data.annotator,
  };
}

function modelSpec(file: string, row: AnnotationRow): ModelSpec {
  const data = parseJsonCell(file, row, MODEL_COLUMN, modelSchema);
  return {
    specId: row.specId,
    specName: specName(data.spec_name, data.specification),
    specification: data.specification,
    rationale: data.rationale,
    code: data.code,
    ...(data.code_sql !== undefined ? { codeSql: data.code_sql } : {}),
    columnsOrig: data.associated_columns_orig,
    columnsDerived: data.associated_columns_derived,
    columnsDerivedSpecIds: data.associated_columns_derived_spec_ids,
    annotator: data.annotator,
  };
}

function cvarSpec(file: string, row: AnnotationRow): ConceptualVarSpec {
  const data = parseJsonCell(file, row, CVAR_COLUMN, cvarSchema);
  return {
    specId: row.specId,
    role: data.variable_type,
    concept: data.concept,
    interaction: data.interaction,
    on: data.on,
    rationale: data.rationale,
    columnsOrig: data.final_columns_orig,
    columnsDerived: data.final_columns_derived,
    columnsDerivedSpecIds: data.final_columns_derived_spec_ids,
    annotator: data.annotator,
  };
}

function readRows(textOfFile: string, file: string): AnnotationRow[] {
  let records: Record<string, string>[];
  try {
    records = parse(textOfFile, { columns: true, bom: true, skip_empty_lines: true });
  } catch (error) {
    throw new BladeDatasetError(`${file}: not a readable CSV (${(error as Error).message})`);
  }
  const first = records[0];
  if (first !== undefined && !("spec_id" in first)) {
    throw new BladeDatasetError(`${file}: the header has no spec_id column`);
  }
  return records.map((cells, i) => ({ row: i + 1, specId: (cells.spec_id ?? "").trim(), cells }));
}

/** Every dependency names a transform spec, and the dependencies form no cycle. */
function checkDependencies(
  file: string,
  transforms: TransformSpec[],
  rows: Map<string, AnnotationRow>,
) {
  const ids = new Set(transforms.map((t) => t.specId));
  for (const spec of transforms) {
    spec.branches.forEach((branch, b) => {
      branch.dependencies.forEach((dep, d) => {
        if (!ids.has(dep)) {
          throw rowError(
            file,
            rows.get(spec.specId) as AnnotationRow,
            TRANSFORM_COLUMN,
            `branches[${b}].dependencies[${d}]: no transform spec has the id "${dep}"`,
          );
        }
      });
    });
  }
  // Depth-first search for a cycle (BLADE's topological sort would fail on one).
  const parents = new Map(
    transforms.map((t) => [t.specId, t.branches.flatMap((b) => b.dependencies)]),
  );
  const state = new Map<string, "open" | "done">();
  const visit = (id: string): void => {
    if (state.get(id) === "done") return;
    if (state.get(id) === "open") {
      throw rowError(
        file,
        rows.get(id) as AnnotationRow,
        TRANSFORM_COLUMN,
        "branches: the dependencies form a cycle",
      );
    }
    state.set(id, "open");
    for (const parent of parents.get(id) ?? []) visit(parent);
    state.set(id, "done");
  };
  for (const spec of transforms) visit(spec.specId);
}

/**
 * Parses the text of an annotations.csv into the ground truth. `file` names the file in errors.
 * The dependency_graph JSON, tisane and annotate_* columns are not read (BLADE derives paths
 * from `branches` only).
 */
export function parseAnnotations(textOfFile: string, file = "annotations.csv"): GroundTruth {
  const rows = readRows(textOfFile, file);
  const transforms: TransformSpec[] = [];
  const models: ModelSpec[] = [];
  const cvars: ConceptualVarSpec[] = [];
  const transformRows = new Map<string, AnnotationRow>();
  for (const row of rows) {
    const has = (column: string) => !isMissing(row.cells[column]);
    if (!has(TRANSFORM_COLUMN) && !has(MODEL_COLUMN) && !has(CVAR_COLUMN)) continue;
    if (row.specId === "") {
      throw new BladeDatasetError(`${file} row ${row.row}: spec_id: missing`);
    }
    if (has(TRANSFORM_COLUMN)) {
      if (transformRows.has(row.specId)) {
        throw rowError(
          file,
          row,
          "spec_id",
          "another row already holds a transform spec with this id",
        );
      }
      transforms.push(transformSpec(file, row));
      transformRows.set(row.specId, row);
    }
    if (has(MODEL_COLUMN)) models.push(modelSpec(file, row));
    if (has(CVAR_COLUMN)) cvars.push(cvarSpec(file, row));
  }
  if (!transformRows.has(ROOT_SPEC_ID)) {
    throw new BladeDatasetError(`${file}: no row holds the ${ROOT_SPEC_ID} transform spec`);
  }
  checkDependencies(file, transforms, transformRows);
  return { transforms, models, cvars };
}
