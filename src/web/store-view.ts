/**
 * The viewer's one connection to the store. A store this user may write is opened as a writer,
 * so an older schema is upgraded in place once (the viewer's indexes come with it) and reviews
 * can be saved; it only reads otherwise, and SQLite's WAL lets it read while a job writes. A
 * store it may not write is read from a private snapshot: frozen, so the page is told that live
 * updates and reviews are off. A store that does not exist yet is looked for again on each
 * request, so a run started after the viewer shows up without a restart.
 */
import { existsSync } from "node:fs";
import { openDatabase, type SqliteDatabase } from "../store/database.js";
import { ReadOnlyStoreError, StoreError } from "../store/errors.js";
import { RunStore } from "../store/run-store.js";
import { Background } from "./background.js";

export interface StoreState {
  path: string;
  exists: boolean;
  /** New commits by other processes show up (false for a snapshot). */
  live: boolean;
  /** Reviews can be saved. */
  writable: boolean;
  /** Why the store is read from a snapshot, when it is. */
  readOnlyReason: string | null;
}

export class StoreView {
  #db: SqliteDatabase | undefined;
  #writable = false;
  #reason: string | null = null;
  /** Commits through this connection, which PRAGMA data_version does not count. */
  #ownWrites = 0;
  #background: Background | undefined;

  /** `readonly`: never opened as a writer (a bundle only reads; nothing is migrated). */
  constructor(
    readonly path: string,
    private readonly options: { readonly?: boolean } = {},
  ) {}

  /** The connection, or undefined while there is no store at the path. */
  get db(): SqliteDatabase | undefined {
    if (this.#db === undefined && existsSync(this.path)) this.#open();
    return this.#db;
  }

  #open(): void {
    if (this.options.readonly) {
      this.#db = openDatabase(this.path, { readonly: true });
      this.#reason = "read only";
      return;
    }
    try {
      this.#db = openDatabase(this.path);
      this.#writable = true;
    } catch (error) {
      if (!(error instanceof ReadOnlyStoreError)) throw error;
      this.#db = openDatabase(this.path, { readonly: true });
      this.#reason = "the store is read-only for this user: a snapshot is shown";
    }
  }

  state(): StoreState {
    const db = this.db;
    return {
      path: this.path,
      exists: db !== undefined,
      live: db !== undefined && this.#writable,
      writable: db !== undefined && this.#writable,
      readOnlyReason: this.#reason,
    };
  }

  /** A number that changes whenever the store does (another process's commit or our own). */
  version(): number {
    const db = this.db;
    if (db === undefined) return 0;
    return (db.pragma("data_version", { simple: true }) as number) * 1_000_000 + this.#ownWrites;
  }

  /** Runs a write through the viewer's connection (a review), counted for version(). */
  write<T>(work: (db: SqliteDatabase) => T): T {
    const db = this.db;
    if (db === undefined || !this.#writable) {
      throw new StoreError(this.#reason ?? `no store at ${this.path}`);
    }
    const result = db.transaction(work)(db);
    this.#ownWrites++;
    return result;
  }

  /** The worker thread for heavy computations (in this thread for a snapshot: no file to open). */
  background(): Background {
    // A snapshot is a private copy, already unlinked: its connection names another file.
    const snapshot = this.#db !== undefined && this.#db.name !== this.path;
    this.#background ??= new Background(snapshot ? null : this.path);
    return this.#background;
  }

  close(): void {
    void this.#background?.close();
    this.#background = undefined;
    this.#db?.close();
    this.#db = undefined;
  }
}

const runStores = new WeakMap<SqliteDatabase, RunStore>();

/** The run store over the viewer's connection: its prepared statements made once per connection. */
export function runStoreOn(db: SqliteDatabase): RunStore {
  let store = runStores.get(db);
  if (store === undefined) {
    store = RunStore.over(db);
    runStores.set(db, store);
  }
  return store;
}
