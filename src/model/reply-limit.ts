/**
 * How big a model reply may be. A reply is stored several times over (the call record, the next
 * turn's request, the trajectory, the response cache), so one runaway reply from a server can
 * exhaust memory and the store. The limit is checked twice: by the transport while reading the
 * body (it stops reading and drops the connection) and on the parsed reply (streams, caches and
 * any other Model). An oversized reply is an error for that call and is never cached.
 *
 * Not retried: the same request tends to produce the same runaway reply (a repetition loop up to
 * max_tokens, a misbehaving server), so retrying would only multiply the bytes and the tokens
 * billed. Raise `maxReplyBytes` or lower `maxTokens` instead.
 */
import { isTokenLogprobList } from "./logprobs.js";
import { ModelError, type ModelResponse } from "./types.js";

/** Default limit on a reply: 4 MiB of body, far above any real completion (about 1M tokens). */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;
/** The largest limit clade.config accepts; beyond it, one reply could no longer be stored safely. */
export const MAX_REPLY_BYTES_CEILING = 256 * 1024 * 1024;

/** A reply exceeded its model's `maxReplyBytes`; never retried. */
export class ReplyTooLargeError extends ModelError {
  override name = "ReplyTooLargeError";
  constructor(
    readonly limitBytes: number,
    what: string,
  ) {
    super(
      `reply too large: ${what} exceeds the ${limitBytes}-byte limit (maxReplyBytes); ` +
        "raise maxReplyBytes in clade.config or lower max tokens",
      { retryable: false },
    );
  }
}

/** UTF-8 bytes of everything a reply says: text, tool names and arguments, model name. */
export function replyBytes(response: ModelResponse): number {
  let bytes = Buffer.byteLength(response.content) + Buffer.byteLength(response.model);
  for (const call of response.toolCalls) {
    bytes += Buffer.byteLength(call.id) + Buffer.byteLength(call.name);
    bytes += Buffer.byteLength(call.arguments);
  }
  return bytes + Buffer.byteLength(response.finishReason);
}

/** Throws ReplyTooLargeError when the parsed reply is over the limit. */
export function checkReplySize(response: ModelResponse, limitBytes: number): void {
  const bytes = replyBytes(response);
  if (bytes > limitBytes) throw new ReplyTooLargeError(limitBytes, `the reply's ${bytes} bytes`);
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/**
 * Whether a value (e.g. read back from the response cache) is a well-formed reply within the
 * limit; anything else is not to be replayed.
 */
export function isUsableReply(value: unknown, limitBytes: number): value is ModelResponse {
  if (value === null || typeof value !== "object") return false;
  const reply = value as Record<string, unknown>;
  const usage = reply.usage as Record<string, unknown> | null | undefined;
  const calls = reply.toolCalls;
  const wellFormed =
    isString(reply.content) &&
    isString(reply.finishReason) &&
    isString(reply.model) &&
    usage !== null &&
    typeof usage === "object" &&
    isCount(usage.inputTokens) &&
    isCount(usage.outputTokens) &&
    Array.isArray(calls) &&
    calls.every(
      (call) =>
        call !== null &&
        typeof call === "object" &&
        isString(call.id) &&
        isString(call.name) &&
        isString(call.arguments),
    ) &&
    (reply.logprobs === undefined || isTokenLogprobList(reply.logprobs));
  return wellFormed && replyBytes(value as ModelResponse) <= limitBytes;
}
