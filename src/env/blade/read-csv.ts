/**
 * Reads a CSV the way BLADE does: `pd.read_csv(path)` of pandas 1.5.3 with no options
 * (docs/blade-spec.md §8). Column dtypes decide how values are hashed (§1.2), so the C parser's
 * inference is reproduced rule by rule — NA strings, int64 → uint64 → float64 → bool → object,
 * its own float conversion (not correctly rounded, see `pandasStrtod`), chunked reading and
 * header mangling — and checked against real pandas by tests/fixtures/blade/hash/goldens.json.
 *
 * Deviations (a clear CsvReadError or a documented approximation instead): an implicit index
 * column (data rows wider than the header) and text after a closing quote (`"ab"c`) are
 * rejected, where pandas accepts them; integers outside ±2^53 keep their exact decimal text but
 * are typed "other" (pandas: int64 or uint64; their hashes are the same); an int column holding
 * -2^63 next to a missing value (pandas' NA sentinel) is not emulated; line numbers in errors
 * count physical lines and may differ from pandas' own.
 */
import { readFileSync } from "node:fs";
import { parse } from "csv-parse/sync";
import type { Cell, Column, Dtype, Frame } from "./frame.js";
import { formatPythonFloat } from "./python-float.js";

/** pandas 1.5's default NA strings (`_libs/parsers.pyx: STR_NA_VALUES`); "None" came with pandas 2. */
export const PANDAS_NA_STRINGS: ReadonlySet<string> = new Set([
  "",
  "#N/A",
  "#N/A N/A",
  "#NA",
  "-1.#IND",
  "-1.#QNAN",
  "-NaN",
  "-nan",
  "1.#IND",
  "1.#QNAN",
  "<NA>",
  "N/A",
  "NA",
  "NULL",
  "NaN",
  "n/a",
  "nan",
  "null",
]);

/** The C parser reads data in chunks of this many cells (rounded down to a power of two of rows). */
const CHUNK_CELLS = 2 ** 20;
/** Largest power of ten in precise_xstrtod's table; larger decimal exponents are out of range. */
const MAX_DECIMAL_EXPONENT = 308;
/** precise_xstrtod keeps at most this many significant digits. */
const MAX_MANTISSA_DIGITS = 17;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

export class CsvReadError extends Error {
  override name = "CsvReadError";
}

/** Read and parse a CSV file; any failure is a CsvReadError naming the file. */
export function readCsvFile(path: string): Frame {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new CsvReadError(`${path}: cannot read the file (${(error as Error).message})`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new CsvReadError(`${path}: not valid UTF-8 (pandas' default encoding)`);
  }
  return readCsvFrame(text, path);
}

interface Row {
  fields: string[];
  line: number;
}

/** Parse CSV text as pd.read_csv would; `source` names the input in error messages. */
export function readCsvFrame(text: string, source: string): Frame {
  const rows = tokenize(text, source);
  const headerRow = rows[0];
  if (!headerRow) throw new CsvReadError(`${source}: no columns to parse from file (empty file)`);
  const names = headerNames(headerRow.fields);
  const width = names.length;
  const data = rows.slice(1);
  for (const [index, row] of data.entries()) {
    if (row.fields.length <= width) continue;
    if (index === 0) {
      throw new CsvReadError(
        `${source}: line ${row.line} has ${row.fields.length} fields but the header has ${width}; ` +
          "pandas would take the first column as an index, which clade does not support",
      );
    }
    throw new CsvReadError(
      `${source}: expected ${width} fields in line ${row.line}, saw ${row.fields.length}`,
    );
  }
  const chunkRows = chunkRowCount(width);
  const columns: Column[] = names.map((name, col) => {
    const tokens = data.map((row) => row.fields[col]);
    return { name, ...convertColumn(tokens, chunkRows) };
  });
  return { columns, rowCount: data.length };
}

/** Records of the file, blank (and whitespace-only) lines skipped as pandas' skip_blank_lines does. */
function tokenize(text: string, source: string): Row[] {
  let records: { record: string[]; raw: string }[];
  try {
    records = parse(text, {
      bom: true,
      raw: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
    }) as unknown as { record: string[]; raw: string }[];
  } catch (error) {
    const message = (error as Error).message.replace(/\s+/g, " ");
    throw new CsvReadError(`${source}: cannot tokenize the CSV (${message})`);
  }
  const rows: Row[] = [];
  let line = 1;
  for (const { record, raw } of records) {
    const start = line;
    line += 1 + countNewlines(raw);
    if (raw.trim() === "") continue;
    rows.push({ fields: record, line: start });
  }
  return rows;
}

function countNewlines(raw: string): number {
  let count = 0;
  for (let i = raw.indexOf("\n"); i >= 0 && i < raw.length - 1; i = raw.indexOf("\n", i + 1))
    count++;
  return count;
}

/** Empty names become "Unnamed: i"; duplicates get ".1", ".2" ... as parsers.pyx `_get_header` does. */
function headerNames(fields: readonly string[]): string[] {
  const names = fields.map((field, i) => (field === "" ? `Unnamed: ${i}` : field));
  const unnamed = fields.flatMap((field, i) => (field === "" ? [i] : []));
  // Given names are de-duplicated before the generated "Unnamed: i" ones.
  const order = [...names.keys()].filter((i) => fields[i] !== "").concat(unnamed);
  const counts = new Map<string, number>();
  for (const i of order) {
    const original = names[i] as string;
    let name = original;
    let count = counts.get(name) ?? 0;
    if (count > 0) {
      while (count > 0) {
        counts.set(original, count + 1);
        name = `${original}.${count}`;
        count = names.includes(name) ? count + 1 : (counts.get(name) ?? 0);
      }
    }
    names[i] = name;
    counts.set(name, count + 1);
  }
  return names;
}

function chunkRowCount(width: number): number {
  const heuristic = Math.floor(CHUNK_CELLS / width);
  let rows = 1;
  while (rows * 2 < heuristic) rows *= 2;
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Dtype inference, one chunk at a time (parsers.pyx: _convert_tokens, _concatenate_chunks)

/** A converted chunk: its pandas dtype and, per cell, the value and (for object results) its text. */
type Chunk =
  | { kind: "int64"; values: bigint[] }
  | { kind: "uint64"; values: bigint[] }
  | { kind: "float64"; values: number[] }
  | { kind: "bool"; values: boolean[] }
  /** Object cells: the text, or null for a missing value. */
  | { kind: "object"; values: (string | null)[] };

function convertColumn(
  tokens: readonly (string | undefined)[],
  chunkRows: number,
): Omit<Column, "name"> {
  const chunks: Chunk[] = [];
  for (let start = 0; start < tokens.length; start += chunkRows) {
    chunks.push(convertChunk(tokens.slice(start, start + chunkRows)));
  }
  if (chunks.length === 0) return { dtype: "object", values: [] };
  return combineChunks(chunks);
}

/** Tokens of one chunk; undefined = the row was too short (a missing value). */
function convertChunk(tokens: readonly (string | undefined)[]): Chunk {
  const isNa = tokens.map((t) => t === undefined || PANDAS_NA_STRINGS.has(t));
  const naCount = isNa.filter(Boolean).length;
  const present = (i: number): string => tokens[i] as string;

  // int64, falling back to uint64 on overflow.
  let intResult: "ok" | "invalid" | "overflow" = "ok";
  const ints: bigint[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (isNa[i]) {
      ints.push(0n);
      continue;
    }
    const parsed = parseCInteger(present(i), INT64_MIN, INT64_MAX);
    if (parsed === "invalid") {
      intResult = "invalid";
      break;
    }
    if (parsed === "overflow") {
      intResult = "overflow";
      break;
    }
    ints.push(parsed);
  }
  if (intResult === "ok") {
    if (naCount === 0) return { kind: "int64", values: ints };
    // _maybe_upcast: an integer column with missing values becomes float64.
    return { kind: "float64", values: ints.map((v, i) => (isNa[i] ? Number.NaN : Number(v))) };
  }
  if (intResult === "overflow") {
    const unsigned = convertUint64(tokens, isNa);
    if (unsigned === "object") return objectChunk(tokens, isNa);
    if (unsigned === "object-no-na") return { kind: "object", values: tokens.map((t) => t ?? "") };
    if (unsigned !== "invalid") return { kind: "uint64", values: unsigned };
  }

  // float64
  const floats: number[] = [];
  let floatsOk = true;
  for (let i = 0; i < tokens.length; i++) {
    if (isNa[i]) {
      floats.push(Number.NaN);
      continue;
    }
    const value = parsePandasFloat(present(i));
    if (value === null) {
      floatsOk = false;
      break;
    }
    floats.push(value);
  }
  if (floatsOk) return { kind: "float64", values: floats };

  // bool: true/false in any letter case, nothing else (no surrounding spaces).
  const bools: boolean[] = [];
  let boolsOk = true;
  for (let i = 0; i < tokens.length; i++) {
    if (isNa[i]) {
      bools.push(false);
      continue;
    }
    const lower = present(i).toLowerCase();
    if (lower === "true") bools.push(true);
    else if (lower === "false") bools.push(false);
    else {
      boolsOk = false;
      break;
    }
  }
  if (boolsOk) {
    if (naCount === 0) return { kind: "bool", values: bools };
    // _maybe_upcast: booleans with missing values become an object column of True/False/NaN.
    return { kind: "object", values: bools.map((b, i) => (isNa[i] ? null : b ? "True" : "False")) };
  }
  return objectChunk(tokens, isNa);
}

function objectChunk(tokens: readonly (string | undefined)[], isNa: readonly boolean[]): Chunk {
  return { kind: "object", values: tokens.map((t, i) => (isNa[i] ? null : (t as string))) };
}

/**
 * parsers.pyx `_try_uint64`: "invalid" sends the column on to float64; "object" is the
 * OverflowError fallback (NA strings still missing); "object-no-na" the ValueError fallback
 * (unsigned values mixed with negatives or NAs: the column is kept as raw text, NA strings too).
 */
function convertUint64(
  tokens: readonly (string | undefined)[],
  isNa: readonly boolean[],
): bigint[] | "invalid" | "object" | "object-no-na" {
  let seenSigned = false;
  let seenUnsigned = false;
  let seenNull = false;
  const values: bigint[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (isNa[i]) {
      seenNull = true;
      values.push(0n);
      continue;
    }
    const token = tokens[i] as string;
    if (token.trimStart().startsWith("-")) {
      // str_to_uint64 only notes the sign and reads nothing further.
      seenSigned = true;
      values.push(0n);
      continue;
    }
    const parsed = parseCInteger(token, 0n, UINT64_MAX);
    if (parsed === "invalid") return "invalid";
    if (parsed === "overflow") return "object";
    if (parsed > INT64_MAX) seenUnsigned = true;
    values.push(parsed);
  }
  if (seenUnsigned && (seenSigned || seenNull)) return "object-no-na";
  if (seenSigned) return "object";
  return values;
}

const C_SPACE = new Set([" ", "\t", "\n", "\v", "\f", "\r"]);

function isCSpace(ch: string | undefined): boolean {
  return ch !== undefined && C_SPACE.has(ch);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * pandas 1.5's str_to_int64 / str_to_uint64 (tokenizer.c): optional C whitespace, an optional
 * sign, decimal digits, optional trailing whitespace. The range check runs while the digits are
 * read, so a too-large digit run is "overflow" whatever follows it ("99999999999999999999.5").
 */
function parseCInteger(token: string, min: bigint, max: bigint): bigint | "invalid" | "overflow" {
  let i = 0;
  while (isCSpace(token[i])) i++;
  const signStart = i;
  if (token[i] === "+" || token[i] === "-") i++;
  const digitStart = i;
  while (i < token.length && isDigit(token.charCodeAt(i))) i++;
  if (i === digitStart) return "invalid";
  const digitsEnd = i;
  const value = BigInt(token.slice(digitStart, digitsEnd));
  const signed = token[signStart] === "-" ? -value : value;
  if (signed < min || signed > max) return "overflow";
  while (isCSpace(token[i])) i++;
  return i === token.length ? signed : "invalid";
}

const INFINITY_WORDS = new Set(["inf", "+inf", "infinity", "+infinity"]);
const NEG_INFINITY_WORDS = new Set(["-inf", "-infinity"]);

/** A float cell as the C parser reads it (precise_xstrtod, then its infinity words), or null. */
export function parsePandasFloat(token: string): number | null {
  const value = pandasStrtod(token);
  if (value !== null) return value;
  const lower = token.toLowerCase();
  if (INFINITY_WORDS.has(lower)) return Number.POSITIVE_INFINITY;
  if (NEG_INFINITY_WORDS.has(lower)) return Number.NEGATIVE_INFINITY;
  return null;
}

/** The powers of ten of precise_xstrtod's table (each the double nearest 10^k). */
const POWERS_OF_TEN: readonly number[] = Array.from({ length: MAX_DECIMAL_EXPONENT + 1 }, (_, k) =>
  Number(`1e${k}`),
);

/**
 * pandas 1.5's `precise_xstrtod` (tokenizer.c), the default float converter of read_csv. It is
 * not correctly rounded: it accumulates up to 17 digits in a double and scales by one power of
 * ten, so its result can differ from JS `Number()` in the last bit. null = not a number (or
 * out of range, which pandas also rejects, e.g. "1e400").
 */
export function pandasStrtod(token: string): number | null {
  let i = 0;
  const n = token.length;
  while (isCSpace(token[i])) i++;
  let negative = false;
  if (token[i] === "-" || token[i] === "+") {
    negative = token[i] === "-";
    i++;
  }
  let number = 0;
  let exponent = 0;
  let digits = 0;
  let decimals = 0;
  while (i < n && isDigit(token.charCodeAt(i))) {
    if (digits < MAX_MANTISSA_DIGITS) {
      number = number * 10 + (token.charCodeAt(i) - 48);
      digits++;
    } else {
      exponent++;
    }
    i++;
  }
  if (token[i] === ".") {
    i++;
    while (digits < MAX_MANTISSA_DIGITS && i < n && isDigit(token.charCodeAt(i))) {
      number = number * 10 + (token.charCodeAt(i) - 48);
      i++;
      digits++;
      decimals++;
    }
    if (digits >= MAX_MANTISSA_DIGITS) while (i < n && isDigit(token.charCodeAt(i))) i++;
    exponent -= decimals;
  }
  if (digits === 0) return null;
  if (negative) number = -number;
  if (token[i] === "e" || token[i] === "E") {
    const ePos = i;
    i++;
    let expNegative = false;
    if (token[i] === "-" || token[i] === "+") {
      expNegative = token[i] === "-";
      i++;
    }
    const expStart = i;
    let value = 0;
    while (i < n && isDigit(token.charCodeAt(i))) {
      value = value * 10 + (token.charCodeAt(i) - 48);
      i++;
    }
    if (i === expStart)
      i = ePos; // no digits: the "e" is not part of the number
    else exponent += expNegative ? -value : value;
  }
  if (exponent > MAX_DECIMAL_EXPONENT) return null;
  if (exponent > 0) number *= POWERS_OF_TEN[exponent] as number;
  else if (exponent < -MAX_DECIMAL_EXPONENT) {
    if (exponent < -2 * MAX_DECIMAL_EXPONENT) number = 0;
    else {
      number /= POWERS_OF_TEN[-MAX_DECIMAL_EXPONENT - exponent] as number;
      number /= POWERS_OF_TEN[MAX_DECIMAL_EXPONENT] as number;
    }
  } else number /= POWERS_OF_TEN[-exponent] as number;
  if (!Number.isFinite(number)) return null;
  while (isCSpace(token[i])) i++;
  return i === n ? number : null;
}

// ---------------------------------------------------------------------------------------------
// Combining chunks (c_parser_wrapper.py: _concatenate_chunks, numpy's common type)

function combineChunks(chunks: Chunk[]): Omit<Column, "name"> {
  const kinds = new Set(chunks.map((c) => c.kind));
  if (kinds.size === 1) return finish(chunks[0]?.kind as Chunk["kind"], chunks);
  if (!kinds.has("object")) {
    // numpy's common type of bool / int64 / uint64 / float64 chunks; bools count as 0 and 1.
    const toFloat = kinds.has("float64") || (kinds.has("int64") && kinds.has("uint64"));
    if (toFloat) {
      const values = chunks.flatMap((c): number[] =>
        c.kind === "float64"
          ? c.values
          : c.kind === "bool"
            ? c.values.map(Number)
            : (c.values as bigint[]).map(Number),
      );
      return { dtype: "float64", values };
    }
    const integers: Chunk[] = chunks.map((c) =>
      c.kind === "bool" ? { kind: "int64", values: c.values.map((b) => (b ? 1n : 0n)) } : c,
    );
    return finish("int64", integers);
  }
  // A mix with object chunks is an object column of the chunks' Python objects (pandas'
  // DtypeWarning case): numbers and booleans become their str() texts.
  const values = chunks.flatMap((c) => objectTexts(c));
  return { dtype: "object", values };
}

function finish(kind: Chunk["kind"], chunks: Chunk[]): Omit<Column, "name"> {
  switch (kind) {
    case "int64":
    case "uint64": {
      const all = chunks.flatMap((c) => c.values as bigint[]);
      // Integers a JS number cannot hold exactly keep their decimal text (hashes are unaffected).
      if (
        all.some((v) => v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
      ) {
        return { dtype: "other", values: all.map((v) => v.toString()) };
      }
      return { dtype: "int64", values: all.map(Number) };
    }
    case "float64":
    case "bool":
    case "object":
      return { dtype: kind as Dtype, values: chunks.flatMap((c) => c.values as Cell[]) };
  }
}

/** Python `str()` of each cell of a chunk once numpy has cast it to object; NaN stays missing. */
function objectTexts(chunk: Chunk): (string | null)[] {
  switch (chunk.kind) {
    case "int64":
    case "uint64":
      return chunk.values.map((v) => v.toString());
    case "float64":
      return chunk.values.map((v) => (Number.isNaN(v) ? null : formatPythonFloat(v)));
    case "bool":
      return chunk.values.map((v) => (v ? "True" : "False"));
    case "object":
      return chunk.values;
  }
}
