/**
 * The built-in environments' metadata alone, in registry order, without loading what running
 * them takes (zod for todo's tools, sql's query processes): `clade envs` and the readers of stored
 * runs need names, versions, task counts and instructions, not constructors. A test checks that
 * it equals `BUILTIN_ENVS.map((e) => e.info)`.
 */
import { OWN_BLADE_INFO } from "./blade/text.js";
import { CODING_INFO } from "./coding/env.js";
import { GRIDWORLD_INFO } from "./gridworld/env.js";
import { HELPDESK_INFO } from "./helpdesk/text.js";
import { MAZE_INFO } from "./maze/env.js";
import { SQL_INFO } from "./sql/info.js";
import { TEXTCRAFT_INFO } from "./textcraft/env.js";
import { TODO_INFO } from "./todo/text.js";
import type { EnvInfo } from "./types.js";
import { wordleEnv } from "./wordle/index.js";

export const BUILTIN_ENV_INFOS: readonly EnvInfo[] = [
  MAZE_INFO,
  wordleEnv.info,
  TEXTCRAFT_INFO,
  TODO_INFO,
  GRIDWORLD_INFO,
  SQL_INFO,
  CODING_INFO,
  HELPDESK_INFO,
  OWN_BLADE_INFO,
];

/** The built-in environment's metadata, or undefined when clade has none of that name. */
export function findEnvInfo(name: string): EnvInfo | undefined {
  return BUILTIN_ENV_INFOS.find((info) => info.name === name);
}
