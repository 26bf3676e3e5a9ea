/**
 * The channel between sandboxed code and its parent: file descriptor 3 inside the sandbox, a
 * socket to the parent, carrying one JSON value per line (UTF-8, "\n"-terminated) each way.
 *
 * - A line holding an object with an `id` (a number or a string) is a request: the parent calls
 *   its handler with the object and writes back `{"id": <same>, "result": <value>}`, or
 *   `{"id": <same>, "error": "<message>"}` when the handler throws. Requests are served
 *   concurrently; replies may come in any order.
 * - Any other JSON value is a notification: the handler sees it, in order, and nothing is sent
 *   back.
 *
 * This is how code in the sandbox asks for model calls: the parent holds the keys and applies
 * rate limits, cache, budget and call records in its handler; the child only ever sees what the
 * handler returns, with the values of the parent's secret environment variables replaced by
 * "***" as a last line of defence. Lines past `maxLineBytes`, input past `maxTotalBytes` and
 * unparseable lines are dropped and counted; requests past `maxPending` in flight are answered
 * with an error.
 */
import type { Duplex } from "node:stream";
import { MIN_SECRET_CHARS, scrubKnownSecrets } from "../secrets/scrub.js";

export type MessageHandler = (message: unknown) => unknown | Promise<unknown>;

export interface ChannelLimits {
  /** Longest line accepted from the child (bytes); longer ones are dropped. */
  maxLineBytes: number;
  /** Bytes read from the child in all; the rest is dropped. */
  maxTotalBytes: number;
  /** Requests the handler may be serving at once; more are refused with an error reply. */
  maxPending: number;
}

export const DEFAULT_CHANNEL_LIMITS: ChannelLimits = {
  maxLineBytes: 4 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  maxPending: 64,
};

export interface ChannelStats {
  /** Lines received and parsed. */
  received: number;
  /** Requests answered (with a result or an error). */
  replied: number;
  /** Lines dropped: too long, unparseable, past the byte budget. */
  dropped: number;
}

/** Names of environment variables whose values count as secrets. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION/i;

/** The values of the parent's secret-looking environment variables, longest first. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= MIN_SECRET_CHARS && SECRET_NAME.test(name)) {
      values.add(value);
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** The parent's end of the channel: reads requests and notifications, writes replies. */
export class MessageChannel {
  readonly stats: ChannelStats = { received: 0, replied: 0, dropped: 0 };
  private readonly limits: ChannelLimits;
  private pending = 0;
  private totalBytes = 0;
  private chunks: Buffer[] = [];
  private lineBytes = 0;
  /** Inside an over-long line: everything up to its newline is dropped. */
  private skipping = false;
  private closed = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly socket: Duplex,
    private readonly handler: MessageHandler | undefined,
    private readonly secrets: readonly string[],
    limits: Partial<ChannelLimits> = {},
  ) {
    this.limits = { ...DEFAULT_CHANNEL_LIMITS, ...limits };
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", () => {
      this.closed = true;
    });
    socket.on("close", () => {
      this.closed = true;
    });
  }

  /** Resolves once every request received so far has been answered (or given up). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stops replying (the child is gone or the run is over). */
  close(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.totalBytes >= this.limits.maxTotalBytes) return;
    const room = this.limits.maxTotalBytes - this.totalBytes;
    this.totalBytes += chunk.length;
    if (chunk.length > room) {
      chunk = chunk.subarray(0, room);
      this.stats.dropped++;
    }
    let start = 0;
    let newline = chunk.indexOf(10, start);
    while (newline >= 0) {
      this.append(chunk.subarray(start, newline));
      this.endLine();
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    this.append(chunk.subarray(start));
  }

  private append(part: Buffer): void {
    if (part.length === 0 || this.skipping) return;
    this.lineBytes += part.length;
    if (this.lineBytes > this.limits.maxLineBytes) {
      this.skipping = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(part);
  }

  private endLine(): void {
    if (this.skipping) {
      this.skipping = false;
      this.stats.dropped++;
    } else if (this.lineBytes > 0) {
      this.handleLine(Buffer.concat(this.chunks).toString("utf8"));
    }
    this.chunks = [];
    this.lineBytes = 0;
  }

  private handleLine(line: string): void {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.stats.dropped++;
      return;
    }
    this.stats.received++;
    const id = requestId(message);
    if (id === undefined) {
      try {
        const result = this.handler?.(message);
        if (result instanceof Promise) result.catch(() => {});
      } catch {
        // A notification's handler failing concerns the handler alone.
      }
      return;
    }
    if (this.pending >= this.limits.maxPending) {
      this.reply({ id, error: `too many requests in flight (at most ${this.limits.maxPending})` });
      return;
    }
    this.pending++;
    const served = (async () => {
      try {
        if (!this.handler) throw new Error("this sandbox serves no requests");
        const result = await this.handler(message);
        this.reply(result === undefined ? { id } : { id, result });
      } catch (error) {
        this.reply({ id, error: error instanceof Error ? error.message : String(error) });
      } finally {
        this.pending--;
      }
    })();
    this.inFlight.add(served);
    served.finally(() => this.inFlight.delete(served));
  }

  private reply(message: { id: string | number; result?: unknown; error?: string }): void {
    if (this.closed || this.socket.destroyed || !this.socket.writable) return;
    let line: string;
    try {
      line = scrubKnownSecrets(JSON.stringify(message), this.secrets);
    } catch (error) {
      line = JSON.stringify({ id: message.id, error: `the reply is not JSON: ${String(error)}` });
    }
    if (Buffer.byteLength(line) > this.limits.maxLineBytes) {
      line = JSON.stringify({ id: message.id, error: "the reply is too large for the channel" });
    }
    this.stats.replied++;
    this.socket.write(`${line}\n`);
  }
}

function requestId(message: unknown): string | number | undefined {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return undefined;
  const id = (message as { id?: unknown }).id;
  return typeof id === "number" || typeof id === "string" ? id : undefined;
}
