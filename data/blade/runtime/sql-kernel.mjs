/**
 * The SQL kernel of clade's BLADE environment: DuckDB (@duckdb/node-api) in one long-lived Node
 * process in the sandbox. Like the Python kernel it pulls its work from the parent over the
 * sandbox's channel (fd 3, one JSON value per line): `{"id", "op": "next", "reply"}` carries the
 * previous command's result and is answered with the next command.
 *
 * - load (first): the dataset as a wire frame (src/env/blade/runtime/frame-wire.ts) becomes
 *   table `df` in two in-memory databases: one for exploration cells, which keep whatever they
 *   create; one for scripts, which holds the pristine data as `__pristine` and only ever runs
 *   SELECTs. Both then lose every file, extension and network access, and their configuration
 *   is locked.
 * - execute: one or more statements; the last one's result as a text table.
 * - scripts: each script (SELECTs separated by ";") on a fresh copy of the data, each SELECT's
 *   result becoming `df`; the final `df` as a frame, sent as a notification per script.
 * - exit.
 */
import { createHash } from "node:crypto";
import net from "node:net";
import {
  DuckDBInstance,
  DuckDBResultReader,
  DuckDBTimestampValue,
  DuckDBTypeId,
  ResultReturnType,
  StatementType,
} from "@duckdb/node-api";

const CHANNEL_FD = 3;
/** Rows of a query's result shown by a cell. */
const SHOWN_ROWS = 20;
/** Characters of one cell of a shown table. */
const SHOWN_CELL_CHARS = 40;
/** Characters of a cell's output, unless the command says otherwise. */
const DEFAULT_OUTPUT_CHARS = 4000;
/** Threads of each database. */
const THREADS = "2";
const DATETIME_SQL_FORMAT = "%Y-%m-%d %H:%M:%S";
/** What a missing cell of an "other" column reads as (pandas would hold None). */
const OTHER_MISSING_TEXT = "None";
/** Settings applied to each database once the data is in, last the lock. */
const LOCKDOWN = [
  "SET enable_external_access = false",
  "SET autoinstall_known_extensions = false",
  "SET autoload_known_extensions = false",
  "SET lock_configuration = true",
];

const INTEGER_TYPES = new Set([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
]);
const FLOAT_TYPES = new Set([DuckDBTypeId.FLOAT, DuckDBTypeId.DOUBLE, DuckDBTypeId.DECIMAL]);
const DATETIME_TYPES = new Set([
  DuckDBTypeId.DATE,
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_S,
  DuckDBTypeId.TIMESTAMP_MS,
  DuckDBTypeId.TIMESTAMP_NS,
  DuckDBTypeId.TIMESTAMP_TZ,
]);

// --- the channel ---------------------------------------------------------------------------

const channel = new net.Socket({ fd: CHANNEL_FD });
channel.setEncoding("utf8");
const waiting = new Map();
let nextId = 0;
let buffer = "";
channel.on("data", (chunk) => {
  buffer += chunk;
  for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      continue;
    }
    const pending = waiting.get(message?.id);
    if (!pending) continue;
    waiting.delete(message.id);
    if (typeof message.error === "string") pending.reject(new Error(message.error));
    else pending.resolve(message.result);
  }
});
channel.on("close", () => process.exit(0));
channel.on("error", () => process.exit(0));

function send(message) {
  return new Promise((resolve) => channel.write(`${JSON.stringify(message)}\n`, () => resolve()));
}

function request(op, body) {
  nextId += 1;
  const id = nextId;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    channel.write(`${JSON.stringify({ id, op, ...body })}\n`);
  });
}

// --- helpers -------------------------------------------------------------------------------

function quote(name) {
  return `"${String(name).replaceAll('"', '""')}"`;
}

function errorLine(error) {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n").find((line) => line.trim() !== "") ?? "error";
}

function capped(text, cap) {
  return text.length <= cap
    ? text
    : `${text.slice(0, cap)}\n... [${text.length - cap} more characters not shown]`;
}

const SQL_TYPE_OF_KIND = {
  int: "BIGINT",
  float: "DOUBLE",
  bool: "BOOLEAN",
  object: "VARCHAR",
  datetime: "TIMESTAMP",
  other: "VARCHAR",
};

function floatOf(value) {
  if (value === null) return null;
  if (value === "inf") return Number.POSITIVE_INFINITY;
  if (value === "-inf") return Number.NEGATIVE_INFINITY;
  if (value === "-0") return -0;
  return value;
}

const DATETIME_TEXT = /^(-?\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

function timestampOf(text) {
  const match = DATETIME_TEXT.exec(text);
  if (!match) throw new Error(`not a datetime: ${JSON.stringify(text)}`);
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return new DuckDBTimestampValue(BigInt(date.getTime()) * 1000n);
}

/** Creates `table` from a wire frame (each column its own block, as the parent encodes it). */
async function loadFrame(connection, table, frame) {
  const columns = frame.columns;
  const definitions = columns.map(
    (c) => `${quote(c.name)} ${SQL_TYPE_OF_KIND[c.kind] ?? "VARCHAR"}`,
  );
  await connection.run(`CREATE TABLE ${quote(table)} (${definitions.join(", ")})`);
  if (columns.length === 0) return;
  const appender = await connection.createAppender(table);
  for (let row = 0; row < frame.rowCount; row++) {
    for (const column of columns) {
      const value = column.values[row];
      if (value === null || value === undefined) {
        appender.appendNull();
        continue;
      }
      switch (column.kind) {
        case "int":
          appender.appendBigInt(BigInt(value));
          break;
        case "float": {
          const number = floatOf(value);
          if (number === null || Number.isNaN(number)) appender.appendNull();
          else appender.appendDouble(number);
          break;
        }
        case "bool":
          appender.appendBoolean(Boolean(value));
          break;
        case "datetime":
          appender.appendTimestamp(timestampOf(value));
          break;
        default:
          appender.appendVarchar(String(value));
      }
    }
    appender.endRow();
  }
  appender.closeSync();
}

async function lockDown(connection) {
  for (const statement of LOCKDOWN) await connection.run(statement);
}

// --- statements ----------------------------------------------------------------------------

/**
 * Splits a script at ";" outside quotes and comments. Each piece is checked by DuckDB's own
 * parser afterwards (one statement, a SELECT), so a disagreement here can only reject a script.
 */
function splitStatements(sql) {
  const pieces = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      i = end < 0 ? sql.length : end + 1;
      continue;
    }
    if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
      continue;
    }
    if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
      continue;
    }
    if (c === ";") {
      pieces.push(sql.slice(start, i));
      start = i + 1;
    }
    i++;
  }
  pieces.push(sql.slice(start));
  return pieces.filter((piece) => piece.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, "").trim() !== "");
}

function statementName(type) {
  return StatementType[type] ?? String(type);
}

// --- frames out ----------------------------------------------------------------------------

function projectionOf(name, typeId) {
  const column = quote(name);
  if (INTEGER_TYPES.has(typeId) || typeId === DuckDBTypeId.BOOLEAN) return column;
  if (typeId === DuckDBTypeId.VARCHAR || typeId === DuckDBTypeId.SQLNULL) return column;
  if (FLOAT_TYPES.has(typeId)) return `CAST(${column} AS DOUBLE)`;
  if (DATETIME_TYPES.has(typeId)) {
    return `strftime(CAST(${column} AS TIMESTAMP), '${DATETIME_SQL_FORMAT}')`;
  }
  return `CAST(${column} AS VARCHAR)`;
}

function wireFloat(value) {
  if (value === null || Number.isNaN(value)) return null;
  if (value === Number.POSITIVE_INFINITY) return "inf";
  if (value === Number.NEGATIVE_INFINITY) return "-inf";
  if (Object.is(value, -0)) return "-0";
  return value;
}

/** [kind, pandas dtype, values] of one result column, as pandas would hold the same data. */
function encodeColumn(typeId, typeText, values) {
  const hasNull = values.some((value) => value === null);
  if (INTEGER_TYPES.has(typeId)) {
    if (hasNull) return ["float", "float64", values.map((v) => (v === null ? null : Number(v)))];
    const safe = values.every(
      (v) => Number.isSafeInteger(Number(v)) && BigInt(v) === BigInt(Number(v)),
    );
    if (safe) return ["int", "int64", values.map((v) => Number(v))];
    return ["other", "int64", values.map((v) => String(v))];
  }
  if (FLOAT_TYPES.has(typeId)) return ["float", "float64", values.map(wireFloat)];
  if (typeId === DuckDBTypeId.BOOLEAN) {
    if (!hasNull) return ["bool", "bool", values];
    return ["object", "object", values.map((v) => (v === null ? null : v ? "True" : "False"))];
  }
  if (typeId === DuckDBTypeId.VARCHAR || typeId === DuckDBTypeId.SQLNULL) {
    return ["object", "object", values];
  }
  if (DATETIME_TYPES.has(typeId)) return ["datetime", "datetime64[ns]", values];
  return [
    "other",
    `other(${typeText})`,
    values.map((v) => (v === null ? OTHER_MISSING_TEXT : String(v))),
  ];
}

/** Encodes the frames of one batch: a column's values travel once (frame-wire.ts). */
class FrameEncoder {
  blocks = new Map();

  async encode(connection, table) {
    const probe = await connection.runAndReadAll(`SELECT * FROM ${quote(table)} LIMIT 0`);
    const names = probe.columnNames();
    const types = probe.columnTypes();
    if (names.length === 0) return { rowCount: 0, columns: [] };
    const projection = names.map((name, i) => projectionOf(name, types[i].typeId)).join(", ");
    const reader = await connection.runAndReadAll(`SELECT ${projection} FROM ${quote(table)}`);
    const data = reader.getColumnsJS();
    const rowCount = reader.currentRowCount;
    const columns = names.map((name, i) => {
      const [kind, dtype, values] = encodeColumn(types[i].typeId, String(types[i]), data[i] ?? []);
      const json = JSON.stringify(values);
      const key = createHash("sha256").update(`${kind}\0${json}`).digest("hex");
      const known = this.blocks.get(key);
      if (known !== undefined) return { name, dtype, kind, block: known };
      const block = this.blocks.size;
      this.blocks.set(key, block);
      return { name, dtype, kind, block, values };
    });
    return { rowCount, columns };
  }
}

// --- the text of a result ------------------------------------------------------------------

function cellText(value) {
  if (value === null || value === undefined) return "NULL";
  const text = String(value);
  const shown = text.length > SHOWN_CELL_CHARS ? `${text.slice(0, SHOWN_CELL_CHARS - 1)}…` : text;
  return shown.replaceAll("\n", "\\n");
}

/** The first rows of a materialized result as a text table, with its row count. */
async function tableText(result) {
  const reader = new DuckDBResultReader(result);
  await reader.readUntil(SHOWN_ROWS);
  const names = reader.columnNames();
  const rows = reader
    .getRows()
    .slice(0, SHOWN_ROWS)
    .map((row) => row.map(cellText));
  const header = names.map(cellText);
  const widths = header.map((name, i) =>
    Math.max(name.length, ...rows.map((row) => row[i].length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join(" | ")
      .trimEnd();
  const count = result.rowCount;
  const note =
    count > SHOWN_ROWS
      ? `(${count} rows, first ${SHOWN_ROWS} shown)`
      : `(${count} row${count === 1 ? "" : "s"})`;
  return [line(header), widths.map((w) => "-".repeat(w)).join("-+-"), ...rows.map(line), note].join(
    "\n",
  );
}

// --- commands ------------------------------------------------------------------------------

async function execute(connection, command) {
  const cap = Number(command.outputChars) || DEFAULT_OUTPUT_CHARS;
  try {
    const extracted = await connection.extractStatements(String(command.code ?? ""));
    if (extracted.count === 0) return { ok: true, output: "" };
    let result;
    for (let i = 0; i < extracted.count; i++) {
      const prepared = await extracted.prepare(i);
      result = await prepared.run();
    }
    let output;
    if (result.returnType === ResultReturnType.QUERY_RESULT) output = await tableText(result);
    else if (result.returnType === ResultReturnType.CHANGED_ROWS) {
      output = `${result.rowsChanged} rows changed`;
    } else output = "OK";
    return { ok: true, output: capped(output, cap) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, output: capped(message, cap), error: errorLine(error) };
  }
}

async function runScript(connection, script) {
  await connection.run(
    "DROP TABLE IF EXISTS __next; DROP TABLE IF EXISTS df; CREATE TABLE df AS SELECT * FROM __pristine",
  );
  for (const piece of splitStatements(script)) {
    const extracted = await connection.extractStatements(piece);
    if (extracted.count !== 1) throw new Error(`not one statement: ${piece.trim().slice(0, 80)}`);
    const prepared = await extracted.prepare(0);
    if (prepared.statementType !== StatementType.SELECT) {
      throw new Error(
        `a transform script runs SELECT statements only, got ${statementName(prepared.statementType)}`,
      );
    }
    await connection.run(`CREATE TABLE __next AS\n${piece}\n`);
    await connection.run("DROP TABLE df; ALTER TABLE __next RENAME TO df");
  }
}

async function scripts(connection, command) {
  const encoder = new FrameEncoder();
  const list = Array.isArray(command.scripts) ? command.scripts : [];
  for (const [index, script] of list.entries()) {
    await send({ op: "started", index });
    let outcome;
    try {
      await runScript(connection, String(script));
      outcome = { ok: true, kind: "frame", frame: await encoder.encode(connection, "df") };
    } catch (error) {
      outcome = { ok: false, error: errorLine(error) };
    }
    await send({ op: "outcome", index, outcome });
  }
  return { done: true };
}

// --- main ----------------------------------------------------------------------------------

async function open(config, frame, table) {
  const instance = await DuckDBInstance.create(":memory:", {
    threads: THREADS,
    memory_limit: String(config.memoryLimit ?? "1GB"),
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  const connection = await instance.connect();
  await loadFrame(connection, table, frame);
  await lockDown(connection);
  return connection;
}

async function main() {
  const load = await request("next", { reply: { hello: true } });
  let explore;
  let transform;
  try {
    if (load?.op !== "load") throw new Error("the first command must be load");
    explore = await open(load, load.frame, "df");
    transform = await open(load, load.frame, "__pristine");
  } catch (error) {
    await request("next", { reply: { fatal: `could not load the dataset: ${errorLine(error)}` } });
    process.exit(1);
  }
  let reply = { ready: true, rows: load.frame.rowCount, columns: load.frame.columns.length };
  for (;;) {
    const command = await request("next", { reply });
    const op = command?.op;
    if (op === "exit") process.exit(0);
    if (op === "execute") reply = await execute(explore, command);
    else if (op === "scripts") reply = await scripts(transform, command);
    else reply = { error: `unknown command ${JSON.stringify(op)}` };
  }
}

await main();
