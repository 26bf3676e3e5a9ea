/**
 * Tasks: each database's question instances in a fixed shuffled order; task i takes database
 * i mod 5 and position floor(i / 5) in its list, so the test split (0..99) and the train split
 * (100..499) hold different questions, a fifth of each split per database. The seed picks the
 * question's phrasing (seed 0: the first).
 */
import { createRng } from "../rng.js";
import type { QuestionSpec } from "./catalog.js";
import { hasOuterOrderBy } from "./compare.js";
import { DATABASES, databaseContent } from "./databases.js";

const POOL_STREAM = 0x73716c70;
const PHRASING_STREAM = 0x70687273;

export interface SqlTask {
  index: number;
  seed: number;
  /** Name of the database the question is about. */
  database: string;
  /** The template the question came from, e.g. "shop.revenue-in-month". */
  template: string;
  question: string;
  /** The gold query; an answer succeeds when its result equals this query's result. */
  gold: string;
  /** Whether row order matters (the gold query ends in ORDER BY). */
  ordered: boolean;
}

const pools = new Map<string, readonly QuestionSpec[]>();

/** A database's questions in task order. */
export function questionPool(database: string): readonly QuestionSpec[] {
  let pool = pools.get(database);
  if (!pool) {
    const position = DATABASES.findIndex((db) => db.name === database);
    pool = createRng(POOL_STREAM, position).shuffle(databaseContent(database).questions);
    pools.set(database, pool);
  }
  return pool;
}

export function generateTask(index: number, seed = 0): SqlTask {
  const database = DATABASES[index % DATABASES.length]?.name ?? "";
  const spec = questionPool(database)[Math.floor(index / DATABASES.length)];
  if (!spec) throw new RangeError(`sql: no question for task ${index}`);
  const question =
    seed === 0 ? (spec.texts[0] ?? "") : createRng(PHRASING_STREAM, index, seed).pick(spec.texts);
  return {
    index,
    seed,
    database,
    template: spec.template,
    question,
    gold: spec.sql,
    ordered: hasOuterOrderBy(spec.sql),
  };
}
