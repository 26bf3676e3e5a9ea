/** The sql environment's registration: metadata, constructor and random action sampler. */
import type { SamplingEnvDefinition } from "../types.js";
import { SQL_INFO, SqlEnv } from "./env.js";
import { sampleSqlAction } from "./sample.js";

export const sqlEnv: SamplingEnvDefinition = {
  info: SQL_INFO,
  create: () => new SqlEnv(),
  sampleAction: sampleSqlAction,
};

export { parseAction, type SqlAction } from "./action.js";
export type {
  DatabaseContent,
  DatabaseSpec,
  QuestionSpec,
  SqlValue,
  TableSpec,
} from "./catalog.js";
export { cellKey, hasOuterOrderBy, sameResult } from "./compare.js";
export {
  DATABASE_NAMES,
  DATABASES,
  type DatabaseInfo,
  databaseContent,
  databaseInfo,
  type LoadedDatabase,
  loadDatabase,
} from "./databases.js";
export { goldResult, SQL_INFO, SqlEnv } from "./env.js";
export {
  estimatePlanCost,
  leadingKeyword,
  MAX_PLAN_COST,
  MAX_RESULT_BYTES,
  MAX_ROWS,
  MAX_SQL_LENGTH,
  type QueryOutcome,
  type QueryResult,
  runQuery,
} from "./execute.js";
export {
  QUERY_POOL_SIZE,
  QUERY_TIME_LIMIT_MS,
  type QueryOptions,
  QueryPool,
  type QueryPoolOptions,
  queryPool,
} from "./query-pool.js";
export { sampleSqlAction } from "./sample.js";
export { generateTask, questionPool, type SqlTask } from "./task.js";
export { INSTRUCTION, MAX_STEPS, SHOWN_ROWS } from "./text.js";
