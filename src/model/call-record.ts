/**
 * Accounting of model calls: each call's request, response, usage, cost, latency and cache status,
 * collected per episode so the runner can store them with the step that made them.
 */
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
  costUsd: number;
  /** Wall-clock milliseconds including retries; null for cache hits (excluded from latency). */
  latencyMs: number | null;
  cacheHit: boolean;
  /** Provider attempts made (1 = no retry; 0 for a cache hit). */
  attempts: number;
  startedAt: string;
}

/** What a model client reports about one call besides the response. */
export interface CallMeta {
  usage: Usage;
  costUsd: number;
  latencyMs: number | null;
  cacheHit: boolean;
  attempts: number;
}

/** A model that also reports the accounting of each call (see client.ts). */
export interface AccountedModel extends Model {
  completeWithMeta(
    request: ModelRequest,
    signal?: AbortSignal,
  ): Promise<{ response: ModelResponse; meta: CallMeta }>;
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

/**
 * Wraps a model for one episode and keeps a record of every call; take() hands over the records
 * made since the last take (the runner calls it after each turn).
 */
export class CallRecorder implements Model {
  private records: ModelCallRecord[] = [];

  constructor(private readonly inner: Model | AccountedModel) {}

  get id(): string {
    return this.inner.id;
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    const startedAt = new Date().toISOString();
    const start = performance.now();
    const base = { turn: -1, model: this.inner.id, request, startedAt };
    try {
      if ("completeWithMeta" in this.inner) {
        const { response, meta } = await this.inner.completeWithMeta(request, signal);
        this.records.push({ ...base, response, ...meta });
        return response;
      }
      const response = await this.inner.complete(request, signal);
      this.records.push({
        ...base,
        response,
        usage: response.usage,
        costUsd: 0,
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
              latencyMs: performance.now() - start,
              cacheHit: false,
              attempts: 1,
            };
      const original = error instanceof FailedCallError ? error.original : error;
      this.records.push({
        ...base,
        error: original instanceof Error ? original.message : String(original),
        ...meta,
      });
      throw original;
    }
  }

  take(): ModelCallRecord[] {
    const taken = this.records;
    this.records = [];
    return taken;
  }
}
