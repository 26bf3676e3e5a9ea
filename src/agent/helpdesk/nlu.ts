/**
 * The rule-based assistant's language understanding: the greeting, the router's intent rules
 * and the slot parsers. Its vocabulary comes from the helpdesk's data (handbook keywords, leave
 * types, IT categories, offices), so it grows with the data, not with code.
 */
import {
  helpdeskData,
  type LeaveSlot,
  type LeaveType,
  type TicketSlot,
  tokenize,
} from "../../env/helpdesk/index.js";

export type Intent = "policy" | "balance" | "leave" | "ticket" | "ood";

const GREETING = /^(?:hi|hello)\b[^.]*?\bemployee (E\d{4})\)?\.\s*/i;
const TICKET_INTENT = /\bticket\b/i;
const LEAVE_INTENT = /\bI(?:'d| would) like to (?:request|book)\b|\bI want to (?:request|book)\b/i;
const BALANCE = /\b(?:left|remaining|balance)\b/i;
const DATE = "(\\d{4}-\\d{2}-\\d{2})";
const START = new RegExp(`\\b(?:from|starting)\\s+${DATE}`, "i");
const END = new RegExp(`\\b(?:until|ending|to)\\s+${DATE}`, "i");
const URGENCY = /\b(low|normal|high)\b/i;
const REMOTE = /\bremote(?:ly)?\b/i;

/** The message without the session's greeting, and the employee id the greeting gave. */
export function stripGreeting(message: string): { employeeId?: string; body: string } {
  const match = GREETING.exec(message);
  if (!match) return { body: message };
  return { employeeId: match[1], body: message.slice(match[0].length) };
}

const phrase = (text: string) => ` ${tokenize(text).join(" ")} `;

let vocabulary: string[] | undefined;

/** Token phrases that mark a message as the company's business. */
function domainVocabulary(): string[] {
  if (vocabulary) return vocabulary;
  const data = helpdeskData();
  const phrases = [
    ...data.passages.flatMap((p) => p.keywords),
    ...data.leaveTypes,
    "leave",
    "ticket",
    ...data.categories.flatMap((c) => c.keywords),
  ];
  vocabulary = [...new Set(phrases.map(phrase).filter((p) => p.trim() !== ""))];
  return vocabulary;
}

export function inDomain(body: string): boolean {
  const words = phrase(body);
  return domainVocabulary().some((p) => words.includes(p));
}

/** The intent of a message that starts a request (not an answer to a question asked). */
export function freshIntent(body: string): Intent {
  if (TICKET_INTENT.test(body)) return "ticket";
  if (LEAVE_INTENT.test(body)) return "leave";
  if (!inDomain(body)) return "ood";
  if (BALANCE.test(body)) return "balance";
  return "policy";
}

/** A message that opens a leave request or a ticket, whatever else it says. */
export function opensForm(body: string): boolean {
  return TICKET_INTENT.test(body) || LEAVE_INTENT.test(body);
}

export function parseLeaveType(body: string): LeaveType | undefined {
  const { leaveTypes } = helpdeskData();
  const words = phrase(body);
  return leaveTypes.find((t) => words.includes(` ${t} `));
}

export function parseLeave(body: string): Partial<Record<LeaveSlot, string>> {
  const out: Partial<Record<LeaveSlot, string>> = {};
  const type = parseLeaveType(body);
  if (type !== undefined && helpdeskData().requestableTypes.includes(type)) out.type = type;
  const start = START.exec(body)?.[1];
  if (start) out.start = start;
  const end = END.exec(body)?.[1];
  if (end) out.end = end;
  return out;
}

/** The IT category whose keywords the text mentions most (the first on a tie). */
export function parseCategory(body: string): string | undefined {
  const words = phrase(body);
  let best: { id: string; hits: number } | undefined;
  for (const category of helpdeskData().categories) {
    const hits = category.keywords.filter((k) => words.includes(phrase(k))).length;
    if (hits > 0 && (best === undefined || hits > best.hits)) best = { id: category.id, hits };
  }
  return best?.id;
}

export function parseTicket(body: string): Partial<Record<TicketSlot, string>> {
  const out: Partial<Record<TicketSlot, string>> = {};
  const category = parseCategory(body);
  if (category) out.category = category;
  const urgency = URGENCY.exec(body)?.[1];
  if (urgency) out.urgency = urgency.toLowerCase();
  const office = helpdeskData().offices.find(
    (o) => o !== "Remote" && new RegExp(`\\b${o}\\b`, "i").test(body),
  );
  if (office) out.location = office;
  else if (REMOTE.test(body)) out.location = "Remote";
  return out;
}

/** The sentence describing the problem: the one naming the most category keywords. */
export function problemSentence(body: string): string {
  const sentences = body.split(/(?<=[.!?])\s+/).filter((s) => s.trim() !== "");
  return sentences.find((s) => parseCategory(s) !== undefined) ?? body;
}
