/**
 * The random baseline's action space: a uniformly chosen tool with plausible arguments, taking
 * task ids, project names and labels from the latest observation where it shows some.
 */
import type { Observation } from "../types.js";
import { formatAction } from "./action.js";
import { LABELS, NEW_PROJECT_NAMES, PROJECT_NAMES } from "./data.js";
import { PRIORITIES } from "./world.js";

/** Every generated database has at least six tasks, t1..t6. */
const FALLBACK_IDS = ["t1", "t2", "t3", "t4", "t5", "t6"];
const SEARCH_WORDS = ["the", "buy", "book", "pay", "call", "fix", "renew", "plan"];

function matches(text: string, pattern: RegExp): string[] {
  return [...new Set([...text.matchAll(pattern)].map((match) => match[1] ?? ""))];
}

export function sampleTodoAction(random: () => number, observation: Observation): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const text = observation.text;
  const seenIds = matches(text, /"id":"(t\d+)"/g);
  const ids = seenIds.length > 0 ? seenIds : FALLBACK_IDS;
  const named = [...PROJECT_NAMES, ...NEW_PROJECT_NAMES].filter((name) => text.includes(name));
  const projects = named.length > 0 ? named : ["Work"];
  const month = String(1 + Math.floor(random() * 12)).padStart(2, "0");
  const date = `2026-${month}-${10 + Math.floor(random() * 19)}`;

  const calls: Array<() => [string, Record<string, unknown>]> = [
    () => ["list_projects", {}],
    () => [
      "list_tasks",
      pick([{}, { status: "all" }, { overdue: true }, { project: pick(projects) }]),
    ],
    () => ["get_task", { id: pick(ids) }],
    () => ["search_tasks", { query: pick(SEARCH_WORDS) }],
    () => [
      "add_task",
      { project: pick(projects), title: `New task ${pick(SEARCH_WORDS)}`, due: date },
    ],
    () => ["update_task", { id: pick(ids), priority: pick(PRIORITIES) }],
    () => ["update_task", { id: pick(ids), due: date }],
    () => ["complete_task", { id: pick(ids) }],
    () => ["delete_task", { id: pick(ids) }],
    () => ["add_label", { id: pick(ids), label: pick(LABELS) }],
    () => ["remove_label", { id: pick(ids), label: pick(LABELS) }],
    () => ["create_project", { name: pick(NEW_PROJECT_NAMES) }],
  ];
  if (random() < 0.03) return formatAction({ tool: "finish", args: { answer: "Done." } });
  const [tool, args] = pick(calls)();
  return formatAction({ tool, args });
}
