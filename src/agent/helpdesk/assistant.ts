/**
 * The helpdesk's built-in assistant: a rule-based router and three sub-agents (handbook
 * questions by retrieval, leave, IT tickets), driven through the environment's text tools like
 * any other agent.
 *
 * With faults on (agent `assistant`) it reads the fault plan the environment shares
 * (plannedFault: task, seed, turn, the kind its router sees) and misroutes, refuses, misreads or
 * misses an out-of-domain question where the plan says so, and it trusts every tool result, so
 * the environment's backend faults (wrong or no passages, timeouts, truncation) make it fail.
 * With faults off (the `reference` solver) it injects nothing and checks each result: it retries
 * a timed-out call, searches again after an empty or irrelevant result, and reads a truncated
 * passage again, which is how it achieves every goal.
 */
import {
  AGENT_FOR,
  formatAction,
  helpdeskData,
  LEAVE_SLOTS,
  type LeaveSlot,
  plannedFault,
  type SubAgent,
  TICKET_SLOTS,
  type TicketSlot,
} from "../../env/helpdesk/index.js";
import type { Agent, AgentReply, EpisodeContext, ReferenceSolver } from "../types.js";
import {
  freshIntent,
  type Intent,
  opensForm,
  parseLeave,
  parseLeaveType,
  parseTicket,
  problemSentence,
  stripGreeting,
} from "./nlu.js";

/** A search whose best hit scores below this is treated as irrelevant (faults off). */
const MIN_RELEVANCE = 0.05;

/** Where a misrouting router sends each request instead. */
const WRONG_AGENT: Readonly<Record<SubAgent, SubAgent>> = {
  policy: "leave",
  leave: "it",
  it: "policy",
};

const TEXT = {
  decline:
    "Sorry, that's outside what I can help with: I answer questions about the company " +
    "handbook, check and book leave, and open IT tickets.",
  refusal: "I'm sorry, but I can't help with that request.",
  timeout: "Sorry, the system is not responding right now. Please try again in a moment.",
  nothing: "I searched the handbook but found nothing about that.",
  noted: "Noted: you would like some time off.",
  leaveCold:
    "I can help you book leave. What type of leave would you like: annual, study or volunteering?",
  itCold: "I can open an IT ticket for that. Could you describe the problem?",
};

const LEAVE_QUESTION: Readonly<Record<LeaveSlot, string>> = {
  type: "What type of leave would you like: annual, study or volunteering?",
  start: "What is the first day of your leave (YYYY-MM-DD)?",
  end: "What is the last day of your leave (YYYY-MM-DD)?",
};

const TICKET_QUESTION: Readonly<Record<TicketSlot, string>> = {
  category: "Could you describe the problem?",
  urgency: "How urgent is it: low, normal or high?",
  location: "Which office are you based in, or do you work remotely?",
};

/** One step of a turn: the action and the thought shown with it. */
interface Move {
  action: string;
  thought: string;
}

/** A turn as a program: it yields moves and receives each move's observation. */
type Program<T = void> = Generator<Move, T, string>;

type ToolResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; timeout: boolean; error: string };

interface Hit {
  id: string;
  title: string;
  score: number;
}

function readResult(observation: string): ToolResult {
  if (observation.startsWith("Error:")) {
    const error = observation.slice("Error:".length).trim();
    return { ok: false, timeout: error.startsWith("timeout"), error };
  }
  const start = observation.indexOf("{");
  const end = observation.lastIndexOf("}");
  try {
    const value: unknown = JSON.parse(observation.slice(start, end + 1));
    if (typeof value === "object" && value !== null) {
      return { ok: true, value: value as Record<string, unknown> };
    }
  } catch {
    // fall through: an unreadable result is handled like an error
  }
  return { ok: false, timeout: false, error: "unreadable result" };
}

function hitsOf(value: Record<string, unknown>): Hit[] {
  const results = value.results;
  if (!Array.isArray(results)) return [];
  return results.filter(
    (r): r is Hit =>
      typeof r === "object" &&
      r !== null &&
      typeof (r as Hit).id === "string" &&
      typeof (r as Hit).score === "number",
  );
}

const str = (value: unknown) => (typeof value === "string" ? value : "");

/** The last user message in an observation, if it holds one. */
function userMessageOf(text: string): string | undefined {
  const lines = text.split("\n").filter((line) => line.startsWith("User: "));
  return lines.at(-1)?.slice("User: ".length);
}

const reply = (message: string, thought: string): Move => ({
  action: formatAction({ tool: "reply", args: { message } }),
  thought,
});

class HelpdeskAssistant {
  private employeeId = "";
  private turn = 0;
  private active: SubAgent | null = null;
  private leaveForm: Partial<Record<LeaveSlot, string>> | null = null;
  private ticketForm: (Partial<Record<TicketSlot, string>> & { description?: string }) | null =
    null;
  /** The form touched last: a bare answer continues it first. */
  private lastForm: "leave" | "ticket" | null = null;
  private program: Program | undefined;

  constructor(
    private readonly context: EpisodeContext,
    private readonly faults: boolean,
  ) {}

  act(observation: string): AgentReply {
    const message = userMessageOf(observation);
    let next: IteratorResult<Move, void> | undefined;
    if (message !== undefined) {
      this.program = this.handle(message);
      next = this.program.next("");
    } else if (this.program) {
      next = this.program.next(observation);
    }
    const move =
      next && !next.done ? next.value : reply("Could you say that again?", "Lost track.");
    const input = move.action.slice("Action: ".length);
    return { action: move.action, message: `Thought: ${move.thought}\n\nAction: ${input}` };
  }

  /** The router: which kind of request a message is, and whether it answers a pending form. */
  private classify(body: string): { intent: Intent; continues: boolean } {
    if (!body.includes("?") && !opensForm(body)) {
      const order: ("leave" | "ticket")[] =
        this.lastForm === "ticket" ? ["ticket", "leave"] : ["leave", "ticket"];
      for (const form of order) {
        const pending = form === "leave" ? this.leaveForm : this.ticketForm;
        const parsed = form === "leave" ? parseLeave(body) : parseTicket(body);
        if (pending && Object.keys(parsed).length > 0) return { intent: form, continues: true };
      }
    }
    return { intent: freshIntent(body), continues: false };
  }

  private *handle(message: string): Program {
    this.turn += 1;
    const { employeeId, body } = stripGreeting(message);
    if (employeeId) this.employeeId = employeeId;
    const { intent, continues } = this.classify(body);
    const { taskIndex, seed } = this.context;
    const fault = this.faults ? plannedFault(taskIndex, seed, this.turn, intent) : null;
    if (intent === "ood") {
      if (fault === "ood_miss") {
        yield* this.routeTo("policy");
        yield* this.answerFromHandbook(body, false);
        return;
      }
      yield reply(TEXT.decline, "This is not about the handbook, leave or IT.");
      return;
    }
    const target = AGENT_FOR[intent];
    if (fault === "misroute") {
      yield* this.misrouted(WRONG_AGENT[target], body);
      return;
    }
    yield* this.routeTo(target);
    if (fault === "refusal") {
      yield reply(TEXT.refusal, "I will not handle this.");
      return;
    }
    const misread = fault === "misunderstanding";
    if (intent === "policy") yield* this.answerFromHandbook(body, misread);
    else if (intent === "balance") yield* this.balance(body, misread);
    else if (intent === "leave") yield* this.leave(body, continues, misread);
    else yield* this.ticket(body, continues, misread);
  }

  private *routeTo(agent: SubAgent): Program {
    if (this.active === agent) return;
    this.active = agent;
    yield {
      action: formatAction({ tool: "route", args: { agent } }),
      thought: `This is for the ${agent} agent.`,
    };
  }

  /** A backend call; with faults off, a timed-out call is made once more. */
  private *call(tool: string, args: Record<string, unknown>, thought: string): Program<ToolResult> {
    const action = formatAction({ tool, args });
    let result = readResult(yield { action, thought });
    if (!this.faults && !result.ok && result.timeout) {
      result = readResult(yield { action, thought: `${tool} timed out; trying again.` });
    }
    return result;
  }

  private failed(result: ToolResult & { ok: false }): Move {
    return result.timeout
      ? reply(TEXT.timeout, "The backend timed out.")
      : reply(`Sorry, that did not work: ${result.error}`, "The backend refused the call.");
  }

  /** The request handled by the wrong sub-agent, which treats it as its own (nothing kept). */
  private *misrouted(agent: SubAgent, body: string): Program {
    yield* this.routeTo(agent);
    if (agent === "policy") yield* this.answerFromHandbook(body, false);
    else if (agent === "leave") yield reply(TEXT.leaveCold, "A leave request, I think.");
    else yield reply(TEXT.itCold, "An IT problem, I think.");
  }

  private *answerFromHandbook(question: string, misread: boolean): Program {
    let found = yield* this.call("search_handbook", { query: question }, "Searching the handbook.");
    if (!found.ok) {
      yield this.failed(found);
      return;
    }
    let hits = hitsOf(found.value);
    if (!this.faults && (hits[0]?.score ?? 0) < MIN_RELEVANCE) {
      found = yield* this.call(
        "search_handbook",
        { query: question },
        "Those hits look irrelevant; searching again.",
      );
      if (!found.ok) {
        yield this.failed(found);
        return;
      }
      hits = hitsOf(found.value);
    }
    const best = hits[0];
    if (best === undefined) {
      yield reply(TEXT.nothing, "The handbook has nothing on this.");
      return;
    }
    // A misreading answers a different question: another hit, or another passage altogether.
    const fallback = best.id === "P01" ? "P02" : "P01";
    const id = misread ? (hits[1]?.id ?? fallback) : best.id;
    let read = yield* this.call("read_passage", { id }, `Reading ${id}.`);
    if (!read.ok) {
      yield this.failed(read);
      return;
    }
    if (!this.faults && read.value.truncated === true) {
      read = yield* this.call(
        "read_passage",
        { id },
        "The text came back truncated; reading it again.",
      );
      if (!read.ok) {
        yield this.failed(read);
        return;
      }
    }
    const { title, text } = read.value;
    yield reply(`From the handbook, "${str(title)}" (${id}): ${str(text)}`, "Quoting the passage.");
  }

  private *balance(body: string, misread: boolean): Program {
    const asked = parseLeaveType(body) ?? "annual";
    const result = yield* this.call(
      "leave_balance",
      { employee_id: this.employeeId },
      "Looking up the balance.",
    );
    if (!result.ok) {
      yield this.failed(result);
      return;
    }
    const balances = (result.value.balances ?? {}) as Record<string, number>;
    const other = helpdeskData().leaveTypes.find(
      (t) => t !== asked && balances[t] !== balances[asked],
    );
    const shown = misread && other !== undefined ? other : asked;
    yield reply(
      `You have ${balances[shown]} days of ${shown} leave left.`,
      `The ${shown} balance.`,
    );
  }

  private *leave(body: string, continues: boolean, misread: boolean): Program {
    if (!continues || this.leaveForm === null) this.leaveForm = {};
    const form = Object.assign(this.leaveForm, parseLeave(body));
    this.lastForm = "leave";
    if (misread) {
      const known = LEAVE_SLOTS.find((slot) => form[slot] !== undefined);
      yield reply(known ? LEAVE_QUESTION[known] : TEXT.noted, "Checking the request.");
      return;
    }
    const missing = LEAVE_SLOTS.find((slot) => form[slot] === undefined);
    if (missing) {
      yield reply(LEAVE_QUESTION[missing], `I still need the ${missing}.`);
      return;
    }
    const args = {
      employee_id: this.employeeId,
      type: form.type,
      start: form.start,
      end: form.end,
    };
    const result = yield* this.call("file_leave_request", args, "Filing the leave request.");
    if (!result.ok) {
      yield this.failed(result);
      return;
    }
    this.leaveForm = null;
    const { request_id, working_days } = result.value;
    yield reply(
      `Done: your ${form.type} leave from ${form.start} to ${form.end} (${String(working_days)} ` +
        `working days) is filed as request ${str(request_id)}.`,
      "Filed.",
    );
  }

  private *ticket(body: string, continues: boolean, misread: boolean): Program {
    if (!continues || this.ticketForm === null) {
      this.ticketForm = { description: problemSentence(body) };
    }
    const form = Object.assign(this.ticketForm, parseTicket(body));
    this.lastForm = "ticket";
    if (misread) {
      const known = TICKET_SLOTS.find((slot) => form[slot] !== undefined);
      yield reply(
        known ? TICKET_QUESTION[known] : TICKET_QUESTION.category,
        "Checking the problem.",
      );
      return;
    }
    const missing = TICKET_SLOTS.find((slot) => form[slot] === undefined);
    if (missing) {
      yield reply(TICKET_QUESTION[missing], `I still need the ${missing}.`);
      return;
    }
    const args = {
      employee_id: this.employeeId,
      category: form.category,
      urgency: form.urgency,
      location: form.location,
      description: form.description ?? body,
    };
    const result = yield* this.call("open_ticket", args, "Opening the ticket.");
    if (!result.ok) {
      yield this.failed(result);
      return;
    }
    this.ticketForm = null;
    yield reply(
      `I've opened ${form.urgency}-priority ${form.category} ticket ${str(result.value.ticket_id)} ` +
        "for you; the service desk will be in touch.",
      "Opened.",
    );
  }
}

/** The built-in assistant; `faults` chooses the faulty `assistant` or the `reference`. */
export function createHelpdeskAssistant(options: { faults: boolean }): ReferenceSolver {
  return (context: EpisodeContext): Agent => {
    const assistant = new HelpdeskAssistant(context, options.faults);
    return { act: async (state) => assistant.act(state.observation.text) };
  };
}

export const solveHelpdesk: ReferenceSolver = createHelpdeskAssistant({ faults: false });
export const faultyHelpdeskAssistant: ReferenceSolver = createHelpdeskAssistant({ faults: true });
