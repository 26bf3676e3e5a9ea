/**
 * Turn labels. A turn is a user message and the assistant's reply to it. Its quality says
 * whether the reply met the user's need at that turn; its cause, on failure, comes from what the
 * environment observed during the turn, checked in pipeline order:
 *
 *   E7  the goal is out of domain (any failed reply to it: the assistant did not decline);
 *   E6  the request was handled by the wrong sub-agent (the routed agent at the reply);
 *   E5  a backend call timed out or came back truncated and was not retried successfully,
 *       or the assistant never replied (tool-call or step limit);
 *   E2  the reply declines or refuses;
 *   E4  handbook goals: nothing was retrieved (no search, or only empty results);
 *   E3  handbook goals: an on-topic search returned passages, none of them the right one;
 *   E1  otherwise: the assistant had what it needed, or searched for something else, and still
 *       answered wrongly, asked for what it was told, or filed the wrong request.
 */
import type { FaultName } from "./faults.js";
import type { Goal, GoalKind, Rcof, SubAgent } from "./types.js";
import { AGENT_FOR } from "./types.js";
import type { FormSlot } from "./user.js";

/** What the environment saw of one tool call. */
export interface CallLog {
  tool: string;
  /** The call reached the service and answered without error. */
  ok: boolean;
  /** The service timed out, or returned a truncated passage. */
  systemError?: "timeout" | "truncation";
  /** search_handbook: the ids returned, and whether the query finds the goal's passage. */
  searchIds?: string[];
  onTopic?: boolean;
  /** read_passage: the passage read and whether its text came back whole. */
  readId?: string;
  readComplete?: boolean;
  /** file_leave_request / open_ticket: the new id and whether it matches the goal. */
  filing?: { id: string; correct: boolean };
}

export interface TurnLog {
  number: number;
  goal: Goal;
  isNewGoal: boolean;
  message: string;
  /** The fault the plan drew for this turn (applied by whichever side owns it). */
  fault: FaultName | null;
  calls: CallLog[];
  /** The sub-agent routed to when the turn ended. */
  route: SubAgent | null;
  /** The reply, or null when the turn ended without one. */
  reply: string | null;
}

/** What the turn had to achieve, from the goal's progress when it started. */
export type Expectation =
  | { kind: "policy"; passageId: string; answer: string }
  | { kind: "balance"; days: number }
  | { kind: "form"; slots: readonly FormSlot[]; given: ReadonlySet<FormSlot> }
  | { kind: "ood" };

export interface TurnGrade {
  quality: "success" | "failure";
  rcof: Rcof | null;
  reason: string;
  filed: boolean;
  wrongFiling: boolean;
  asked: FormSlot[];
}

/** Refusals and "outside what I can help with" declines. */
const DECLINE =
  /\b(?:can(?:no|')?t|cannot|unable to|not able to|won't|will not)\s+(?:help|assist|answer|discuss|provide|share)\b|\b(?:outside|beyond)\s+(?:of\s+)?(?:my|the|what)\b|\bout of (?:my )?scope\b|\bnot something (?:i|that i) can\b/i;

export function isDecline(reply: string): boolean {
  return DECLINE.test(reply.replace(/[’‘]/g, "'"));
}

/** How a reply asks for each slot. */
const SLOT_QUESTIONS: Readonly<Record<FormSlot, RegExp>> = {
  type: /\b(?:type|kind|which leave|what leave)\b/i,
  start: /\b(?:start|starting|begin|first day|from when|dates?)\b/i,
  end: /\b(?:end|ending|last day|until|return|how long|how many days|dates?)\b/i,
  category: /\b(?:problem|issue|describe|what happened|what's wrong|what is wrong)\b/i,
  urgency: /\b(?:urgent|urgency|priority|how soon)\b/i,
  location: /\b(?:office|location|where|based|remote|remotely)\b/i,
};

/** The slots a reply asks about: only a reply with a question asks anything. */
export function askedSlots(reply: string, slots: readonly FormSlot[]): FormSlot[] {
  if (!reply.includes("?")) return [];
  return slots.filter((slot) => SLOT_QUESTIONS[slot].test(reply));
}

const normalise = (text: string) => text.replace(/\s+/g, " ").replace(/[’‘]/g, "'").toLowerCase();

export function mentionsFact(reply: string, answer: string): boolean {
  return normalise(reply).includes(normalise(answer));
}

/** The number as a whole number in the text ("12", not "120" or "2026-12-01"). */
export function mentionsNumber(reply: string, n: number): boolean {
  return new RegExp(`(?<![\\d.-])${n}(?![\\d]|-\\d)`).test(reply);
}

/** A timeout or truncation with no later clean answer from the same tool. */
function unrecoveredSystemError(calls: readonly CallLog[]): boolean {
  return calls.some(
    (call, i) =>
      call.systemError !== undefined &&
      !calls.slice(i + 1).some((later) => later.tool === call.tool && later.ok),
  );
}

function qualityOf(
  turn: TurnLog,
  expect: Expectation,
): Omit<TurnGrade, "rcof" | "reason"> & { why: string } {
  const none = { filed: false, wrongFiling: false, asked: [] as FormSlot[] };
  const reply = turn.reply;
  if (reply === null) return { ...none, quality: "failure", why: "no reply" };
  switch (expect.kind) {
    case "ood":
      return isDecline(reply)
        ? { ...none, quality: "success", why: "declined the out-of-domain question" }
        : { ...none, quality: "failure", why: "did not say the question is out of scope" };
    case "policy":
      return mentionsFact(reply, expect.answer)
        ? { ...none, quality: "success", why: `answered "${expect.answer}"` }
        : { ...none, quality: "failure", why: `the reply lacks "${expect.answer}"` };
    case "balance":
      return mentionsNumber(reply, expect.days)
        ? { ...none, quality: "success", why: `stated the balance ${expect.days}` }
        : { ...none, quality: "failure", why: `the reply lacks the balance ${expect.days}` };
    case "form": {
      const filings = turn.calls.flatMap((c) => (c.filing ? [c.filing] : []));
      if (filings.some((f) => !f.correct)) {
        return { ...none, wrongFiling: true, quality: "failure", why: "filed the wrong details" };
      }
      const filing = filings[0];
      if (filing) {
        return reply.includes(filing.id)
          ? { ...none, filed: true, quality: "success", why: `filed and confirmed ${filing.id}` }
          : { ...none, quality: "failure", why: `filed ${filing.id} without telling the user` };
      }
      const asked = askedSlots(reply, expect.slots);
      const missing = expect.slots.filter((slot) => !expect.given.has(slot));
      if (missing.length === 0) {
        return { ...none, asked, quality: "failure", why: "had every detail but filed nothing" };
      }
      return asked.some((slot) => missing.includes(slot))
        ? { ...none, asked, quality: "success", why: `asked for ${asked.join(", ")}` }
        : { ...none, asked, quality: "failure", why: "did not ask for a missing detail" };
    }
  }
}

/** Why a handbook turn failed, from what was retrieved. */
function retrievalCause(calls: readonly CallLog[], passageId: string): [Rcof, string] {
  const seen = calls.some(
    (c) => c.searchIds?.includes(passageId) || (c.readId === passageId && c.readComplete),
  );
  if (seen) return ["E1", `had ${passageId} and still answered wrongly`];
  const searches = calls.filter((c) => c.searchIds !== undefined && c.searchIds.length > 0);
  const reads = calls.filter((c) => c.readId !== undefined && c.ok);
  if (searches.length === 0 && reads.length === 0) {
    return ["E4", "nothing was retrieved from the handbook"];
  }
  if (searches.some((c) => c.onTopic)) {
    return ["E3", `an on-topic search returned passages without ${passageId}`];
  }
  return ["E1", "searched or read something other than what was asked"];
}

function causeOf(turn: TurnLog, kind: GoalKind, expect: Expectation): [Rcof, string] {
  if (kind === "ood") return ["E7", "out-of-domain question not declined"];
  const expected = AGENT_FOR[kind];
  if (turn.route !== null && turn.route !== expected) {
    return ["E6", `routed to ${turn.route}, not ${expected}`];
  }
  if (turn.reply === null) return ["E5", "no reply (the user stopped waiting)"];
  if (unrecoveredSystemError(turn.calls)) {
    const error = turn.calls.find((c) => c.systemError)?.systemError ?? "timeout";
    return ["E5", `unrecovered ${error}`];
  }
  if (isDecline(turn.reply)) return ["E2", "the reply refuses"];
  if (expect.kind === "policy") return retrievalCause(turn.calls, expect.passageId);
  return ["E1", "misread the request"];
}

export function gradeTurn(turn: TurnLog, expect: Expectation): TurnGrade {
  const { why, ...quality } = qualityOf(turn, expect);
  if (quality.quality === "success") return { ...quality, rcof: null, reason: why };
  const [rcof, cause] = causeOf(turn, turn.goal.kind, expect);
  return { ...quality, rcof, reason: `${why}; ${cause}` };
}
