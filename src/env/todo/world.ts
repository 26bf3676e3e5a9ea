/** The to-do app's database: projects and tasks, plus the exact comparison used for grading. */

export const PRIORITIES = ["low", "medium", "high"] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface TodoTask {
  id: string;
  project: string;
  title: string;
  /** ISO date, or null when the task has no due date. */
  due: string | null;
  priority: Priority;
  /** Kept sorted so that equal label sets print identically. */
  labels: string[];
  completed: boolean;
}

export interface TodoState {
  /** Project names in creation order. */
  projects: string[];
  /** Tasks by id, in creation order. */
  tasks: Map<string, TodoTask>;
  /** The number the next created task's id ("t<n>") gets. */
  nextId: number;
}

export function cloneTask(task: TodoTask): TodoTask {
  return { ...task, labels: task.labels.slice() };
}

export function cloneState(state: TodoState): TodoState {
  const tasks = new Map<string, TodoTask>();
  for (const [id, task] of state.tasks) tasks.set(id, cloneTask(task));
  return { projects: state.projects.slice(), tasks, nextId: state.nextId };
}

/**
 * An order-independent fingerprint of a state. Tasks that existed initially are keyed by id;
 * tasks created during the episode are compared by content only, because their ids depend on
 * the order in which the agent happened to create them.
 */
export function canonicalState(state: TodoState, initialIds: ReadonlySet<string>): string {
  const tasks = [...state.tasks.values()].map((task) =>
    JSON.stringify([
      initialIds.has(task.id) ? task.id : "(new)",
      task.project,
      task.title,
      task.due,
      task.priority,
      [...task.labels].sort(),
      task.completed,
    ]),
  );
  return JSON.stringify({ projects: [...state.projects].sort(), tasks: tasks.sort() });
}

/** Open tasks due strictly before today. */
export function isOverdue(task: TodoTask, today: string): boolean {
  return !task.completed && task.due !== null && task.due < today;
}
