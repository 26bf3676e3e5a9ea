/** The model response cache (model/cache.ts) kept in the run store's SQLite file. */
import type { ResponseCache } from "../model/cache.js";
import type { ModelResponse } from "../model/types.js";
import type { SqliteDatabase } from "./database.js";

export function createResponseCache(db: SqliteDatabase): ResponseCache {
  const select = db.prepare("SELECT response FROM model_cache WHERE key = ?");
  const upsert = db.prepare(
    `INSERT INTO model_cache (key, model, response, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at`,
  );
  return {
    get(key) {
      const row = select.get(key) as { response: string } | undefined;
      return row ? (JSON.parse(row.response) as ModelResponse) : undefined;
    },
    set(key, model, response) {
      upsert.run(key, model, JSON.stringify(response), new Date().toISOString());
    },
  };
}
