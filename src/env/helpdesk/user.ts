/**
 * The simulated user: states one goal at a time, answers the details the assistant asks for,
 * rephrases or restates after a failed turn, gives up on a goal after two failed turns (or too
 * many turns), and leaves when every goal is resolved. Every phrasing comes from
 * data/helpdesk/dialogue.json; choices between phrasings are keyed by (task, seed, turn).
 */
import { createRng } from "../rng.js";
import { helpdeskData } from "./data.js";
import type { Session } from "./generate.js";
import {
  type Goal,
  LEAVE_SLOTS,
  type LeaveGoal,
  type LeaveSlot,
  TICKET_SLOTS,
  type TicketGoal,
  type TicketSlot,
} from "./types.js";

/** A goal is given up after this many failed turns. */
export const MAX_FAILURES = 2;
/** ... or after this many turns in all (an assistant that keeps asking). */
export const MAX_GOAL_TURNS = 8;

/** Keeps phrasing choices apart from the other streams (ASCII "hdus"). */
const PHRASE_TAG = 0x68647573;

export type FormSlot = LeaveSlot | TicketSlot;

/** What the user learned from a graded turn, to decide what to say next. */
export interface TurnOutcome {
  success: boolean;
  /** A request or ticket matching the goal was filed (and confirmed) this turn. */
  filed: boolean;
  /** A request or ticket that does not match the goal was filed this turn. */
  wrongFiling: boolean;
  /** Slots the reply asked for (forms only). */
  asked: readonly FormSlot[];
  /** The turn ended without a reply: the user waited through the tool-call limit. */
  unanswered: boolean;
}

/**
 * What a message does, for a voice that phrases it (voice.ts): answers details asked for,
 * asks a goal's follow-up question, retries after a failed turn, moves on to the next goal, or
 * closes the session.
 */
export type MessageKind = "answer" | "follow-up" | "retry" | "next-goal" | "closing";

export interface UserMessage {
  text: string;
  /** The session is over: no goal is left. */
  done: boolean;
  kind: MessageKind;
  /** next-goal and closing: how the goal just left ended. */
  previous?: "achieved" | "abandoned";
}

interface Progress {
  turns: number;
  failures: number;
  /** Policy goals: which of the goal's asks is current. */
  ask: number;
  /** Form goals: the slots the user has stated so far. */
  given: Set<FormSlot>;
}

const fill = (template: string, vars: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (whole, key: string) => vars[key] ?? whole);

const capitalise = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

export function formSlots(goal: LeaveGoal | TicketGoal): readonly FormSlot[] {
  return goal.kind === "leave" ? LEAVE_SLOTS : TICKET_SLOTS;
}

/** The user's sentence stating one slot's value. */
export function slotStatement(goal: LeaveGoal | TicketGoal, slot: FormSlot): string {
  const { dialogue } = helpdeskData();
  if (goal.kind === "leave") {
    const { type, start, end } = goal.values;
    const template = dialogue.leave.slots[slot as LeaveSlot];
    return fill(template, { Type: capitalise(type), type, start, end });
  }
  const slots = dialogue.ticket.slots;
  if (slot === "category") return goal.problem;
  if (slot === "urgency") return slots.urgency[goal.values.urgency] ?? goal.values.urgency;
  return goal.values.location === "Remote"
    ? slots.remote
    : fill(slots.location, { office: goal.values.location });
}

/** The opening request of a form goal, stating the given slots. */
export function formOpening(goal: LeaveGoal | TicketGoal, given: ReadonlySet<FormSlot>): string {
  const { dialogue } = helpdeskData();
  if (goal.kind === "ticket") {
    const open = dialogue.ticket.open[goal.template % dialogue.ticket.open.length] as string;
    const extras = (["urgency", "location"] as const)
      .filter((slot) => given.has(slot))
      .map((slot) => slotStatement(goal, slot));
    return [fill(open, { problem: goal.problem }), ...extras].join(" ");
  }
  const { leave } = dialogue;
  const { type, start, end } = goal.values;
  const what = given.has("type") ? fill(leave.typed, { type }) : leave.untyped;
  const when =
    given.has("start") && given.has("end")
      ? leave.both
      : given.has("start")
        ? leave.start
        : given.has("end")
          ? leave.end
          : "";
  const open = leave.open[goal.template % leave.open.length] as string;
  return fill(open, { what, when: fill(when, { start, end }) });
}

/** The message that states a goal for the first time. */
export function goalOpening(goal: Goal): string {
  switch (goal.kind) {
    case "policy":
      return (goal.asks[0] as { question: string }).question;
    case "balance":
      return goal.question;
    case "ood":
      return goal.question;
    default:
      return formOpening(goal, new Set(goal.given));
  }
}

export class UserSimulator {
  private goalIndex = 0;
  private progress: Progress;
  /** User messages sent so far: the current turn's number. */
  turn = 0;
  /** Goals resolved as achieved (every turn a success). */
  achieved = 0;

  constructor(readonly session: Session) {
    this.progress = this.freshProgress();
  }

  get goal(): Goal | undefined {
    return this.session.goals[this.goalIndex];
  }

  /** Whether the current turn is the first of its goal. */
  get isNewGoal(): boolean {
    return this.progress.turns === 0;
  }

  get askIndex(): number {
    return this.progress.ask;
  }

  /** The slots of the current form goal the user has stated. */
  get given(): ReadonlySet<FormSlot> {
    return this.progress.given;
  }

  private freshProgress(): Progress {
    const goal = this.goal;
    const given = goal && (goal.kind === "leave" || goal.kind === "ticket") ? goal.given : [];
    return { turns: 0, failures: 0, ask: 0, given: new Set<FormSlot>(given) };
  }

  private pick(items: readonly string[], salt: number): string {
    const { taskIndex, seed } = this.session;
    return createRng(PHRASE_TAG, taskIndex, seed, this.turn, salt).pick(items);
  }

  /** The session's first message: a greeting and the first goal. */
  open(): string {
    const { dialogue } = helpdeskData();
    const { employee } = this.session;
    const greeting = fill(this.pick(dialogue.greeting, 0), {
      name: employee.name,
      id: employee.id,
    });
    this.turn = 1;
    return `${greeting} ${goalOpening(this.goal as Goal)}`;
  }

  /** Takes a graded turn and says the next message (or the closing line). */
  react(outcome: TurnOutcome): UserMessage {
    const goal = this.goal as Goal;
    const p = this.progress;
    p.turns += 1;
    const prefix = outcome.unanswered ? `${helpdeskData().dialogue.impatient} ` : "";
    let next: UserMessage | undefined;
    if (outcome.success) {
      next = this.continueAfterSuccess(goal, outcome);
    } else {
      p.failures += 1;
      const givesUp =
        goal.kind === "ood" || p.failures >= MAX_FAILURES || p.turns >= MAX_GOAL_TURNS;
      if (!givesUp) next = this.retry(goal, outcome);
    }
    const message = next ?? this.resolve(p.failures === 0);
    this.turn += 1;
    return { ...message, text: `${prefix}${message.text}` };
  }

  private continueAfterSuccess(goal: Goal, outcome: TurnOutcome): UserMessage | undefined {
    const p = this.progress;
    if (goal.kind === "policy" && p.ask + 1 < goal.asks.length) {
      p.ask += 1;
      return {
        text: (goal.asks[p.ask] as { question: string }).question,
        done: false,
        kind: "follow-up",
      };
    }
    if ((goal.kind === "leave" || goal.kind === "ticket") && !outcome.filed) {
      const missing = outcome.asked.filter((slot) => !p.given.has(slot));
      const answer = formSlots(goal).filter((slot) => missing.includes(slot));
      for (const slot of answer) p.given.add(slot);
      return {
        text: answer.map((slot) => slotStatement(goal, slot)).join(" "),
        done: false,
        kind: "answer",
      };
    }
    return undefined;
  }

  private retry(goal: Goal, outcome: TurnOutcome): UserMessage {
    const { dialogue } = helpdeskData();
    const p = this.progress;
    switch (goal.kind) {
      case "policy": {
        const ask = goal.asks[p.ask] as { question: string; rephrase: string };
        const question = p.failures % 2 === 1 ? ask.rephrase : ask.question;
        return {
          text: `${this.pick(dialogue.policyRetry, 1)} ${question}`,
          done: false,
          kind: "retry",
        };
      }
      case "balance":
        return {
          text: fill(this.pick(dialogue.balance.retry, 1), { type: goal.leaveType }),
          done: false,
          kind: "retry",
        };
      case "ood":
        throw new Error("helpdesk: out-of-domain goals are never retried");
      default: {
        if (outcome.wrongFiling) {
          for (const slot of formSlots(goal)) p.given.add(slot);
          return {
            text: fill(dialogue.wrongFiling, { opening: formOpening(goal, p.given) }),
            done: false,
            kind: "retry",
          };
        }
        const repeated = formSlots(goal).filter((s) => outcome.asked.includes(s) && p.given.has(s));
        if (repeated.length > 0 && repeated.length === outcome.asked.length) {
          const statements = repeated.map((slot) => slotStatement(goal, slot)).join(" ");
          return { text: fill(dialogue.alreadyTold, { statements }), done: false, kind: "retry" };
        }
        return {
          text: fill(dialogue.tryAgain, { opening: formOpening(goal, p.given) }),
          done: false,
          kind: "retry",
        };
      }
    }
  }

  /** Closes the current goal and states the next one, or ends the session. */
  private resolve(achieved: boolean): UserMessage {
    const { dialogue } = helpdeskData();
    if (achieved) this.achieved += 1;
    this.goalIndex += 1;
    this.progress = this.freshProgress();
    const goal = this.goal;
    const previous = achieved ? "achieved" : "abandoned";
    if (goal === undefined) {
      const closing = achieved ? dialogue.closingSuccess : dialogue.closingGiveUp;
      return { text: this.pick(closing, 2), done: true, kind: "closing", previous };
    }
    const prefix = this.pick(achieved ? dialogue.afterSuccess : dialogue.afterGiveUp, 2);
    return { text: `${prefix} ${goalOpening(goal)}`, done: false, kind: "next-goal", previous };
  }
}
