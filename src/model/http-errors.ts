/**
 * Classifies whatever a provider call throws (official SDK errors, raw fetch/Node socket errors,
 * anything else) into a ModelError that says in one line what went wrong and whether trying
 * again may help. Messages are scrubbed of anything that looks like a credential.
 */
import {
  APIError as AnthropicAPIError,
  APIConnectionError as AnthropicConnectionError,
  APIConnectionTimeoutError as AnthropicConnectionTimeoutError,
  APIUserAbortError as AnthropicUserAbortError,
} from "@anthropic-ai/sdk/error";
import {
  APIError as OpenAIAPIError,
  APIConnectionError as OpenAIConnectionError,
  APIConnectionTimeoutError as OpenAIConnectionTimeoutError,
  APIUserAbortError as OpenAIUserAbortError,
} from "openai/error";
import { redactSecrets } from "./secrets.js";
import { ModelError } from "./types.js";

// The scrubber lives in secrets.ts; re-exported here, where callers have always found it.
export { redactSecrets } from "./secrets.js";

/** Longest message we keep; provider bodies can be huge (HTML error pages, echoed prompts). */
const MAX_MESSAGE_CHARS = 400;
/** How deep to follow `cause` / AggregateError chains looking for a socket error code. */
const MAX_CAUSE_DEPTH = 8;

/** HTTP statuses that are worth retrying besides every 5xx (and 529, Anthropic's "overloaded"). */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 409, 429]);

const STATUS_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: "bad request",
  401: "authentication failed (check the API key)",
  402: "payment required",
  403: "permission denied",
  404: "not found (check the model name and base URL)",
  408: "request timeout",
  409: "conflict",
  413: "request too large",
  422: "unprocessable request",
  429: "rate limited",
  500: "server error",
  502: "bad gateway",
  503: "service unavailable",
  504: "gateway timeout",
  529: "overloaded",
};

/** Socket-level failures: the request may never have reached the model, so retrying is safe. */
const DROPPED_CONNECTION_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
/** Messages Node and undici use for a connection cut mid-request. */
const DROPPED_CONNECTION_MESSAGE = /socket hang up|^terminated$|other side closed|premature close/i;
/** Provider error `type`s (e.g. in a mid-stream error event, which has no HTTP status). */
const RETRYABLE_ERROR_TYPES: ReadonlySet<string> = new Set([
  "server_error",
  "api_error",
  "overloaded_error",
  "rate_limit_error",
  "timeout_error",
]);
const LOCAL_HOSTS: ReadonlySet<string> = new Set([
  "localhost",
  "127.0.0.1",
  "::1",
  "[::1]",
  "0.0.0.0",
  "::",
]);

export interface ErrorContext {
  /** The endpoint that was called; named in connection errors (credentials in it are removed). */
  baseUrl?: string;
  /** Values to remove verbatim from messages, e.g. the API key in use. */
  secrets?: readonly string[];
  /** Clock for HTTP-date Retry-After values (ms since epoch). */
  now?: () => number;
}

/** Response headers as the SDKs (a fetch Headers) or other libraries (a plain object) give them. */
export type HeaderSource =
  | { get(name: string): string | null | undefined }
  | Record<string, string | string[] | undefined>;

/** One line, bounded length, no credentials. */
function cleanMessage(text: string, secrets: readonly string[] | undefined): string {
  const oneLine = redactSecrets(text, secrets).replace(/\s+/g, " ").trim();
  return oneLine.length <= MAX_MESSAGE_CHARS ? oneLine : `${oneLine.slice(0, MAX_MESSAGE_CHARS)}…`;
}

function headerValue(headers: HeaderSource | undefined, name: string): string | undefined {
  if (headers === undefined || headers === null) return undefined;
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null | undefined }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Seconds the server asked us to wait: `retry-after-ms` (OpenAI) wins over `Retry-After`, which
 * is either delta-seconds or an HTTP date. Undefined when absent or unparseable.
 */
export function parseRetryAfterSeconds(
  headers: HeaderSource | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  const millis = headerValue(headers, "retry-after-ms")?.trim();
  if (millis && /^\d+(\.\d+)?$/.test(millis)) return Number(millis) / 1000;
  const value = headerValue(headers, "retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  // HTTP dates name a weekday or month; this keeps "-3" from parsing as the year -3.
  if (!/[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - nowMs) / 1000);
}

/** True for statuses where a later attempt may succeed. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status) || status >= 500;
}

function describeStatus(status: number): string {
  return (
    STATUS_DESCRIPTIONS[status] ??
    (status >= 500 ? "server error" : status >= 400 ? "client error" : "unexpected status")
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function isUserAbort(error: unknown): boolean {
  return error instanceof OpenAIUserAbortError || error instanceof AnthropicUserAbortError;
}

function isSdkTimeout(error: unknown): boolean {
  return (
    error instanceof OpenAIConnectionTimeoutError ||
    error instanceof AnthropicConnectionTimeoutError
  );
}

function isSdkConnectionError(error: unknown): boolean {
  return error instanceof OpenAIConnectionError || error instanceof AnthropicConnectionError;
}

/** The error, its causes, and AggregateError members (undici reports one per address tried). */
function causeChain(error: unknown): Record<string, unknown>[] {
  const chain: Record<string, unknown>[] = [];
  const pending: Array<{ value: unknown; depth: number }> = [{ value: error, depth: 0 }];
  while (pending.length > 0) {
    const next = pending.shift();
    if (!next || !isObject(next.value) || next.depth > MAX_CAUSE_DEPTH) continue;
    if (chain.includes(next.value)) continue;
    chain.push(next.value);
    pending.push({ value: next.value.cause, depth: next.depth + 1 });
    if (Array.isArray(next.value.errors)) {
      for (const member of next.value.errors)
        pending.push({ value: member, depth: next.depth + 1 });
    }
  }
  return chain;
}

function stringField(value: Record<string, unknown>, field: string): string | undefined {
  const found = value[field];
  return typeof found === "string" ? found : undefined;
}

function isLocalHost(host: string): boolean {
  return LOCAL_HOSTS.has(host) || host.startsWith("127.");
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** Where we tried to connect: the configured base URL, else the address the socket error names. */
function targetOf(chain: Record<string, unknown>[], context: ErrorContext): string | undefined {
  if (context.baseUrl) return context.baseUrl;
  for (const link of chain) {
    const address = stringField(link, "address");
    if (address === undefined) continue;
    const port = link.port;
    const host = address.includes(":") ? `[${address}]` : address;
    return typeof port === "number" || typeof port === "string" ? `${host}:${port}` : host;
  }
  return undefined;
}

function targetHost(chain: Record<string, unknown>[], context: ErrorContext): string | undefined {
  if (context.baseUrl) return hostOf(context.baseUrl);
  for (const link of chain) {
    const address = stringField(link, "address");
    if (address !== undefined) return address;
  }
  return undefined;
}

interface Classified {
  message: string;
  status?: number;
  retryable: boolean;
  retryAfterSeconds?: number;
}

/** A socket/transport failure found anywhere in the cause chain, if any. */
function classifyTransport(
  chain: Record<string, unknown>[],
  context: ErrorContext,
): Classified | undefined {
  const codes = chain.map((link) => stringField(link, "code")).filter((c) => c !== undefined);
  const at = targetOf(chain, context);
  const where = at === undefined ? "" : ` at ${at}`;
  if (codes.includes("ECONNREFUSED")) {
    const host = targetHost(chain, context);
    if (host !== undefined && isLocalHost(host)) {
      return {
        message:
          `connection refused: no server is running${where}; start your local model server ` +
          "(vLLM, Ollama, llama.cpp) or fix the base URL",
        retryable: true,
      };
    }
    return { message: `connection refused${where}`, retryable: true };
  }
  if (codes.includes("ENOTFOUND")) {
    // A misspelt host does not start resolving by itself; retrying only delays the real error.
    return { message: `cannot resolve host${where}; check the base URL`, retryable: false };
  }
  const timeoutCode = codes.find((code) => TIMEOUT_CODES.has(code));
  if (timeoutCode !== undefined) {
    return { message: `request timed out${where} (${timeoutCode})`, retryable: true };
  }
  const droppedCode = codes.find((code) => DROPPED_CONNECTION_CODES.has(code));
  if (droppedCode !== undefined) {
    return { message: `connection dropped${where} (${droppedCode})`, retryable: true };
  }
  for (const link of chain) {
    const text = stringField(link, "message") ?? "";
    if (DROPPED_CONNECTION_MESSAGE.test(text)) {
      return { message: `connection dropped${where} (${text})`, retryable: true };
    }
  }
  return undefined;
}

/** The provider's explanation, without the "<status> " prefix the SDKs put in front of it. */
function detailOf(error: Record<string, unknown>, status: number | undefined): string {
  // The Anthropic SDK's message is the whole error body as JSON; `apiMessage` is the text in it.
  const apiMessage = stringField(error, "apiMessage");
  if (apiMessage) return apiMessage;
  const message = stringField(error, "message") ?? "";
  const stripped =
    status === undefined ? message : message.replace(new RegExp(`^${status}\\s*`), "");
  return /^status code \(no body\)$/.test(stripped) ? "" : stripped;
}

function providerErrorType(error: Record<string, unknown>): string | undefined {
  const direct = stringField(error, "type");
  if (direct !== undefined) return direct;
  const body = error.error;
  if (!isObject(body)) return undefined;
  const nested = body.error;
  return stringField(body, "type") ?? (isObject(nested) ? stringField(nested, "type") : undefined);
}

/** Servers may say explicitly whether to retry (OpenAI's x-should-retry; the SDKs obey it). */
function shouldRetryOverride(headers: HeaderSource | undefined): boolean | undefined {
  const value = headerValue(headers, "x-should-retry");
  return value === "true" ? true : value === "false" ? false : undefined;
}

function classifyStatus(
  error: Record<string, unknown>,
  status: number,
  context: ErrorContext,
): Classified {
  const headers = isObject(error.headers) ? (error.headers as HeaderSource) : undefined;
  const retryAfterSeconds = parseRetryAfterSeconds(headers, (context.now ?? Date.now)());
  const detail = detailOf(error, status);
  const wait = retryAfterSeconds === undefined ? "" : ` (retry after ${retryAfterSeconds} s)`;
  return {
    message: `HTTP ${status} ${describeStatus(status)}${detail ? `: ${detail}` : ""}${wait}`,
    status,
    retryable: shouldRetryOverride(headers) ?? isRetryableStatus(status),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  };
}

function numericStatus(error: Record<string, unknown>): number | undefined {
  const status = error.status ?? error.statusCode;
  return typeof status === "number" && Number.isInteger(status) && status >= 400
    ? status
    : undefined;
}

function classify(error: unknown, context: ErrorContext): Classified {
  if (isUserAbort(error)) return { message: "model call aborted by the caller", retryable: false };
  if (isSdkTimeout(error)) {
    const where = context.baseUrl ? ` at ${context.baseUrl}` : "";
    return { message: `request timed out${where}`, retryable: true };
  }
  if (!isObject(error)) return { message: `model call failed: ${String(error)}`, retryable: false };

  const status = numericStatus(error);
  if (status !== undefined) return classifyStatus(error, status, context);

  const name = stringField(error, "name");
  if (name === "TimeoutError") return { message: "request timed out", retryable: true };
  const chain = causeChain(error);
  if (name === "AbortError") {
    // fetch rejects with an AbortError whose cause is the TimeoutError of AbortSignal.timeout().
    const timedOut = chain.some((link) => stringField(link, "name") === "TimeoutError");
    return timedOut
      ? { message: "request timed out", retryable: true }
      : { message: "model call aborted", retryable: false };
  }

  const transport = classifyTransport(chain, context);
  if (transport !== undefined) return transport;
  if (isSdkConnectionError(error)) {
    const where = context.baseUrl ? ` to ${context.baseUrl}` : "";
    return { message: `connection failed${where}: ${detailOf(error, undefined)}`, retryable: true };
  }

  // JSON.parse of a 200's body or of a stream event: a server or proxy glitch, not our request.
  if (name === "SyntaxError") {
    const where = context.baseUrl ? ` from ${context.baseUrl}` : "";
    return {
      message: `malformed response${where}: ${detailOf(error, undefined)}`,
      retryable: true,
    };
  }

  // An SDK APIError without a status: an error event inside a stream. Its type tells the class.
  if (error instanceof OpenAIAPIError || error instanceof AnthropicAPIError) {
    const type = providerErrorType(error as unknown as Record<string, unknown>);
    const retryable = type !== undefined && RETRYABLE_ERROR_TYPES.has(type);
    return {
      message: `provider error${type ? ` (${type})` : ""}: ${detailOf(error, undefined)}`,
      retryable,
    };
  }
  return {
    message: `model call failed: ${stringField(error, "message") ?? String(error)}`,
    retryable: false,
  };
}

/**
 * Turns anything a provider call threw into a ModelError. A ModelError passes through unchanged,
 * also from inside a cause chain.
 * Retryable: 408, 409, 429, 5xx (incl. 529), timeouts, refused and dropped connections, and
 * response bodies that are not valid JSON.
 * Not retryable: other 4xx, a caller's abort, unknown errors (most likely bugs).
 */
export function toModelError(error: unknown, context: ErrorContext = {}): ModelError {
  if (error instanceof ModelError) return error;
  // Our own verdict raised under the SDK (e.g. the transport refusing an oversized body, which
  // the SDK wraps as a connection error) keeps its message and its retry decision.
  const ours = causeChain(error).find((link) => link instanceof ModelError);
  if (ours !== undefined) return ours as unknown as ModelError;
  const classified = classify(error, context);
  return new ModelError(cleanMessage(classified.message, context.secrets), {
    retryable: classified.retryable,
    cause: error,
    ...(classified.status === undefined ? {} : { status: classified.status }),
    ...(classified.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: classified.retryAfterSeconds }),
  });
}
