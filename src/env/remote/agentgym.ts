/**
 * What clade knows of AgentGym's tasks, by AgentGym's task name (the name AgentGym-RL picks a
 * client class by, and the path prefix of servers that share a process): the client, its
 * dialect, the reset field of the task index, what the client sends as the action, and which
 * clade environment (if any) plays the task. One table for both sides: clade's client uses it
 * for defaults (`--send`) and advice in warnings, `clade serve-env` for the paths it mounts.
 * Written from reading AgentGym's clients (agentenv/envs/*.py) and servers (docs/agentgym.md).
 */
import type { RemoteDialect } from "./dialects.js";

/**
 * What a server expects on /step. "action": the action alone, because AgentGym's client cuts
 * the model's reply down itself (TextCraft, BabyAI, SciWorld, Maze, Wordle, SqlGym, WebShop).
 * "reply": the model's whole reply, which the server parses: the tool servers find
 * `Action: <tool> with Action Input: <json>` in it and need the literal "Action:" on that line.
 */
export type AgentgymActionInput = "action" | "reply";

/**
 * "id": /create → {"id", ...}; later calls carry "id". "env_idx": /create → a bare integer;
 * later calls carry "env_idx", and "id" (if any) is the task index.
 */
export type AgentgymDialect = Exclude<RemoteDialect, "clade">;

export interface AgentgymTask {
  /** AgentGym-RL's task name (`actor_rollout_ref.agentgym.task_name`), and the path prefix. */
  name: string;
  /** The server as messages name it. */
  title: string;
  /** The AgentGym client class AgentGym-RL builds for this name. */
  client: string;
  dialect: AgentgymDialect;
  /** The reset field AgentGym's client puts the task index in. */
  taskField: string;
  action: AgentgymActionInput;
  /** The clade environment that plays this task; undefined when none does. */
  env?: string;
  /** Why no clade environment plays it, or what to know when one does. */
  note: string;
}

const NO_ENV_TOOL = "no clade environment has this tool set (clade's todo is its only tool env)";

export const AGENTGYM_TASKS: readonly AgentgymTask[] = [
  {
    name: "textcraft",
    title: "TextCraft",
    client: "TextCraftEnvClient",
    dialect: "id",
    taskField: "data_idx",
    action: "action",
    env: "textcraft",
    note: "clade's own recipes and items, in TextCraft's command syntax",
  },
  {
    name: "babyai",
    title: "BabyAI",
    client: "BabyAIEnvClient",
    dialect: "id",
    taskField: "data_idx",
    action: "action",
    env: "gridworld",
    note: "BabyAI-like rooms, doors, keys and boxes; gridworld's actions survive the client's filter",
  },
  {
    name: "sciworld",
    title: "SciWorld",
    client: "SciworldEnvClient",
    dialect: "id",
    taskField: "data_idx",
    action: "action",
    note:
      "no clade environment runs ScienceWorld's experiments (its reset reply would need " +
      "task_description; AgentGym-RL's edition of its client sends the whole model reply as " +
      "the action)",
  },
  {
    name: "alfworld",
    title: "ALFWorld",
    client: "AlfWorldEnvClient",
    dialect: "id",
    taskField: "game",
    action: "action",
    note: "no clade environment plays ALFWorld's household tasks",
  },
  {
    name: "maze",
    title: "LMRL-Gym Maze",
    client: "MazeEnvClient",
    dialect: "id",
    taskField: "game",
    action: "action",
    env: "maze",
    note: "LMRL-Gym's maze, with the same row, column positions as the client's instructions",
  },
  {
    name: "wordle",
    title: "LMRL-Gym Wordle",
    client: "WordleEnvClient",
    dialect: "id",
    taskField: "seed",
    action: "action",
    env: "wordle",
    note: 'spaced guesses ("c r a n e") are read as words; /filtered_vocab lists the guess list',
  },
  {
    name: "sqlgym",
    title: "SqlGym",
    client: "SqlGymEnvClient",
    dialect: "env_idx",
    taskField: "item_id",
    action: "action",
    env: "sql",
    note: "a bare statement is the answer, as in SqlGym; clade's query:/answer: still work",
  },
  {
    name: "webshop",
    title: "WebShop",
    client: "WebshopEnvClient",
    dialect: "env_idx",
    taskField: "session_id",
    action: "action",
    note: "no clade environment is a web shop",
  },
  {
    name: "todo",
    title: "Todo (tool)",
    client: "TodoEnvClient",
    dialect: "env_idx",
    taskField: "id",
    action: "reply",
    env: "todo",
    note: "clade's own todo tools (listed in the first observation), same Action syntax",
  },
  {
    name: "weather",
    title: "Weather (tool)",
    client: "WeatherEnvClient",
    dialect: "env_idx",
    taskField: "id",
    action: "reply",
    note: NO_ENV_TOOL,
  },
  {
    name: "movie",
    title: "Movie (tool)",
    client: "MovieEnvClient",
    dialect: "env_idx",
    taskField: "id",
    action: "reply",
    note: NO_ENV_TOOL,
  },
  {
    name: "sheet",
    title: "Sheet (tool)",
    client: "SheetEnvClient",
    dialect: "env_idx",
    taskField: "id",
    action: "reply",
    note: NO_ENV_TOOL,
  },
  {
    name: "academia",
    title: "Academia (tool)",
    client: "AcademiaEnvClient",
    dialect: "env_idx",
    taskField: "id",
    action: "reply",
    note: NO_ENV_TOOL,
  },
  {
    name: "searchqa",
    title: "SearchQA",
    client: "SearchQAEnvClient",
    dialect: "env_idx",
    taskField: "id",
    action: "action",
    note: "no clade environment has a search engine and a QA corpus",
  },
  {
    name: "webarena",
    title: "WebArena",
    client: "WebarenaEnvClient",
    dialect: "env_idx",
    taskField: "idx",
    action: "action",
    note: "no clade environment is a browser",
  },
];

/** AgentGym's item id prefixes (LMRL-Gym's tasks) name the same servers. */
const ALIASES: Readonly<Record<string, string>> = {
  lmrlgym_maze: "maze",
  lmrlgym_wordle: "wordle",
};

/** The AgentGym task of this name (or of a path ending in it: "/maze"), if known. */
export function findAgentgymServer(name: string | undefined): AgentgymTask | undefined {
  const last = (name ?? "").replace(/\/+$/, "").split("/").pop()?.toLowerCase() ?? "";
  const key = ALIASES[last] ?? last;
  return AGENTGYM_TASKS.find((task) => task.name === key);
}

/**
 * The AgentGym server a remote environment most likely is: the one its path prefix names
 * ("/maze"), else the one its name names, when that server speaks the dialect in use.
 */
export function guessAgentgymServer(where: {
  dialect: RemoteDialect;
  envPath?: string | undefined;
  name?: string | undefined;
}): AgentgymTask | undefined {
  const server = findAgentgymServer(where.envPath) ?? findAgentgymServer(where.name);
  return server?.dialect === where.dialect ? server : undefined;
}
