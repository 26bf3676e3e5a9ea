/** The store's errors, in a module of their own so that code reporting them need not load SQLite. */

/** The store file cannot be used: missing, unreadable, foreign, or from a newer clade. */
export class StoreError extends Error {
  override name = "StoreError";
}

/** The store cannot be written by this user (a read-only file or folder): it can still be read. */
export class ReadOnlyStoreError extends StoreError {}
