/** The built-in environments, by name. */
import { codingEnv } from "./coding/index.js";
import { gridworldEnv } from "./gridworld/index.js";
import { mazeEnv } from "./maze/index.js";
import { sqlEnv } from "./sql/index.js";
import { textcraftEnv } from "./textcraft/index.js";
import { todoEnv } from "./todo/index.js";
import type { EnvDefinition } from "./types.js";
import { wordleEnv } from "./wordle/index.js";

export const BUILTIN_ENVS: readonly EnvDefinition[] = [
  mazeEnv,
  wordleEnv,
  textcraftEnv,
  todoEnv,
  gridworldEnv,
  sqlEnv,
  codingEnv,
];

export class UnknownEnvError extends Error {
  override name = "UnknownEnvError";
}

export function findEnv(name: string): EnvDefinition {
  const found = BUILTIN_ENVS.find((def) => def.info.name === name);
  if (!found) {
    const known = BUILTIN_ENVS.map((def) => def.info.name).join(", ");
    throw new UnknownEnvError(`unknown environment "${name}" (known: ${known})`);
  }
  return found;
}
