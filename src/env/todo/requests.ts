/**
 * Request templates. Each checks that the database suits it, records the gold calls that
 * satisfy it on the planner (lookups included, as a careful agent would make them) and returns
 * the user's words and the answers the agent must give. Null means "draw another database".
 */
import type { Rng } from "../rng.js";
import { LABELS, NEW_PROJECT_NAMES, PROJECT_NAMES } from "./data.js";
import { unusedTitles } from "./database.js";
import { addDays, nextWeekday, WEEKDAYS } from "./dates.js";
import { drawDatePhrase, type Planner } from "./planner.js";
import { PRIORITIES, type TodoTask } from "./world.js";

export interface BuiltRequest {
  text: string;
  /** Strings the agent's final answer must contain (empty for pure state changes). */
  answers: string[];
}

export interface RequestTemplate {
  kind: string;
  build(rng: Rng, plan: Planner): BuiltRequest | null;
}

const MAX_MATCHES = 5;

const inRange = (count: number, min: number, max: number) => count >= min && count <= max;

function pickOrNull<T>(rng: Rng, items: readonly T[]): T | null {
  return items.length === 0 ? null : rng.pick(items);
}

function openCount(plan: Planner, project: string): number {
  return plan.tasks({ project }).length;
}

/** Looks a task up by its exact title, as an agent would before acting on it. */
function searchFor(plan: Planner, task: TodoTask): void {
  plan.call("search_tasks", { query: task.title });
}

const rescheduleOverdue: RequestTemplate = {
  kind: "reschedule_overdue",
  build(rng, plan) {
    const projects = plan.state.projects.filter((project) =>
      inRange(plan.tasks({ project, overdue: true }).length, 1, MAX_MATCHES),
    );
    const project = pickOrNull(rng, projects);
    if (project === null) return null;
    const weekday = rng.pick(WEEKDAYS);
    const due = nextWeekday(plan.today, weekday);
    const label = rng.pick(["urgent", "urgent", ...LABELS]);
    plan.call("list_tasks", { project, overdue: true });
    for (const task of plan.tasks({ project, overdue: true })) {
      plan.call("update_task", { id: task.id, due });
      if (!task.labels.includes(label)) plan.call("add_label", { id: task.id, label });
    }
    const move = `Move every overdue task in ${project} to next ${weekday}`;
    const text = `${move} and label them "${label}".`;
    if (rng.next() < 0.5) return { text, answers: [] };
    // A follow-up question about the state after the changes.
    const other = rng.pick(plan.state.projects.filter((name) => openCount(plan, name) > 0));
    plan.call("list_tasks", { project: other });
    return {
      text: `${text} Then tell me how many open tasks are left in ${other}.`,
      answers: [String(openCount(plan, other))],
    };
  },
};

const completeByTitle: RequestTemplate = {
  kind: "complete_by_title",
  build(rng, plan) {
    const task = pickOrNull(
      rng,
      plan.tasks({}).filter((t) => openCount(plan, t.project) >= 2),
    );
    if (task === null) return null;
    searchFor(plan, task);
    plan.call("complete_task", { id: task.id });
    plan.call("list_tasks", { project: task.project });
    const text =
      rng.next() < 0.5
        ? `I already did "${task.title}", please mark it as done. ` +
          `How many open tasks do I still have in ${task.project}?`
        : `Tick off "${task.title}" and tell me how many open ${task.project} tasks remain.`;
    return { text, answers: [String(openCount(plan, task.project))] };
  },
};

const addTask: RequestTemplate = {
  kind: "add_task",
  build(rng, plan) {
    const { dueText, date } = drawDatePhrase(rng, plan.today);
    const priority = rng.pick([undefined, "high", "low"] as const);
    const label = rng.next() < 0.5 ? rng.pick(LABELS) : undefined;
    const details =
      (priority ? ` with ${priority} priority` : "") + (label ? `, labelled "${label}"` : "");
    const fresh = NEW_PROJECT_NAMES.filter((name) => !plan.state.projects.includes(name));
    const createNew = rng.next() < 0.3;
    // A new project borrows a title from a project the user does not have.
    const project = createNew ? rng.pick(fresh) : rng.pick(plan.state.projects);
    const source = createNew
      ? rng.pick(PROJECT_NAMES.filter((name) => !plan.state.projects.includes(name)))
      : project;
    const title = pickOrNull(rng, unusedTitles(plan.state, source));
    if (title === null) return null;
    if (createNew) plan.call("create_project", { name: project });
    plan.call("add_task", {
      project,
      title,
      due: date,
      ...(priority ? { priority } : {}),
      ...(label ? { labels: [label] } : {}),
    });
    const text = createNew
      ? `Create a project called "${project}" and add "${title}" to it, due ${dueText}${details}.`
      : `Add "${title}" to ${project}, due ${dueText}${details}.`;
    return { text, answers: [] };
  },
};

const countQuery: RequestTemplate = {
  kind: "count_query",
  build(rng, plan) {
    const form = rng.int(3);
    if (form === 0) {
      const priority = rng.pick(PRIORITIES);
      const count = plan.tasks({ priority }).length;
      if (count === 0) return null;
      plan.call("list_tasks", { priority });
      return {
        text: `How many open ${priority}-priority tasks do I have across all my projects?`,
        answers: [String(count)],
      };
    }
    if (form === 1) {
      const label = rng.pick(LABELS);
      const count = plan.tasks({ label }).length;
      if (count === 0) return null;
      plan.call("list_tasks", { label });
      return { text: `How many open tasks are labelled "${label}"?`, answers: [String(count)] };
    }
    const count = plan.tasks({ overdue: true }).length;
    if (count === 0) return null;
    plan.call("list_tasks", { overdue: true });
    return { text: "How many of my tasks are overdue right now?", answers: [String(count)] };
  },
};

/** The open task with the strictly earliest due date in a project, if there is one. */
function earliestDue(plan: Planner, project: string): TodoTask | null {
  const dated = plan.tasks({ project }).filter((task) => task.due !== null);
  if (dated.length < 2) return null;
  const sorted = dated.sort((a, b) => (a.due as string).localeCompare(b.due as string));
  const [first, second] = sorted as [TodoTask, TodoTask];
  return first.due === second.due ? null : first;
}

const nextDue: RequestTemplate = {
  kind: "next_due",
  build(rng, plan) {
    const change = rng.next() < 0.5;
    const projects = plan.state.projects.filter((project) => {
      const task = earliestDue(plan, project);
      return task !== null && (!change || task.priority !== "high");
    });
    const project = pickOrNull(rng, projects);
    if (project === null) return null;
    const task = earliestDue(plan, project) as TodoTask;
    plan.call("list_tasks", { project });
    if (!change) {
      return {
        text: `Which open task in ${project} has the earliest due date? Just tell me its title.`,
        answers: [task.title],
      };
    }
    plan.call("update_task", { id: task.id, priority: "high" });
    return {
      text:
        `Find the open task in ${project} with the earliest due date, ` +
        "set it to high priority and tell me its title.",
      answers: [task.title],
    };
  },
};

const moveLabelled: RequestTemplate = {
  kind: "move_labelled",
  build(rng, plan) {
    const pairs = plan.state.projects.flatMap((project) =>
      LABELS.filter((label) =>
        inRange(plan.tasks({ project, label, status: "all" }).length, 1, MAX_MATCHES),
      ).map((label) => ({ project, label })),
    );
    const pair = pickOrNull(rng, pairs);
    if (pair === null) return null;
    const name = rng.pick(NEW_PROJECT_NAMES.filter((n) => !plan.state.projects.includes(n)));
    plan.call("create_project", { name });
    plan.call("list_tasks", { ...pair, status: "all" });
    for (const task of plan.tasks({ ...pair, status: "all" })) {
      plan.call("update_task", { id: task.id, project: name });
    }
    return {
      text:
        `Create a project called "${name}" and move every task in ${pair.project} labelled ` +
        `"${pair.label}" into it, completed ones included.`,
      answers: [],
    };
  },
};

const cleanupCompleted: RequestTemplate = {
  kind: "cleanup_completed",
  build(rng, plan) {
    const projects = plan.state.projects.filter((project) =>
      inRange(plan.tasks({ project, status: "completed" }).length, 1, MAX_MATCHES + 1),
    );
    const project = pickOrNull(rng, projects);
    if (project === null) return null;
    const done = plan.tasks({ project, status: "completed" });
    plan.call("list_tasks", { project, status: "completed" });
    for (const task of done) plan.call("delete_task", { id: task.id });
    return {
      text:
        `Clean up ${project}: delete all of its completed tasks ` +
        "and tell me how many you removed.",
      answers: [String(done.length)],
    };
  },
};

const renameLabel: RequestTemplate = {
  kind: "rename_label",
  build(rng, plan) {
    const from = pickOrNull(
      rng,
      LABELS.filter((label) =>
        inRange(plan.tasks({ label, status: "all" }).length, 1, MAX_MATCHES),
      ),
    );
    if (from === null) return null;
    const to = rng.pick(LABELS.filter((label) => label !== from));
    plan.call("list_tasks", { label: from, status: "all" });
    for (const task of plan.tasks({ label: from, status: "all" })) {
      plan.call("remove_label", { id: task.id, label: from });
      if (!task.labels.includes(to)) plan.call("add_label", { id: task.id, label: to });
    }
    return {
      text:
        `Replace the label "${from}" with "${to}" on every task that has it, ` +
        "completed ones included.",
      answers: [],
    };
  },
};

const prioritizeWindow: RequestTemplate = {
  kind: "prioritize_window",
  build(rng, plan) {
    const { dateText, date } = drawDatePhrase(rng, plan.today);
    const window = (project: string) => plan.tasks({ project, due_from: plan.today, due_to: date });
    const projects = plan.state.projects.filter((project) => {
      const tasks = window(project);
      return tasks.length <= MAX_MATCHES + 1 && tasks.some((task) => task.priority !== "high");
    });
    const project = pickOrNull(rng, projects);
    if (project === null) return null;
    plan.call("list_tasks", { project, due_from: plan.today, due_to: date });
    for (const task of window(project)) {
      if (task.priority !== "high") plan.call("update_task", { id: task.id, priority: "high" });
    }
    return {
      text:
        `Set every open ${project} task due between today and ${dateText} (both inclusive) ` +
        "to high priority.",
      answers: [],
    };
  },
};

const postpone: RequestTemplate = {
  kind: "postpone",
  build(rng, plan) {
    const removeOne = rng.next() < 0.5;
    const task = pickOrNull(
      rng,
      plan
        .tasks({})
        .filter(
          (t) =>
            t.due !== null && (removeOne ? t.labels.length > 0 : !t.labels.includes("waiting")),
        ),
    );
    if (task === null) return null;
    const days = 1 + rng.int(14);
    const label = removeOne ? rng.pick(task.labels) : "waiting";
    searchFor(plan, task);
    plan.call("update_task", { id: task.id, due: addDays(task.due as string, days) });
    plan.call(removeOne ? "remove_label" : "add_label", { id: task.id, label });
    const unit = days === 1 ? "day" : "days";
    const labelPart = removeOne ? `remove its "${label}" label` : `label it "${label}"`;
    return {
      text:
        `Push "${task.title}" back by ${days} ${unit} from its current due date ` +
        `and ${labelPart}.`,
      answers: [],
    };
  },
};

const busiestProject: RequestTemplate = {
  kind: "busiest_project",
  build(rng, plan) {
    const status = rng.pick(["open", "completed"] as const);
    const counts = plan.state.projects
      .map((project) => ({ project, count: plan.tasks({ project, status }).length }))
      .sort((a, b) => b.count - a.count);
    const [top, runnerUp] = counts;
    if (!top || !runnerUp || top.count === runnerUp.count) return null;
    plan.call("list_projects", {});
    return {
      text: `Which of my projects has the most ${status} tasks, and how many does it have?`,
      answers: [top.project, String(top.count)],
    };
  },
};

const completeAndFollowUp: RequestTemplate = {
  kind: "complete_and_follow_up",
  build(rng, plan) {
    const task = pickOrNull(
      rng,
      plan.tasks({}).filter((t) => t.due !== null),
    );
    if (task === null) return null;
    const days = 1 + rng.int(7);
    const title = `Follow up: ${task.title}`;
    searchFor(plan, task);
    plan.call("complete_task", { id: task.id });
    plan.call("add_task", {
      project: task.project,
      title,
      due: addDays(task.due as string, days),
      priority: task.priority,
      labels: task.labels.slice(),
    });
    return {
      text:
        `Mark "${task.title}" as done, then add a follow-up task "${title}" in the same project, ` +
        `due ${days} day${days === 1 ? "" : "s"} after its original due date, ` +
        "with the same priority and labels.",
      answers: [],
    };
  },
};

/** Task index i uses template i mod 12, so every split covers every kind evenly. */
export const REQUEST_TEMPLATES: readonly RequestTemplate[] = [
  rescheduleOverdue,
  completeByTitle,
  addTask,
  countQuery,
  nextDue,
  moveLabelled,
  cleanupCompleted,
  renameLabel,
  prioritizeWindow,
  postpone,
  busiestProject,
  completeAndFollowUp,
];
