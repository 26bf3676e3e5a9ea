/**
 * The shipped databases, each generated and loaded into an in-memory SQLite database once per
 * process. The connections are shared by every episode and kept read-only (query_only, and the
 * query runner only lets read-only SELECT statements through).
 */
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import type { DatabaseContent, DatabaseSpec } from "./catalog.js";
import { flightsDatabase } from "./flights.js";
import { hrDatabase } from "./hr.js";
import { libraryDatabase } from "./library.js";
import { schoolDatabase } from "./school.js";
import { shopDatabase } from "./shop.js";

export const DATABASES: readonly DatabaseSpec[] = [
  shopDatabase,
  schoolDatabase,
  libraryDatabase,
  flightsDatabase,
  hrDatabase,
];

export const DATABASE_NAMES: readonly string[] = DATABASES.map((db) => db.name);

/** A loaded database: its connection and what the query guard needs to know about it. */
export interface LoadedDatabase {
  spec: DatabaseSpec;
  connection: Database.Database;
  /** The CREATE TABLE statements, as shown to the agent. */
  schema: string;
  /** Rows per table, for the query cost estimate. */
  tableRows: ReadonlyMap<string, number>;
}

const contents = new Map<string, DatabaseContent>();
const loaded = new Map<string, LoadedDatabase>();

function specOf(name: string): DatabaseSpec {
  const spec = DATABASES.find((db) => db.name === name);
  if (!spec) throw new Error(`sql: unknown database ${name}`);
  return spec;
}

/** The database's tables and questions, generated on first use. */
export function databaseContent(name: string): DatabaseContent {
  let content = contents.get(name);
  if (!content) {
    content = specOf(name).generate();
    contents.set(name, content);
  }
  return content;
}

function build(content: DatabaseContent): Database.Database {
  const connection = new Database(":memory:");
  connection.transaction(() => {
    for (const table of content.tables) {
      connection.exec(table.ddl);
      const first = table.rows[0];
      if (!first) continue;
      const columns = Object.keys(first);
      const insert = connection.prepare(
        `INSERT INTO ${table.name} (${columns.join(", ")}) ` +
          `VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
      );
      for (const row of table.rows) insert.run(row);
    }
  })();
  capBlobFunctions(connection);
  connection.pragma("query_only = ON");
  return connection;
}

/** Largest blob randomblob() and zeroblob() may build (SQLite's own allow a gigabyte). */
export const MAX_BLOB_BYTES = 10_000;

/**
 * randomblob(n) and zeroblob(n) build large values out of nothing, and better-sqlite3 cannot
 * interrupt a running statement: one call per row can hold the process for many seconds.
 * Capped versions replace SQLite's built-ins on the shared connections.
 */
function capBlobFunctions(connection: Database.Database): void {
  const size = (n: unknown): number => {
    const bytes = Math.max(0, Math.floor(Number(n) || 0));
    if (bytes > MAX_BLOB_BYTES)
      throw new Error(`blobs are limited to ${MAX_BLOB_BYTES} bytes here`);
    return bytes;
  };
  connection.function("randomblob", { deterministic: false }, (n: unknown) =>
    randomBytes(Math.max(1, size(n))),
  );
  connection.function("zeroblob", { deterministic: true }, (n: unknown) => Buffer.alloc(size(n)));
}

/** The database's shared read-only connection, built on first use. */
export function loadDatabase(name: string): LoadedDatabase {
  let db = loaded.get(name);
  if (!db) {
    const spec = specOf(name);
    const content = databaseContent(name);
    db = {
      spec,
      connection: build(content),
      schema: content.tables.map((table) => `${table.ddl};`).join("\n\n"),
      tableRows: new Map(content.tables.map((table) => [table.name, table.rows.length])),
    };
    loaded.set(name, db);
  }
  return db;
}
