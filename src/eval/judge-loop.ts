/**
 * Asking a judge model until its answer is usable, shared by the goal judge (goals/judge.ts) and
 * BLADE's model roles (blade/*): one call through the model layer (its retries of 429s, 5xx and
 * timeouts, its cache, prices and call accounting), the answer found after the reasoning
 * (`extractAnswer`) and checked by the caller's check; an unusable answer is sent back with the
 * reason ("bad JSON" retries), up to `answerAttempts` answers; a provider error, or answers that
 * stay unusable, make a JudgeError, never a default value.
 */
import { type CallMeta, FailedCallError, isAccounted } from "../model/call-record.js";
import type {
  ChatMessage,
  GenerationParams,
  Model,
  ModelRequest,
  ModelResponse,
  Usage,
} from "../model/types.js";

/** Answers asked for per question: the first and up to two corrections. */
export const DEFAULT_ANSWER_ATTEMPTS = 3;

export interface Judge {
  /** How reports name it: "judge 1 (openai:gpt-4o)". */
  label: string;
  /** The model spec as stored (no credentials). */
  model: string;
  client: Model;
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

/** An answer's check failed: the message is the reason sent back to the model. */
export class AnswerCheckError extends Error {
  override name = "AnswerCheckError";
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

/** Accounting with nothing spent yet. */
export function emptySpend(): JudgeUsage {
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

/**
 * One call through the model layer, its accounting added to `spend` (a failed call's too, when
 * the model layer accounted it).
 */
export async function callModel(
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

export interface Question<T> {
  system: string;
  user: string;
  /** Checks the extracted JSON value; throws (any Error) with the reason when it is unusable. */
  check: (value: unknown) => T;
  /**
   * Ends the message that sends an answer back ("Your answer could not be used: <reason>.
   * Reason again if you need to, then end with <reminder>"): what a usable answer looks like.
   */
  reminder: string;
}

export interface AskOptions {
  /** Answers asked for before the question errors (default 3). */
  answerAttempts?: number;
  /** Per-request parameters over the model's configured ones. */
  params?: GenerationParams;
  signal?: AbortSignal;
  /**
   * Sent as the request's sample index, so that the same model serving as two judges makes two
   * draws (and two cache entries), not one.
   */
  index?: number;
  /** Accounting to add to (several questions of one judgement share one); a new one if absent. */
  spend?: JudgeUsage;
  /** Named in errors after the judge's label, e.g. "IV variables". */
  what?: string;
}

export interface Answered<T> {
  value: T;
  /** The accepted reply's text before its JSON: the judge's reasoning. */
  reasoning: string;
  /** Answers asked for (1 = the first was usable). */
  answers: number;
  /** Why each rejected answer was rejected, in order. */
  rejected: string[];
  spend: JudgeUsage;
}

/** One question to a judge, answered with a value that passed the check, or a JudgeError. */
export async function askForAnswer<T>(
  judge: Judge,
  question: Question<T>,
  options: AskOptions = {},
): Promise<Answered<T>> {
  const attempts = options.answerAttempts ?? DEFAULT_ANSWER_ATTEMPTS;
  const spend = options.spend ?? emptySpend();
  const who = options.what ? `${judge.label}, ${options.what}` : judge.label;
  const messages: ChatMessage[] = [
    { role: "system", content: question.system },
    { role: "user", content: question.user },
  ];
  const rejected: string[] = [];
  for (let answer = 1; answer <= attempts; answer++) {
    let response: ModelResponse;
    try {
      response = await callModel(
        judge.client,
        {
          messages: [...messages],
          ...(options.params ? { params: options.params } : {}),
          ...(options.index !== undefined ? { sampleIndex: options.index } : {}),
        },
        spend,
        options.signal,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new JudgeError(`${who}: model call failed: ${message}`, spend, rejected);
    }
    const reply = response.content;
    const extracted = extractAnswer(reply);
    let problem: string;
    if (extracted.ok) {
      try {
        const value = question.check(extracted.value);
        return { value, reasoning: extracted.reasoning, answers: answer, rejected, spend };
      } catch (error) {
        problem = error instanceof Error ? error.message : String(error);
      }
    } else {
      problem = extracted.error;
    }
    rejected.push(problem);
    messages.push(
      { role: "assistant", content: reply },
      {
        role: "user",
        content: `Your answer could not be used: ${problem}. Reason again if you need to, then end with ${question.reminder}`,
      },
    );
  }
  throw new JudgeError(
    `${who}: no usable answer in ${attempts} attempt${attempts === 1 ? "" : "s"} (last: ${rejected[rejected.length - 1]})`,
    spend,
    rejected,
  );
}
