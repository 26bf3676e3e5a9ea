/**
 * The seam between the fake model server and a provider's wire format: how to read a request and
 * how to write completions, stream events and errors the way that provider does.
 */

import type { z } from "zod";
import type { Usage } from "../model/types.js";

/** Characters per streamed slice of tool-call arguments. */
const ARGUMENT_SLICE_CHARS = 12;

/** What the server needs from a validated request body. */
export interface WireRequest {
  model: string;
  stream: boolean;
  /** Whether a streamed answer should carry usage (OpenAI: `stream_options.include_usage`). */
  streamUsage: boolean;
  /** All message text, for the word-count usage estimate. */
  promptText: string;
  /** The text of the last message (user turn or tool result), for rules. */
  lastMessageText: string;
  /** What the request asked of log-probabilities (OpenAI: `logprobs: true`); absent: none. */
  logprobs?: { top?: number; tokenIds: boolean };
}

/** One token's log-probability as OpenAI's wire writes it. */
export interface WireTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

/** A completion with everything decided: ids, text, tool calls, usage. */
export interface ResolvedCompletion {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  /** OpenAI vocabulary ("stop", "length", "tool_calls", "content_filter"). */
  finishReason: string;
  usage: Usage;
  /** The token log-probabilities to send (asked for and not declined by the reply). */
  logprobs?: WireTokenLogprob[];
  /** A reply's `rawLogprobs`, sent verbatim. */
  rawLogprobs?: unknown;
}

export interface ProviderWire {
  /** Prefixes of the ids this provider gives completions and tool calls. */
  readonly idPrefixes: { completion: string; toolCall: string };
  /** The response header carrying the request id. */
  readonly requestIdHeader: string;
  /** A validated view of the body, or why the provider would reject it. */
  readRequest(body: unknown): { request: WireRequest } | { error: string };
  /** The non-streaming response body; throws when the reply can't be expressed in this format. */
  completionBody(completion: ResolvedCompletion): unknown;
  /** Complete server-sent events, in order, ending with the provider's terminator. */
  streamEvents(completion: ResolvedCompletion, includeUsage: boolean): string[];
  /** A server-sent event whose data is not valid JSON. */
  malformedStreamEvent(completion: ResolvedCompletion): string;
  /** The provider's error body for an HTTP status. */
  errorBody(status: number, message: string): unknown;
}

/** Validates with zod and flattens the failure into one line, as a provider's 400 would. */
export function validateBody<T>(
  schema: z.ZodType<T>,
  body: unknown,
): { value: T } | { error: string } {
  const result = schema.safeParse(body);
  if (result.success) return { value: result.data };
  const issues = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "body";
    return `${where}: ${issue.message}`;
  });
  return { error: `Invalid request body: ${issues.join("; ")}` };
}

/** Text split into words with their trailing whitespace, as models stream it. */
export function textPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** JSON text split into fixed-size slices, as models stream tool-call arguments. */
export function argumentPieces(json: string): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < json.length; at += ARGUMENT_SLICE_CHARS) {
    pieces.push(json.slice(at, at + ARGUMENT_SLICE_CHARS));
  }
  return pieces;
}

/** A proper prefix of a JSON object's text is never valid JSON. */
export function truncatedJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}
