/** Agents that need no model: a reference solver per environment and the random baseline. */
import type { EnvDefinition } from "../env/types.js";
import { createRandomAgent } from "./random.js";
import { solveMaze } from "./reference/maze.js";
import { solveTextcraft } from "./reference/textcraft.js";
import { solveTodo } from "./reference/todo.js";
import { solveWordle } from "./reference/wordle.js";
import type { Agent, EpisodeContext, ReferenceSolver } from "./types.js";

const REFERENCE_SOLVERS: Record<string, ReferenceSolver> = {
  maze: solveMaze,
  wordle: solveWordle,
  textcraft: solveTextcraft,
  todo: solveTodo,
};

export interface AgentFactory {
  name: string;
  create(context: EpisodeContext): Agent;
}

export const BUILTIN_AGENTS = [
  { name: "reference", description: "the environment's reference solver (solves every task)" },
  { name: "random", description: "uniformly random plausible actions (a floor to beat)" },
] as const;

export class UnknownAgentError extends Error {
  override name = "UnknownAgentError";
}

export function resolveAgent(name: string, env: EnvDefinition): AgentFactory {
  if (name === "random") {
    return { name, create: (context) => createRandomAgent(env.sampleAction, context) };
  }
  if (name === "reference") {
    const solver = REFERENCE_SOLVERS[env.info.name];
    if (!solver)
      throw new UnknownAgentError(`no reference solver for environment "${env.info.name}"`);
    return { name, create: solver };
  }
  const known = BUILTIN_AGENTS.map((a) => a.name).join(", ");
  throw new UnknownAgentError(`unknown agent "${name}" (known: ${known})`);
}
