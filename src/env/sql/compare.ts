/**
 * Judging an answer: its result must hold the gold result's rows. Rows compare as a multiset
 * unless the gold query orders its output; column names never matter, the number of columns
 * does, and the columns may come in any order (the same order in every row).
 */

/** Up to this many columns every column order is tried; wider results must match as given. */
const MAX_PERMUTED_COLUMNS = 5;

/**
 * A cell's comparison key: numbers by value to 10 significant digits (so 1 = 1.0 and float
 * noise from a different summation order does not count), text exactly, NULL as itself.
 */
export function cellKey(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number") {
    if (Number.isInteger(value) || !Number.isFinite(value)) return `n${value === 0 ? 0 : value}`;
    return `n${Number(value.toPrecision(10))}`;
  }
  if (typeof value === "bigint") return `n${value}`;
  if (typeof value === "string") return `s${value}`;
  if (value instanceof Uint8Array) return `b${Buffer.from(value).toString("hex")}`;
  return `?${String(value)}`;
}

export interface ComparableResult {
  columns: readonly unknown[];
  rows: readonly (readonly unknown[])[];
}

/** Whether the gold query's outermost SELECT has an ORDER BY (outside any parentheses). */
export function hasOuterOrderBy(sql: string): boolean {
  let depth = 0;
  let quote = "";
  for (let i = 0; i < sql.length; i++) {
    const char = sql[i] as string;
    if (quote) {
      if (char === quote) quote = "";
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === "(") {
      depth++;
    } else if (char === ")") {
      depth--;
    } else if (
      depth === 0 &&
      !/\w/.test(sql[i - 1] ?? "") &&
      /^order\s+by\b/i.test(sql.slice(i, i + 12))
    ) {
      return true;
    }
  }
  return false;
}

function* permutations(n: number): Generator<number[]> {
  const order = Array.from({ length: n }, (_, i) => i);
  yield order.slice();
  if (n > MAX_PERMUTED_COLUMNS) return;
  // Heap's algorithm, iterative.
  const counters = new Array<number>(n).fill(0);
  let i = 0;
  while (i < n) {
    if ((counters[i] as number) < i) {
      const j = i % 2 === 0 ? 0 : (counters[i] as number);
      [order[j], order[i]] = [order[i] as number, order[j] as number];
      yield order.slice();
      counters[i] = (counters[i] as number) + 1;
      i = 0;
    } else {
      counters[i] = 0;
      i++;
    }
  }
}

/** Whether `actual` answers with the same result as `expected`. */
export function sameResult(
  expected: ComparableResult,
  actual: ComparableResult,
  ordered: boolean,
): boolean {
  const width = expected.columns.length;
  if (actual.columns.length !== width || actual.rows.length !== expected.rows.length) return false;
  const expectedCells = expected.rows.map((row) => row.map(cellKey));
  const actualCells = actual.rows.map((row) => row.map(cellKey));
  const rowKey = (cells: readonly string[]) => JSON.stringify(cells);
  const expectedKeys = expectedCells.map(rowKey);
  if (!ordered) expectedKeys.sort();
  for (const order of permutations(width)) {
    const keys = actualCells.map((cells) => rowKey(order.map((column) => cells[column] as string)));
    if (!ordered) keys.sort();
    if (keys.every((key, i) => key === expectedKeys[i])) return true;
  }
  return false;
}
