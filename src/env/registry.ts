/** The built-in environments, by name. */
import { builtinBladeEnv } from "./blade/index.js";
import { codingEnv } from "./coding/index.js";
import { UnknownEnvError } from "./errors.js";
import { gridworldEnv } from "./gridworld/index.js";
import { helpdeskEnv } from "./helpdesk/index.js";
import { mazeEnv } from "./maze/index.js";
import { sqlEnv } from "./sql/index.js";
import { textcraftEnv } from "./textcraft/index.js";
import { todoEnv } from "./todo/index.js";
import type { SamplingEnvDefinition } from "./types.js";
import { wordleEnv } from "./wordle/index.js";

export const BUILTIN_ENVS: readonly SamplingEnvDefinition[] = [
  mazeEnv,
  wordleEnv,
  textcraftEnv,
  todoEnv,
  gridworldEnv,
  sqlEnv,
  codingEnv,
  helpdeskEnv,
  builtinBladeEnv(),
];

export { UnknownEnvError };

export function findEnv(name: string): SamplingEnvDefinition {
  const found = BUILTIN_ENVS.find((def) => def.info.name === name);
  if (!found) {
    const known = BUILTIN_ENVS.map((def) => def.info.name).join(", ");
    throw new UnknownEnvError(`unknown environment "${name}" (known: ${known})`);
  }
  return found;
}
