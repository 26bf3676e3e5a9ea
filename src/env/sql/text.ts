/** The sql environment's instruction and the texts of its observations. */
import { clipText as clip } from "../echo.js";
import { MAX_ROWS } from "./execute.js";

export const MAX_STEPS = 10;
/** Result rows shown in an observation. */
export const SHOWN_ROWS = 20;
/** Longest cell text shown in an observation. */
const SHOWN_CELL_LENGTH = 60;
/** Longest result line shown (wide results are cut). */
const MAX_LINE = 1_000;

export const ACTION_SYNTAX =
  'Reply with "query: <SQL>" to run a query and see its result, or "answer: <SQL>" to submit ' +
  "your final query.";

export const INSTRUCTION = `You answer questions about a SQLite database by writing SQL queries.
Each task shows you a database schema (its CREATE TABLE statements) and a question.

Reply with exactly one action per turn, in one of these two forms:
query: <SQL>
answer: <SQL>

"query: <SQL>" runs one read-only SQL statement and shows its result (the column names and at
most ${SHOWN_ROWS} rows) or the SQLite error message. Use it to look at the data and to check
your query.
"answer: <SQL>" submits your final query and ends the episode. An answer whose SQL cannot be run
is reported like a query error and does not end the episode.

Only single SELECT statements (optionally starting with WITH) are allowed, plus schema pragmas
such as PRAGMA table_info(<table>); statements that would change the database are refused.
Queries stop after ${MAX_ROWS} rows, and queries that would run too long (for example joins
without join conditions) are refused.

Your answer is correct (reward 1) when its result has the same rows as the result of the
correct query. Column names and the order of the columns do not matter, but the number of
columns does: select exactly the values the question asks for, nothing more. Row order only
matters when the question asks for an order (sorted, highest first, top N). Numbers compare by
value (1 equals 1.0); text must match exactly, as stored. Do not round numbers unless the
question asks for it. Text values in questions are given exactly as stored in the database.

You have at most ${MAX_STEPS} actions; invalid actions and queries count too.
Examples:
query: SELECT * FROM customers LIMIT 5
answer: SELECT COUNT(*) FROM customers WHERE city = 'Lisbon'`;

export function taskText(
  database: string,
  description: string,
  schema: string,
  question: string,
): string {
  return (
    `Database "${database}": ${description}.\n\nSchema:\n${schema}\n\n` +
    `Question: ${question}\n\n${ACTION_SYNTAX}`
  );
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (value instanceof Uint8Array) return `<blob of ${value.length} bytes>`;
  return clip(String(value), SHOWN_CELL_LENGTH);
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;

/** A query result as a text table: header, up to SHOWN_ROWS rows, and what was left out. */
export function resultTable(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  truncated: boolean,
): string {
  const header = clip(columns.map((name) => clip(name, SHOWN_CELL_LENGTH)).join(" | "), MAX_LINE);
  if (rows.length === 0) return `The query returned no rows (columns: ${header}).`;
  const lines = rows
    .slice(0, SHOWN_ROWS)
    .map((row) => clip(row.map(cellText).join(" | "), MAX_LINE));
  const count = truncated ? `stopped after ${rows.length} rows` : plural(rows.length, "row");
  let text = `Result (${count}):\n${header}\n${lines.join("\n")}`;
  if (rows.length > SHOWN_ROWS) text += `\n(showing the first ${SHOWN_ROWS} rows)`;
  return text;
}

export function stepsLeftText(left: number): string {
  return `\n\n${left === 1 ? "You have 1 action left." : `You have ${left} actions left.`}`;
}

export function queryErrorText(error: string): string {
  return `Error: ${error}`;
}

export function answerErrorText(error: string): string {
  return (
    `Your answer could not be run: ${error}. The episode goes on: fix the query and answer ` +
    "again."
  );
}

export function invalidActionText(action: string): string {
  return `Invalid action "${clip(action)}". ${ACTION_SYNTAX}`;
}

export function emptySqlText(kind: string): string {
  return `No SQL after "${kind}:". ${ACTION_SYNTAX}`;
}

export function correctText(): string {
  return "Your answer is correct: its result matches the expected result.";
}

export function wrongText(
  actual: { columns: number; rows: number; truncated: boolean },
  expected: { columns: number; rows: number },
): string {
  const shape = (rows: number, columns: number, over = false) =>
    `${over ? "more than " : ""}${plural(rows, "row")} of ${plural(columns, "column")}`;
  return (
    "Your answer is wrong: its result does not match the expected result (you returned " +
    `${shape(actual.rows, actual.columns, actual.truncated)}; the expected result has ` +
    `${shape(expected.rows, expected.columns)}).`
  );
}

/** Appended when the step limit ends the episode. */
export const OUT_OF_STEPS_TEXT = `\n\nYou used all ${MAX_STEPS} actions without a correct answer.`;
