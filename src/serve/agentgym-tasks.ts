/**
 * AgentGym's task names: the keys AgentGym-RL's `init_env_client` picks a client class by, the
 * dialect that client speaks, and which clade environment (if any) plays that task. The server
 * mounts each task a served environment plays under "/<task name>", where the client's own
 * expectations hold: its /create reply, its task-index field, its action syntax and the extra
 * endpoints it calls. Written from reading the clients in AgentGym's agentenv/envs (see
 * docs/agentgym.md); tests/serve/agentgym-clients.test.ts replays their requests.
 */
import { parseAction as parseSqlAction } from "../env/sql/action.js";
import { GUESS_WORDS } from "../env/wordle/data.js";

/**
 * "id": /create → {"id", ...}; later calls carry "id". "env_idx": /create → a bare integer;
 * later calls carry "env_idx", and "id" (if any) is the task index.
 */
export type AgentgymDialect = "id" | "env_idx";

export interface AgentgymTask {
  /** AgentGym-RL's task name (`actor_rollout_ref.agentgym.task_name`), and the path prefix. */
  name: string;
  /** The AgentGym client class AgentGym-RL builds for this name. */
  client: string;
  dialect: AgentgymDialect;
  /** The field the client's reset puts the task index in. */
  taskField: string;
  /** The clade environment that plays this task; undefined when none does. */
  env?: string;
  /** Why no clade environment plays it, or what to know when one does. */
  note: string;
  /**
   * The action as the clade environment reads it, from what the client sends (the client has
   * already cut the model's reply down in its own way).
   */
  adaptAction?: (action: string) => string;
  /** Appended to the env's instruction at the start of the first observation. */
  instructionNote?: string;
  /** GET endpoints the client calls besides AgentGym's common ones: path → reply. */
  extraGets?: Readonly<Record<string, () => unknown>>;
}

/** Five letters separated by spaces ("c r a n e"): how LMRL-Gym's Wordle writes a guess. */
const SPACED_GUESS = /^\s*[A-Za-z](?:\s+[A-Za-z]){4}\s*$/;

/** LMRL-Gym's spaced guess as one word; anything else unchanged. */
export function wordleGuess(action: string): string {
  return SPACED_GUESS.test(action) ? action.replace(/\s+/g, "") : action;
}

/**
 * SqlGym sends the bare statement from the reply's ```sql block and judges it as the answer; a
 * statement in clade's syntax ("query: ..." / "answer: ...") keeps its meaning.
 */
export function sqlgymAction(action: string): string {
  return parseSqlAction(action) ? action : `answer: ${action.trim()}`;
}

const SQLGYM_NOTE = `Through AgentGym's SqlGym client: write one SQL statement per reply in a \`\`\`sql block \
(the client sends only the block's content). A statement that does not start with "query:" is \
taken as your answer ("answer: <SQL>"); start it with "query:" to see its result first.`;

const NO_ENV_TOOL = "no clade environment has this tool set (clade's todo is its only tool env)";

export const AGENTGYM_TASKS: readonly AgentgymTask[] = [
  {
    name: "babyai",
    client: "BabyAIEnvClient",
    dialect: "id",
    taskField: "data_idx",
    env: "gridworld",
    note: "BabyAI-like rooms, doors, keys and boxes; gridworld's actions survive the client's filter",
  },
  {
    name: "textcraft",
    client: "TextCraftEnvClient",
    dialect: "id",
    taskField: "data_idx",
    env: "textcraft",
    note: "clade's own recipes and items, in TextCraft's command syntax",
  },
  {
    name: "maze",
    client: "MazeEnvClient",
    dialect: "id",
    taskField: "game",
    env: "maze",
    note: "LMRL-Gym's maze, with the same row, column positions as the client's instructions",
  },
  {
    name: "wordle",
    client: "WordleEnvClient",
    dialect: "id",
    taskField: "seed",
    env: "wordle",
    note: 'spaced guesses ("c r a n e") are read as words; /filtered_vocab lists the guess list',
    adaptAction: wordleGuess,
    extraGets: { "/filtered_vocab": () => GUESS_WORDS },
  },
  {
    name: "sqlgym",
    client: "SqlGymEnvClient",
    dialect: "env_idx",
    taskField: "item_id",
    env: "sql",
    note: "a bare statement is the answer, as in SqlGym; clade's query:/answer: still work",
    adaptAction: sqlgymAction,
    instructionNote: SQLGYM_NOTE,
  },
  {
    name: "todo",
    client: "TodoEnvClient",
    dialect: "env_idx",
    taskField: "id",
    env: "todo",
    note: "clade's own todo tools (listed in the first observation), same Action syntax",
  },
  {
    name: "sciworld",
    client: "SciworldEnvClient",
    dialect: "id",
    taskField: "data_idx",
    note:
      "no clade environment runs ScienceWorld's experiments (its reset reply would need " +
      "task_description; its client sends the whole model reply as the action)",
  },
  {
    name: "alfworld",
    client: "AlfWorldEnvClient",
    dialect: "id",
    taskField: "game",
    note: "no clade environment plays ALFWorld's household tasks",
  },
  {
    name: "webshop",
    client: "WebshopEnvClient",
    dialect: "env_idx",
    taskField: "session_id",
    note: "no clade environment is a web shop",
  },
  {
    name: "searchqa",
    client: "SearchQAEnvClient",
    dialect: "env_idx",
    taskField: "id",
    note: "no clade environment has a search engine and a QA corpus",
  },
  {
    name: "webarena",
    client: "WebarenaEnvClient",
    dialect: "env_idx",
    taskField: "idx",
    note: "no clade environment is a browser",
  },
  {
    name: "weather",
    client: "WeatherEnvClient",
    dialect: "env_idx",
    taskField: "id",
    note: NO_ENV_TOOL,
  },
  {
    name: "movie",
    client: "MovieEnvClient",
    dialect: "env_idx",
    taskField: "id",
    note: NO_ENV_TOOL,
  },
  {
    name: "sheet",
    client: "SheetEnvClient",
    dialect: "env_idx",
    taskField: "id",
    note: NO_ENV_TOOL,
  },
  {
    name: "academia",
    client: "AcademiaEnvClient",
    dialect: "env_idx",
    taskField: "id",
    note: NO_ENV_TOOL,
  },
];

/** The AgentGym task of this name, if AgentGym-RL knows it. */
export function agentgymTask(name: string): AgentgymTask | undefined {
  return AGENTGYM_TASKS.find((task) => task.name === name);
}

/** The AgentGym tasks a clade environment plays (served under "/<task name>"). */
export function agentgymTasksServedBy(envName: string): AgentgymTask[] {
  return AGENTGYM_TASKS.filter((task) => task.env === envName);
}
