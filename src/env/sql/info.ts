/**
 * The sql environment's metadata, apart from the code that runs it (SQLite, the query processes),
 * so that listing environments (`clade envs`) loads neither.
 */
import type { EnvInfo } from "../types.js";
import { INSTRUCTION, MAX_STEPS } from "./text.js";

export const SQL_INFO: EnvInfo = {
  name: "sql",
  version: "1.0.0",
  description:
    "Text-to-SQL over five small SQLite databases (shop, school, library, flights, HR): explore " +
    "with read-only queries, then submit a query whose result must match the gold query's " +
    "(after BIRD / AgentGym's SqlGym).",
  instruction: INSTRUCTION,
  splits: { train: { start: 100, end: 500 }, test: { start: 0, end: 100 } },
  successThreshold: 1,
  maxSteps: MAX_STEPS,
};
