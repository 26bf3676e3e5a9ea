/**
 * The random baseline's action space: a uniformly chosen tool with plausible arguments (the
 * employee id from the observation where it shows one), or a canned reply.
 */
import { formatAction } from "../todo/action.js";
import type { Observation } from "../types.js";
import { SUB_AGENTS } from "./types.js";

const WORDS = ["leave", "expenses", "laptop", "password", "travel", "pension", "hotel", "remote"];
const REPLIES = [
  "Could you tell me more?",
  "Here is what I found in the handbook.",
  "What type of leave would you like, and from which date?",
  "How urgent is it?",
  "Sorry, I can't help with that.",
  "Done.",
];
const CATEGORIES = ["hardware", "network", "accounts", "email", "software", "printing"];
const LOCATIONS = ["Leeds", "Lisbon", "Toronto", "Remote"];
const URGENCIES = ["low", "normal", "high"];
const TYPES = ["annual", "study", "volunteering"];

export function sampleHelpdeskAction(random: () => number, observation: Observation): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const employee = /\bE\d{4}\b/.exec(observation.text)?.[0] ?? "E1001";
  const passage = `P${String(1 + Math.floor(random() * 40)).padStart(2, "0")}`;
  const day = () =>
    `2026-${String(2 + Math.floor(random() * 10)).padStart(2, "0")}-1${Math.floor(random() * 9)}`;
  const calls: Array<() => [string, Record<string, unknown>]> = [
    () => ["route", { agent: pick(SUB_AGENTS) }],
    () => ["search_handbook", { query: pick(WORDS) }],
    () => ["read_passage", { id: passage }],
    () => ["leave_balance", { employee_id: employee }],
    () => [
      "file_leave_request",
      { employee_id: employee, type: pick(TYPES), start: day(), end: day() },
    ],
    () => [
      "open_ticket",
      {
        employee_id: employee,
        category: pick(CATEGORIES),
        urgency: pick(URGENCIES),
        location: pick(LOCATIONS),
        description: "Something is broken.",
      },
    ],
  ];
  if (random() < 0.3) return formatAction({ tool: "reply", args: { message: pick(REPLIES) } });
  const [tool, args] = pick(calls)();
  return formatAction({ tool, args });
}
