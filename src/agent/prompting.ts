/**
 * What the LLM agents share: their options, the conversation they send (AgentGym's layout, kept
 * identical to the AgentTraj export), the ReAct reply format, and the correction loop that turns
 * an unusable reply into an explanatory message instead of an environment step.
 */
import { z } from "zod";
import type { Observation } from "../env/types.js";
import type {
  ChatMessage,
  GenerationParams,
  Model,
  ModelRequest,
  ModelResponse,
} from "../model/types.js";
import type { Agent, AgentReply, AgentState, EpisodeContext, Turn } from "./types.js";

/** The fixed assistant acknowledgement after the instruction, as in AgentGym's trajectories. */
export const ACKNOWLEDGEMENT = "OK.";
/** Corrective re-asks within one turn before the agent gives up on that turn. */
export const DEFAULT_MAX_PARSE_RETRIES = 2;
/** Past turns kept in the prompt by default: all of them. */
export const DEFAULT_HISTORY_WINDOW = Number.POSITIVE_INFINITY;
/**
 * The action sent when a turn ends without a usable reply. The environment answers it as an
 * invalid action (costing a step, so the episode's step limit still bounds a model that never
 * follows the format); the model's text itself never reaches the environment.
 */
export const NO_ACTION = "";
/** Stands in for an empty assistant reply: some providers reject empty assistant messages. */
export const EMPTY_REPLY_PLACEHOLDER = "(empty reply)";
/** Longest reply excerpt quoted back to the model in a correction. */
const MAX_QUOTED_CHARS = 200;

/** Builds one episode's agent; the registry wraps it as an AgentFactory. */
export type EpisodeAgentFactory = (context: EpisodeContext) => Agent;

/**
 * What the ReAct agent passes to env.step: "action", the action taken from its reply (what
 * clade's environments and most of AgentGym's servers read), or "reply", the whole reply, for
 * servers that parse it themselves (AgentGym's tool servers need the literal "Action:" before
 * `tool with Action Input: {...}`). Either way the reply must hold a usable action first.
 */
export type SendMode = "action" | "reply";
export const SEND_MODES: readonly SendMode[] = ["action", "reply"];

export interface LlmAgentOptions {
  /** Replaces the agent's default system prompt; null sends none. */
  systemPrompt?: string | null;
  /**
   * Past turns (a reply and the observation that answered it) kept in the prompt. The
   * instruction and the first observation (the task statement) are always kept.
   */
  historyWindow?: number;
  /** Generation parameters for every call (temperature, maxTokens, seed, stop, topP). */
  params?: GenerationParams;
  /** Corrective re-asks per turn after an unusable reply; default 2. */
  maxParseRetries?: number;
  /** List the observation's available actions under its text; default true. */
  showAvailableActions?: boolean;
  /** What the react agent sends as the action (see SendMode); default "action". */
  send?: SendMode;
}

const optionsSchema = z.object({
  systemPrompt: z.string().nullable().optional(),
  historyWindow: z
    .number()
    .refine((n) => n === Number.POSITIVE_INFINITY || (Number.isInteger(n) && n >= 0), {
      message: "must be a non-negative integer or Infinity",
    })
    .optional(),
  params: z
    .object({
      temperature: z.number().min(0).optional(),
      maxTokens: z.number().int().positive().optional(),
      seed: z.number().int().optional(),
      stop: z.array(z.string()).optional(),
      topP: z.number().min(0).max(1).optional(),
    })
    .strict()
    .optional(),
  maxParseRetries: z.number().int().min(0).optional(),
  showAvailableActions: z.boolean().optional(),
  send: z.enum(["action", "reply"]).optional(),
});

export interface LlmAgentSettings {
  systemPrompt: string | null;
  historyWindow: number;
  params: GenerationParams | undefined;
  maxParseRetries: number;
  showAvailableActions: boolean;
  send: SendMode;
}

/** Validates options (throwing a readable error) and fills in the defaults. */
export function resolveAgentSettings(
  options: LlmAgentOptions,
  defaultSystemPrompt: string,
): LlmAgentSettings {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new TypeError(`invalid agent options: ${problems.join("; ")}`);
  }
  return {
    systemPrompt: options.systemPrompt === undefined ? defaultSystemPrompt : options.systemPrompt,
    historyWindow: options.historyWindow ?? DEFAULT_HISTORY_WINDOW,
    params: options.params,
    maxParseRetries: options.maxParseRetries ?? DEFAULT_MAX_PARSE_RETRIES,
    showAvailableActions: options.showAvailableActions ?? true,
    send: options.send ?? "action",
  };
}

/** An observation as the model reads it: the text, then the actions it offers, one a line. */
export function formatObservation(observation: Observation, showAvailableActions: boolean): string {
  const actions = observation.availableActions;
  if (!showAvailableActions || !actions || actions.length === 0) return observation.text;
  return `${observation.text}\n\nAvailable actions:\n${actions.map((a) => `- ${a}`).join("\n")}`;
}

export function omittedTurnsNote(count: number): string {
  return `(${count} earlier turn${count === 1 ? "" : "s"} omitted.)`;
}

/** The messages one past turn contributes: the agent's reply, then the observation answering it. */
export type TurnRenderer = (turn: Turn, index: number, observationText: string) => ChatMessage[];

export interface ConversationInput {
  systemPrompt: string | null;
  instruction: string;
  /** The observation after reset; undefined when the agent joined an episode under way. */
  initialObservation: Observation | undefined;
  history: readonly Turn[];
  /** The latest observation (equal to the last turn's, or the initial one before any step). */
  observation: Observation;
  historyWindow: number;
  showAvailableActions: boolean;
  renderTurn: TurnRenderer;
}

/**
 * [system], instruction, "OK.", first observation, then reply/observation pairs: the AgentTraj
 * layout. Trimmed to the window, the observation preceding the first kept reply is merged into
 * the first-observation message, so the task statement stays and roles still alternate.
 */
export function buildConversation(input: ConversationInput): ChatMessage[] {
  const { history, historyWindow } = input;
  const format = (o: Observation) => formatObservation(o, input.showAvailableActions);
  const observationAfter = (i: number) =>
    i === history.length - 1 ? input.observation : (history[i] as Turn).observation;

  const messages: ChatMessage[] = [];
  if (input.systemPrompt) messages.push({ role: "system", content: input.systemPrompt });
  messages.push({ role: "user", content: input.instruction });
  messages.push({ role: "assistant", content: ACKNOWLEDGEMENT });

  const firstKept = Math.max(0, history.length - historyWindow);
  const opening: string[] = [];
  if (history.length === 0) opening.push(format(input.observation));
  else if (input.initialObservation) opening.push(format(input.initialObservation));
  if (firstKept > 0) {
    opening.push(omittedTurnsNote(firstKept), format(observationAfter(firstKept - 1)));
  }
  if (opening.length === 0) opening.push("(The first observation is not available.)");
  messages.push({ role: "user", content: opening.join("\n\n") });

  for (let i = firstKept; i < history.length; i++) {
    messages.push(...input.renderTurn(history[i] as Turn, i, format(observationAfter(i))));
  }
  return messages;
}

/**
 * One episode's prompt builder: remembers the first observation (it holds the task statement and
 * stays in the prompt whatever the window) and builds each turn's conversation.
 */
export function episodeConversation(
  settings: LlmAgentSettings,
  renderTurn: TurnRenderer,
): (state: AgentState) => ChatMessage[] {
  let initialObservation: Observation | undefined;
  return (state) => {
    if (state.history.length === 0) initialObservation = state.observation;
    return buildConversation({
      systemPrompt: settings.systemPrompt,
      instruction: state.instruction,
      initialObservation,
      history: state.history,
      observation: state.observation,
      historyWindow: settings.historyWindow,
      showAvailableActions: settings.showAvailableActions,
      renderTurn,
    });
  };
}

/** Shortened for quoting back to the model. */
export function quoteReply(text: string): string {
  const shown = text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS - 3)}...` : text;
  return JSON.stringify(shown);
}

export function availableActionsHint(actions: readonly string[] | undefined): string {
  if (!actions || actions.length === 0) return "";
  return `\nThe action must be one of:\n${actions.map((a) => `- ${a}`).join("\n")}`;
}

// ---------------------------------------------------------------------------------------------
// The ReAct text format: "Thought:\n...\n\nAction:\n..."

export type ActionParse = { ok: true; action: string } | { ok: false; error: string };

/** A section header at a line start, tolerating markdown: "Action:", "**Action:**", "## Action". */
const SECTION_HEADER = /^[ \t>#*_-]*(thought|action|observation)[*_]*[ \t]*:[*_]*[ \t]*/i;
const CODE_FENCE = /^[ \t]*```/;
/** Wrappers stripped from an action, when the inside does not contain the wrapper itself. */
const WRAPPERS: ReadonlyArray<readonly [string, string]> = [
  ["```", "```"],
  ["`", "`"],
  ['"', '"'],
  ["'", "'"],
  ["**", "**"],
  ["\u201c", "\u201d"],
];

function stripCodeFence(text: string): string {
  const lines = text.split("\n");
  if (lines.length < 2 || !CODE_FENCE.test(lines[0] ?? "")) return text;
  const body = lines.slice(1);
  if (CODE_FENCE.test(body.at(-1) ?? "")) body.pop();
  return body.join("\n");
}

/** Trims and unwraps `action`, "action", **action** and fenced code blocks, repeatedly. */
export function cleanAction(text: string): string {
  let current = stripCodeFence(text.trim()).trim();
  for (;;) {
    const wrapper = WRAPPERS.find(
      ([open, close]) =>
        current.length >= open.length + close.length &&
        current.startsWith(open) &&
        current.endsWith(close) &&
        !current.slice(open.length, current.length - close.length).includes(open) &&
        !current.slice(open.length, current.length - close.length).includes(close),
    );
    if (!wrapper) return current;
    current = current.slice(wrapper[0].length, current.length - wrapper[1].length).trim();
  }
}

/**
 * The section's text: the rest of the header line and the lines after it, up to the next section
 * header, the first blank line once text has begun, or the end of a code fence (inside which
 * blank lines and headers are kept).
 */
function sectionText(lines: readonly string[], headerIndex: number, firstLine: string): string {
  const collected = [firstLine];
  // Open when the header line starts a fence it does not close.
  let inFence = CODE_FENCE.test(firstLine) && firstLine.split("```").length % 2 === 0;
  for (let i = headerIndex + 1; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (!inFence && SECTION_HEADER.test(line)) break;
    if (!inFence && line.trim() === "" && collected.some((l) => l.trim() !== "")) break;
    collected.push(line);
    if (CODE_FENCE.test(line)) {
      // A closing fence ends the section: text after a fenced action is commentary.
      if (inFence) break;
      inFence = true;
    }
  }
  return collected.join("\n");
}

/** Matches a bare reply against the offered actions, ignoring case; the env's spelling wins. */
export function matchAvailableAction(
  text: string,
  actions: readonly string[] | undefined,
): string | undefined {
  if (!actions) return undefined;
  if (actions.includes(text)) return text;
  const folded = text.toLowerCase().replace(/\s+/g, " ");
  const matches = actions.filter((a) => a.toLowerCase().replace(/\s+/g, " ") === folded);
  return matches.length === 1 ? matches[0] : undefined;
}

/**
 * The action of a ReAct reply: the LAST "Action:" section (same line or following lines),
 * cleaned. A reply with no such section is accepted only when it is, by itself, one of the
 * available actions.
 */
export function parseReactAction(text: string, availableActions?: readonly string[]): ActionParse {
  if (text.trim() === "") return { ok: false, error: "the reply was empty" };
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? "";
    const header = SECTION_HEADER.exec(line);
    if (header?.[1]?.toLowerCase() !== "action") continue;
    const action = cleanAction(sectionText(lines, i, line.slice(header[0].length)));
    if (action === "") return { ok: false, error: 'the "Action:" section is empty' };
    return { ok: true, action };
  }
  const bare = matchAvailableAction(cleanAction(text), availableActions);
  if (bare !== undefined) return { ok: true, action: bare };
  return { ok: false, error: 'the reply has no "Action:" section' };
}

// ---------------------------------------------------------------------------------------------
// The correction loop

/** How an agent judged one model reply. */
export type ReplyReading =
  | { ok: true; action: string; message: string }
  | {
      ok: false;
      error: string;
      /** The reply as the trajectory records it if the turn ends here. */
      message: string;
      /** The reply and the explanation to append before asking again. */
      feedback: ChatMessage[];
    };

export interface CorrectionLoopInput {
  model: Model;
  request: ModelRequest;
  /** attempt: 0 for the first reply of the turn, then 1, 2, ... for re-asks. */
  read: (response: ModelResponse, attempt: number) => ReplyReading;
  maxRetries: number;
  signal: AbortSignal;
}

/**
 * Asks the model; an unusable reply is counted and answered with its feedback, up to maxRetries
 * times. When still unusable, the turn ends with NO_ACTION and the last reply as the message.
 * Model errors propagate: the episode runner makes them an error outcome.
 */
export async function completeWithCorrections(input: CorrectionLoopInput): Promise<AgentReply> {
  const messages = [...input.request.messages];
  let parseErrors = 0;
  for (let attempt = 0; ; attempt++) {
    const response = await input.model.complete(
      { ...input.request, messages: [...messages] },
      input.signal,
    );
    const reading = input.read(response, attempt);
    if (reading.ok) return { action: reading.action, message: reading.message, parseErrors };
    parseErrors++;
    if (attempt >= input.maxRetries) {
      return { action: NO_ACTION, message: reading.message, parseErrors };
    }
    messages.push(...reading.feedback);
  }
}

/** The request fields every agent call shares. */
export function baseRequest(
  messages: ChatMessage[],
  settings: LlmAgentSettings,
  context: EpisodeContext,
): ModelRequest {
  return {
    messages,
    ...(settings.params ? { params: settings.params } : {}),
    sampleIndex: context.sampleIndex,
  };
}
