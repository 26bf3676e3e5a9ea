/** Agents that need no model: a reference solver per environment and the random baseline. */
import type { EnvDefinition } from "../env/types.js";
import { CallRecorder } from "../model/call-record.js";
import type { Model } from "../model/types.js";
import { UnknownAgentError } from "./errors.js";
import { faultyHelpdeskAssistant, solveHelpdesk } from "./helpdesk/assistant.js";
import type { EpisodeAgentFactory, LlmAgentOptions } from "./prompting.js";
import { createRandomAgent } from "./random.js";
import { createReactAgent } from "./react.js";
import { solveBlade } from "./reference/blade.js";
import { naiveBladeAnalyst } from "./reference/blade-naive.js";
import { solveCoding } from "./reference/coding.js";
import { solveGridworld } from "./reference/gridworld.js";
import { solveMaze } from "./reference/maze.js";
import { solveSql } from "./reference/sql.js";
import { solveTextcraft } from "./reference/textcraft.js";
import { solveTodo } from "./reference/todo.js";
import { solveWordle } from "./reference/wordle.js";
import { createToolCallingAgent } from "./tool-calling.js";
import type { Agent, EpisodeContext, ReferenceSolver } from "./types.js";

const REFERENCE_SOLVERS: Record<string, ReferenceSolver> = {
  maze: solveMaze,
  wordle: solveWordle,
  textcraft: solveTextcraft,
  todo: solveTodo,
  gridworld: solveGridworld,
  sql: solveSql,
  coding: solveCoding,
  helpdesk: solveHelpdesk,
  blade: solveBlade,
};

/** Agents that play one environment only: the name, and that environment's agent. */
const ENV_AGENTS: Record<string, { env: string; create: ReferenceSolver }> = {
  assistant: { env: "helpdesk", create: faultyHelpdeskAssistant },
  naive: { env: "blade", create: naiveBladeAnalyst },
};

export interface AgentFactory {
  name: string;
  create(context: EpisodeContext): Agent;
  /**
   * What else identifies runs of this agent (model, parameters, options): kept in the run's
   * configuration, so that a resume with another model is refused (see createLlmAgent).
   */
  identity?: Record<string, unknown>;
}

export const BUILTIN_AGENTS = [
  { name: "reference", description: "the environment's reference solver (solves every task)" },
  { name: "random", description: "uniformly random plausible actions (a floor to beat)" },
  { name: "react", description: "an LLM in AgentGym's Thought/Action text format (needs --model)" },
  { name: "tools", description: "an LLM calling an `act` function tool (needs --model)" },
  {
    name: "assistant",
    description: "helpdesk only: the rule-based assistant with the seeded fault plan",
  },
  {
    name: "naive",
    description:
      "blade only: fits the question's outcome on its cause alone, no controls or transforms",
  },
] as const;

/** What LLM agents need: the model (shared across episodes) and their options. */
export interface LlmAgentSetup {
  model: Model;
  options?: LlmAgentOptions;
}

const LLM_AGENTS: Record<string, (model: Model, options?: LlmAgentOptions) => EpisodeAgentFactory> =
  {
    react: createReactAgent,
    tools: createToolCallingAgent,
  };

/**
 * Each episode's agent talks to the model through its own recorder, so the runner can store every
 * call (failed ones included) with the turn that made it.
 */
export function llmAgentFactory(name: string, setup: LlmAgentSetup): AgentFactory {
  const build = LLM_AGENTS[name];
  if (!build) throw new UnknownAgentError(`"${name}" is not an LLM agent (react or tools)`);
  return {
    name,
    create: (context) => {
      const recorder = new CallRecorder(setup.model);
      const agent = build(recorder, setup.options)(context);
      return { act: (state, signal) => agent.act(state, signal), takeCalls: () => recorder.take() };
    },
  };
}

/** Whether the named agent is an LLM agent (needs --model). */
export function isLlmAgent(name: string): boolean {
  return name in LLM_AGENTS;
}

export { UnknownAgentError };

export function resolveAgent(name: string, env: EnvDefinition, llm?: LlmAgentSetup): AgentFactory {
  if (name in LLM_AGENTS) {
    if (!llm) throw new UnknownAgentError(`agent "${name}" needs a model: add --model SPEC`);
    return llmAgentFactory(name, llm);
  }
  if (name === "random") {
    const { sampleAction } = env;
    if (!sampleAction) {
      throw new UnknownAgentError(
        `environment "${env.info.name}" has no sampleAction, so the random agent cannot run on it`,
      );
    }
    return { name, create: (context) => createRandomAgent(sampleAction, context) };
  }
  if (name === "reference") {
    const solver = REFERENCE_SOLVERS[env.info.name];
    if (!solver)
      throw new UnknownAgentError(`no reference solver for environment "${env.info.name}"`);
    return { name, create: solver };
  }
  const envAgent = ENV_AGENTS[name];
  if (envAgent) {
    if (env.info.name !== envAgent.env) {
      throw new UnknownAgentError(`agent "${name}" plays only the ${envAgent.env} environment`);
    }
    return { name, create: envAgent.create };
  }
  const known = BUILTIN_AGENTS.map((a) => a.name).join(", ");
  throw new UnknownAgentError(`unknown agent "${name}" (known: ${known})`);
}
