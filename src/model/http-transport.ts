/**
 * A fetch for the provider SDKs built on node:http(s) with keep-alive agents. Node 20's built-in
 * fetch (undici) costs about twice the CPU per call (measured in `npm run bench`), which at
 * hundreds of concurrent calls is the difference between keeping up with the server or not.
 * JSON responses are read whole; event streams (SSE) are passed through as web streams.
 * Anything unusual (a body that is not text or bytes) goes to the built-in fetch.
 *
 * Bodies are bounded (reply-limit.ts): a declared length over the limit, or more bytes than it,
 * stops the read and destroys the connection, so a runaway server never gets buffered whole. A
 * stream is bounded per event (its reply as a whole is bounded by the provider as it assembles).
 */
import http from "node:http";
import https from "node:https";
import { pipeline, Readable, Transform } from "node:stream";
import { DEFAULT_MAX_REPLY_BYTES, ReplyTooLargeError } from "./reply-limit.js";

const agents = {
  "http:": new http.Agent({ keepAlive: true }),
  "https:": new https.Agent({ keepAlive: true }),
};

type HeaderInput = ConstructorParameters<typeof Headers>[0];

/** Plain records pass through; Headers and entry lists are copied into one. */
function toHeaderRecord(headers: HeaderInput): Record<string, string> {
  if (headers && !(headers instanceof Headers) && !Array.isArray(headers)) {
    return headers as Record<string, string>;
  }
  const record: Record<string, string> = {};
  new Headers(headers).forEach((value, key) => {
    record[key] = value;
  });
  return record;
}

/** Response headers as entries, which the Response constructor takes without a Headers detour. */
function responseHeaders(incoming: http.IncomingMessage): [string, string][] {
  const raw = incoming.rawHeaders;
  const entries: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2)
    entries.push([raw[i] as string, raw[i + 1] as string]);
  return entries;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

const LF = 0x0a;
const CR = 0x0d;

/** End (exclusive) of the last blank line in `bytes`, i.e. where the next SSE event starts, or -1. */
function lastEventBoundary(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i > 0; i--) {
    const b = bytes[i];
    if (b !== LF && b !== CR) continue;
    const before = bytes[i - 1];
    if ((b === LF && before === LF) || (b === CR && before === CR)) return i + 1;
    if (b === LF && before === CR && i >= 3 && bytes[i - 2] === LF && bytes[i - 3] === CR) {
      return i + 1;
    }
  }
  return -1;
}

/**
 * Passes an event stream through, failing it when one event grows past `limit` bytes: the SDKs
 * buffer an event whole before parsing it. Scans only for the last boundary in each chunk (from
 * its end, so usually a few bytes), with the previous chunk's tail for boundaries split across
 * chunks.
 */
function eventSizeGuard(limit: number): Transform {
  let pending = 0;
  let tail: Uint8Array = new Uint8Array(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const edge = Buffer.concat([tail, chunk.subarray(0, 3)]);
      const inChunk = lastEventBoundary(chunk);
      const atEdge = lastEventBoundary(edge) - tail.length;
      const boundary = inChunk >= 0 ? inChunk : atEdge > 0 ? atEdge : -1;
      pending = boundary >= 0 ? chunk.length - boundary : pending + chunk.length;
      tail = Uint8Array.from(chunk.subarray(Math.max(0, chunk.length - 3)));
      if (pending > limit) {
        done(new ReplyTooLargeError(limit, `a stream event of more than ${limit} bytes`));
        return;
      }
      done(null, chunk);
    },
  });
}

export interface NodeFetchOptions {
  /** Largest response body read (per event for streams); default DEFAULT_MAX_REPLY_BYTES. */
  maxBodyBytes?: number;
}

/** A fetch on node:http(s) whose response bodies are bounded by `maxBodyBytes`. */
export function createNodeFetch(options: NodeFetchOptions = {}): typeof fetch {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  return (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const body = init.body;
    const agent = agents[url.protocol as keyof typeof agents];
    if (
      !agent ||
      input instanceof Request ||
      !(body == null || typeof body === "string" || body instanceof Uint8Array)
    ) {
      return fetch(input, init);
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const transport = url.protocol === "https:" ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const request = transport.request(
        url,
        { method: init.method ?? "GET", headers: toHeaderRecord(init.headers), agent },
        (incoming) => {
          const responseInit = {
            status: incoming.statusCode ?? 500,
            statusText: incoming.statusMessage ?? "",
            headers: responseHeaders(incoming),
          };
          // Stop reading and drop the connection: the rest of the body is never transferred.
          const refuse = (what: string) => {
            request.destroy();
            reject(new ReplyTooLargeError(limit, what));
          };
          const type = incoming.headers["content-type"] ?? "";
          if (type.includes("text/event-stream")) {
            // Errors (the guard's, a dropped connection) reach the reader through the stream.
            const guarded = pipeline(incoming, eventSizeGuard(limit), () => {});
            resolve(new Response(Readable.toWeb(guarded) as ReadableStream, responseInit));
            return;
          }
          const declared = Number(incoming.headers["content-length"]);
          if (declared > limit) {
            refuse(
              `the declared ${declared}-byte body of the HTTP ${responseInit.status} response`,
            );
            return;
          }
          const chunks: Buffer[] = [];
          let received = 0;
          incoming.on("data", (chunk: Buffer) => {
            received += chunk.length;
            if (received > limit) {
              refuse(`the body of the HTTP ${responseInit.status} response (over ${limit} bytes)`);
              return;
            }
            chunks.push(chunk);
          });
          incoming.on("error", reject);
          // A connection cut mid-body is an error, not a short body.
          incoming.on("aborted", () =>
            reject(new Error("terminated: the connection closed mid-response")),
          );
          incoming.on("end", () => {
            if (!incoming.complete) return;
            const status = responseInit.status;
            const empty = status === 204 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), responseInit));
          });
        },
      );
      request.on("error", reject);
      signal?.addEventListener(
        "abort",
        () => {
          const reason = abortError(signal);
          request.destroy(reason instanceof Error ? reason : undefined);
          reject(reason);
        },
        { once: true },
      );
      request.end(body ?? undefined);
    });
  };
}

/** The transport with the default body limit. */
export const nodeFetch: typeof fetch = createNodeFetch();
