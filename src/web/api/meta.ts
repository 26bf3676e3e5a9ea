/** `GET /api/meta`: the store, what the viewer may do with it, and which pages have data. */
import { Hono } from "hono";
import type { SqliteDatabase } from "../../store/database.js";
import type { StoreState, StoreView } from "../store-view.js";

/** How many of each kind the store holds: a page appears for every kind with some. */
export interface Capabilities {
  runs: number;
  searches: number;
  training: number;
  qd: number;
  goals: number;
  analyses: number;
}

export interface MetaResponse {
  store: StoreState;
  version: number;
  capabilities: Capabilities;
  /** A static bundle (no server): nothing live, nothing written, no free-text search. */
  bundle: boolean;
}

export const NO_CAPABILITIES: Capabilities = {
  runs: 0,
  searches: 0,
  training: 0,
  qd: 0,
  goals: 0,
  analyses: 0,
};

export function capabilities(db: SqliteDatabase | undefined): Capabilities {
  if (db === undefined) return NO_CAPABILITIES;
  const count = (sql: string) => db.prepare(sql).pluck().get() as number;
  return {
    runs: count("SELECT COUNT(*) FROM runs"),
    searches: count("SELECT COUNT(*) FROM searches"),
    training: count("SELECT COUNT(*) FROM training_runs"),
    qd: count("SELECT COUNT(*) FROM qd_runs"),
    goals: count("SELECT COUNT(*) FROM goal_runs"),
    analyses: count("SELECT COUNT(*) FROM runs WHERE env = 'blade'"),
  };
}

export function metaRoutes(view: StoreView): Hono {
  return new Hono().get("/meta", (c) => {
    const body: MetaResponse = {
      store: view.state(),
      version: view.version(),
      capabilities: capabilities(view.db),
      bundle: false,
    };
    return c.json(body);
  });
}
