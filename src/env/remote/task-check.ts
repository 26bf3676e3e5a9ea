/**
 * A server that does not read the task field clade sends plays one task whatever the index:
 * AgentGym's TextCraft server ignores an unknown field and resets to data_idx 0, so
 * `--task-field game` turns a 100-task run into one task played 100 times, scored as if it were
 * 100. Nothing fails, so the client watches for it: when three different tasks begin with the
 * same observation and answer the same first action with the same observation, every task so
 * far has been the same task, and a warning (once per run) names the field and the fields
 * AgentGym's servers read.
 *
 * A warning, not an error: some environments' first observation never names the task (LMRL-Gym's
 * Wordle starts every game alike), which is why the first step must agree too; two tasks that
 * differ in either settle the question and the check stops.
 */
import { AGENTGYM_TASKS, type AgentgymTask } from "./agentgym.js";
import type { RemoteDialect } from "./dialects.js";

/** Distinct tasks whose start is remembered. */
const TRACKED_TASKS = 16;
/** Tasks that must look alike before the warning. */
const ALIKE_TASKS = 3;

interface TaskStart {
  first: string;
  action?: string;
  after?: string;
}

export interface TaskFieldCheckSettings {
  envName: string;
  dialect: RemoteDialect;
  taskFields: readonly string[];
  /** The AgentGym server this probably is, for the advice. */
  server: AgentgymTask | undefined;
  warn: (message: string) => void;
}

function quoteList(items: readonly string[], joiner: string): string {
  const quoted = items.map((item) => `"${item}"`);
  if (quoted.length <= 1) return quoted.join("");
  return `${quoted.slice(0, -1).join(", ")} ${joiner} ${quoted.at(-1)}`;
}

function clip(text: string, max = 60): string {
  const line = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(line.length > max ? `${line.slice(0, max - 1)}…` : line);
}

/** What AgentGym's servers read, or the one this server reads when it is known. */
function advice(settings: TaskFieldCheckSettings): string {
  const { server, taskFields } = settings;
  if (server && !taskFields.includes(server.taskField)) {
    return `AgentGym's ${server.title} server reads "${server.taskField}": try --task-field ${server.taskField}`;
  }
  const byField = new Map<string, string[]>();
  for (const known of AGENTGYM_TASKS) {
    if (known.dialect !== settings.dialect) continue;
    byField.set(known.taskField, [...(byField.get(known.taskField) ?? []), known.title]);
  }
  const fields = [...byField].map(([field, titles]) => `"${field}" (${titles.join(", ")})`);
  return fields.length > 0
    ? `AgentGym's servers read ${fields.join(", ")}: check --task-field`
    : "check --task-field";
}

/** Watches the starts of a run's episodes (shared by every instance of one remote env). */
export class TaskFieldCheck {
  private readonly starts = new Map<number, TaskStart>();
  private settled = false;

  constructor(private readonly settings: TaskFieldCheckSettings) {}

  /** An episode of `task` began with `observation`. */
  reset(task: number, observation: string): void {
    if (this.settled || this.starts.has(task) || this.starts.size >= TRACKED_TASKS) return;
    for (const start of this.starts.values()) {
      if (start.first !== observation) {
        this.settled = true;
        return;
      }
    }
    this.starts.set(task, { first: observation });
    this.evaluate();
  }

  /** The first step of an episode of `task`: `action` gave `observation`. */
  firstStep(task: number, action: string, observation: string): void {
    const start = this.starts.get(task);
    if (this.settled || !start || start.action !== undefined) return;
    for (const other of this.starts.values()) {
      if (other.action === action && other.after !== observation) {
        this.settled = true;
        return;
      }
    }
    start.action = action;
    start.after = observation;
    this.evaluate();
  }

  private evaluate(): void {
    const byAction = new Map<string, number[]>();
    for (const [task, start] of this.starts) {
      if (start.action === undefined) continue;
      byAction.set(start.action, [...(byAction.get(start.action) ?? []), task]);
    }
    for (const [action, tasks] of byAction) {
      if (tasks.length < ALIKE_TASKS) continue;
      this.settled = true;
      this.settings.warn(this.message(tasks, action));
      return;
    }
  }

  private message(tasks: number[], action: string): string {
    const { envName, taskFields } = this.settings;
    const shown = tasks.slice(0, ALIKE_TASKS).sort((a, b) => a - b);
    const start = this.starts.get(shown[0] as number) as TaskStart;
    return (
      `${envName}: tasks ${shown.join(", ")} began alike (${clip(start.first)}) and answered ` +
      `${clip(action, 40)} alike: the server may be ignoring the task ` +
      `${taskFields.length === 1 ? "field" : "fields"} ${quoteList(taskFields, "and")} and ` +
      "playing its default task for every index; " +
      advice(this.settings)
    );
  }
}
