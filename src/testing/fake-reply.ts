/**
 * What the fake model server answers with: scripted completions and injected faults, and the
 * record it keeps of every request. Shared by the server and its two wire formats.
 */

import type { Usage } from "../model/types.js";

/** A tool call the fake model makes; `arguments` as JSON text (sent verbatim) or an object. */
export interface FakeToolCall {
  name: string;
  arguments: string | Record<string, unknown>;
}

/** Fields every reply may carry. */
interface FakeReplyTiming {
  /** Delay before the response starts, overriding the server's `latencyMs`. */
  latencyMs?: number;
}

/** A successful completion: text, tool calls, or both. */
export interface FakeCompletion extends FakeReplyTiming {
  fault?: undefined;
  content?: string;
  toolCalls?: FakeToolCall[];
  /** OpenAI vocabulary; mapped to Anthropic's stop_reason on /v1/messages. */
  finishReason?: "stop" | "length" | "tool_calls" | "content_filter";
  /** Overrides the word-count estimate, field by field. */
  usage?: Partial<Usage>;
  /** The model name reported back; defaults to the request's `model`. */
  model?: string;
  /**
   * The reply's per-token log-probabilities, sent when the request asks for them (`logprobs:
   * true`); by default fakeTokenLogprobs(content). `null`: the server ignores the request and
   * sends `logprobs: null`, as servers without support do. With vLLM's
   * `return_tokens_as_token_ids`, tokens go out as "token_id:N" (`tokenId`, else the fake id).
   */
  logprobs?: FakeTokenLogprob[] | null;
  /**
   * Sent verbatim as the choice's `logprobs` whatever the request asked (streamed on the first
   * content chunk): for testing a client against a malformed block.
   */
  rawLogprobs?: unknown;
  /**
   * Echo the credential the request carried (`Authorization: Bearer ...` or `x-api-key`), as a
   * careless or hostile server might: it replaces API_KEY_PLACEHOLDER in `content`, tool-call
   * arguments and `model`; with no placeholder anywhere, it is appended to `content`.
   */
  echoKey?: boolean;
}

/** One token of a fake reply's log-probabilities. */
export interface FakeTokenLogprob {
  token: string;
  logprob: number;
  /** Sent as "token_id:N" when the request asks for token ids; default fakeTokenId(token). */
  tokenId?: number;
}

/** A fake vocabulary id for a token's text (FNV-1a, modulo 100,000): stable across runs. */
export function fakeTokenId(token: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) {
    hash ^= token.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % 100_000;
}

/**
 * The log-probabilities the fake server gives a reply's text by default: one token per word
 * with its trailing whitespace (as it streams), token i at −(1 + i mod 5) / 10.
 */
export function fakeTokenLogprobs(content: string): FakeTokenLogprob[] {
  return (content.match(/\S+\s*|\s+/g) ?? []).map((token, i) => ({
    token,
    logprob: -((i % 5) + 1) / 10,
  }));
}

/** Where an `echoKey` reply puts the key it was sent. */
export const API_KEY_PLACEHOLDER = "{{apiKey}}";

/** An injected failure, named after what a client sees. */
export type FakeFault = FakeReplyTiming &
  (
    | {
        /** HTTP 429; `Retry-After` is sent when given (fractions allowed, for fast tests). */
        fault: "rate_limit";
        retryAfterSeconds?: number;
      }
    | { fault: "server_error"; status?: 500 | 502 | 503 | 529 }
    | {
        /** A 4xx a client must not retry. */
        fault: "bad_request";
        status?: 400 | 401 | 403 | 404 | 413 | 422;
        message?: string;
      }
    /** Never answers; the socket stays open until the client gives up or the server closes. */
    | { fault: "hang" }
    /** HTTP 200 whose body (or first stream event) is not valid JSON. */
    | { fault: "malformed_json" }
    /**
     * Streaming: a few events of `content`, then the socket is destroyed without a final event.
     * Non-streaming: the headers and half of the body, then the same.
     */
    | { fault: "truncated_stream"; content?: string }
    /** HTTP 200, a valid completion with no text and no tool calls. */
    | { fault: "empty" }
    /** The socket is destroyed before any response: a dropped connection. */
    | { fault: "disconnect" }
    /**
     * HTTP 200 whose completion text is `bytes` bytes (`content`, then ASCII filler words),
     * written in 64 KiB pieces as fast as the client reads, so a client that stops reading stops
     * it (see `FakeRequest.sentBytes`). Streaming: one event per piece. The Content-Length is
     * declared only with `declareLength` (else chunked, so only counting can catch it).
     */
    | { fault: "huge_reply"; bytes: number; content?: string; declareLength?: boolean }
  );

export type FakeReply = FakeCompletion | FakeFault;

/** Which wire format a request spoke. */
export type FakeApi = "openai" | "anthropic" | "models" | "unknown";

/** One request as the server received it, in arrival order. */
export interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body; `undefined` when there was none or it was not JSON. */
  body: unknown;
  api: FakeApi;
  stream: boolean;
  /** The reply the server chose (from the queue or the rule); unset when it had none. */
  reply?: FakeReply;
  /** Why the server could not answer as scripted (no reply left, invalid body, ...). */
  problem?: string;
  /** For `huge_reply`: body bytes written before the client hung up (or all of them). */
  sentBytes?: number;
}

/** Chooses a reply when the queue is empty; `undefined` means "unexpected call". */
export type FakeRule = (request: FakeRequest) => FakeReply | undefined;

/**
 * The fake token count: maximal runs of non-whitespace. Deterministic and cheap, and close
 * enough to real tokenizers (about 1.3 tokens a word for English) for accounting tests.
 */
export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/** The JSON text of a tool call's arguments, exactly as it goes on the wire. */
export function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

/** Usage for a completion: input from the prompt's words, output from the reply's. */
export function estimateUsage(
  promptText: string,
  content: string,
  toolCalls: readonly FakeToolCall[],
  override: Partial<Usage> | undefined,
): Usage {
  const replyText = [content, ...toolCalls.map((call) => `${call.name} ${argumentsText(call)}`)];
  return {
    inputTokens: override?.inputTokens ?? countWords(promptText),
    outputTokens: override?.outputTokens ?? countWords(replyText.join(" ")),
  };
}

/** The credential a request carried, if any (Bearer token or x-api-key). */
export function requestKey(headers: FakeRequest["headers"]): string | undefined {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const bearer = first(headers.authorization)?.replace(/^Bearer\s+/i, "");
  return bearer || first(headers["x-api-key"]) || undefined;
}

/** An `echoKey` completion with the key written in (unchanged when there is no key). */
export function withEchoedKey(reply: FakeCompletion, key: string | undefined): FakeCompletion {
  if (!reply.echoKey || key === undefined) return reply;
  const put = (text: string) => text.split(API_KEY_PLACEHOLDER).join(key);
  const has = (text: string | undefined) => text?.includes(API_KEY_PLACEHOLDER) === true;
  const calls = reply.toolCalls ?? [];
  const anywhere =
    has(reply.content) || has(reply.model) || calls.some((call) => has(argumentsText(call)));
  return {
    ...reply,
    content: anywhere ? put(reply.content ?? "") : `${reply.content ?? ""} ${key}`,
    ...(reply.model !== undefined ? { model: put(reply.model) } : {}),
    ...(reply.toolCalls
      ? {
          toolCalls: calls.map((call) => ({ ...call, arguments: put(argumentsText(call)) })),
        }
      : {}),
  };
}
