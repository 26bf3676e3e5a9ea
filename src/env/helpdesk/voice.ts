/**
 * The simulated user's voice: what phrases each message the assistant reads. The state machine
 * (user.ts) decides what the employee means, its *intent*, a message from
 * data/helpdesk/dialogue.json that states every fact to convey; a voice only says that intent in
 * its own words (an LLM, as in τ-bench's simulated users). Goal progress, grading and the ground
 * truth stay the state machine's, so they hold whatever the wording, as long as the words keep
 * the intent's facts: `mustKeepFacts` says which those are, for a voice to check its message.
 *
 * Without a voice the environment sends the intents as they are (the default, byte for byte).
 * With one, every message the assistant will read is phrased; the session's closing line and a
 * message cut off by the step limit, which no assistant answers, keep the data's wording (a
 * model call in an episode's last step could not be stored with the episode: the runner takes
 * an episode's model calls after each agent turn).
 */
import type { EnvInfo } from "../types.js";
import { helpdeskData } from "./data.js";
import type { Goal } from "./types.js";
import type { MessageKind } from "./user.js";

/** Marks the environment's version when a voice phrases the user (stored with every run). */
export const USER_MODEL_VERSION_SUFFIX = "+user-model";

/** The environment's info with a voice: its version marked, so runs never mix simulated users. */
export function userModelInfo(info: EnvInfo): EnvInfo {
  if (info.version.endsWith(USER_MODEL_VERSION_SUFFIX)) return info;
  return { ...info, version: `${info.version}${USER_MODEL_VERSION_SUFFIX}` };
}

/** One message of the conversation so far, as the employee and the assistant wrote it. */
export interface ConversationMessage {
  role: "user" | "assistant";
  text: string;
}

export type FactKind =
  | "employee-id"
  | "date"
  | "number"
  | "leave-type"
  | "urgency"
  | "location"
  | "it-category";

/**
 * A fact the phrased message must keep: it is kept when any of `forms` appears in the message
 * (case-insensitive, not inside a longer word or number: "remote" is found in "remotely", "5"
 * is not found in "25").
 */
export interface MustKeepFact {
  kind: FactKind;
  /** The fact itself: the id, the date, the leave type, the office, the category id... */
  value: string;
  forms: readonly string[];
  /** How a prompt or a correction names it. */
  label: string;
}

/** Where a message stands in the conversation (from the state machine). */
export interface UserSituation {
  /** The session's first message: it introduces the employee. */
  opensSession: boolean;
  /** The message states a goal for the first time. */
  newGoal: boolean;
  /** The message asks again after a reply that did not help (or a wrong filing). */
  retry: boolean;
  /** What the message does (absent for the session's first message). */
  kind?: MessageKind;
  /** How the goal before this one ended, when the message moves on from it. */
  previousGoal?: "achieved" | "abandoned";
  /** The assistant let the previous message go unanswered (it ran out of tool calls). */
  unanswered: boolean;
}

/** Everything a voice gets to phrase one message. */
export interface UserVoiceRequest {
  employee: { name: string; id: string };
  /** The company and its assistant's name, for the voice's framing. */
  company: string;
  assistant: string;
  /** A plain description of the goal the message is about (no detail the intent withholds). */
  goal: string;
  /** The message the rule-based user would send: every fact the message must convey. */
  intent: string;
  /** The intent's facts that the message must keep (mustKeepFacts). */
  facts: readonly MustKeepFact[];
  situation: UserSituation;
  /** The conversation so far: the employee's messages as sent and the assistant's replies. */
  history: readonly ConversationMessage[];
  /** The message's user turn (1-based). */
  turn: number;
}

/** Phrases the simulated employee's messages; a rejection ends the episode as an error. */
export interface UserVoice {
  say(request: UserVoiceRequest, signal?: AbortSignal): Promise<string>;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `form` as a whole word or number of `text`, case-insensitive (letters may follow it). */
export function mentionsForm(text: string, form: string): boolean {
  return new RegExp(`(?<![A-Za-z0-9])${escapeRegex(form)}(?![0-9])`, "i").test(text);
}

const EMPLOYEE_ID = /\bE\d{4}\b/g;
const ISO_DATE = /\b\d{4}-\d{2}-\d{2}\b/g;
/** Numbers left once ids and dates are taken out: "500", "10:00", "2.5". */
const NUMBER = /(?<![A-Za-z0-9])\d+(?:[.:,]\d+)*/g;
const URGENCY = /\b(low|normal|high)[\s-]+priority\b/gi;
const REMOTE = /\bremote(?:ly)?\b/i;

/**
 * The facts of a message that a rephrasing must keep, found in its text with the helpdesk's
 * vocabulary (data/helpdesk/): employee ids (E1234), ISO dates, any other number, leave types
 * named as "<type> leave", urgencies named as "<level> priority", offices and remote work, and
 * the IT category of a described problem (kept by any of that category's keywords, so the
 * problem may be reworded but must stay recognisable). Names, greetings and courtesies are
 * free. Used on an intent (what must be kept) and on a phrased message (what it states).
 */
export function mustKeepFacts(text: string): MustKeepFact[] {
  const data = helpdeskData();
  const facts: MustKeepFact[] = [];
  const seen = new Set<string>();
  const add = (kind: FactKind, value: string, forms: readonly string[], label = value) => {
    const key = `${kind}:${value.toLowerCase()}`;
    if (seen.has(key)) return;
    seen.add(key);
    facts.push({ kind, value, forms, label });
  };
  for (const id of text.match(EMPLOYEE_ID) ?? []) add("employee-id", id, [id]);
  for (const date of text.match(ISO_DATE) ?? []) add("date", date, [date]);
  const rest = text.replace(EMPLOYEE_ID, " ").replace(ISO_DATE, " ");
  for (const n of rest.match(NUMBER) ?? []) add("number", n, [n]);
  for (const type of data.leaveTypes) {
    if (new RegExp(`\\b${type}\\s+leave\\b`, "i").test(text)) {
      add("leave-type", type, [type], `${type} leave`);
    }
  }
  for (const match of text.matchAll(URGENCY)) {
    const level = (match[1] as string).toLowerCase();
    add("urgency", level, [level], `${level} priority`);
  }
  for (const office of data.offices) {
    if (office === "Remote") {
      if (REMOTE.test(text)) add("location", office, ["remote"], "remote");
    } else if (mentionsForm(text, office)) {
      add("location", office, [office]);
    }
  }
  for (const category of data.categories) {
    // Whole words here ("access", not "accessories"); the forms then match inflections too.
    const named = category.keywords.filter((k) =>
      new RegExp(`(?<![A-Za-z0-9])${escapeRegex(k)}(?![A-Za-z0-9])`, "i").test(text),
    );
    if (named.length > 0) {
      add("it-category", category.id, category.keywords, named.join(" or "));
    }
  }
  return facts;
}

/** The facts a message keeps: those of `facts` found in it. */
export function keptFact(message: string, fact: MustKeepFact): boolean {
  return fact.forms.some((form) => mentionsForm(message, form));
}

/**
 * A plain description of the goal a message is about, without any detail the intent withholds
 * (a leave request's dates, a ticket's urgency), so that a voice cannot volunteer them early.
 */
export function describeGoal(goal: Goal, askIndex: number): string {
  switch (goal.kind) {
    case "policy": {
      const ask = goal.asks[askIndex] ?? goal.asks[0];
      return `an answer from the company handbook to your question: "${ask?.question ?? ""}"`;
    }
    case "balance":
      return `to find out how many days of ${goal.leaveType} leave you have left`;
    case "leave":
      return "to book leave through the assistant, giving the details it asks for";
    case "ticket":
      return `an IT ticket for your problem ("${goal.problem}"), giving the details the assistant asks for`;
    case "ood":
      return "an answer to a question that has nothing to do with work";
  }
}
