/**
 * JSON over HTTP for remote environments, on node:http with keep-alive sockets. Failures say
 * whether the request can have reached the server: a step must not be retried once it may have.
 */
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";

/**
 * Idle pooled sockets are dropped after this; servers commonly close idle keep-alive
 * connections after 5 s (Node's default), and reusing a socket the server is closing loses the
 * request in a way that cannot be told apart from a crash.
 */
const FREE_SOCKET_TIMEOUT_MS = 4_000;
/** Longest body text kept in an error message. */
const MAX_QUOTED_CHARS = 300;

const agents = {
  "http:": new http.Agent({ keepAlive: true, timeout: FREE_SOCKET_TIMEOUT_MS }),
  "https:": new https.Agent({ keepAlive: true, timeout: FREE_SOCKET_TIMEOUT_MS }),
};

export interface JsonReply {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or the raw text when it is not JSON; undefined when empty. */
  body: unknown;
}

/** A request that got no HTTP reply. */
export class TransportError extends Error {
  override name = "TransportError";
  constructor(
    message: string,
    /** The socket error code (ECONNREFUSED, ECONNRESET, ...) or ETIMEDOUT for our timeout. */
    readonly code: string | undefined,
    /** False only when no connection was ever made: the server cannot have seen the request. */
    readonly maybeSent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface JsonRequest {
  method: "GET" | "POST" | "DELETE";
  url: URL;
  body?: unknown;
  timeoutMs: number;
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Text for error messages: bounded, one line. */
export function quote(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= MAX_QUOTED_CHARS ? line : `${line.slice(0, MAX_QUOTED_CHARS)}…`;
}

export function requestJson(request: JsonRequest): Promise<JsonReply> {
  const { url, method, timeoutMs } = request;
  const agent = agents[url.protocol as keyof typeof agents];
  if (!agent) {
    return Promise.reject(new TransportError(`unsupported URL ${url.href}`, undefined, false));
  }
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  const headers: Record<string, string | number> = { accept: "application/json" };
  if (payload !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(payload);
  }
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    let connected = false;
    let settled = false;
    const fail = (message: string, code: string | undefined, cause?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new TransportError(message, code, connected, { cause }));
    };
    const outgoing = transport.request(url, { method, headers, agent }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("close", () => {
        if (!incoming.complete) fail("the connection closed mid-reply", "ECONNRESET");
      });
      incoming.on("error", (error: NodeJS.ErrnoException) =>
        fail(error.message, error.code, error),
      );
      incoming.on("end", () => {
        if (settled || !incoming.complete) return;
        settled = true;
        clearTimeout(timer);
        resolve({
          status: incoming.statusCode ?? 0,
          headers: incoming.headers,
          body: parseBody(Buffer.concat(chunks).toString("utf8")),
        });
      });
    });
    const timer = setTimeout(() => {
      fail(`no reply within ${timeoutMs} ms`, "ETIMEDOUT");
      outgoing.destroy();
    }, timeoutMs);
    outgoing.on("socket", (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once("connect", () => (connected = true));
    });
    outgoing.on("error", (error: NodeJS.ErrnoException) => fail(error.message, error.code, error));
    outgoing.end(payload);
  });
}
