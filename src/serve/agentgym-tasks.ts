/**
 * AgentGym's tasks as the server mounts them: each task a served environment plays (the shared
 * table in env/remote/agentgym.ts) under "/<task name>", where the client's own expectations
 * hold: its /create reply, its task-index field, and here, its action syntax and the extra
 * endpoints it calls. Written from reading the clients in AgentGym's agentenv/envs (see
 * docs/agentgym.md); tests/serve/agentgym-clients.test.ts replays their requests.
 */
import { AGENTGYM_TASKS, type AgentgymTask } from "../env/remote/agentgym.js";
import { parseAction as parseSqlAction } from "../env/sql/action.js";
import { GUESS_WORDS } from "../env/wordle/data.js";

/** What the server adds to a task's client facts when it mounts it. */
export interface AgentgymMountExtras {
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

/** An AgentGym task with what the server does for its client. */
export type MountedAgentgymTask = AgentgymTask & AgentgymMountExtras;

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

const EXTRAS: Readonly<Record<string, AgentgymMountExtras>> = {
  wordle: {
    adaptAction: wordleGuess,
    extraGets: { "/filtered_vocab": () => GUESS_WORDS },
  },
  sqlgym: { adaptAction: sqlgymAction, instructionNote: SQLGYM_NOTE },
};

function mounted(task: AgentgymTask): MountedAgentgymTask {
  return { ...task, ...EXTRAS[task.name] };
}

/** The AgentGym task of this name, if AgentGym-RL knows it. */
export function agentgymTask(name: string): MountedAgentgymTask | undefined {
  const task = AGENTGYM_TASKS.find((known) => known.name === name);
  return task && mounted(task);
}

/** The AgentGym tasks a clade environment plays (served under "/<task name>"). */
export function agentgymTasksServedBy(envName: string): MountedAgentgymTask[] {
  return AGENTGYM_TASKS.filter((task) => task.env === envName).map(mounted);
}
