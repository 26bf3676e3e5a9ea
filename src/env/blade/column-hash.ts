/**
 * BLADE's column hashes (docs/blade-spec.md §1, `blade_bench/nb/df_hash.py`): every column's
 * cells become texts by dtype, joined with ":" in row order and hashed with SHA-256. The value
 * hash decides "value matching" of transforms; the categorical hash is BLADE's diagnostic variant.
 *
 * The categorical pass runs, as in BLADE, on the frame the value pass already turned into texts
 * (§1.5): so every column whose distinct prepared texts are fewer than half its rows is replaced by
 * factorisation codes, and every other column goes through the object-column preparation a second
 * time — which can turn a year column ("1999", "2004", ...) into dates.
 *
 * An empty frame (no rows) makes BLADE raise in the categorical pass (0/0); clade does not fail
 * there and gives each column its value hash as categorical hash.
 *
 * Speed: one pass per column, no regular expressions per cell; the datetime attempt stops at the
 * first value that is not a date, which for ordinary text or number columns is the first row.
 */
import { createHash } from "node:crypto";
import type { Column, ColumnHashes, Frame } from "./frame.js";
import { type DatetimeParseOptions, parseDatetimeColumn } from "./pandas-datetime.js";
import { formatPythonFloat, pythonRound } from "./python-float.js";

/** BLADE's HASH_FIELD_SEPARATOR. */
export const HASH_FIELD_SEPARATOR = ":";
/** BLADE's DFValueHasher float_precision. */
export const FLOAT_DECIMALS = 5;
/** Columns whose distinct values are fewer than this share of the rows are factorised. */
export const CATEGORICAL_UNIQUE_RATIO = 0.5;
/** How pandas' `astype(str)` writes a missing value left in a prepared column (NaN from NaT). */
const MISSING_TEXT = "nan";
/** Cells joined per hash update. */
const HASH_BATCH_CELLS = 65_536;

/** Prepared cell texts; null is a missing value still present (written "nan" when hashed). */
export type PreparedTexts = (string | null)[];

/** SHA-256 hex digest of the texts joined with ":" (null cells as "nan"), BLADE's hash_string_iterable. */
export function valueHashOfTexts(texts: readonly (string | null)[]): string {
  const hash = createHash("sha256");
  // Hash in batches: one update per cell costs more than building the joined text.
  for (let start = 0; start < texts.length; start += HASH_BATCH_CELLS) {
    const end = Math.min(start + HASH_BATCH_CELLS, texts.length);
    const parts = new Array<string>(end - start);
    for (let i = start; i < end; i++) parts[i - start] = texts[i] ?? MISSING_TEXT;
    if (start > 0) hash.update(HASH_FIELD_SEPARATOR);
    hash.update(parts.join(HASH_FIELD_SEPARATOR), "utf8");
  }
  return hash.digest("hex");
}

/** Value hash and categorical hash of every column, in the frame's column order. */
export function hashFrame(frame: Frame, options: DatetimeParseOptions = {}): ColumnHashes[] {
  return frame.columns.map((column) => {
    const prepared = prepareColumn(column, options);
    const value = valueHashOfTexts(prepared);
    const categorical =
      frame.rowCount === 0
        ? value
        : valueHashOfTexts(prepareCategorical(column, prepared, options));
    return { name: column.name, value, categorical };
  });
}

/** The value pass (`_prep_series`): each cell's text by the column's dtype (§1.2). */
export function prepareColumn(column: Column, options: DatetimeParseOptions = {}): PreparedTexts {
  const values = column.values;
  switch (column.dtype) {
    case "int64":
      return values.map((v) => String(v ?? 0));
    case "float64":
      return values.map((v) => {
        const x = typeof v === "number" && !Number.isNaN(v) ? v : 0;
        return formatPythonFloat(pythonRound(x, FLOAT_DECIMALS));
      });
    case "bool":
      return values.map((v) => (v ? "True" : "False"));
    case "object": {
      const texts = values.map(objectText);
      const dates =
        column.datetimeParse !== undefined
          ? column.datetimeParse
          : parseDatetimeColumn(texts, options);
      return dates ?? texts;
    }
    case "datetime64":
    case "other":
      return values.map((v) => (v === null ? null : String(v)));
  }
}

/** An object cell after `fillna("")`. */
function objectText(v: Column["values"][number]): string {
  if (v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "True" : "False";
  return Number.isInteger(v) ? String(v) : formatPythonFloat(v);
}

/**
 * The categorical pass on the prepared texts (`_prep_series_categorical` over the frame `hash()`
 * left behind): factorisation codes below the unique ratio, else the object preparation again.
 */
function prepareCategorical(
  column: Column,
  prepared: PreparedTexts,
  options: DatetimeParseOptions,
): PreparedTexts {
  // Distinct prepared texts, counted only up to the threshold (large unique columns are common).
  const limit = CATEGORICAL_UNIQUE_RATIO * prepared.length;
  const codes = new Map<string, number>();
  for (const text of prepared) {
    if (text === null || codes.has(text)) continue;
    codes.set(text, codes.size);
    if (codes.size >= limit) break;
  }
  if (codes.size < limit) {
    return prepared.map((text) => (text === null ? "-1" : String(codes.get(text))));
  }
  if (column.dtype === "object" || column.dtype === "datetime64") {
    // Object texts re-parse exactly as they did in the value pass (the same strings, or dates
    // that pandas wrote itself and reads back unchanged), so the second preparation is a no-op.
    return prepared;
  }
  const texts = prepared.map((text) => text ?? "");
  return parseDatetimeColumn(texts, options) ?? texts;
}
