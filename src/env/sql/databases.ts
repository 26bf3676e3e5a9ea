/**
 * The shipped databases, each generated once per process and built into a serialized image that
 * the query pool hands to its children (connection.ts). Connections are shared by every episode
 * and kept read-only (query_only, and the query runner only lets read-only SELECT statements
 * through). The env's own process queries nothing: it needs the schemas (databaseInfo) and the
 * images; loadDatabase opens a connection in-process, for tests.
 */
import type Database from "better-sqlite3";
import type { DatabaseContent, DatabaseSpec } from "./catalog.js";
import { buildImage, openImage } from "./connection.js";
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

/** What is known about a database without opening it. */
export interface DatabaseInfo {
  spec: DatabaseSpec;
  /** The CREATE TABLE statements, as shown to the agent. */
  schema: string;
  /** Rows per table, for the query cost estimate. */
  tableRows: ReadonlyMap<string, number>;
}

/** A loaded database: its connection and what the query guard needs to know about it. */
export interface LoadedDatabase extends DatabaseInfo {
  connection: Database.Database;
}

const contents = new Map<string, DatabaseContent>();
const infos = new Map<string, DatabaseInfo>();
const images = new Map<string, Buffer>();
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

/** The database as a serialized SQLite image, built on first use. */
export function databaseImage(name: string): Buffer {
  let image = images.get(name);
  if (!image) {
    image = buildImage(databaseContent(name));
    images.set(name, image);
  }
  return image;
}

/** The database's spec, schema text and table sizes, computed on first use. */
export function databaseInfo(name: string): DatabaseInfo {
  let info = infos.get(name);
  if (!info) {
    const content = databaseContent(name);
    info = {
      spec: specOf(name),
      schema: content.tables.map((table) => `${table.ddl};`).join("\n\n"),
      tableRows: new Map(content.tables.map((table) => [table.name, table.rows.length])),
    };
    infos.set(name, info);
  }
  return info;
}

/** The database's shared read-only connection, built on first use. */
export function loadDatabase(name: string): LoadedDatabase {
  let db = loaded.get(name);
  if (!db) {
    db = { ...databaseInfo(name), connection: openImage(databaseImage(name)) };
    loaded.set(name, db);
  }
  return db;
}
