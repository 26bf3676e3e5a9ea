/**
 * Per-model admission control: a cap on calls in flight and on calls started per minute.
 *
 * The per-minute limit is a sliding window (a log of the last N start times), not a token
 * bucket: at most `requestsPerMinute` calls start in ANY 60 s window, which is the promise a
 * provider's RPM quota makes. Waiters are served strictly FIFO; a blocked head blocks those
 * behind it, so nobody starves. Waiting is event-driven: a finished call or one timer set for
 * the exact moment the window frees a slot; nothing polls.
 */
import { z } from "zod";

export const RATE_WINDOW_MS = 60_000;
/** setTimeout clamps larger delays to 1 ms; the window delay never comes near this anyway. */
const MAX_TIMER_MS = 2_147_483_647;

export interface RateLimitOptions {
  /** Most calls in flight at once; unset = unlimited. */
  maxConcurrency?: number;
  /** Most calls started in any sliding 60 s window; unset = unlimited. */
  requestsPerMinute?: number;
  /** Monotonic clock in ms; injectable for tests. */
  now?: () => number;
}

export interface RateLimiter {
  /** Runs `fn` once admitted. Aborting `signal` while queued rejects with its reason. */
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Calls running now. */
  readonly inFlight: number;
  /** Calls waiting to start. */
  readonly queued: number;
}

const positiveInt = z.number().int().positive();
/** Validates limits from configuration. */
export const rateLimitOptionsSchema = z.object({
  maxConcurrency: positiveInt.optional(),
  requestsPerMinute: positiveInt.optional(),
});

interface Waiter {
  admit: () => void;
}

function callNow<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** No limits: no bookkeeping at all, just the call (this sits on every call of a benchmark). */
function createUnlimited(): RateLimiter {
  let inFlight = 0;
  return {
    run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      inFlight++;
      return callNow(fn).finally(() => {
        inFlight--;
      });
    },
    get inFlight() {
      return inFlight;
    },
    queued: 0,
  };
}

export function createRateLimiter(options: RateLimitOptions = {}): RateLimiter {
  const { maxConcurrency, requestsPerMinute } = rateLimitOptionsSchema.parse({
    maxConcurrency: options.maxConcurrency,
    requestsPerMinute: options.requestsPerMinute,
  });
  if (maxConcurrency === undefined && requestsPerMinute === undefined) return createUnlimited();

  const now = options.now ?? (() => performance.now());
  const concurrencyCap = maxConcurrency ?? Number.POSITIVE_INFINITY;
  // Ring buffer of the last `requestsPerMinute` start times; `starts[next]` is the oldest.
  const starts: number[] = [];
  let next = 0;
  // A Set iterates in insertion order (FIFO) and deletes in O(1) when a waiter aborts.
  const waiters = new Set<Waiter>();
  let inFlight = 0;
  let windowTimer: ReturnType<typeof setTimeout> | undefined;

  /** Milliseconds until the window admits another start (0 = now). */
  function windowWaitMs(at: number): number {
    if (requestsPerMinute === undefined || starts.length < requestsPerMinute) return 0;
    return Math.max(0, (starts[next] as number) + RATE_WINDOW_MS - at);
  }

  function recordStart(at: number): void {
    if (requestsPerMinute === undefined) return;
    if (starts.length < requestsPerMinute) starts.push(at);
    else {
      starts[next] = at;
      next = (next + 1) % requestsPerMinute;
    }
  }

  function pump(): void {
    while (waiters.size > 0 && inFlight < concurrencyCap) {
      const at = now();
      const waitMs = windowWaitMs(at);
      if (waitMs > 0) {
        if (windowTimer === undefined) {
          windowTimer = setTimeout(
            () => {
              windowTimer = undefined;
              pump();
            },
            Math.min(Math.ceil(waitMs), MAX_TIMER_MS),
          );
        }
        return;
      }
      const head = waiters.values().next().value as Waiter;
      waiters.delete(head);
      inFlight++;
      recordStart(at);
      head.admit();
    }
  }

  function release(): void {
    inFlight--;
    pump();
  }

  function start<T>(fn: () => Promise<T>): Promise<T> {
    return callNow(fn).finally(release);
  }

  return {
    run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      // Fast path: nobody waiting and room now (keeps FIFO: a queue means we wait our turn).
      if (waiters.size === 0 && inFlight < concurrencyCap) {
        const at = now();
        if (windowWaitMs(at) === 0) {
          inFlight++;
          recordStart(at);
          return start(fn);
        }
      }
      return new Promise<T>((resolve, reject) => {
        const onAbort = () => {
          waiters.delete(waiter);
          reject(signal?.reason);
          // A timer with nobody to admit would only keep the process alive after a Ctrl-C.
          if (waiters.size === 0 && windowTimer !== undefined) {
            clearTimeout(windowTimer);
            windowTimer = undefined;
          }
        };
        const waiter: Waiter = {
          admit: () => {
            signal?.removeEventListener("abort", onAbort);
            start(fn).then(resolve, reject);
          },
        };
        waiters.add(waiter);
        signal?.addEventListener("abort", onAbort, { once: true });
        pump();
      });
    },
    get inFlight() {
      return inFlight;
    },
    get queued() {
      return waiters.size;
    },
  };
}
