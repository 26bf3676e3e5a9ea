/** Random initial databases: a few projects with 6–14 tasks spread around "today". */
import type { Rng } from "../rng.js";
import { LABELS, PROJECT_NAMES, PROJECT_TITLES } from "./data.js";
import { addDays } from "./dates.js";
import type { Priority, TodoState, TodoTask } from "./world.js";

const FIRST_DAY = "2026-01-01";

/** A "today" somewhere in 2026. */
export function generateToday(rng: Rng): string {
  return addDays(FIRST_DAY, rng.int(365));
}

function drawPriority(rng: Rng): Priority {
  const r = rng.next();
  return r < 0.3 ? "low" : r < 0.75 ? "medium" : "high";
}

function drawLabels(rng: Rng): string[] {
  const r = rng.next();
  const count = r < 0.45 ? 0 : r < 0.85 ? 1 : 2;
  return rng.shuffle(LABELS).slice(0, count).sort();
}

/** Due dates from 10 days ago to 20 days ahead; a fifth of the tasks have none. */
function drawDue(rng: Rng, today: string): string | null {
  return rng.next() < 0.2 ? null : addDays(today, rng.int(31) - 10);
}

export function generateDatabase(rng: Rng, today: string): TodoState {
  const projects = rng.shuffle(PROJECT_NAMES).slice(0, 3 + rng.int(2));
  const taskCount = 6 + rng.int(9);
  // Every project gets at least one task; the rest land anywhere, in a shuffled order.
  const owners = projects.slice();
  while (owners.length < taskCount) owners.push(rng.pick(projects));
  const pools = new Map(projects.map((name) => [name, rng.shuffle(PROJECT_TITLES[name] ?? [])]));

  const tasks = new Map<string, TodoTask>();
  rng.shuffle(owners).forEach((project, i) => {
    const id = `t${i + 1}`;
    tasks.set(id, {
      id,
      project,
      title: pools.get(project)?.pop() ?? `Task ${i + 1}`,
      due: drawDue(rng, today),
      priority: drawPriority(rng),
      labels: drawLabels(rng),
      completed: rng.next() < 0.25,
    });
  });
  return { projects, tasks, nextId: taskCount + 1 };
}

/** Titles from a project's pool that no task in the state uses yet. */
export function unusedTitles(state: TodoState, project: string): string[] {
  const used = new Set([...state.tasks.values()].map((task) => task.title));
  return (PROJECT_TITLES[project] ?? []).filter((title) => !used.has(title));
}
