/**
 * Opening the SQLite store: WAL mode, versioned migrations, and clear errors for files that are
 * not SQLite or not clade's. Read-only opens never create a file or change its contents; a store
 * this user cannot write is read from a private snapshot.
 */
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { ReadOnlyStoreError, StoreError } from "./errors.js";
import { MIGRATIONS } from "./migrations.js";

export type SqliteDatabase = Database.Database;

export { StoreError };

const APP_ID = "clade";

function inspect(db: SqliteDatabase, path: string): { version: number; empty: boolean } {
  let tables: { name: string }[];
  try {
    tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string }[];
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_READONLY")) throw new ReadOnlyStoreError(readOnlyMessage(path));
    if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT")) {
      throw new StoreError(`${path} is not a SQLite database (${(error as Error).message})`);
    }
    throw new StoreError(`cannot read ${path}: ${(error as Error).message}`);
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
  /** Read only: never migrates or writes the file. */
  readonly?: boolean;
}

const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

/**
 * Refuses an existing file that is not SQLite, whatever its size: SQLite itself treats a short
 * file as an empty database and would overwrite it. A zero-byte file holds nothing to lose.
 */
function checkHeader(path: string): void {
  let fd: number | undefined;
  try {
    const size = statSync(path).size;
    if (size === 0) return;
    const head = Buffer.alloc(SQLITE_HEADER.length);
    fd = openSync(path, "r");
    const read = readSync(fd, head, 0, head.length, 0);
    if (read < head.length || !head.equals(SQLITE_HEADER)) {
      throw new StoreError(`${path} is not a SQLite database (refusing to overwrite it)`);
    }
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether this process may write the file and create its -wal and -shm files beside it. */
function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    accessSync(dirname(path), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A WAL database needs its -wal and -shm files, which a reader cannot create beside a file or in
 * a folder it may not write (and leaving them there, owned by the reader, would lock the owner
 * out). Such a store is read from a private snapshot: the file and its WAL are copied, the copy
 * is checkpointed into a rollback-journal database, opened read-only and unlinked at once, so
 * nothing is left behind even if the process is killed.
 */
function openSnapshot(path: string): SqliteDatabase {
  const dir = mkdtempSync(join(tmpdir(), "clade-snapshot-"));
  try {
    const copy = join(dir, "store.db");
    try {
      copyFileSync(path, copy, constants.COPYFILE_FICLONE);
      if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
      // The copies keep the source's mode; the snapshot must be writable to be checkpointed.
      for (const file of readdirSync(dir)) chmodSync(join(dir, file), 0o600);
    } catch (error) {
      throw new StoreError(
        `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      );
    }
    const staging = new Database(copy, { fileMustExist: true });
    try {
      const { version, empty } = inspect(staging, path);
      if (empty) throw new StoreError(`${path} is empty, not a clade store`);
      staging.pragma("wal_checkpoint(TRUNCATE)");
      staging.pragma("journal_mode = DELETE");
      // A store from an older clade is upgraded in the copy only, so it can still be read.
      migrate(staging, version);
    } finally {
      staging.close();
    }
    return new Database(copy, { readonly: true, fileMustExist: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function readOnlyMessage(path: string): string {
  return (
    `${path} is read-only for this user: runs, show, export and cost can read it; ` +
    "give a writable --db to write"
  );
}

export function openDatabase(path: string, options: OpenOptions = {}): SqliteDatabase {
  const readonly = options.readonly ?? false;
  const exists = existsSync(path);
  if (readonly && !exists) throw new StoreError(`no store at ${path}`);
  if (exists) checkHeader(path);
  const canWrite = exists ? writable(path) : true;
  if (!readonly && !canWrite) throw new ReadOnlyStoreError(readOnlyMessage(path));
  if (!readonly) {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new StoreError(`cannot create ${path}: ${(error as NodeJS.ErrnoException).code}`);
    }
  }
  let db: SqliteDatabase;
  try {
    // Readers open read-write and write nothing: only a writer may remove the -wal and -shm
    // files that reading a WAL database creates.
    db = readonly && !canWrite ? openSnapshot(path) : new Database(path, { fileMustExist: exists });
  } catch (error) {
    if (error instanceof StoreError) throw error;
    const code = (error as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_READONLY")) throw new ReadOnlyStoreError(readOnlyMessage(path));
    throw new StoreError(`cannot open ${path}: ${(error as Error).message}`);
  }
  try {
    const { version, empty } = inspect(db, path);
    if (readonly) {
      if (empty) throw new StoreError(`${path} is empty, not a clade store`);
      if (version < MIGRATIONS.length) {
        // A store from an older clade is read through an upgraded private copy, so that every
        // reader sees the schema it knows and the file stays as it is until a writer upgrades it.
        db.close();
        return openSnapshot(path);
      }
      db.pragma("busy_timeout = 5000");
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
    const code = (error as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_READONLY")) throw new ReadOnlyStoreError(readOnlyMessage(path));
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
