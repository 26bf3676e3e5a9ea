/**
 * A fake model provider on 127.0.0.1 for tests: OpenAI Chat Completions and Anthropic Messages
 * over real HTTP, answering from a queue of scripted replies (or a rule), with latency and
 * injected faults (429, 5xx, hangs, malformed JSON, truncated streams, empty replies, huge
 * replies) and replies that echo the caller's key.
 *
 * Usage estimate: input tokens = words in the request's messages (and system prompt);
 * output tokens = words in the reply's text plus each tool call's name and argument JSON.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicWire } from "./fake-anthropic-wire.js";
import { openaiWire } from "./fake-openai-wire.js";
import {
  argumentsText,
  estimateUsage,
  type FakeApi,
  type FakeCompletion,
  type FakeReply,
  type FakeRequest,
  type FakeRule,
  type FakeTokenLogprob,
  fakeTokenId,
  fakeTokenLogprobs,
  requestKey,
  withEchoedKey,
} from "./fake-reply.js";
import {
  type ProviderWire,
  type ResolvedCompletion,
  truncatedJson,
  type WireRequest,
  type WireTokenLogprob,
} from "./fake-wire.js";

export {
  API_KEY_PLACEHOLDER,
  countWords,
  type FakeApi,
  type FakeCompletion,
  type FakeFault,
  type FakeReply,
  type FakeRequest,
  type FakeRule,
  type FakeTokenLogprob,
  type FakeToolCall,
  fakeTokenId,
  fakeTokenLogprobs,
} from "./fake-reply.js";

const HOST = "127.0.0.1";
const DEFAULT_MODEL = "fake-model";
/** Bodies beyond this are refused with 413, as providers do. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Streamed partially by `truncated_stream` when the fault names no text. */
const DEFAULT_TRUNCATED_TEXT = "This reply is cut off somewhere in the middle of a sentence";
/** What a `malformed_json` reply would have said, had its JSON been whole. */
const FAULT_PLACEHOLDER_TEXT = "This reply never arrives in one piece";
/** Size of each piece of a `huge_reply`. */
const HUGE_PIECE_BYTES = 64 * 1024;
/** Stands for a `huge_reply`'s text in the body; cut out and replaced by the pieces. */
const HUGE_MARKER = "@@clade-fake-huge-reply@@";
/** One piece of a `huge_reply`'s filler: words, so the text looks like (bad) prose. */
const HUGE_FILLER = "lorem ipsum dolor sit amet ".repeat(Math.ceil(HUGE_PIECE_BYTES / 27));

const ROUTES: Record<string, { api: FakeApi; wire: ProviderWire }> = {
  "POST /v1/chat/completions": { api: "openai", wire: openaiWire },
  "POST /v1/messages": { api: "anthropic", wire: anthropicWire },
};

export interface FakeModelServerOptions {
  /** Replies consumed in order, one per completion request. */
  replies?: FakeReply[];
  /** Consulted when the queue is empty. */
  rule?: FakeRule;
  /** Delay before every response, unless a reply sets its own. Timers, so never blocking. */
  latencyMs?: number;
  /** Listed by GET /v1/models (completions report the requested model). */
  models?: string[];
  /** When set, requests must carry it (`Authorization: Bearer` or `x-api-key`), else 401. */
  apiKey?: string;
  /** Port to listen on (default: any free port); e.g. to bring back a server that was down. */
  port?: number;
}

export interface FakeModelServer {
  readonly port: number;
  /** "http://127.0.0.1:PORT". */
  readonly url: string;
  /** "http://127.0.0.1:PORT/v1", for OpenAI-compatible clients. */
  readonly openaiBaseUrl: string;
  /** "http://127.0.0.1:PORT"; the Anthropic SDK appends /v1/messages itself. */
  readonly anthropicBaseUrl: string;
  /** Every request, in arrival order (recorded before any latency). */
  readonly requests: readonly FakeRequest[];
  /** Requests the server could not answer as scripted: no reply left, invalid body, ... */
  readonly unexpectedRequests: readonly FakeRequest[];
  /** Scripted replies not yet consumed. */
  readonly pendingReplies: number;
  push(...replies: FakeReply[]): void;
  /** Replaces the rule used when the queue is empty. */
  setRule(rule: FakeRule | undefined): void;
  /** Stops listening and destroys every connection, hanging ones included. */
  close(): Promise<void>;
}

/** Starts a fake provider on 127.0.0.1 on a free port. */
export async function startFakeModelServer(
  options: FakeModelServerOptions = {},
): Promise<FakeModelServer> {
  const fake = new FakeModelServerImpl(options);
  await fake.listen();
  return fake;
}

/** The text of a request's last message (user turn or tool result); handy in rules. */
export function lastMessageText(request: FakeRequest): string {
  const route = ROUTES[`${request.method} ${request.path}`];
  if (route === undefined) return "";
  const read = route.wire.readRequest(request.body);
  return "request" in read ? read.request.lastMessageText : "";
}

class FakeModelServerImpl implements FakeModelServer {
  readonly requests: FakeRequest[] = [];
  private readonly queue: FakeReply[];
  private rule: FakeRule | undefined;
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly counters = { completion: 0, toolCall: 0, requestId: 0 };
  private closing: Promise<void> | undefined;

  constructor(private readonly options: FakeModelServerOptions) {
    this.queue = [...(options.replies ?? [])];
    this.rule = options.rule;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => this.failInternally(res, error));
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://${HOST}:${this.port}`;
  }

  get openaiBaseUrl(): string {
    return `${this.url}/v1`;
  }

  get anthropicBaseUrl(): string {
    return this.url;
  }

  get unexpectedRequests(): FakeRequest[] {
    return this.requests.filter((request) => request.problem !== undefined);
  }

  get pendingReplies(): number {
    return this.queue.length;
  }

  push(...replies: FakeReply[]): void {
    this.queue.push(...replies);
  }

  setRule(rule: FakeRule | undefined): void {
    this.rule = rule;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.options.port ?? 0, HOST, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
  }

  close(): Promise<void> {
    this.closing ??= new Promise((resolve) => {
      for (const timer of this.timers) clearTimeout(timer);
      this.timers.clear();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const route = ROUTES[`${method} ${path}`];
    const isModels = method === "GET" && path === "/v1/models";
    const api: FakeApi = route?.api ?? (isModels ? "models" : "unknown");
    const headers = { ...req.headers };
    const record: FakeRequest = { method, path, headers, body: undefined, api, stream: false };
    const ordinal = this.requests.push(record);
    // Errors before a wire is known (unknown path, models) use OpenAI's shape.
    const wire = route?.wire ?? openaiWire;

    const raw = await readBody(req);
    const refusal = this.admissionProblem(req, raw.tooLarge, route !== undefined || isModels);
    if (refusal !== undefined) {
      this.refuse(res, record, wire, refusal.status, refusal.message);
      return;
    }
    if (route === undefined) {
      this.sendModels(req, res);
      return;
    }
    try {
      record.body = raw.bytes.length === 0 ? undefined : JSON.parse(raw.bytes.toString("utf8"));
    } catch {
      this.refuse(res, record, wire, 400, "The request body is not valid JSON");
      return;
    }
    const read = wire.readRequest(record.body);
    if ("error" in read) {
      this.refuse(res, record, wire, 400, read.error);
      return;
    }
    record.stream = read.request.stream;

    const chosen = this.chooseReply(record, `request #${ordinal} (${method} ${path})`);
    if ("problem" in chosen) {
      this.refuse(res, record, wire, 500, chosen.problem);
      return;
    }
    const reply = chosen.reply;
    record.reply = reply;
    this.after(reply.latencyMs ?? this.options.latencyMs ?? 0, res, () => {
      try {
        this.answer(req, res, wire, read.request, reply, record);
      } catch (error) {
        const message = `Cannot send the scripted reply: ${errorMessage(error)}`;
        this.refuse(res, record, wire, 500, message);
      }
    });
  }

  /** Why the request is refused before it reaches the script, if it is. */
  private admissionProblem(
    req: IncomingMessage,
    tooLarge: boolean,
    known: boolean,
  ): { status: number; message: string } | undefined {
    if (tooLarge) return { status: 413, message: `Request body exceeds ${MAX_BODY_BYTES} bytes` };
    const key = this.options.apiKey;
    const auth = req.headers;
    if (key !== undefined && auth.authorization !== `Bearer ${key}` && auth["x-api-key"] !== key) {
      return { status: 401, message: "Invalid API key for the fake model server" };
    }
    if (!known) {
      return { status: 404, message: `Unknown request URL: ${req.method} ${req.url}` };
    }
    return undefined;
  }

  /** The next scripted reply, else the rule's, else why there is none. */
  private chooseReply(
    record: FakeRequest,
    which: string,
  ): { reply: FakeReply } | { problem: string } {
    try {
      const reply = this.queue.shift() ?? this.rule?.(record);
      if (reply !== undefined) return { reply };
    } catch (error) {
      return { problem: `The fake server's rule threw on ${which}: ${errorMessage(error)}` };
    }
    return { problem: `No reply scripted for ${which}: push() one or pass a rule` };
  }

  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    wire: ProviderWire,
    request: WireRequest,
    reply: FakeReply,
    record: FakeRequest,
  ): void {
    switch (reply.fault) {
      case undefined: {
        const completion = withEchoedKey(reply, requestKey(req.headers));
        this.sendCompletion(res, wire, request, this.resolve(wire, request, completion));
        return;
      }
      case "empty":
        this.sendCompletion(res, wire, request, this.resolve(wire, request, {}));
        return;
      case "rate_limit": {
        const retryAfter = reply.retryAfterSeconds;
        const headers: Record<string, string> =
          retryAfter === undefined ? {} : { "retry-after": String(retryAfter) };
        const message = "Rate limit reached for the fake model server; please try again later";
        this.sendError(res, wire, 429, message, headers);
        return;
      }
      case "server_error": {
        const message = "The server had an error while processing your request";
        this.sendError(res, wire, reply.status ?? 500, message);
        return;
      }
      case "bad_request": {
        const message = reply.message ?? "Invalid request (injected by the fake model server)";
        this.sendError(res, wire, reply.status ?? 400, message);
        return;
      }
      case "hang":
        return; // The socket stays open until the client gives up or close() destroys it.
      case "disconnect":
        req.socket.destroy();
        return;
      case "malformed_json":
        this.sendMalformed(res, wire, request);
        return;
      case "truncated_stream":
        this.sendTruncated(res, wire, request, reply.content ?? DEFAULT_TRUNCATED_TEXT);
        return;
      case "huge_reply": {
        this.sendHuge(res, wire, request, reply, record).catch(() => res.destroy());
        return;
      }
    }
  }

  /**
   * A completion whose text is `bytes` long, written piece by piece, each write waiting for the
   * client to take the previous one: a client that stops reading stops the server too.
   */
  private async sendHuge(
    res: ServerResponse,
    wire: ProviderWire,
    request: WireRequest,
    reply: { bytes: number; content?: string; declareLength?: boolean },
    record: FakeRequest,
  ): Promise<void> {
    const prefix = reply.content ?? "";
    const fillerBytes = Math.max(0, reply.bytes - Buffer.byteLength(prefix));
    const completion = this.resolve(wire, request, {
      content: HUGE_MARKER,
      usage: { outputTokens: Math.ceil(reply.bytes / 6) },
      // The marker is cut out of the body: it must appear there once, in the text.
      logprobs: null,
    });
    const pieces: string[] = [];
    if (prefix) pieces.push(prefix);
    for (let left = fillerBytes; left > 0; left -= HUGE_PIECE_BYTES) {
      pieces.push(HUGE_FILLER.slice(0, Math.min(left, HUGE_PIECE_BYTES)));
    }
    let parts: string[];
    if (request.stream) {
      const events = wire.streamEvents(completion, request.streamUsage);
      const at = events.findIndex((e) => e.includes(HUGE_MARKER));
      const template = events[at] as string;
      parts = [
        ...events.slice(0, at),
        ...pieces.map((piece) => template.replace(HUGE_MARKER, piece)),
        ...events.slice(at + 1),
      ];
      this.startStream(res, wire);
    } else {
      const body = JSON.stringify(wire.completionBody(completion));
      const [head, tail] = body.split(HUGE_MARKER) as [string, string];
      parts = [head, ...pieces, tail];
      const length = parts.reduce((sum, part) => sum + Buffer.byteLength(part), 0);
      res.writeHead(
        200,
        this.headers(wire, {
          "content-type": "application/json",
          ...(reply.declareLength ? { "content-length": length } : {}),
        }),
      );
    }
    record.sentBytes = 0;
    for (const part of parts) {
      if (res.destroyed) return;
      record.sentBytes += Buffer.byteLength(part);
      if (!res.write(part)) await drainedOrClosed(res);
    }
    res.end();
  }

  /** Fixes ids, model, finish reason and usage for a completion. */
  private resolve(
    wire: ProviderWire,
    request: WireRequest,
    reply: FakeCompletion,
  ): ResolvedCompletion {
    const content = reply.content ?? "";
    const calls = reply.toolCalls ?? [];
    return {
      id: `${wire.idPrefixes.completion}${++this.counters.completion}`,
      model: reply.model ?? request.model,
      created: Math.floor(Date.now() / 1000),
      content,
      toolCalls: calls.map((call) => ({
        id: `${wire.idPrefixes.toolCall}${++this.counters.toolCall}`,
        name: call.name,
        arguments: argumentsText(call),
      })),
      finishReason: reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop"),
      usage: estimateUsage(request.promptText, content, calls, reply.usage),
      ...wireLogprobs(request, reply, content),
    };
  }

  private sendCompletion(
    res: ServerResponse,
    wire: ProviderWire,
    request: WireRequest,
    completion: ResolvedCompletion,
  ): void {
    if (!request.stream) {
      this.sendJson(res, wire, 200, wire.completionBody(completion));
      return;
    }
    const events = wire.streamEvents(completion, request.streamUsage);
    this.startStream(res, wire);
    res.end(events.join(""));
  }

  private sendMalformed(res: ServerResponse, wire: ProviderWire, request: WireRequest): void {
    const completion = this.resolve(wire, request, { content: FAULT_PLACEHOLDER_TEXT });
    if (request.stream) {
      this.startStream(res, wire);
      res.end(wire.malformedStreamEvent(completion));
      return;
    }
    // A complete HTTP response (its length matches) whose JSON is cut off.
    const body = truncatedJson(wire.completionBody(completion));
    const length = Buffer.byteLength(body);
    res.writeHead(
      200,
      this.headers(wire, { "content-type": "application/json", "content-length": length }),
    );
    res.end(body);
  }

  /** Sends about half of the response, then destroys the socket once that half is flushed. */
  private sendTruncated(
    res: ServerResponse,
    wire: ProviderWire,
    request: WireRequest,
    content: string,
  ): void {
    const completion = this.resolve(wire, request, { content });
    const destroy = () => res.destroy();
    if (request.stream) {
      const events = wire.streamEvents(completion, request.streamUsage);
      const sent = events.slice(0, Math.max(1, Math.floor(events.length / 2)));
      this.startStream(res, wire);
      res.write(sent.join(""), destroy);
      return;
    }
    // The declared length promises the whole body; the connection dies halfway through it.
    const body = JSON.stringify(wire.completionBody(completion));
    const length = Buffer.byteLength(body);
    res.writeHead(
      200,
      this.headers(wire, { "content-type": "application/json", "content-length": length }),
    );
    res.write(body.slice(0, Math.floor(body.length / 2)), destroy);
  }

  private sendModels(req: IncomingMessage, res: ServerResponse): void {
    const ids = this.options.models ?? [DEFAULT_MODEL];
    const created = Math.floor(Date.now() / 1000);
    // The Anthropic SDK lists models at the same path; it identifies itself by this header.
    if (req.headers["anthropic-version"] !== undefined) {
      const data = ids.map((id) => ({
        type: "model",
        id,
        display_name: id,
        created_at: new Date(created * 1000).toISOString(),
      }));
      const page = { data, has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null };
      this.sendJson(res, anthropicWire, 200, page);
      return;
    }
    const data = ids.map((id) => ({ id, object: "model", created, owned_by: "clade-fake" }));
    this.sendJson(res, openaiWire, 200, { object: "list", data });
  }

  private refuse(
    res: ServerResponse,
    record: FakeRequest,
    wire: ProviderWire,
    status: number,
    message: string,
  ): void {
    record.problem = message;
    this.sendError(res, wire, status, message);
  }

  private sendError(
    res: ServerResponse,
    wire: ProviderWire,
    status: number,
    message: string,
    extraHeaders: Record<string, string> = {},
  ): void {
    this.sendJson(res, wire, status, wire.errorBody(status, message), extraHeaders);
  }

  private sendJson(
    res: ServerResponse,
    wire: ProviderWire,
    status: number,
    value: unknown,
    extraHeaders: Record<string, string> = {},
  ): void {
    if (res.headersSent || res.destroyed) return;
    const body = JSON.stringify(value);
    const headers = { "content-type": "application/json", ...extraHeaders };
    res.writeHead(
      status,
      this.headers(wire, { ...headers, "content-length": Buffer.byteLength(body) }),
    );
    res.end(body);
  }

  private startStream(res: ServerResponse, wire: ProviderWire): void {
    res.writeHead(
      200,
      this.headers(wire, { "content-type": "text/event-stream", "cache-control": "no-cache" }),
    );
  }

  private headers(wire: ProviderWire, headers: Record<string, string | number>) {
    return { ...headers, [wire.requestIdHeader]: `req_${++this.counters.requestId}` };
  }

  /** Runs `send` after `ms` on a timer (so latency never blocks other requests). */
  private after(ms: number, res: ServerResponse, send: () => void): void {
    if (ms <= 0) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!res.destroyed) send();
    }, ms);
    this.timers.add(timer);
    res.once("close", () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    });
  }

  private failInternally(res: ServerResponse, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    this.sendError(res, openaiWire, 500, `Fake model server failure: ${errorMessage(error)}`);
  }
}

/**
 * The log-probabilities a completion carries: the reply's raw block when it has one; else, when
 * the request asked and the reply did not decline (`logprobs: null`), its tokens (by default
 * fakeTokenLogprobs), each with `top` alternatives (the token itself first, then "alt1", ... at
 * 1, 2, ... nats lower) and, with token ids asked for, written as "token_id:N".
 */
function wireLogprobs(
  request: WireRequest,
  reply: FakeCompletion,
  content: string,
): Pick<ResolvedCompletion, "logprobs" | "rawLogprobs"> {
  if (reply.rawLogprobs !== undefined) return { rawLogprobs: reply.rawLogprobs };
  const asked = request.logprobs;
  if (asked === undefined || reply.logprobs === null) return {};
  const tokens: FakeTokenLogprob[] = reply.logprobs ?? fakeTokenLogprobs(content);
  const spell = (token: string, id: number | undefined) =>
    asked.tokenIds ? `token_id:${id ?? fakeTokenId(token)}` : token;
  const bytes = (token: string) => [...Buffer.from(token, "utf8")];
  const logprobs = tokens.map((t): WireTokenLogprob => {
    const top = Array.from({ length: asked.top ?? 0 }, (_, k) => {
      const token = k === 0 ? t.token : `alt${k}`;
      return {
        token: spell(token, k === 0 ? t.tokenId : undefined),
        logprob: t.logprob - k,
        bytes: bytes(token),
      };
    });
    return {
      token: spell(t.token, t.tokenId),
      logprob: t.logprob,
      bytes: bytes(t.token),
      top_logprobs: top,
    };
  });
  return { logprobs };
}

/**
 * The whole body, up to MAX_BODY_BYTES. An oversized body is still drained (and dropped), so
 * that the 413 goes out on an intact connection.
 */
async function readBody(req: IncomingMessage): Promise<{ bytes: Buffer; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  const tooLarge = size > MAX_BODY_BYTES;
  return { bytes: tooLarge ? Buffer.alloc(0) : Buffer.concat(chunks), tooLarge };
}

/** Resolves when the response can take more data, or will never (closed). */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
