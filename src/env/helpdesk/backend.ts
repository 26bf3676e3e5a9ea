/**
 * The company's backend behind the sub-agents' tools: handbook search and passages, the leave
 * system and the IT service desk, with the fault plan's backend faults applied to the turn's
 * first call that reaches the service concerned.
 */
import { createRng } from "../rng.js";
import { addDays, isIsoDate } from "../todo/dates.js";
import { helpdeskData, type LeaveType } from "./data.js";
import type { BackendFault, FaultName } from "./faults.js";
import type { Session } from "./generate.js";
import { isWeekend } from "./generate.js";
import type { CallLog } from "./grading.js";
import { queryFinds, scorePassages, searchHandbook } from "./retrieval.js";
import { type Goal, SUB_AGENTS, type SubAgent } from "./types.js";

/** Which sub-agent owns each backend tool. */
export const TOOL_AGENT: Readonly<Record<string, SubAgent>> = {
  search_handbook: "policy",
  read_passage: "policy",
  leave_balance: "leave",
  file_leave_request: "leave",
  open_ticket: "it",
};

export const TOOL_NAMES = ["route", ...Object.keys(TOOL_AGENT), "reply"] as const;

const SERVICE: Readonly<Record<SubAgent, string>> = {
  policy: "handbook service",
  leave: "leave system",
  it: "IT service desk",
};

/** The episode state the backend reads and changes. */
export interface BackendState {
  session: Session;
  route: SubAgent | null;
  filed: number;
}

/** The current turn as the backend sees it. */
export interface BackendTurn {
  number: number;
  goal: Goal;
  /** Policy goals: the answer asked this turn (truncation cuts before it). */
  answer: string | undefined;
  fault: FaultName | null;
  faultFired: boolean;
}

export interface ToolOutcome {
  /** The observation text (a result, or "Error: ..."). */
  output: { ok: true; value: unknown } | { ok: false; error: string };
  call: CallLog;
  fired?: BackendFault;
}

/** Keeps the wrong-passage picks apart from other streams (ASCII "hdwp"). */
const WRONG_TAG = 0x68647770;

type Args = Record<string, unknown>;

function text(args: Args, key: string): string | undefined {
  const value = args[key];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

const fail = (tool: string, error: string): ToolOutcome => ({
  output: { ok: false, error },
  call: { tool, ok: false },
});

const needs = (tool: string, keys: string[]) =>
  fail(tool, `${tool} takes {${keys.map((k) => `"${k}"`).join(", ")}} (strings)`);

function workingDays(start: string, end: string): number {
  let days = 0;
  for (let day = start; day <= end; day = addDays(day, 1)) if (!isWeekend(day)) days += 1;
  return days;
}

/** Passages unrelated to the query (score 0), drawn for a wrong-passage fault. */
function wrongHits(query: string, turn: BackendTurn, state: BackendState) {
  const { passages } = helpdeskData();
  const scores = scorePassages(query);
  const expected = turn.goal.kind === "policy" ? turn.goal.passageId : undefined;
  const order = passages
    .map((p, i) => ({ p, score: scores[i] ?? 0 }))
    .filter(({ p }) => p.id !== expected)
    .sort((a, b) => a.score - b.score);
  const floor = order.filter((h) => h.score === 0);
  const pool = floor.length >= 3 ? floor : order.slice(0, 3);
  const { taskIndex, seed } = state.session;
  const rng = createRng(WRONG_TAG, taskIndex, seed, turn.number);
  return rng
    .shuffle(pool)
    .slice(0, 3)
    .map(({ p, score }) => ({ id: p.id, title: p.title, score: Math.round(score * 100) / 100 }));
}

/** The passage text cut before the fact asked this turn (or at half when it is not there). */
function truncate(passageText: string, answer: string | undefined): string {
  const at = answer === undefined ? -1 : passageText.toLowerCase().indexOf(answer.toLowerCase());
  const limit = at > 0 ? at : Math.floor(passageText.length / 2);
  const cut = passageText.lastIndexOf(" ", limit);
  return `${passageText.slice(0, cut > 0 ? cut : limit)} …`;
}

function search(args: Args, turn: BackendTurn, state: BackendState, fault?: BackendFault) {
  const query = text(args, "query");
  if (query === undefined) return needs("search_handbook", ["query"]);
  const onTopic = turn.goal.kind === "policy" && queryFinds(query, turn.goal.passageId);
  const results =
    fault === "no_passage"
      ? []
      : fault === "wrong_passage"
        ? wrongHits(query, turn, state)
        : searchHandbook(query);
  return {
    output: { ok: true as const, value: { query, results } },
    call: { tool: "search_handbook", ok: true, searchIds: results.map((r) => r.id), onTopic },
  };
}

function read(args: Args, turn: BackendTurn, fault?: BackendFault): ToolOutcome {
  const id = text(args, "id");
  if (id === undefined) return needs("read_passage", ["id"]);
  const passage = helpdeskData().passageById.get(id.toUpperCase());
  if (!passage) return fail("read_passage", `no passage "${id.slice(0, 20)}" (ids look like P07)`);
  const call: CallLog = { tool: "read_passage", ok: true, readId: passage.id, readComplete: true };
  if (fault === "truncation") {
    const answer =
      turn.goal.kind === "policy" && turn.goal.passageId === passage.id ? turn.answer : undefined;
    return {
      output: {
        ok: true,
        value: {
          id: passage.id,
          title: passage.title,
          text: truncate(passage.text, answer),
          truncated: true,
        },
      },
      call: { ...call, ok: false, readComplete: false, systemError: "truncation" },
    };
  }
  const value = {
    id: passage.id,
    section: passage.section,
    title: passage.title,
    text: passage.text,
  };
  return { output: { ok: true, value }, call };
}

function employeeOf(tool: string, args: Args) {
  const id = text(args, "employee_id");
  const employee = id === undefined ? undefined : helpdeskData().employeeById.get(id.toUpperCase());
  if (employee === undefined) {
    return id === undefined
      ? { error: needs(tool, ["employee_id"]) }
      : { error: fail(tool, `no employee "${id.slice(0, 20)}"`) };
  }
  return { employee };
}

function balance(args: Args): ToolOutcome {
  const found = employeeOf("leave_balance", args);
  if (found.error) return found.error;
  const { employee } = found;
  const value = { employee_id: employee.id, name: employee.name, balances: employee.balances };
  return { output: { ok: true, value }, call: { tool: "leave_balance", ok: true } };
}

function fileLeave(args: Args, turn: BackendTurn, state: BackendState): ToolOutcome {
  const tool = "file_leave_request";
  const keys = ["employee_id", "type", "start", "end"];
  const found = employeeOf(tool, args);
  if (found.error) return found.error;
  const { employee } = found;
  const [type, start, end] = [text(args, "type"), text(args, "start"), text(args, "end")];
  if (type === undefined || start === undefined || end === undefined) return needs(tool, keys);
  const data = helpdeskData();
  const leaveType = type.toLowerCase().replace(/\s+leave$/, "") as LeaveType;
  if (!data.requestableTypes.includes(leaveType)) {
    return fail(tool, `type must be one of ${data.requestableTypes.join(", ")}`);
  }
  if (!isIsoDate(start) || !isIsoDate(end)) return fail(tool, "dates must be YYYY-MM-DD");
  if (end < start) return fail(tool, "end is before start");
  if (start <= state.session.today)
    return fail(tool, `leave must start after ${state.session.today}`);
  const days = workingDays(start, end);
  if (days === 0) return fail(tool, "the period has no working day");
  if (days > employee.balances[leaveType]) {
    return fail(
      tool,
      `${days} working days exceed the ${leaveType} balance of ${employee.balances[leaveType]}`,
    );
  }
  state.filed += 1;
  const id = `LR-${state.session.idBase + state.filed}`;
  const goal = turn.goal;
  const correct =
    goal.kind === "leave" &&
    employee.id === state.session.employee.id &&
    leaveType === goal.values.type &&
    start === goal.values.start &&
    end === goal.values.end;
  const value = {
    request_id: id,
    employee_id: employee.id,
    type: leaveType,
    start,
    end,
    working_days: days,
    status: "submitted",
  };
  return { output: { ok: true, value }, call: { tool, ok: true, filing: { id, correct } } };
}

function openTicket(args: Args, turn: BackendTurn, state: BackendState): ToolOutcome {
  const tool = "open_ticket";
  const keys = ["employee_id", "category", "urgency", "location", "description"];
  const found = employeeOf(tool, args);
  if (found.error) return found.error;
  const { employee } = found;
  const fields = ["category", "urgency", "location", "description"].map((k) => text(args, k));
  const [category, urgency, location, description] = fields;
  if (fields.some((f) => f === undefined)) return needs(tool, keys);
  const data = helpdeskData();
  const lower = (s: string | undefined) => (s ?? "").toLowerCase();
  const cat = data.categories.find((c) => c.id === lower(category));
  if (!cat)
    return fail(tool, `category must be one of ${data.categories.map((c) => c.id).join(", ")}`);
  if (!data.urgencies.includes(lower(urgency))) {
    return fail(tool, `urgency must be one of ${data.urgencies.join(", ")}`);
  }
  const office = data.offices.find((o) => o.toLowerCase() === lower(location));
  if (!office) return fail(tool, `location must be one of ${data.offices.join(", ")}`);
  state.filed += 1;
  const id = `IT-${state.session.idBase + state.filed}`;
  const goal = turn.goal;
  const correct =
    goal.kind === "ticket" &&
    employee.id === state.session.employee.id &&
    cat.id === goal.values.category &&
    lower(urgency) === goal.values.urgency &&
    office === goal.values.location;
  const value = {
    ticket_id: id,
    employee_id: employee.id,
    category: cat.id,
    urgency: lower(urgency),
    location: office,
    description,
    status: "open",
  };
  return { output: { ok: true, value }, call: { tool, ok: true, filing: { id, correct } } };
}

function route(args: Args, state: BackendState): ToolOutcome {
  const agent = text(args, "agent")?.toLowerCase();
  if (!SUB_AGENTS.includes(agent as SubAgent)) {
    return fail("route", `route takes {"agent": "policy" | "leave" | "it"}`);
  }
  state.route = agent as SubAgent;
  const tools = Object.keys(TOOL_AGENT).filter((t) => TOOL_AGENT[t] === agent);
  return {
    output: { ok: true, value: { routed_to: agent, tools } },
    call: { tool: "route", ok: true },
  };
}

/**
 * Runs one tool call (never `reply`, which the environment handles). Backend faults apply to the
 * turn's first call that reaches the service: a timeout to any backend call, a truncation to a
 * read, a wrong or empty result to a search.
 */
export function runTool(
  tool: string,
  args: Args,
  turn: BackendTurn,
  state: BackendState,
): ToolOutcome {
  if (tool === "route") return route(args, state);
  const agent = TOOL_AGENT[tool];
  if (agent === undefined) {
    return fail(tool, `unknown tool "${tool.slice(0, 30)}"; tools: ${TOOL_NAMES.join(", ")}`);
  }
  if (state.route !== agent) {
    return fail(
      tool,
      `${tool} belongs to the ${agent} agent; route to it first: ` +
        `Action: route with Action Input: {"agent": "${agent}"}`,
    );
  }
  const pending = turn.faultFired ? null : turn.fault;
  const fires = (fault: BackendFault, tools?: string[]) =>
    pending === fault && (tools === undefined || tools.includes(tool));
  // A call with bad arguments never reaches the service, so validate before any fault fires.
  const dryRun = validate(tool, args, turn, state);
  if (dryRun) return dryRun;
  if (fires("timeout")) {
    turn.faultFired = true;
    return {
      output: {
        ok: false,
        error: `timeout: the ${SERVICE[agent]} did not answer within 5 s; nothing was done`,
      },
      call: { tool, ok: false, systemError: "timeout" },
      fired: "timeout",
    };
  }
  let fired: BackendFault | undefined;
  if (fires("truncation", ["read_passage"])) fired = "truncation";
  else if (fires("wrong_passage", ["search_handbook"])) fired = "wrong_passage";
  else if (fires("no_passage", ["search_handbook"])) fired = "no_passage";
  if (fired) turn.faultFired = true;
  const outcome =
    tool === "search_handbook"
      ? search(args, turn, state, fired)
      : tool === "read_passage"
        ? read(args, turn, fired)
        : tool === "leave_balance"
          ? balance(args)
          : tool === "file_leave_request"
            ? fileLeave(args, turn, state)
            : openTicket(args, turn, state);
  return fired ? { ...outcome, fired } : outcome;
}

/** The argument error a call would get, without running it (no state changes). */
function validate(tool: string, args: Args, turn: BackendTurn, state: BackendState) {
  if (tool === "search_handbook") return text(args, "query") ? undefined : needs(tool, ["query"]);
  if (tool === "read_passage") {
    const outcome = read(args, turn);
    return outcome.output.ok ? undefined : outcome;
  }
  if (tool === "leave_balance") {
    const outcome = balance(args);
    return outcome.output.ok ? undefined : outcome;
  }
  const scratch: BackendState = { ...state };
  const outcome =
    tool === "file_leave_request"
      ? fileLeave(args, turn, scratch)
      : openTicket(args, turn, scratch);
  return outcome.output.ok ? undefined : outcome;
}
