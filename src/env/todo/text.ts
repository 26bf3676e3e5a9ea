/** The environment's static description and the texts it shows the agent. */
import type { EnvInfo } from "../types.js";
import { weekdayOf } from "./dates.js";

export const MAX_STEPS = 30;

export const INSTRUCTION = `You are an assistant operating a user's to-do list app through tools. \
Carry out the user's request exactly: make every change it asks for and nothing else, then call \
finish with your answer to the user.

The database has projects and tasks. A task looks like:
{"id": "t3", "project": "Work", "title": "Write release notes", "due": "2026-03-02", \
"priority": "high", "labels": ["email", "urgent"], "completed": false}
- due is an ISO date (YYYY-MM-DD) or null; priority is "low", "medium" or "high"; labels are \
lowercase words.
- A task is open while completed is false. A task is overdue when it is open and its due date is \
before today.
- Dates in requests are relative to the "today" stated in the task: "tomorrow" is today + 1 day, \
"in N days" and "N days from now" are today + N days, "next <weekday>" is the first such \
weekday strictly after today (a week ahead when today is that weekday). "Between A and B (both \
inclusive)" includes A and B.

Call one tool per turn, exactly in this form (the input is a JSON object):
Action: <tool> with Action Input: {"arg": "value"}
Example: Action: add_task with Action Input: {"project": "Work", "title": "Call Ana", \
"due": "2026-03-02"}

Tools (arguments marked ? are optional):
- list_projects {} — every project with its numbers of open and completed tasks.
- list_tasks {"project"?, "label"?, "priority"?, "status"?, "due_from"?, "due_to"?, \
"overdue"?} — tasks matching all the given filters. status is "open" (the default), \
"completed" or "all"; due_from and due_to are inclusive dates and skip tasks without a due \
date; overdue is true or false.
- get_task {"id"} — one task.
- search_tasks {"query"} — tasks of any status whose title contains the text (case-insensitive).
- create_project {"name"} — a new, empty project.
- add_task {"project", "title", "due"?, "priority"?, "labels"?} — creates an open task; \
defaults: due null, priority "medium", labels []. Returns it with its new id.
- update_task {"id", "title"?, "due"?, "priority"?, "project"?} — changes the given fields \
(due may be null to clear it; project moves the task).
- complete_task {"id"} — marks an open task completed.
- delete_task {"id"} — removes a task for good.
- add_label {"id", "label"} — adds a label to a task.
- remove_label {"id", "label"} — removes a label from a task.
- finish {"answer"} — ends the episode; the answer is your reply to the user. Answer any \
question in the request here (counts as numbers, titles and project names exactly as stored). \
Commit to one answer: a reply that also offers other candidate counts or names is graded wrong.

Tool results come back as JSON; errors start with "Error:" and change nothing. You have at \
most ${MAX_STEPS} tool calls, finish included. You succeed when the final database equals the \
one the request calls for and your answer contains what the user asked for.`;

export const TODO_INFO: EnvInfo = {
  name: "todo",
  version: "1.1.0",
  description:
    "A stateful to-do app (projects, tasks, due dates, labels, priorities) driven by JSON tool " +
    "calls; success when the final database equals the gold one and the answer is right " +
    "(after τ-bench and AgentGym's Todo).",
  instruction: INSTRUCTION,
  splits: { train: { start: 100, end: 500 }, test: { start: 0, end: 100 } },
  successThreshold: 1,
  maxSteps: MAX_STEPS,
};

export function formatTaskStatement(today: string, request: string): string {
  return `Today is ${today} (${weekdayOf(today)}).\nUser request: ${request}`;
}

export function formatToolError(error: string): string {
  return `Error: ${error}`;
}
