/**
 * Reading a BLADE dataset folder (docs/blade-spec.md §4): `data.csv` (only its header here; the
 * frame itself is read by read-csv.ts the way pandas does), `info.json` (research questions and
 * the column descriptions) and `annotations.csv` (the ground truth, annotations.ts). clade's own
 * datasets use the same layout plus two optional extensions: `info.json` may hold
 * `"clade": {"true_effect": {...}}` and a transform or model spec may carry `code_sql`.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parse } from "csv-parse/sync";
import { z } from "zod";
import { BladeDatasetError, parseAnnotations, zodIssue } from "./annotations.js";
import { ANNOTATIONS_FILE, DATA_FILE, INFO_FILE } from "./folders.js";
import type { BladeDataset, FieldInfo, TrueEffect } from "./specs.js";

export { BladeDatasetError } from "./annotations.js";

export { ANNOTATIONS_FILE, DATA_FILE, INFO_FILE, listBladeDatasets } from "./folders.js";

/** How much of data.csv is read for its header. */
const HEADER_BYTES = 64 * 1024;

const fieldSchema = z.object({
  column: z.string({ error: "must be a string" }),
  properties: z.record(z.string(), z.unknown(), { error: "must be an object" }).default({}),
});

const trueEffectSchema = z.object({
  iv: z.string(),
  dv: z.string(),
  direction: z.enum(["positive", "negative", "none"]),
  sizes: z
    .array(
      z.object({
        family: z.string(),
        link: z.string(),
        value: z.number(),
        tolerance: z.number().nonnegative(),
      }),
    )
    .default([]),
  process: z.string().default(""),
});

const infoSchema = z.object({
  research_questions: z
    .array(z.string(), { error: "must be a list of questions" })
    .min(1, "must hold at least one question"),
  data_desc: z.object(
    {
      dataset_description: z.string().default(""),
      fields: z.array(fieldSchema, { error: "must be a list of fields" }).default([]),
      num_rows: z.number({ error: "must be a number" }).int().nonnegative().optional(),
      field_names: z.array(z.string(), { error: "must be a list of column names" }).optional(),
    },
    { error: "must be an object" },
  ),
  clade: z.object({ true_effect: trueEffectSchema.optional() }).optional(),
});

function readText(dir: string, file: string): string {
  const path = join(dir, file);
  if (!existsSync(path)) throw new BladeDatasetError(`${path}: no such file`);
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new BladeDatasetError(`${path}: cannot read the file (${(error as Error).message})`);
  }
}

/** data.csv's column names, read from its first record only. */
function readDataHeader(dir: string): string[] {
  const path = join(dir, DATA_FILE);
  if (!existsSync(path)) throw new BladeDatasetError(`${path}: no such file`);
  let records: string[][];
  try {
    // The first record only (a quoted name may hold a newline, so not just the first line);
    // the first 64 KiB are plenty for a header.
    const head = readFileSync(path).subarray(0, HEADER_BYTES).toString("utf8");
    records = parse(head, { to: 1, bom: true, relax_column_count: true });
  } catch (error) {
    throw new BladeDatasetError(`${path}: cannot read the header (${(error as Error).message})`);
  }
  const header = records[0];
  if (!header || header.length === 0 || header.every((name) => name === "")) {
    throw new BladeDatasetError(`${path}: the file has no header line`);
  }
  return pandasColumnNames(header);
}

/**
 * The names pandas gives the header's fields: an empty one becomes "Unnamed: i", a repeated one
 * "name.1", "name.2", ... (the common cases of pandas' rule; read-csv.ts has the full rule).
 */
function pandasColumnNames(fields: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return fields.map((field, i) => {
    const name = field === "" ? `Unnamed: ${i}` : field;
    const count = seen.get(name) ?? 0;
    seen.set(name, count + 1);
    return count === 0 ? name : `${name}.${count}`;
  });
}

/** The number of data rows of data.csv (blank lines skipped, as pandas does). */
function countDataRows(dir: string): number {
  const path = join(dir, DATA_FILE);
  try {
    const records: unknown[] = parse(readFileSync(path, "utf8"), {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
    });
    return Math.max(records.length - 1, 0);
  } catch (error) {
    throw new BladeDatasetError(`${path}: not a readable CSV (${(error as Error).message})`);
  }
}

function fieldInfo(field: z.output<typeof fieldSchema>): FieldInfo {
  const { description, dtype, semantic_type: _semanticType, ...rest } = field.properties;
  return {
    column: field.column,
    description: typeof description === "string" ? description : "",
    dtype: typeof dtype === "string" ? dtype : "",
    properties: rest,
  };
}

function trueEffect(effect: z.output<typeof trueEffectSchema>): TrueEffect {
  return {
    iv: effect.iv,
    dv: effect.dv,
    direction: effect.direction,
    sizes: effect.sizes,
    process: effect.process,
  };
}

/**
 * Reads a dataset folder. Errors are BladeDatasetErrors naming the file (and, for
 * annotations.csv, the row, spec id and field): a missing file, bad JSON, a field of the wrong
 * type, a dependency on an unknown spec id, a header that disagrees with info.json.
 */
export function readBladeDataset(dir: string): BladeDataset {
  const folder = resolve(dir);
  const infoPath = join(folder, INFO_FILE);
  let infoJson: unknown;
  const infoText = readText(folder, INFO_FILE);
  try {
    infoJson = JSON.parse(infoText);
  } catch (error) {
    throw new BladeDatasetError(`${infoPath}: not JSON (${(error as Error).message})`);
  }
  const parsed = infoSchema.safeParse(infoJson);
  if (!parsed.success) throw new BladeDatasetError(`${infoPath}: ${zodIssue(parsed.error)}`);
  const info = parsed.data;

  const header = readDataHeader(folder);
  const fieldNames = info.data_desc.field_names;
  if (fieldNames && fieldNames.join("\u0000") !== header.join("\u0000")) {
    throw new BladeDatasetError(
      `${infoPath}: data_desc.field_names (${fieldNames.join(", ")}) differ from the header of ${DATA_FILE} (${header.join(", ")})`,
    );
  }

  const annotationsPath = join(folder, ANNOTATIONS_FILE);
  const groundTruth = parseAnnotations(readText(folder, ANNOTATIONS_FILE), annotationsPath);

  const effect = info.clade?.true_effect;
  for (const key of ["iv", "dv"] as const) {
    if (effect && !header.includes(effect[key])) {
      throw new BladeDatasetError(
        `${infoPath}: clade.true_effect.${key}: "${effect[key]}" is not a column of ${DATA_FILE}`,
      );
    }
  }
  return {
    name: basename(folder),
    dir: folder,
    dataPath: join(folder, DATA_FILE),
    questions: info.research_questions,
    description: info.data_desc.dataset_description,
    fields: info.data_desc.fields.map(fieldInfo),
    fieldNames: header,
    rowCount: info.data_desc.num_rows ?? countDataRows(folder),
    groundTruth,
    ...(effect ? { trueEffect: trueEffect(effect) } : {}),
  };
}
