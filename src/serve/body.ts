/**
 * Request bodies: read up to a size limit and parse as JSON. A body over the limit is still read
 * (and thrown away) up to a larger drain limit, so that a client that writes its whole request
 * before reading the reply (Python's requests does) gets the error instead of a broken pipe.
 */
import type { IncomingMessage } from "node:http";
import { ServeError } from "./errors.js";

export interface BodyLimits {
  /** Largest body accepted. */
  maxBytes: number;
  /** Larger bodies are read and discarded up to this size, then the connection is closed. */
  maxDrainBytes: number;
}

/** A body over the limit; `drained` says whether it was read to the end (else close the socket). */
export class BodyTooLargeError extends ServeError {
  constructor(
    limit: number,
    readonly drained: boolean,
  ) {
    super("too_large", `request body exceeds the limit of ${limit} bytes`);
  }
}

/** The request was cut off by the client; nobody is left to answer. */
export class RequestAbortedError extends Error {
  override name = "RequestAbortedError";
}

/** Reads the whole body, enforcing the limits. */
export function readBody(request: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limits.maxDrainBytes) {
    request.resume();
    return Promise.reject(new BodyTooLargeError(limits.maxBytes, false));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    request.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limits.maxBytes) {
        chunks.push(chunk);
        return;
      }
      chunks.length = 0;
      if (received > limits.maxDrainBytes) fail(new BodyTooLargeError(limits.maxBytes, false));
    });
    request.on("end", () => {
      if (settled) return;
      settled = true;
      if (received > limits.maxBytes) reject(new BodyTooLargeError(limits.maxBytes, true));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
    request.on("error", (error) => fail(error));
    request.on("close", () => {
      if (!request.complete) fail(new RequestAbortedError("the client cut off the request"));
    });
  });
}

/** The body as JSON; an empty body is `undefined`. */
export async function readJsonBody(request: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  const body = await readBody(request, limits);
  const text = body.toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ServeError("bad_json", `request body is not valid JSON (${reason})`);
  }
}
