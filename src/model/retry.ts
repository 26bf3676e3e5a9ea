/**
 * Retries a model call with exponential backoff and full jitter, honouring the server's
 * Retry-After, with a timeout per attempt. A caller's abort stops everything at once.
 */
import { z } from "zod";
import { toModelError } from "./http-errors.js";
import { ModelError } from "./types.js";

export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_BASE_DELAY_MS = 500;
export const DEFAULT_MAX_DELAY_MS = 30_000;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRY_AFTER_MS = 120_000;
/** setTimeout fires at once (with a warning) for delays above this; we clamp to it. */
const MAX_TIMER_MS = 2_147_483_647;

export interface RetryPolicy {
  /** Retries after the first attempt (so at most maxRetries + 1 attempts). */
  maxRetries?: number;
  /** Backoff ceiling for the first retry; doubles with each further retry. */
  baseDelayMs?: number;
  /** Backoff never exceeds this (Retry-After may, up to maxRetryAfterMs). */
  maxDelayMs?: number;
  /** Each attempt is aborted after this long and counts as a retryable timeout; 0 = none. */
  attemptTimeoutMs?: number;
  /** A server asking us to wait longer than this gets a clear error instead of a stalled run. */
  maxRetryAfterMs?: number;
}

export type ResolvedRetryPolicy = Required<RetryPolicy>;

const nonNegativeInt = z.number().int().nonnegative();

/** Validates a policy from configuration; missing fields take the defaults. */
export const retryPolicySchema = z
  .object({
    maxRetries: nonNegativeInt.default(DEFAULT_MAX_RETRIES),
    baseDelayMs: nonNegativeInt.default(DEFAULT_BASE_DELAY_MS),
    maxDelayMs: nonNegativeInt.default(DEFAULT_MAX_DELAY_MS),
    attemptTimeoutMs: nonNegativeInt.default(DEFAULT_ATTEMPT_TIMEOUT_MS),
    maxRetryAfterMs: nonNegativeInt.default(DEFAULT_MAX_RETRY_AFTER_MS),
  })
  .strict();

/** Policies are usually one object per model; validating it once keeps per-call cost small. */
const resolvedPolicies = new WeakMap<RetryPolicy, ResolvedRetryPolicy>();

export function resolveRetryPolicy(policy: RetryPolicy = {}): ResolvedRetryPolicy {
  const cached = resolvedPolicies.get(policy);
  if (cached !== undefined) return cached;
  const resolved = retryPolicySchema.parse(policy);
  resolvedPolicies.set(policy, resolved);
  return resolved;
}

export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  attempt: number;
  /** How long we wait before the next attempt. */
  delayMs: number;
  error: ModelError;
}

/** Anything that can gate an attempt, e.g. a RateLimiter: queue time is not attempt time. */
export interface AttemptGate {
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** Where a call's time went, in milliseconds. */
export interface CallTiming {
  /** Waiting for the model's limiter (concurrency, requests per minute), over all attempts. */
  queueMs: number;
  /** At the provider: every attempt from admission to its reply or failure. */
  providerMs: number;
  /** Sleeping between attempts (backoff, Retry-After). */
  retryMs: number;
}

type Phase = "queue" | "provider" | "retry";
const PHASE_FIELD = { queue: "queueMs", provider: "providerMs", retry: "retryMs" } as const;

/**
 * Splits a call's time by phase as withRetries goes, so latency is the provider's time alone.
 * Readable at any moment (a call abandoned mid-wait counts its wait so far).
 */
export class PhaseClock implements CallTiming {
  queueMs = 0;
  providerMs = 0;
  retryMs = 0;
  private phase: Phase | undefined;
  private since = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Ends the current phase, if any, and starts `phase`. */
  enter(phase: Phase): void {
    this.leave();
    this.phase = phase;
    this.since = this.now();
  }

  /** Ends the current phase, adding its time. */
  leave(): void {
    if (this.phase === undefined) return;
    this[PHASE_FIELD[this.phase]] += this.now() - this.since;
    this.phase = undefined;
  }

  /** The times so far, the phase in progress included. */
  snapshot(): CallTiming {
    const timing = { queueMs: this.queueMs, providerMs: this.providerMs, retryMs: this.retryMs };
    if (this.phase !== undefined) timing[PHASE_FIELD[this.phase]] += this.now() - this.since;
    return timing;
  }
}

export interface RetryOptions {
  /** The caller's signal: aborting it rejects at once with its reason; no further attempts. */
  signal?: AbortSignal;
  onRetry?: (info: RetryInfo) => void;
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** Returns [0, 1); injected for deterministic tests. */
  random?: () => number;
  /** Turns a thrown value into a ModelError; defaults to toModelError without context. */
  classify?: (error: unknown) => ModelError;
  /** Each attempt waits here first; its timeout starts only once the gate lets it through. */
  gate?: AttemptGate;
  /** Told where the time goes: the gate's queue, the attempts, the sleeps between them. */
  clock?: PhaseClock;
}

/**
 * Full-jitter backoff before retry number `retryIndex` (0 for the first retry):
 * uniform in [0, min(maxDelayMs, baseDelayMs * 2^retryIndex)).
 */
export function backoffDelayMs(
  retryIndex: number,
  policy: Pick<ResolvedRetryPolicy, "baseDelayMs" | "maxDelayMs">,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return Math.floor(random() * ceiling);
}

/** setTimeout as a promise that rejects with the signal's reason on abort. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function attemptsText(attempts: number): string {
  return attempts === 1 ? "1 attempt" : `${attempts} attempts`;
}

/** The last error, restated with how many attempts were made. */
function giveUp(error: ModelError, attempts: number, reason?: string): ModelError {
  const why = reason ? `; ${reason}` : "";
  return new ModelError(`${error.message} (gave up after ${attemptsText(attempts)}${why})`, {
    retryable: error.retryable,
    cause: error,
    ...(error.options.status === undefined ? {} : { status: error.options.status }),
    ...(error.options.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: error.options.retryAfterSeconds }),
  });
}

/**
 * Runs one attempt with its own signal, aborted by the outer signal or by the attempt timeout.
 * Settles as soon as that signal fires, even if `attempt` ignores it (a hung socket must not
 * hang the run).
 */
function runAttempt<T>(
  attempt: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  outer: AbortSignal | undefined,
): Promise<T> {
  const controller = new AbortController();
  const signal = controller.signal;
  const onOuterAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  const timer =
    timeoutMs > 0
      ? setTimeout(
          () =>
            controller.abort(
              new ModelError(`model call timed out after ${timeoutMs} ms`, { retryable: true }),
            ),
          Math.min(timeoutMs, MAX_TIMER_MS),
        )
      : undefined;

  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    let running: Promise<T>;
    try {
      running = attempt(signal);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(resolve, (error: unknown) =>
      // Once our signal fired, its reason says what happened better than whatever the SDK threw
      // (the SDKs report any abort of the signal we pass as a user abort).
      reject(signal.aborted ? signal.reason : error),
    );
  }).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
  });
}

/**
 * Calls `attempt` until it succeeds, a non-retryable error occurs, retries run out, or the
 * caller aborts. Retryable errors wait full-jitter backoff, or exactly the server's Retry-After
 * when it gave one (servers know when capacity frees up; the rate limiter prevents stampedes).
 */
export async function withRetries<T>(
  attempt: (signal: AbortSignal) => Promise<T>,
  policy: RetryPolicy,
  options: RetryOptions = {},
): Promise<T> {
  const resolved = resolveRetryPolicy(policy);
  const { signal } = options;
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const classify = options.classify ?? ((error: unknown) => toModelError(error));
  const { clock } = options;
  const runOnce = () => {
    clock?.enter("provider");
    return runAttempt(attempt, resolved.attemptTimeoutMs, signal);
  };
  const gated = (gate: AttemptGate) => {
    clock?.enter("queue");
    return gate.run(runOnce, signal);
  };

  for (let attemptNumber = 1; ; attemptNumber++) {
    if (signal?.aborted) throw signal.reason;
    try {
      try {
        return await (options.gate ? gated(options.gate) : runOnce());
      } finally {
        clock?.leave();
      }
    } catch (thrown) {
      if (signal?.aborted) throw signal.reason;
      const error = classify(thrown);
      if (!error.retryable) throw attemptNumber === 1 ? error : giveUp(error, attemptNumber);
      if (attemptNumber > resolved.maxRetries) throw giveUp(error, attemptNumber);

      const retryAfterSeconds = error.options.retryAfterSeconds;
      let delayMs: number;
      if (retryAfterSeconds === undefined) {
        delayMs = backoffDelayMs(attemptNumber - 1, resolved, random);
      } else {
        delayMs = Math.ceil(retryAfterSeconds * 1000);
        if (delayMs > resolved.maxRetryAfterMs) {
          const reason =
            `the server asked to wait ${retryAfterSeconds} s, more than the ` +
            `${resolved.maxRetryAfterMs / 1000} s allowed (maxRetryAfterMs)`;
          throw giveUp(error, attemptNumber, reason);
        }
      }
      options.onRetry?.({ attempt: attemptNumber, delayMs, error });
      clock?.enter("retry");
      try {
        await sleep(delayMs, signal);
      } finally {
        clock?.leave();
      }
    }
  }
}
