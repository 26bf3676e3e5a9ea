/**
 * A teacher judge: one model that labels every turn of a conversation, guided by the rubric and
 * the taxonomy. It reasons first, then answers one JSON object `{turns: [{turn_number,
 * is_new_goal, quality, rcof, rationale}]}`, which must pass the labels' checks (labels.ts: one
 * label per turn, numbered 1..n, rcof a code of the taxonomy on a failure and null on a success).
 * An answer that does not is sent back once or twice with the reason ("bad JSON" retries); a
 * provider error (after the model layer's own retries of 429s, 5xx and timeouts) or answers
 * that stay unusable make the judgement an error, never a label.
 */
import { type CallMeta, FailedCallError, isAccounted } from "../../model/call-record.js";
import type {
  ChatMessage,
  GenerationParams,
  Model,
  ModelRequest,
  ModelResponse,
  Usage,
} from "../../model/types.js";
import type { Conversation, ConversationTurn } from "./conversation.js";
import { type LabelNormalisation, parseJudgeAnswer, type TurnLabel } from "./labels.js";
import { type Rubric, renderRubric } from "./rubric.js";
import type { Taxonomy } from "./taxonomy.js";

/** Answers asked for per judgement: the first and up to two corrections. */
export const DEFAULT_ANSWER_ATTEMPTS = 3;
/** A tool result longer than this is cut in the prompt (the judge needs its gist, not its bulk). */
export const TOOL_RESULT_CHARS = 2000;
/** The assistant's system prompt, as context, is cut beyond this. */
export const SYSTEM_PROMPT_CHARS = 4000;

export interface Judge {
  /** How reports name it: "judge 1 (openai:gpt-4o)". */
  label: string;
  /** The model spec as stored (no credentials). */
  model: string;
  client: Model;
}

export interface JudgeSettings {
  rubric: Rubric;
  taxonomy: Taxonomy;
  /** Answers asked for before the judgement errors (default 3). */
  answerAttempts?: number;
  /** Per-request parameters over the model's configured ones. */
  params?: GenerationParams;
}

/** What the judge's calls used, summed over its attempts. */
export interface JudgeUsage {
  calls: number;
  usage: Usage;
  costUsd: number;
  /** Some call had no price: the cost is a lower bound, reported as unpriced. */
  unpriced: boolean;
  /** Provider time over the calls (null when every call was a cache hit). */
  latencyMs: number | null;
  cacheHits: number;
  /**
   * Requests that reached the provider, over the calls: the model layer's retries (a 429, a
   * 5xx, a timeout) make a call more than one; a cache hit makes none.
   */
  providerAttempts: number;
}

export interface Judgement {
  labels: TurnLabel[];
  /** Changes the checks made instead of rejecting (a first turn said not to start a goal). */
  normalised: LabelNormalisation[];
  /** The accepted reply's text before its JSON: the judge's reasoning. */
  reasoning: string;
  /** Answers asked for (1 = the first was usable). */
  answers: number;
  /** Why each rejected answer was rejected, in order. */
  rejected: readonly string[];
  spend: JudgeUsage;
}

/** The judgement failed: the provider failed, or no answer passed the checks. */
export class JudgeError extends Error {
  override name = "JudgeError";
  constructor(
    message: string,
    readonly spend: JudgeUsage,
    readonly rejected: readonly string[],
  ) {
    super(message);
  }
}

function cut(text: string, limit: number): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)} [... ${text.length - limit} more characters]`;
}

function renderTurn(turn: ConversationTurn): string {
  const lines = [`### Turn ${turn.turn_number}`, `User: ${turn.user}`];
  const results = [...(turn.tool_results ?? [])];
  for (const call of turn.tool_calls ?? []) {
    lines.push(`Assistant called ${call.name}(${call.arguments})`);
    const index = results.findIndex((r) =>
      call.id !== undefined && r.tool_call_id !== undefined
        ? r.tool_call_id === call.id
        : r.name === undefined || r.name === call.name,
    );
    if (index !== -1) {
      const [result] = results.splice(index, 1);
      lines.push(`Result: ${cut((result as { content: string }).content, TOOL_RESULT_CHARS)}`);
    }
  }
  for (const result of results) {
    lines.push(
      `Result${result.name ? ` of ${result.name}` : ""}: ${cut(result.content, TOOL_RESULT_CHARS)}`,
    );
  }
  lines.push(
    turn.assistant.trim() === "" ? "Assistant: (no reply)" : `Assistant: ${turn.assistant}`,
  );
  return lines.join("\n");
}

/** The conversation as the judge reads it: numbered turns, tool calls and results in order. */
export function renderConversation(conversation: Conversation): string {
  const parts: string[] = [];
  if (conversation.system?.trim()) {
    parts.push(
      `(The assistant's instructions: ${cut(conversation.system.trim(), SYSTEM_PROMPT_CHARS)})`,
    );
  }
  if (conversation.opening?.trim())
    parts.push(`(Before turn 1) Assistant: ${conversation.opening}`);
  for (const turn of conversation.turns) parts.push(renderTurn(turn));
  if (conversation.closing?.trim()) {
    parts.push(`(After the last turn, unanswered) User: ${conversation.closing}`);
  }
  return parts.join("\n\n");
}

function renderTaxonomy(taxonomy: Taxonomy): string {
  return taxonomy.codes
    .map((c) => `- ${c.code}${c.group ? ` [${c.group}]` : ""}: ${c.name}. ${c.definition}`)
    .join("\n");
}

const ANSWER_SHAPE =
  '{"turns": [{"turn_number": 1, "is_new_goal": true, "quality": "success", "rcof": null, "rationale": "..."}, ...]}';

/** The judge's instructions: the rubric, the taxonomy, the procedure and the answer's shape. */
export function judgeSystemPrompt(rubric: Rubric, taxonomy: Taxonomy): string {
  return [
    "You are a teacher judge. You evaluate a conversation between a user and an assistant, goal by goal: which turns pursue which user goal, and whether the assistant met the user's need at each turn. Domain experts wrote the rubric below; follow it.",
    "",
    renderRubric(rubric),
    "",
    `## Root causes of failure (taxonomy "${taxonomy.name}")`,
    renderTaxonomy(taxonomy),
    "",
    "## Procedure",
    "1. Think first, in prose: find the user's goals and where each starts; for every turn, weigh the assistant's reply (and its tool calls) against the standards; for a failed turn, find the root cause: the earliest thing that went wrong in that turn.",
    "2. Then give your answer as one JSON object, last in your reply, in a ```json block:",
    ANSWER_SHAPE,
    "- one entry per turn, turn_number 1..n in order, no turn left out;",
    "- is_new_goal: true when the turn starts a new user goal (always true for turn 1);",
    '- quality: "success" or "failure";',
    `- rcof: on a failure, exactly one code of the taxonomy (${taxonomy.codes.map((c) => c.code).join(", ")}); null on a success;`,
    "- rationale: one or two sentences on why.",
  ].join("\n");
}

/** The user message: the conversation and how many turns the answer must cover. */
export function judgeUserPrompt(conversation: Conversation): string {
  const n = conversation.turns.length;
  return [
    `Conversation ${conversation.id}, ${n} turn${n === 1 ? "" : "s"}:`,
    "",
    renderConversation(conversation),
    "",
    `Reason first, then answer with the JSON object covering turns 1..${n}.`,
  ].join("\n");
}

/**
 * The spans of top-level `{...}` in text, strings respected, in order. Unbalanced prose braces
 * end a span early or never close it; candidates are tried from the last, so the answer at the
 * end wins.
 */
function objectSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"' && depth > 0) inString = true;
    else if (ch === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0) spans.push([start, i + 1]);
    }
  }
  return spans;
}

/**
 * The answer in a judge's reply: the last ```json (or bare ```) block that parses, else the
 * last top-level object in the text that parses. Returns the value and the text before it (the
 * reasoning), or the reason there is none.
 */
export function extractAnswer(
  reply: string,
): { ok: true; value: unknown; reasoning: string } | { ok: false; error: string } {
  // Every fenced block, whatever its language, so that blocks pair up as written (a ```python
  // block's closing fence must not open the next one); then only the JSON and bare ones.
  const fences = [...reply.matchAll(/```([^`\r\n]*)\r?\n([\s\S]*?)```/g)].filter((fence) =>
    /^(?:json)?$/i.test((fence[1] as string).trim()),
  );
  for (const fence of fences.reverse()) {
    try {
      return {
        ok: true,
        value: JSON.parse(fence[2] as string),
        reasoning: reply.slice(0, fence.index).trim(),
      };
    } catch {
      // An example or a broken block: look further back, then outside fences.
    }
  }
  const spans = objectSpans(reply);
  let lastError = "";
  for (const [start, end] of spans.reverse()) {
    try {
      return {
        ok: true,
        value: JSON.parse(reply.slice(start, end)),
        reasoning: reply.slice(0, start).trim(),
      };
    } catch (error) {
      lastError ||= (error as Error).message;
    }
  }
  if (reply.trim() === "") return { ok: false, error: "the reply is empty" };
  return {
    ok: false,
    error: lastError
      ? `the JSON object does not parse (${lastError})`
      : "the reply has no JSON object",
  };
}

function emptySpend(): JudgeUsage {
  return {
    calls: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    costUsd: 0,
    unpriced: false,
    latencyMs: null,
    cacheHits: 0,
    providerAttempts: 0,
  };
}

function account(spend: JudgeUsage, meta: CallMeta): void {
  spend.calls++;
  spend.usage.inputTokens += meta.usage.inputTokens;
  spend.usage.outputTokens += meta.usage.outputTokens;
  spend.costUsd += meta.costUsd;
  if (meta.unpriced) spend.unpriced = true;
  if (meta.cacheHit) spend.cacheHits++;
  spend.providerAttempts += meta.attempts;
  if (meta.latencyMs !== null) spend.latencyMs = (spend.latencyMs ?? 0) + meta.latencyMs;
}

/** One call through the model layer, its accounting added to `spend`. */
async function ask(
  client: Model,
  request: ModelRequest,
  spend: JudgeUsage,
  signal: AbortSignal | undefined,
): Promise<ModelResponse> {
  if (isAccounted(client)) {
    try {
      const { response, meta } = await client.completeWithMeta(request, signal);
      account(spend, meta);
      return response;
    } catch (error) {
      if (error instanceof FailedCallError) account(spend, error.meta);
      throw error;
    }
  }
  // A plain Model (ScriptedModel in tests) says nothing of prices: its calls are unpriced.
  const start = performance.now();
  const response = await client.complete(request, signal);
  account(spend, {
    usage: response.usage,
    costUsd: 0,
    unpriced: true,
    latencyMs: performance.now() - start,
    cacheHit: false,
    attempts: 1,
  });
  return response;
}

export interface JudgeCallOptions {
  signal?: AbortSignal;
  /**
   * The judge's position in its ensemble: sent as the request's sample index, so that the same
   * model serving as two judges makes two draws (and two cache entries), not one.
   */
  index?: number;
}

/** One judge's labels for one conversation, or a JudgeError. */
export async function judgeConversation(
  judge: Judge,
  conversation: Conversation,
  settings: JudgeSettings,
  options: JudgeCallOptions = {},
): Promise<Judgement> {
  const attempts = settings.answerAttempts ?? DEFAULT_ANSWER_ATTEMPTS;
  const messages: ChatMessage[] = [
    { role: "system", content: judgeSystemPrompt(settings.rubric, settings.taxonomy) },
    { role: "user", content: judgeUserPrompt(conversation) },
  ];
  const spend = emptySpend();
  const rejected: string[] = [];
  const expectedTurns = conversation.turns.length;
  for (let answer = 1; answer <= attempts; answer++) {
    let response: ModelResponse;
    try {
      response = await ask(
        judge.client,
        {
          messages: [...messages],
          ...(settings.params ? { params: settings.params } : {}),
          ...(options.index !== undefined ? { sampleIndex: options.index } : {}),
        },
        spend,
        options.signal,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new JudgeError(`${judge.label}: model call failed: ${message}`, spend, rejected);
    }
    const reply = response.content;
    const extracted = extractAnswer(reply);
    let problem: string;
    if (extracted.ok) {
      try {
        const checked = parseJudgeAnswer(extracted.value, {
          taxonomy: settings.taxonomy,
          expectedTurns,
        });
        return {
          labels: checked.turns,
          normalised: checked.normalised,
          reasoning: extracted.reasoning,
          answers: answer,
          rejected,
          spend,
        };
      } catch (error) {
        problem = (error as Error).message;
      }
    } else {
      problem = extracted.error;
    }
    rejected.push(problem);
    messages.push(
      { role: "assistant", content: reply },
      {
        role: "user",
        content: `Your answer could not be used: ${problem}. Reason again if you need to, then end with one JSON object ${ANSWER_SHAPE.replace(", ...]}", "]}")} covering turns 1..${expectedTurns}, one entry per turn.`,
      },
    );
  }
  throw new JudgeError(
    `${judge.label}: no usable answer in ${attempts} attempt${attempts === 1 ? "" : "s"} (last: ${rejected[rejected.length - 1]})`,
    spend,
    rejected,
  );
}
