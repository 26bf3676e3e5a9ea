/**
 * Live updates: one loop per server polls the store's version (PRAGMA data_version moves when
 * another process commits) while any page listens, and tells every page over server-sent events;
 * the page then fetches again what it shows. Nothing is pushed but the version number, so a page
 * never holds data the API would not give it.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { StoreView } from "./store-view.js";

/** How often the store's version is read while a page listens (0.1 ms a read). */
export const POLL_MS = 300;
/** A comment now and then, so proxies and browsers keep an idle stream open. */
const HEARTBEAT_MS = 15_000;

export class ChangeFeed {
  #listeners = new Set<(version: number) => void>();
  #timer: NodeJS.Timeout | undefined;
  #version = -1;

  constructor(
    private readonly view: StoreView,
    private readonly pollMs = POLL_MS,
  ) {}

  subscribe(listener: (version: number) => void): () => void {
    this.#listeners.add(listener);
    if (this.#timer === undefined) {
      this.#version = this.view.version();
      this.#timer = setInterval(() => this.#poll(), this.pollMs);
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.stop();
    };
  }

  #poll(): void {
    let version: number;
    try {
      version = this.view.version();
    } catch {
      return; // a store being replaced or locked: the next poll tries again
    }
    if (version === this.#version) return;
    this.#version = version;
    for (const listener of this.#listeners) listener(version);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

export function eventStream(c: Context, feed: ChangeFeed): Response {
  return streamSSE(c, async (stream) => {
    let wake: (() => void) | undefined;
    let pending: number | undefined;
    const unsubscribe = feed.subscribe((version) => {
      pending = version;
      wake?.();
    });
    let open = true;
    stream.onAbort(() => {
      open = false;
      wake?.();
    });
    try {
      await stream.writeSSE({ event: "hello", data: "{}" });
      while (open) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, HEARTBEAT_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        if (!open) break;
        if (pending === undefined) {
          await stream.write(": heartbeat\n\n");
          continue;
        }
        const version = pending;
        pending = undefined;
        await stream.writeSSE({ event: "changed", data: JSON.stringify({ version }) });
      }
    } finally {
      unsubscribe();
    }
  });
}
