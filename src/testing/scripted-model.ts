/**
 * ScriptedModel: a Model test double that answers with scripted replies, in order. It records
 * every request, and `assertDone()` fails the test when the script was not used up exactly —
 * also when a call came after the script ran out, since the code under test may have caught
 * that error (an agent's model error becomes an episode outcome, not a thrown exception).
 */
import type { Model, ModelRequest, ModelResponse, ToolCall } from "../model/types.js";

/** Rough characters per token for the deterministic usage estimate. */
const CHARS_PER_TOKEN = 4;
const DEFAULT_NAME = "model";

/** A tool call as a script writes it: the id may be left out, arguments given as an object. */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** JSON text (sent as is, malformed or not) or a value to serialize. */
  arguments: string | Record<string, unknown>;
}

/** Any fields of a response; the rest get deterministic defaults. */
export type ScriptedResponse = Partial<Omit<ModelResponse, "toolCalls">> & {
  toolCalls?: ScriptedToolCall[];
};

/**
 * One scripted reply: text content, response fields, an error to throw, or a function of the
 * request (for assertions on what was sent) that returns any of these or throws.
 */
export type ScriptedReply =
  | string
  | ScriptedResponse
  | Error
  | ((request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>);

export interface ScriptedModelOptions {
  /** Shown in the id ("scripted:<name>") and as the answering model; defaults to "model". */
  name?: string;
  /** Delay before each answer, honouring the abort signal (for timeout tests). */
  delayMs?: number;
}

/** A call the script did not expect: more calls than replies. */
export class ScriptExhaustedError extends Error {
  override name = "ScriptExhaustedError";
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Counts content and tool-call arguments: enough to make usage sums testable. */
function requestText(request: ModelRequest): string {
  const parts = request.messages.map((message) => {
    const calls =
      message.role === "assistant" && message.toolCalls
        ? message.toolCalls.map((call) => call.name + call.arguments).join("")
        : "";
    return message.content + calls;
  });
  if (request.tools) parts.push(JSON.stringify(request.tools));
  return parts.join("");
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export class ScriptedModel implements Model {
  readonly id: string;
  /** Every request received, deep-copied when it arrived, in order. */
  readonly requests: ModelRequest[] = [];
  private readonly name: string;
  private readonly delayMs: number;
  private readonly script: ScriptedReply[];
  private used = 0;
  private unexpectedCalls = 0;

  constructor(replies: readonly ScriptedReply[], options: ScriptedModelOptions = {}) {
    this.name = options.name ?? DEFAULT_NAME;
    this.id = `scripted:${this.name}`;
    this.delayMs = options.delayMs ?? 0;
    this.script = [...replies];
  }

  /** Replies not yet consumed. */
  get remaining(): number {
    return this.script.length - this.used;
  }

  /** Appends replies to the script. */
  push(...replies: ScriptedReply[]): void {
    this.script.push(...replies);
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    if (signal?.aborted) throw signal.reason;
    const snapshot = structuredClone(request);
    this.requests.push(snapshot);
    const callNumber = this.requests.length;
    if (this.used >= this.script.length) {
      this.unexpectedCalls++;
      throw new ScriptExhaustedError(
        `${this.id}: unexpected call ${callNumber}; the script has only ${this.script.length} ` +
          `replies. Last message: ${JSON.stringify(snapshot.messages.at(-1)?.content ?? "")}`,
      );
    }
    const entry = this.script[this.used++] as ScriptedReply;
    if (this.delayMs > 0) await sleep(this.delayMs, signal);
    let reply = entry;
    // A function sees its own copy, so assertions cannot disturb what was recorded.
    while (typeof reply === "function") reply = await reply(structuredClone(snapshot));
    if (reply instanceof Error) throw reply;
    return this.toResponse(reply, snapshot, callNumber);
  }

  /** Throws unless every reply was used and no call came after the script ran out. */
  assertDone(): void {
    if (this.unexpectedCalls > 0) {
      throw new Error(
        `${this.id}: ${this.unexpectedCalls} call(s) after the script ran out ` +
          `(${this.script.length} replies scripted, ${this.requests.length} calls made)`,
      );
    }
    if (this.remaining > 0) {
      throw new Error(
        `${this.id}: ${this.remaining} of ${this.script.length} scripted replies were not used`,
      );
    }
  }

  private toResponse(
    reply: string | ScriptedResponse,
    request: ModelRequest,
    callNumber: number,
  ): ModelResponse {
    const fields: ScriptedResponse = typeof reply === "string" ? { content: reply } : reply;
    const content = fields.content ?? "";
    const toolCalls: ToolCall[] = (fields.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_${callNumber}_${i}`,
      name: call.name,
      arguments:
        typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    }));
    const outputText = content + toolCalls.map((call) => call.name + call.arguments).join("");
    return {
      content,
      toolCalls,
      usage: fields.usage ?? {
        inputTokens: estimateTokens(requestText(request)),
        outputTokens: estimateTokens(outputText),
      },
      finishReason: fields.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      model: fields.model ?? this.name,
      ...(fields.logprobs ? { logprobs: fields.logprobs } : {}),
    };
  }
}
