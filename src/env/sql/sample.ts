/** Random but well-formed actions for the random-agent baseline. */
import type { Observation } from "../types.js";

/** Queries that run on every database, for observations that show no schema. */
const CATALOG_QUERIES = [
  "query: SELECT name FROM sqlite_master WHERE type = 'table'",
  "query: SELECT name, sql FROM sqlite_master LIMIT 2",
  "answer: SELECT COUNT(*) FROM sqlite_master",
];

function tablesIn(observation: Observation): string[] {
  return [...observation.text.matchAll(/CREATE TABLE (\w+)/g)].map((m) => m[1] as string);
}

/**
 * Mostly exploratory queries on a random table of the schema in view, sometimes an answer with a
 * random simple query. Only the first observation shows the schema; after it, the sampler asks
 * SQLite's catalog, which every database has.
 */
export function sampleSqlAction(random: () => number, observation: Observation): string {
  const tables = tablesIn(observation);
  const pick = (items: readonly string[]) => items[Math.floor(random() * items.length)] ?? "";
  if (tables.length === 0) return pick(CATALOG_QUERIES);
  const table = pick(tables);
  const r = random();
  if (r < 0.5) return `query: SELECT * FROM ${table} LIMIT ${1 + Math.floor(random() * 10)}`;
  if (r < 0.7) return `query: SELECT COUNT(*) FROM ${table}`;
  if (r < 0.85) return `query: PRAGMA table_info(${table})`;
  if (r < 0.95) return `answer: SELECT COUNT(*) FROM ${table}`;
  return `answer: SELECT * FROM ${table} LIMIT 1`;
}
