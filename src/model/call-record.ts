/**
 * Accounting of model calls: each call's request, response, usage, cost (or that it has no price),
 * latency apart from waiting, and cache status, collected per episode so the runner can store them
 * with the step that made them.
 */
import { PhaseClock } from "./retry.js";
import type { Model, ModelRequest, ModelResponse, Usage } from "./types.js";

export interface ModelCallRecord {
  /** The turn of the episode the call belongs to (set by the runner). */
  turn: number;
  model: string;
  request: ModelRequest;
  /** Absent when the call failed. */
  response?: ModelResponse;
  error?: string;
  usage: Usage;
  /** In USD; 0 when the call is unpriced (then `unpriced` says the cost is unknown). */
  costUsd: number;
  /**
   * The model had no price when the call was made (a local server, an unknown name): its cost is
   * unknown, not 0, and reports say "unpriced". Absent when priced; a cache hit is always priced
   * (it costs nothing).
   */
  unpriced?: true;
  /**
   * The provider's time: every attempt from the moment the limiter admitted it to its reply or
   * failure, waiting excluded (see queueMs, retryMs); null for cache hits and calls that never
   * reached the provider.
   */
  latencyMs: number | null;
  /** Waiting for the model's limiter, over all attempts; absent for cache hits. */
  queueMs?: number;
  /** Sleeping between attempts (backoff, Retry-After); absent for cache hits. */
  retryMs?: number;
  cacheHit: boolean;
  /** Provider attempts made (1 = no retry; 0 for a cache hit or a call abandoned in the queue). */
  attempts: number;
  /**
   * Why each failed attempt failed, in order (timeouts, 5xx, dropped connections, oversized
   * replies, 4xx, abandonment); absent when every attempt succeeded. A call retried into success
   * keeps its failed attempts here.
   */
  attemptErrors?: string[];
  startedAt: string;
}

/** What a model client reports about one call besides the response. */
export interface CallMeta {
  usage: Usage;
  costUsd: number;
  unpriced?: true;
  latencyMs: number | null;
  queueMs?: number;
  retryMs?: number;
  cacheHit: boolean;
  attempts: number;
  attemptErrors?: string[];
}

/** A call's progress so far, updated by the client as it goes (read if the call is abandoned). */
export interface CallProgress {
  attempts: number;
  attemptErrors: string[];
  /** Where the call's time has gone so far (the client creates one when absent). */
  clock?: PhaseClock;
}

/** The timing fields of a call's meta: provider time as latency, waits apart. */
export function timingMeta(
  clock: PhaseClock,
  attempts: number,
): Pick<CallMeta, "latencyMs" | "queueMs" | "retryMs"> {
  const t = clock.snapshot();
  return {
    latencyMs: attempts > 0 ? t.providerMs : null,
    queueMs: t.queueMs,
    retryMs: t.retryMs,
  };
}

/** A model that also reports the accounting of each call (see client.ts). */
export interface AccountedModel extends Model {
  completeWithMeta(
    request: ModelRequest,
    signal?: AbortSignal,
    progress?: CallProgress,
  ): Promise<{ response: ModelResponse; meta: CallMeta }>;
  /** Removes the model's secrets from anything about to be recorded (see secrets.ts). */
  scrub?<T>(value: T): T;
  /** The model has no price: its calls are recorded as unpriced. */
  readonly unpriced?: boolean;
}

/** Whether a model reports each call's accounting (clade's client), or is a plain Model. */
export function isAccounted(model: Model): model is AccountedModel {
  return typeof (model as Partial<AccountedModel>).completeWithMeta === "function";
}

/** Carries the accounting of a failed call to whoever records it. */
export class FailedCallError extends Error {
  override name = "FailedCallError";
  constructor(
    readonly original: unknown,
    readonly meta: CallMeta,
  ) {
    super(original instanceof Error ? original.message : String(original));
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Wraps a model for one episode and keeps a record of every call; take() hands over the records
 * made since the last take (the runner calls it after each turn). A call still running when the
 * caller's signal aborts (the episode's deadline) is recorded at that moment as abandoned, so the
 * runner, which takes the records right after the abort, never loses it.
 */
export class CallRecorder implements Model {
  private records: ModelCallRecord[] = [];

  constructor(private readonly inner: Model | AccountedModel) {}

  get id(): string {
    return this.inner.id;
  }

  private scrub<T>(value: T): T {
    const inner = this.inner as Partial<AccountedModel>;
    return inner.scrub ? inner.scrub(value) : value;
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    const startedAt = new Date().toISOString();
    const start = performance.now();
    const base = { turn: -1, model: this.inner.id, request: this.scrub(request), startedAt };
    const accounted = isAccounted(this.inner);
    const progress: CallProgress = {
      attempts: 0,
      attemptErrors: [],
      ...(accounted ? { clock: new PhaseClock() } : {}),
    };
    // A plain Model says nothing of prices, so its calls are unpriced.
    const unpriced = accounted ? (this.inner as AccountedModel).unpriced === true : true;
    const pricing = unpriced ? { unpriced: true as const } : {};
    /** Time so far: split by phase for a client, wall-clock for a plain Model. */
    const timing = (): Pick<CallMeta, "latencyMs" | "queueMs" | "retryMs"> =>
      progress.clock
        ? timingMeta(progress.clock, progress.attempts)
        : { latencyMs: performance.now() - start };
    let recorded = false;
    const record = (entry: ModelCallRecord) => {
      if (recorded) return;
      recorded = true;
      this.records.push(entry);
    };
    const failed = (message: string, meta: CallMeta): ModelCallRecord => ({
      ...base,
      error: this.scrub(message),
      ...meta,
      ...(meta.attemptErrors?.length ? { attemptErrors: this.scrub(meta.attemptErrors) } : {}),
    });
    const onAbort = () => {
      const message = `model call abandoned: ${errorText(signal?.reason)}`;
      // The attempt in flight, if any, failed by being abandoned.
      const inFlight = progress.attempts > progress.attemptErrors.length;
      const attemptErrors = inFlight
        ? [...progress.attemptErrors, message]
        : [...progress.attemptErrors];
      record(
        failed(message, {
          usage: { inputTokens: 0, outputTokens: 0 },
          costUsd: 0,
          ...pricing,
          ...timing(),
          cacheHit: false,
          attempts: progress.attempts,
          ...(attemptErrors.length > 0 ? { attemptErrors } : {}),
        }),
      );
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (accounted) {
        const { response, meta } = await (this.inner as AccountedModel).completeWithMeta(
          request,
          signal,
          progress,
        );
        record({ ...base, response, ...meta });
        return response;
      }
      const response = await this.inner.complete(request, signal);
      record({
        ...base,
        response,
        usage: response.usage,
        costUsd: 0,
        ...pricing,
        latencyMs: performance.now() - start,
        cacheHit: false,
        attempts: 1,
      });
      return response;
    } catch (error) {
      const meta: CallMeta =
        error instanceof FailedCallError
          ? error.meta
          : {
              usage: { inputTokens: 0, outputTokens: 0 },
              costUsd: 0,
              ...pricing,
              ...timing(),
              cacheHit: false,
              attempts: Math.max(progress.attempts, 1),
              attemptErrors: [errorText(error)],
            };
      const original = error instanceof FailedCallError ? error.original : error;
      record(failed(errorText(original), meta));
      throw original;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  take(): ModelCallRecord[] {
    const taken = this.records;
    this.records = [];
    return taken;
  }
}
