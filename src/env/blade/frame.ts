/**
 * A data frame as BLADE's matching sees it: columns in order, each with the pandas dtype that
 * decides how its values are hashed. Frames come from either runtime (pandas in the sandbox, or
 * the embedded SQL engine) and from reading a CSV the way pandas' read_csv does.
 */

/**
 * The dtypes hashing distinguishes (docs/blade-spec.md §1.2). "other" stands for anything
 * else pandas may hold (timedelta, category, nullable extension types): its cells are hashed
 * by their text as pandas prints them.
 */
export type Dtype = "int64" | "float64" | "bool" | "object" | "datetime64" | "other";

/**
 * One cell. By dtype:
 * - int64: a number (a safe integer) — never null (pandas has no missing int64);
 * - float64: a number, NaN for a missing value (±Infinity allowed);
 * - bool: a boolean — never null;
 * - object: the cell's text (Python `str()` of the object), or null for a missing value;
 * - datetime64: the instant formatted "YYYY-MM-DD HH:MM:SS", or null for NaT;
 * - other: the cell's text as pandas prints it (missing values included, e.g. "NaT", "<NA>").
 */
export type Cell = number | string | boolean | null;

export interface Column {
  name: string;
  dtype: Dtype;
  values: Cell[];
  /**
   * For object columns whose frame came from pandas: the outcome of pandas' own datetime parse
   * attempt on the column (missing values as ""), formatted "YYYY-MM-DD HH:MM:SS" with null for
   * NaT; null when the whole column does not parse as dates. Absent: hashing emulates the
   * attempt itself (pandas 1.5 rules, docs/blade-spec.md §1.4).
   */
  datetimeParse?: (string | null)[] | null;
}

export interface Frame {
  columns: Column[];
  rowCount: number;
}

/** The two hashes of one column (hex SHA-256), in the frame's column order. */
export interface ColumnHashes {
  name: string;
  value: string;
  categorical: string;
}
