/**
 * Opening the SQLite store: WAL mode, versioned migrations, and clear errors for files that are
 * not SQLite or not clade's. Read-only opens never create a file or change its contents.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS } from "./migrations.js";

export type SqliteDatabase = Database.Database;

/** The store file cannot be used: missing, unreadable, foreign, or from a newer clade. */
export class StoreError extends Error {
  override name = "StoreError";
}

const APP_ID = "clade";

function inspect(db: SqliteDatabase, path: string): { version: number; empty: boolean } {
  let tables: { name: string }[];
  try {
    tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string }[];
  } catch (error) {
    throw new StoreError(`${path} is not a SQLite database (${(error as Error).message})`);
  }
  if (tables.length === 0) {
    // An empty SQLite file with a schema version set belongs to some other program.
    if ((db.pragma("user_version", { simple: true }) as number) !== 0) {
      throw new StoreError(`${path} is a SQLite database but not a clade store`);
    }
    return { version: 0, empty: true };
  }
  const names = new Set(tables.map((t) => t.name));
  const meta = names.has("clade_meta")
    ? (db.prepare("SELECT value FROM clade_meta WHERE key = 'app'").get() as
        | { value: string }
        | undefined)
    : undefined;
  if (meta?.value !== APP_ID) {
    throw new StoreError(`${path} is a SQLite database but not a clade store`);
  }
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > MIGRATIONS.length) {
    throw new StoreError(
      `${path} was written by a newer clade (schema ${version}, this one knows ${MIGRATIONS.length})`,
    );
  }
  return { version, empty: false };
}

export interface OpenOptions {
  /** Read only: never migrates or writes. */
  readonly?: boolean;
}

/**
 * Reading a WAL database through a read-only connection leaves -wal and -shm files behind, since
 * only a writer may remove them. Readers therefore open read-write (and write nothing), falling
 * back to a true read-only connection where the file cannot be opened for writing.
 */
function openForReading(path: string): SqliteDatabase {
  try {
    return new Database(path, { fileMustExist: true });
  } catch {
    return new Database(path, { readonly: true, fileMustExist: true });
  }
}

export function openDatabase(path: string, options: OpenOptions = {}): SqliteDatabase {
  const readonly = options.readonly ?? false;
  if (readonly && !existsSync(path)) throw new StoreError(`no store at ${path}`);
  if (!readonly) mkdirSync(dirname(path), { recursive: true });
  let db: SqliteDatabase;
  try {
    db = readonly ? openForReading(path) : new Database(path);
  } catch (error) {
    throw new StoreError(`cannot open ${path}: ${(error as Error).message}`);
  }
  try {
    const { version, empty } = inspect(db, path);
    if (readonly) {
      if (empty) throw new StoreError(`${path} is empty, not a clade store`);
      db.pragma("busy_timeout = 5000");
      if (version < MIGRATIONS.length) {
        throw new StoreError(`${path} uses an older schema; run any writing command to upgrade it`);
      }
      return db;
    }
    // Large pages suit the multi-kilobyte trajectory documents; only settable on a new file.
    if (version === 0) db.pragma("page_size = 16384");
    db.pragma("journal_mode = WAL");
    // NORMAL in WAL mode: a crash never corrupts the file; at worst the last commits are lost.
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("busy_timeout = 5000");
    migrate(db, version);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function migrate(db: SqliteDatabase, from: number): void {
  for (let version = from; version < MIGRATIONS.length; version++) {
    const step = MIGRATIONS[version] as string;
    db.transaction(() => {
      db.exec(step);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
