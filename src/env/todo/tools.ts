/**
 * The to-do app's tools. Each validates its JSON arguments with zod, then reads or mutates the
 * state in place. The environment and the task generator (which derives the gold state by
 * replaying gold calls) share these implementations, so the two cannot drift apart.
 */
import { z } from "zod";
import { clipText as clip } from "../echo.js";
import { isIsoDate } from "./dates.js";
import { isOverdue, PRIORITIES, type TodoState, type TodoTask } from "./world.js";

export interface ToolContext {
  state: TodoState;
  /** The task's fixed "today", as an ISO date. */
  today: string;
}

export type ToolOutcome = { ok: true; output: unknown } | { ok: false; error: string };

export interface Tool {
  /** Whether a successful call may change the state (lookups never do). */
  mutates: boolean;
  run(ctx: ToolContext, rawArgs: unknown): ToolOutcome;
}

/** Issues listed in an argument error; the rest are counted, so huge inputs stay short. */
const MAX_ISSUES = 3;

function describeIssues(error: z.ZodError): string {
  const shown = error.issues
    .slice(0, MAX_ISSUES)
    .map((issue) => {
      const path = issue.path.length ? `${clip(issue.path.join("."))}: ` : "";
      return path + clip(issue.message, 120);
    })
    .join("; ");
  const more = error.issues.length - MAX_ISSUES;
  return more > 0 ? `${shown}; and ${more} more` : shown;
}

function defineTool<S extends z.ZodType>(
  name: string,
  mutates: boolean,
  schema: S,
  run: (ctx: ToolContext, args: z.infer<S>) => ToolOutcome,
): Tool {
  return {
    mutates,
    run(ctx, rawArgs) {
      const parsed = schema.safeParse(rawArgs);
      if (!parsed.success) {
        return {
          ok: false,
          error: `invalid arguments for ${name}: ${describeIssues(parsed.error)}`,
        };
      }
      return run(ctx, parsed.data);
    },
  };
}

const isoDate = z.string().refine(isIsoDate, "expected a real date written as YYYY-MM-DD");
const text = z.string().trim().min(1, "must not be empty");
const label = text.transform((value) => value.toLowerCase());
const taskId = z.strictObject({ id: z.string() });
const labelArgs = z.strictObject({ id: z.string(), label });

const fail = (error: string): ToolOutcome => ({ ok: false, error });
const succeed = (output: unknown): ToolOutcome => ({ ok: true, output });

/** A task as tools print it (a copy, so later mutations never alter earlier outputs). */
export function taskView(task: TodoTask): TodoTask {
  return {
    id: task.id,
    project: task.project,
    title: task.title,
    due: task.due,
    priority: task.priority,
    labels: task.labels.slice(),
    completed: task.completed,
  };
}

function listView(tasks: readonly TodoTask[]): { count: number; tasks: TodoTask[] } {
  return { count: tasks.length, tasks: tasks.map(taskView) };
}

/** Project names match case-insensitively; the stored spelling is returned. */
function resolveProject(state: TodoState, name: string): string | undefined {
  const wanted = name.trim().toLowerCase();
  return state.projects.find((project) => project.toLowerCase() === wanted);
}

function unknownProject(state: TodoState, name: string): ToolOutcome {
  return fail(`no project named "${clip(name)}". Projects: ${state.projects.join(", ")}`);
}

function withTask(ctx: ToolContext, id: string, run: (task: TodoTask) => ToolOutcome): ToolOutcome {
  const task = ctx.state.tasks.get(id.trim());
  return task ? run(task) : fail(`no task with id "${clip(id)}"`);
}

function insertLabel(task: TodoTask, value: string): void {
  task.labels.push(value);
  task.labels.sort();
}

export const listTasksArgs = z.strictObject({
  project: z.string().optional(),
  label: label.optional(),
  priority: z.enum(PRIORITIES).optional(),
  status: z.enum(["open", "completed", "all"]).optional(),
  due_from: isoDate.optional(),
  due_to: isoDate.optional(),
  overdue: z.boolean().optional(),
});

export type TaskFilter = z.infer<typeof listTasksArgs>;

/** The tasks list_tasks returns for a filter (project already resolved), in creation order. */
export function filterTasks(state: TodoState, today: string, filter: TaskFilter): TodoTask[] {
  const status = filter.status ?? "open";
  const out: TodoTask[] = [];
  for (const task of state.tasks.values()) {
    if (status === "open" && task.completed) continue;
    if (status === "completed" && !task.completed) continue;
    if (filter.project !== undefined && task.project !== filter.project) continue;
    if (filter.label !== undefined && !task.labels.includes(filter.label)) continue;
    if (filter.priority !== undefined && task.priority !== filter.priority) continue;
    if (filter.due_from !== undefined && (task.due === null || task.due < filter.due_from))
      continue;
    if (filter.due_to !== undefined && (task.due === null || task.due > filter.due_to)) continue;
    if (filter.overdue !== undefined && isOverdue(task, today) !== filter.overdue) continue;
    out.push(task);
  }
  return out;
}

const listProjects = defineTool("list_projects", false, z.strictObject({}), ({ state }) => {
  const projects = state.projects.map((name) => ({ name, open: 0, completed: 0 }));
  for (const task of state.tasks.values()) {
    const entry = projects.find((project) => project.name === task.project);
    if (entry) entry[task.completed ? "completed" : "open"] += 1;
  }
  return succeed({ projects });
});

const listTasks = defineTool("list_tasks", false, listTasksArgs, (ctx, filter) => {
  if (filter.project === undefined)
    return succeed(listView(filterTasks(ctx.state, ctx.today, filter)));
  const project = resolveProject(ctx.state, filter.project);
  if (project === undefined) return unknownProject(ctx.state, filter.project);
  return succeed(listView(filterTasks(ctx.state, ctx.today, { ...filter, project })));
});

const getTask = defineTool("get_task", false, taskId, (ctx, { id }) =>
  withTask(ctx, id, (task) => succeed(taskView(task))),
);

const searchTasks = defineTool(
  "search_tasks",
  false,
  z.strictObject({ query: text }),
  ({ state }, { query }) => {
    const needle = query.toLowerCase();
    const hits = [...state.tasks.values()].filter((task) =>
      task.title.toLowerCase().includes(needle),
    );
    return succeed(listView(hits));
  },
);

const createProject = defineTool(
  "create_project",
  true,
  z.strictObject({ name: text }),
  ({ state }, { name }) => {
    const existing = resolveProject(state, name);
    if (existing !== undefined) return fail(`project "${existing}" already exists`);
    state.projects.push(name);
    return succeed({ created_project: name });
  },
);

const addTask = defineTool(
  "add_task",
  true,
  z.strictObject({
    project: z.string(),
    title: text,
    due: isoDate.nullable().optional(),
    priority: z.enum(PRIORITIES).optional(),
    labels: z.array(label).optional(),
  }),
  ({ state }, args) => {
    const project = resolveProject(state, args.project);
    if (project === undefined) return unknownProject(state, args.project);
    const task: TodoTask = {
      id: `t${state.nextId}`,
      project,
      title: args.title,
      due: args.due ?? null,
      priority: args.priority ?? "medium",
      labels: [...new Set(args.labels ?? [])].sort(),
      completed: false,
    };
    state.nextId += 1;
    state.tasks.set(task.id, task);
    return succeed({ created: taskView(task) });
  },
);

const updateTask = defineTool(
  "update_task",
  true,
  z
    .strictObject({
      id: z.string(),
      title: text.optional(),
      due: isoDate.nullable().optional(),
      priority: z.enum(PRIORITIES).optional(),
      project: z.string().optional(),
    })
    .refine(
      (args) => Object.entries(args).some(([key, value]) => key !== "id" && value !== undefined),
      "give at least one field to change: title, due, priority or project",
    ),
  (ctx, args) =>
    withTask(ctx, args.id, (task) => {
      let project = task.project;
      if (args.project !== undefined) {
        const resolved = resolveProject(ctx.state, args.project);
        if (resolved === undefined) return unknownProject(ctx.state, args.project);
        project = resolved;
      }
      task.project = project;
      if (args.title !== undefined) task.title = args.title;
      if (args.due !== undefined) task.due = args.due;
      if (args.priority !== undefined) task.priority = args.priority;
      return succeed({ updated: taskView(task) });
    }),
);

const completeTask = defineTool("complete_task", true, taskId, (ctx, { id }) =>
  withTask(ctx, id, (task) => {
    if (task.completed) return fail(`task ${task.id} is already completed`);
    task.completed = true;
    return succeed({ completed: taskView(task) });
  }),
);

const deleteTask = defineTool("delete_task", true, taskId, (ctx, { id }) =>
  withTask(ctx, id, (task) => {
    ctx.state.tasks.delete(task.id);
    return succeed({ deleted: taskView(task) });
  }),
);

const addLabel = defineTool("add_label", true, labelArgs, (ctx, args) =>
  withTask(ctx, args.id, (task) => {
    if (task.labels.includes(args.label)) {
      return succeed({ task: taskView(task), note: `already labelled ${args.label}` });
    }
    insertLabel(task, args.label);
    return succeed({ task: taskView(task) });
  }),
);

const removeLabel = defineTool("remove_label", true, labelArgs, (ctx, args) =>
  withTask(ctx, args.id, (task) => {
    if (!task.labels.includes(args.label)) {
      return fail(`task ${task.id} has no label "${clip(args.label)}"`);
    }
    task.labels = task.labels.filter((value) => value !== args.label);
    return succeed({ task: taskView(task) });
  }),
);

/** Every tool but `finish`, which the environment handles because it ends the episode. */
export const TOOLS: Readonly<Record<string, Tool>> = {
  list_projects: listProjects,
  list_tasks: listTasks,
  get_task: getTask,
  search_tasks: searchTasks,
  create_project: createProject,
  add_task: addTask,
  update_task: updateTask,
  complete_task: completeTask,
  delete_task: deleteTask,
  add_label: addLabel,
  remove_label: removeLabel,
};

export const finishArgs = z.strictObject({ answer: z.string() });

export const TOOL_NAMES: readonly string[] = [...Object.keys(TOOLS), "finish"];

/** Runs one tool call; unknown names are reported like any other tool error. */
export function runTool(ctx: ToolContext, name: string, args: unknown): ToolOutcome {
  const tool = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
  if (!tool) return fail(`unknown tool "${clip(name)}". Tools: ${TOOL_NAMES.join(", ")}`);
  return tool.run(ctx, args);
}
