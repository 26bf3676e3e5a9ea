/**
 * A fetch for the provider SDKs built on node:http(s) with keep-alive agents. Node 20's built-in
 * fetch (undici) costs about twice the CPU per call (measured in `npm run bench`), which at
 * hundreds of concurrent calls is the difference between keeping up with the server or not.
 * JSON responses are read whole; event streams (SSE) are passed through as web streams.
 * Anything unusual (a body that is not text or bytes) goes to the built-in fetch.
 */
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";

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

export const nodeFetch: typeof fetch = (input, init = {}) => {
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
        const type = incoming.headers["content-type"] ?? "";
        if (type.includes("text/event-stream")) {
          resolve(new Response(Readable.toWeb(incoming) as ReadableStream, responseInit));
          return;
        }
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
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
