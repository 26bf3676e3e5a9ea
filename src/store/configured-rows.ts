/**
 * The rows that searches, training runs, CycleQD runs and goal-evaluation jobs share the shape of
 * (tables `searches`, `training_runs`, `qd_runs` and `goal_runs`: id, config JSON, status, stop_reason, created_at, updated_at): reading one,
 * creating or resuming one under a configuration that must not change, and setting its status.
 */
import { openDatabase, type SqliteDatabase, StoreError } from "./database.js";
import type { JsonValue } from "./search-log.js";

/** The tables of this shape (a fixed list: the name goes into the SQL). */
export type ConfiguredTable = "searches" | "training_runs" | "qd_runs" | "goal_runs";

export interface ConfiguredRow<Status extends string> {
  id: string;
  /** The configuration it was started with (JSON object). */
  config: Record<string, JsonValue>;
  status: Status;
  /** Why it stopped early ("signal", "budget", ...); null otherwise. */
  stopReason: string | null;
  createdAt: string;
  updatedAt: string;
}

interface ConfiguredRowRaw {
  id: string;
  config: string;
  status: string;
  stop_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** Opens the file and builds a store on it, closing the file again when that throws. */
export function openStore<T>(
  path: string,
  options: { readonly?: boolean },
  make: (db: SqliteDatabase) => T,
): T {
  const db = openDatabase(path, options);
  try {
    return make(db);
  } catch (error) {
    db.close();
    throw error;
  }
}

export function readConfiguredRow<Status extends string>(
  db: SqliteDatabase,
  table: ConfiguredTable,
  id: string,
): ConfiguredRow<Status> | undefined {
  const row = db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as
    | ConfiguredRowRaw
    | undefined;
  if (!row) return undefined;
  return {
    id: row.id,
    config: JSON.parse(row.config) as Record<string, JsonValue>,
    status: row.status as Status,
    stopReason: row.stop_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Every row of the table, oldest first. */
export function listConfiguredRows<Status extends string>(
  db: SqliteDatabase,
  table: ConfiguredTable,
): ConfiguredRow<Status>[] {
  const ids = db
    .prepare(`SELECT id FROM ${table} ORDER BY created_at, id`)
    .pluck()
    .all() as string[];
  return ids.map((id) => readConfiguredRow<Status>(db, table, id) as ConfiguredRow<Status>);
}

/** How a conflict is reported: the row's noun ("search") and the error class. */
export interface ConflictReport {
  readonly noun: string;
  readonly error: new (message: string) => StoreError;
}

/**
 * Creates the row with status "running", or, when it exists, checks that its configuration is
 * the same (else throws the conflict's error naming the keys that differ) and marks it running
 * again. Returns whether it existed (a resume).
 */
export function beginConfiguredRow(
  db: SqliteDatabase,
  table: ConfiguredTable,
  id: string,
  config: Record<string, JsonValue>,
  conflict: ConflictReport,
): boolean {
  const existing = readConfiguredRow(db, table, id);
  if (existing) {
    const differ = Object.keys({ ...existing.config, ...config }).filter(
      (key) => JSON.stringify(existing.config[key]) !== JSON.stringify(config[key]),
    );
    if (differ.length > 0) {
      throw new conflict.error(
        `${conflict.noun} "${id}" already exists with a different configuration (${differ.join(", ")}); choose another --run-id`,
      );
    }
    setConfiguredStatus(db, table, id, "running");
    return true;
  }
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO ${table} (id, config, status, created_at, updated_at)
     VALUES (?, ?, 'running', ?, ?)`,
  ).run(id, JSON.stringify(config), now, now);
  return false;
}

/** Sets the status (and why it stopped); returns whether a row had that id. */
export function setConfiguredStatus(
  db: SqliteDatabase,
  table: ConfiguredTable,
  id: string,
  status: string,
  stopReason: string | null = null,
): boolean {
  const changed = db
    .prepare(`UPDATE ${table} SET status = ?, stop_reason = ?, updated_at = ? WHERE id = ?`)
    .run(status, stopReason, new Date().toISOString(), id).changes;
  return changed > 0;
}

/** What names a store's kind in its errors and which of its tables proves it is migrated. */
export interface ConfiguredStoreKind {
  readonly table: ConfiguredTable;
  /** A table of the kind's migration: its absence means the file was never opened to write. */
  readonly marker: string;
  /** "training", "CycleQD", "goal-evaluation": the store has no <tables> tables. */
  readonly tables: string;
  /** "training run", "CycleQD run", "goal evaluation": no <noun> "<id>". */
  readonly noun: string;
}

/**
 * The part the stores of configured rows share (training runs, CycleQD runs, goal-evaluation
 * jobs): built on an open store (any of the stores' `db`: all can share one file), closing it,
 * reading one row or all, and setting a row's status.
 */
export abstract class ConfiguredStore<Status extends string> {
  protected constructor(
    readonly db: SqliteDatabase,
    private readonly kind: ConfiguredStoreKind,
  ) {
    const present = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(kind.marker);
    if (!present) {
      throw new StoreError(`this store has no ${kind.tables} tables: open it to write once`);
    }
  }

  close(): void {
    this.db.close();
  }

  getRun(id: string): ConfiguredRow<Status> | undefined {
    return readConfiguredRow<Status>(this.db, this.kind.table, id);
  }

  /** Every row, oldest first. */
  listRuns(): ConfiguredRow<Status>[] {
    return listConfiguredRows<Status>(this.db, this.kind.table);
  }

  setStatus(id: string, status: Status, stopReason: string | null = null): void {
    if (!setConfiguredStatus(this.db, this.kind.table, id, status, stopReason)) {
      throw new StoreError(`no ${this.kind.noun} "${id}"`);
    }
  }
}
