/** Helpers for request templates: a recorder of gold tool calls and relative-date phrases. */
import type { Rng } from "../rng.js";
import type { ToolCall } from "./action.js";
import { addDays, nextWeekday, WEEKDAYS } from "./dates.js";
import { filterTasks, runTool, type TaskFilter } from "./tools.js";
import type { TodoState, TodoTask } from "./world.js";

/**
 * Runs gold calls through the real tools on a working copy and records them, so the gold
 * state is by construction what the environment produces for the same calls.
 */
export class Planner {
  readonly calls: ToolCall[] = [];

  constructor(
    /** The working state: the initial database, then the result of each recorded call. */
    readonly state: TodoState,
    readonly today: string,
  ) {}

  call(tool: string, args: Record<string, unknown>): unknown {
    const outcome = runTool({ state: this.state, today: this.today }, tool, args);
    if (!outcome.ok) throw new Error(`todo generator: gold call ${tool} failed: ${outcome.error}`);
    this.calls.push({ tool, args });
    return outcome.output;
  }

  /** The tasks list_tasks would return now (project names must be exact). */
  tasks(filter: TaskFilter): TodoTask[] {
    return filterTasks(this.state, this.today, filter);
  }
}

export interface DatePhrase {
  date: string;
  /** After "due": "tomorrow", "in 3 days", "next Friday" or "on 2026-03-10". */
  dueText: string;
  /** As a noun: "tomorrow", "3 days from now", "next Friday" or "2026-03-10". */
  dateText: string;
}

/** A future date and ways of saying it; the instruction defines each relative form. */
export function drawDatePhrase(rng: Rng, today: string): DatePhrase {
  const form = rng.int(4);
  if (form === 0) return { date: addDays(today, 1), dueText: "tomorrow", dateText: "tomorrow" };
  if (form === 1) {
    const days = 2 + rng.int(13);
    const date = addDays(today, days);
    return { date, dueText: `in ${days} days`, dateText: `${days} days from now` };
  }
  if (form === 2) {
    const weekday = rng.pick(WEEKDAYS);
    const text = `next ${weekday}`;
    return { date: nextWeekday(today, weekday), dueText: text, dateText: text };
  }
  const date = addDays(today, 3 + rng.int(28));
  return { date, dueText: `on ${date}`, dateText: date };
}
