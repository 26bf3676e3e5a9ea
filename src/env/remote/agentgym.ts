/**
 * What clade's client knows of AgentGym's environment servers, by AgentGym's task name (the
 * name AgentGym-RL picks a client by, and the path prefix of the servers that share a process):
 * the dialect, the reset field of the task index and what AgentGym's own client sends as the
 * action. Written from reading AgentGym's clients (agentenv/envs/*.py) and servers (see
 * docs/agentgym.md); used for the CLI's defaults (`--send`) and for advice in warnings.
 */
import type { RemoteDialect } from "./dialects.js";

/**
 * What a server expects on /step. "action": the action alone, because AgentGym's client cuts
 * the model's reply down itself (TextCraft, BabyAI, SciWorld, Maze, Wordle, SqlGym, WebShop).
 * "reply": the model's whole reply, which the server parses: the tool servers find
 * `Action: <tool> with Action Input: <json>` in it and need the literal "Action:" on that line.
 */
export type AgentgymActionInput = "action" | "reply";

export interface AgentgymServer {
  /** AgentGym's task name. */
  name: string;
  /** The server as messages name it. */
  title: string;
  dialect: Exclude<RemoteDialect, "clade">;
  /** The reset field AgentGym's client puts the task index in. */
  taskField: string;
  action: AgentgymActionInput;
}

export const AGENTGYM_SERVERS: readonly AgentgymServer[] = [
  { name: "textcraft", title: "TextCraft", dialect: "id", taskField: "data_idx", action: "action" },
  { name: "babyai", title: "BabyAI", dialect: "id", taskField: "data_idx", action: "action" },
  { name: "sciworld", title: "SciWorld", dialect: "id", taskField: "data_idx", action: "action" },
  { name: "alfworld", title: "ALFWorld", dialect: "id", taskField: "game", action: "action" },
  { name: "maze", title: "LMRL-Gym Maze", dialect: "id", taskField: "game", action: "action" },
  { name: "wordle", title: "LMRL-Gym Wordle", dialect: "id", taskField: "seed", action: "action" },
  { name: "sqlgym", title: "SqlGym", dialect: "env_idx", taskField: "item_id", action: "action" },
  {
    name: "webshop",
    title: "WebShop",
    dialect: "env_idx",
    taskField: "session_id",
    action: "action",
  },
  { name: "todo", title: "Todo (tool)", dialect: "env_idx", taskField: "id", action: "reply" },
  {
    name: "weather",
    title: "Weather (tool)",
    dialect: "env_idx",
    taskField: "id",
    action: "reply",
  },
  { name: "movie", title: "Movie (tool)", dialect: "env_idx", taskField: "id", action: "reply" },
  { name: "sheet", title: "Sheet (tool)", dialect: "env_idx", taskField: "id", action: "reply" },
  {
    name: "academia",
    title: "Academia (tool)",
    dialect: "env_idx",
    taskField: "id",
    action: "reply",
  },
];

/** AgentGym's item id prefixes (LMRL-Gym's tasks) name the same servers. */
const ALIASES: Readonly<Record<string, string>> = {
  lmrlgym_maze: "maze",
  lmrlgym_wordle: "wordle",
};

/** The AgentGym server of this task name (or of a path ending in it: "/maze"), if known. */
export function findAgentgymServer(name: string | undefined): AgentgymServer | undefined {
  const last = (name ?? "").replace(/\/+$/, "").split("/").pop()?.toLowerCase() ?? "";
  const key = ALIASES[last] ?? last;
  return AGENTGYM_SERVERS.find((server) => server.name === key);
}

/**
 * The AgentGym server a remote environment most likely is: the one its path prefix names
 * ("/maze"), else the one its name names, when that server speaks the dialect in use.
 */
export function guessAgentgymServer(where: {
  dialect: RemoteDialect;
  envPath?: string | undefined;
  name?: string | undefined;
}): AgentgymServer | undefined {
  const server = findAgentgymServer(where.envPath) ?? findAgentgymServer(where.name);
  return server?.dialect === where.dialect ? server : undefined;
}
