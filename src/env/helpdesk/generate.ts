/**
 * Session generation: (task index, seed) → the employee, the date and the user's goals. Cheap by
 * design (a few dozen random draws over data read once), since every reset and every built-in
 * assistant episode generates its session.
 */
import { createRng, type Rng } from "../rng.js";
import { addDays, weekdayOf } from "../todo/dates.js";
import { type Employee, helpdeskData, type LeaveType } from "./data.js";
import {
  type Goal,
  type GoalKind,
  LEAVE_SLOTS,
  type LeaveSlot,
  type PolicyGoal,
  type TicketSlot,
} from "./types.js";

/** Keeps this environment's random streams apart from other environments' (ASCII "help"). */
const STREAM_TAG = 0x68656c70;

/** Sessions hold one to four goals: P(1..4). */
const GOAL_COUNTS: readonly (readonly [number, number])[] = [
  [1, 0.2],
  [2, 0.4],
  [3, 0.3],
  [4, 0.1],
];

/** How often each kind of goal is drawn. */
const KIND_WEIGHTS: readonly (readonly [GoalKind, number])[] = [
  ["policy", 0.42],
  ["balance", 0.12],
  ["leave", 0.18],
  ["ticket", 0.16],
  ["ood", 0.12],
];

/** A handbook question gets a follow-up on the same passage this often. */
const FOLLOW_UP_RATE = 0.35;
/** How many slots of a leave request (0..3) the opening message states: P(0..3). */
const LEAVE_GIVEN: readonly number[] = [0.3, 0.3, 0.25, 0.15];
/** How many of urgency and location an IT opening states: P(0..2). */
const TICKET_GIVEN: readonly number[] = [0.4, 0.4, 0.2];
const FIRST_DAY = "2026-01-05";

export interface Session {
  taskIndex: number;
  seed: number;
  /** The session's date (YYYY-MM-DD); leave starts after it. */
  today: string;
  employee: Employee;
  goals: Goal[];
  /** Where the backend's request and ticket numbers start. */
  idBase: number;
}

function weighted<T>(rng: Rng, items: readonly (readonly [T, number])[]): T {
  let u = rng.next();
  for (const [item, weight] of items) {
    u -= weight;
    if (u < 0) return item;
  }
  return (items[items.length - 1] as readonly [T, number])[0];
}

function countFrom(rng: Rng, probabilities: readonly number[]): number {
  return weighted(
    rng,
    probabilities.map((p, i) => [i, p] as const),
  );
}

export const isWeekend = (date: string) =>
  weekdayOf(date) === "Saturday" || weekdayOf(date) === "Sunday";

function nextWorkingDay(date: string): string {
  let day = date;
  while (isWeekend(day)) day = addDays(day, 1);
  return day;
}

/** The last day of a leave of `days` working days starting on the working day `start`. */
export function addWorkingDays(start: string, days: number): string {
  let day = start;
  for (let left = days - 1; left > 0; left--) day = nextWorkingDay(addDays(day, 1));
  return day;
}

function policyGoal(rng: Rng, id: string, used: Set<string>): PolicyGoal {
  const { passages } = helpdeskData();
  const free = passages.filter((p) => !used.has(p.id));
  const passage = rng.pick(free.length > 0 ? free : passages);
  used.add(passage.id);
  const first = rng.int(2);
  const order = rng.next() < FOLLOW_UP_RATE ? [first, 1 - first] : [first];
  const asks = order.map((i) => {
    const fact = passage.facts[i] as (typeof passage.facts)[number];
    const q = rng.int(2);
    return {
      answer: fact.answer,
      question: fact.questions[q] as string,
      rephrase: fact.questions[1 - q] as string,
    };
  });
  return { kind: "policy", id, passageId: passage.id, asks };
}

function pickGiven<T>(rng: Rng, slots: readonly T[], count: number): T[] {
  const chosen = new Set(rng.shuffle(slots).slice(0, count));
  return slots.filter((s) => chosen.has(s));
}

function goalOf(
  rng: Rng,
  kind: GoalKind,
  id: string,
  employee: Employee,
  today: string,
  used: Set<string>,
): Goal {
  const data = helpdeskData();
  switch (kind) {
    case "policy":
      return policyGoal(rng, id, used);
    case "balance": {
      const leaveType = rng.pick(data.leaveTypes);
      const question = rng.pick(data.dialogue.balance.open).replace("{type}", leaveType);
      return { kind, id, leaveType, question };
    }
    case "leave": {
      const types = data.requestableTypes.filter((t) => employee.balances[t] >= 1);
      const type: LeaveType = rng.pick(types);
      const days = 1 + rng.int(Math.min(5, employee.balances[type]));
      const start = nextWorkingDay(addDays(today, 7 + rng.int(36)));
      const end = addWorkingDays(start, days);
      const given: LeaveSlot[] = pickGiven(rng, LEAVE_SLOTS, countFrom(rng, LEAVE_GIVEN));
      const template = rng.int(data.dialogue.leave.open.length);
      return { kind, id, values: { type, start, end }, given, template };
    }
    case "ticket": {
      const category = rng.pick(data.categories);
      const problem = rng.pick(category.problems);
      const urgency = rng.pick(data.urgencies);
      const optional: TicketSlot[] = ["urgency", "location"];
      const stated = pickGiven(rng, optional, countFrom(rng, TICKET_GIVEN));
      const template = rng.int(data.dialogue.ticket.open.length);
      return {
        kind,
        id,
        values: { category: category.id, urgency, location: employee.office },
        problem,
        given: ["category", ...stated],
        template,
      };
    }
    case "ood": {
      const free = data.dialogue.ood.filter((q) => !used.has(q));
      const question = rng.pick(free.length > 0 ? free : data.dialogue.ood);
      used.add(question);
      return { kind, id, question };
    }
  }
}

export function generateSession(taskIndex: number, seed = 0): Session {
  const data = helpdeskData();
  const rng = createRng(STREAM_TAG, taskIndex, seed);
  const employee = rng.pick(data.employees);
  const today = nextWorkingDay(addDays(FIRST_DAY, rng.int(300)));
  const count = weighted(rng, GOAL_COUNTS);
  const used = new Set<string>();
  const goals: Goal[] = [];
  for (let i = 0; i < count; i++) {
    goals.push(goalOf(rng, weighted(rng, KIND_WEIGHTS), `g${i + 1}`, employee, today, used));
  }
  return { taskIndex, seed, today, employee, goals, idBase: 1000 + rng.int(8000) };
}
