/**
 * Running agent-written SQL against a shared database safely: read-only single statements only,
 * a cost estimate from the query plan to refuse runaway joins before they start, and caps on rows,
 * result bytes and time while reading results. better-sqlite3 cannot interrupt a running
 * statement and the estimate cannot see every cost (table-valued functions over built strings,
 * heavy expressions per row), so the env runs these guards in a child process that a deadline
 * kills (query-pool.ts); runQuery itself is the in-child part.
 */
import type Database from "better-sqlite3";

/** Rows read before a query is cut off. */
export const MAX_ROWS = 10_000;
/** Longest SQL text accepted, in characters. */
export const MAX_SQL_LENGTH = 10_000;
/**
 * Reading rows stops after this long and returns what it has (truncated), so a slow stream of
 * rows ends with partial results before the query pool's hard deadline kills the query.
 */
export const READ_TIME_LIMIT_MS = 1_500;
/** Result size (estimated bytes) at which reading stops, so a result fits any reply. */
export const MAX_RESULT_BYTES = 8_000_000;
/** Most row visits the query plan may imply (about a second of SQLite work). */
export const MAX_PLAN_COST = 20_000_000;

export interface QueryResult {
  columns: string[];
  rows: unknown[][];
  /**
   * True when reading stopped at MAX_ROWS, MAX_RESULT_BYTES or the read time limit: rows holds
   * what was read.
   */
  truncated: boolean;
}

export type QueryOutcome = { ok: true; result: QueryResult } | { ok: false; error: string };

/** What the guard needs to know about the database a query runs on. */
export interface QueryTarget {
  connection: Database.Database;
  tableRows: ReadonlyMap<string, number>;
}

/** Pragmas that only read the schema; everything else a PRAGMA can do is refused. */
const SCHEMA_PRAGMAS = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
]);

/**
 * The first keyword of a statement, past leading whitespace, comments and parentheses, in
 * lower case ("" when there is none).
 */
export function leadingKeyword(sql: string): string {
  let i = 0;
  while (i < sql.length) {
    const char = sql[i] as string;
    if (char === "(" || /\s/.test(char)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else {
      break;
    }
  }
  return /^[a-z_]+/i.exec(sql.slice(i, i + 20))?.[0].toLowerCase() ?? "";
}

/** Statement kinds SQLite knows that change the database or the connection. */
const REFUSED_KEYWORDS = new Set([
  "alter",
  "analyze",
  "attach",
  "begin",
  "commit",
  "create",
  "delete",
  "detach",
  "drop",
  "end",
  "explain",
  "insert",
  "reindex",
  "release",
  "replace",
  "rollback",
  "savepoint",
  "update",
  "upsert",
  "vacuum",
]);

/** printf/format with a field width or precision this large (or given by *) builds huge text. */
const HUGE_FORMAT = /%[-+ 0#,!]*(?:\*|\d{4,})|%[-+ 0#,!]*\d*\.(?:\*|\d{4,})/;

/**
 * Why the statement may not run, or undefined when it is an allowed read-only query. Decided
 * from the text alone, before preparing: SQLite applies some pragmas (query_only among them)
 * while compiling them, even under EXPLAIN. Cheap, so the query pool also checks it before
 * sending a query to a child.
 */
export function refusal(sql: string): string | undefined {
  if (sql.length > MAX_SQL_LENGTH) return `the query is longer than ${MAX_SQL_LENGTH} characters`;
  const keyword = leadingKeyword(sql);
  if (/\b(?:printf|format)\s*\(/i.test(sql) && HUGE_FORMAT.test(sql)) {
    return "printf/format widths and precisions above 999 (or given by *) are not allowed";
  }
  if (keyword === "select" || keyword === "with" || keyword === "values") return undefined;
  if (keyword === "pragma") {
    const match = /^\s*pragma\s+(?:main\.)?(\w+)\s*\(\s*['"`]?\w+['"`]?\s*\)\s*$/i.exec(sql);
    if (match && SCHEMA_PRAGMAS.has((match[1] as string).toLowerCase())) return undefined;
    return (
      "only schema pragmas such as PRAGMA table_info(<table>) are allowed; the database " +
      "cannot be changed"
    );
  }
  if (keyword === "") return "the query is empty or does not start with a SQL keyword";
  if (REFUSED_KEYWORDS.has(keyword)) {
    return (
      `${keyword.toUpperCase()} statements are not allowed: the database is read-only, so ` +
      "only SELECT queries (optionally starting with WITH) can be run"
    );
  }
  return `near "${keyword}": syntax error (a query starts with SELECT or WITH)`;
}

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

/**
 * An estimate of the row visits a query plan implies: nested SCAN/SEARCH loops multiply (a full
 * scan by the table's rows, an equality search by a small fan-out), correlated subqueries run
 * once per outer row, and recursive CTEs count as unbounded.
 */
export function estimatePlanCost(plan: readonly PlanRow[], target: QueryTarget): number {
  const children = new Map<number, PlanRow[]>();
  for (const row of plan) {
    const list = children.get(row.parent);
    if (list) list.push(row);
    else children.set(row.parent, [row]);
  }
  const largest = Math.max(1, ...target.tableRows.values());
  const produced = new Map<string, number>();

  const loopFactor = (detail: string): number => {
    const name = /^(?:SCAN|SEARCH) (\S+)/.exec(detail)?.[1] ?? "";
    if (name === "CONSTANT") return 1;
    const rows = target.tableRows.get(name) ?? produced.get(name) ?? largest;
    if (detail.startsWith("SCAN")) return rows;
    if (/[<>]/.test(detail)) return rows;
    if (/PRIMARY KEY|rowid=/.test(detail)) return 1;
    return Math.min(rows, Math.ceil(Math.sqrt(rows)));
  };

  const estimate = (parent: number): { cost: number; rows: number } => {
    let loops = 1;
    let cost = 0;
    for (const node of children.get(parent) ?? []) {
      const { detail } = node;
      if (detail.startsWith("SCAN ") || detail.startsWith("SEARCH ")) {
        loops *= loopFactor(detail);
        cost += loops;
      } else if (detail.startsWith("RECURSIVE STEP") || detail.startsWith("SETUP")) {
        return { cost: Number.POSITIVE_INFINITY, rows: Number.POSITIVE_INFINITY };
      } else if (children.has(node.id)) {
        const inner = estimate(node.id);
        cost += (detail.startsWith("CORRELATED") ? loops : 1) * inner.cost;
        const named = /^(?:MATERIALIZE|CO-ROUTINE) (\S+)/.exec(detail)?.[1];
        if (named) produced.set(named, Math.max(1, inner.rows));
      }
    }
    return { cost, rows: loops };
  };
  return estimate(0).cost;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.replace(/\s+/g, " ");
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/**
 * Runs one read-only statement under the guards, in this process; never throws. Nothing here
 * can stop a statement that SQLite takes long over: the env runs it through the query pool.
 */
export function runQuery(
  target: QueryTarget,
  sql: string,
  readTimeLimitMs = READ_TIME_LIMIT_MS,
): QueryOutcome {
  const refused = refusal(sql);
  if (refused) return { ok: false, error: refused };
  let statement: Database.Statement;
  try {
    statement = target.connection.prepare(sql);
  } catch (error) {
    return { ok: false, error: describe(error) };
  }
  if (!statement.reader || !statement.readonly) {
    return { ok: false, error: "only read-only queries that return rows are allowed" };
  }
  if (leadingKeyword(sql) !== "pragma") {
    try {
      const plan = target.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as PlanRow[];
      if (estimatePlanCost(plan, target) > MAX_PLAN_COST) {
        return {
          ok: false,
          error:
            "the query would take too long (it joins large tables without join conditions, " +
            "or recurses); add join conditions or filters",
        };
      }
    } catch (error) {
      return { ok: false, error: describe(error) };
    }
  }
  return readRows(statement, readTimeLimitMs);
}

/** A cell's size for the result cap: text and blobs by length, anything else as 8 bytes. */
function cellBytes(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (value instanceof Uint8Array) return value.byteLength;
  return 8;
}

function readRows(statement: Database.Statement, readTimeLimitMs: number): QueryOutcome {
  const started = Date.now();
  const rows: unknown[][] = [];
  let bytes = 0;
  let truncated = false;
  try {
    const columns = statement.columns().map((column) => column.name);
    for (const row of statement.raw(true).iterate() as IterableIterator<unknown[]>) {
      if (rows.length >= MAX_ROWS) {
        truncated = true;
        break;
      }
      for (const cell of row) bytes += cellBytes(cell);
      if (bytes > MAX_RESULT_BYTES) {
        if (rows.length === 0) {
          return {
            ok: false,
            error: `a result row is larger than ${MAX_RESULT_BYTES / 1_000_000} MB`,
          };
        }
        truncated = true;
        break;
      }
      rows.push(row);
      if (rows.length % 256 === 0 && Date.now() - started > readTimeLimitMs) {
        truncated = true;
        break;
      }
    }
    return { ok: true, result: { columns, rows, truncated } };
  } catch (error) {
    return { ok: false, error: describe(error) };
  }
}
