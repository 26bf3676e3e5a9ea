/**
 * The model response cache (model/cache.ts) kept in the run store's SQLite file. Entries that
 * cannot be replayed (over the reader's size bound, or not JSON) are deleted on sight, so a bad
 * entry costs one miss rather than a crash on every resume.
 */
import type { ResponseCache } from "../model/cache.js";
import type { ModelResponse } from "../model/types.js";
import type { SqliteDatabase } from "./database.js";

export function createResponseCache(db: SqliteDatabase): ResponseCache {
  // The size is checked by SQLite, so an oversized entry is never copied into JavaScript.
  const select = db.prepare(
    `SELECT octet_length(response) AS bytes,
       CASE WHEN octet_length(response) <= ? THEN response END AS response
     FROM model_cache WHERE key = ?`,
  );
  const upsert = db.prepare(
    `INSERT INTO model_cache (key, model, response, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at`,
  );
  const remove = db.prepare("DELETE FROM model_cache WHERE key = ?");
  const drop = (key: string) => {
    try {
      remove.run(key);
    } catch {
      // A read-only store keeps the entry; it is still never replayed.
    }
  };
  return {
    get(key, options = {}) {
      const row = select.get(options.maxBytes ?? Number.MAX_SAFE_INTEGER, key) as
        | { bytes: number; response: string | null }
        | undefined;
      if (!row) return undefined;
      if (row.response === null) {
        drop(key);
        return undefined;
      }
      try {
        return JSON.parse(row.response) as ModelResponse;
      } catch {
        drop(key);
        return undefined;
      }
    },
    set(key, model, response) {
      upsert.run(key, model, JSON.stringify(response), new Date().toISOString());
    },
    delete: drop,
  };
}
