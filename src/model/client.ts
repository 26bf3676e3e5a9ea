/**
 * A production model client: provider SDK, then retries (retry.ts), then per-model limits
 * (rate-limit.ts), then the response cache, with usage, cost (or that the model has no price)
 * and time accounted per call: latency is the provider's alone, the limiter's queue and the
 * sleeps between retries are counted apart.
 * Every reply is checked against the model's size limit (reply-limit.ts) and scrubbed of the
 * model's secrets (secrets.ts) before anyone sees it: the agent, the cache, the store.
 */

import { type CacheMode, cacheKey, type ResponseCache } from "./cache.js";
import type { AccountedModel, CallMeta, CallProgress } from "./call-record.js";
import { FailedCallError, timingMeta } from "./call-record.js";
import { toModelError } from "./http-errors.js";
import { costUsd } from "./pricing.js";
import { createAnthropicModel } from "./providers/anthropic.js";
import { createOpenAIModel } from "./providers/openai.js";
import { createRateLimiter } from "./rate-limit.js";
import { checkReplySize, DEFAULT_MAX_REPLY_BYTES, isUsableReply } from "./reply-limit.js";
import type { ResolvedModel } from "./resolve.js";
import { PhaseClock, type RetryPolicy, withRetries } from "./retry.js";
import { modelSecrets, scrubDeep } from "./secrets.js";
import type { Model, ModelRequest, ModelResponse } from "./types.js";

export { DEFAULT_MAX_REPLY_BYTES, ReplyTooLargeError } from "./reply-limit.js";

/**
 * A cached reply's stored JSON may exceed the reply by its escapes (at most six bytes per byte,
 * for \u00XX); entries beyond that cannot hold a reply within the limit and are not even read.
 */
function maxCacheEntryBytes(maxReplyBytes: number): number {
  return maxReplyBytes * 6 + 64 * 1024;
}

export interface ModelClientOptions {
  cache?: ResponseCache;
  cacheMode?: CacheMode;
  /** Overrides of the default retry policy (tests shorten the delays). */
  retry?: Partial<RetryPolicy>;
  /**
   * Called after every call that reached the provider, with its cost (0 when the model is
   * unpriced: see assertPricedForBudget before trusting a budget to it).
   */
  onSpend?: (costUsd: number) => void;
}

/** The provider client for a resolved model, without retries or limits. */
export function createProviderModel(model: ResolvedModel): Model {
  const limit = model.maxReplyBytes ? { maxReplyBytes: model.maxReplyBytes } : {};
  if (model.spec.provider === "anthropic") {
    return createAnthropicModel({
      spec: model.spec,
      ...(model.apiKey ? { apiKey: model.apiKey } : {}),
      ...(model.spec.baseUrl ? { baseUrl: model.spec.baseUrl } : {}),
      ...limit,
    });
  }
  return createOpenAIModel({
    spec: model.spec,
    ...(model.apiKey ? { apiKey: model.apiKey } : {}),
    stream: model.stream,
    ...limit,
  });
}

export function createModelClient(
  model: ResolvedModel,
  options: ModelClientOptions = {},
  provider: Model = createProviderModel(model),
): AccountedModel {
  const cacheMode = options.cache ? (options.cacheMode ?? "rw") : "off";
  const reads = cacheMode === "read" || cacheMode === "rw";
  const writes = cacheMode === "write" || cacheMode === "rw";
  const limiter = createRateLimiter({
    ...(model.maxConcurrency ? { maxConcurrency: model.maxConcurrency } : {}),
    ...(model.requestsPerMinute ? { requestsPerMinute: model.requestsPerMinute } : {}),
  });
  const policy: Partial<RetryPolicy> = {
    ...(model.maxRetries !== undefined ? { maxRetries: model.maxRetries } : {}),
    ...(model.timeoutMs ? { attemptTimeoutMs: model.timeoutMs } : {}),
    ...options.retry,
  };
  const endpoint = model.spec.baseUrl ?? model.spec.provider;
  const maxReplyBytes = model.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  const secrets = modelSecrets(model);
  const unpriced = model.price === undefined;
  const pricing = unpriced ? { unpriced: true as const } : {};
  const scrub = <T>(value: T): T => scrubDeep(value, secrets);
  const errorContext = {
    ...(model.spec.baseUrl ? { baseUrl: model.spec.baseUrl } : {}),
    secrets,
  };

  /** A cached reply fit to replay; a malformed or oversized entry is dropped instead. */
  function cachedReply(cache: ResponseCache, key: string): ModelResponse | undefined {
    const hit: unknown = cache.get(key, { maxBytes: maxCacheEntryBytes(maxReplyBytes) });
    if (hit === undefined) return undefined;
    if (!isUsableReply(hit, maxReplyBytes)) {
      cache.delete?.(key);
      return undefined;
    }
    return scrub(hit);
  }

  async function completeWithMeta(
    request: ModelRequest,
    signal?: AbortSignal,
    progress: CallProgress = { attempts: 0, attemptErrors: [] },
  ): Promise<{ response: ModelResponse; meta: CallMeta }> {
    const withDefaults: ModelRequest = {
      ...request,
      params: { ...model.params, ...request.params },
    };
    const key =
      options.cache && cacheMode !== "off" ? cacheKey(provider.id, endpoint, withDefaults) : "";
    if (reads && options.cache) {
      const hit = cachedReply(options.cache, key);
      if (hit) {
        return {
          response: hit,
          meta: { usage: hit.usage, costUsd: 0, latencyMs: null, cacheHit: true, attempts: 0 },
        };
      }
    }
    const clock = progress.clock ?? new PhaseClock();
    progress.clock = clock;
    const attemptErrors = () =>
      progress.attemptErrors.length > 0 ? { attemptErrors: [...progress.attemptErrors] } : {};
    try {
      const response = await withRetries(
        async (attemptSignal) => {
          progress.attempts++;
          const reply = await provider.complete(withDefaults, attemptSignal);
          checkReplySize(reply, maxReplyBytes);
          return scrub(reply);
        },
        policy,
        {
          ...(signal ? { signal } : {}),
          // Every attempt, retries included, waits for the model's limits.
          gate: limiter,
          clock,
          // Called once per failed attempt: its reason is kept for the call's record.
          classify: (error) => {
            const classified = toModelError(error, errorContext);
            progress.attemptErrors.push(classified.message);
            return classified;
          },
        },
      );
      const cost = costUsd(response.usage, model.price);
      options.onSpend?.(cost);
      if (writes && options.cache) options.cache.set(key, provider.id, response);
      return {
        response,
        meta: {
          usage: response.usage,
          costUsd: cost,
          ...pricing,
          ...timingMeta(clock, progress.attempts),
          cacheHit: false,
          attempts: progress.attempts,
          ...attemptErrors(),
        },
      };
    } catch (error) {
      throw new FailedCallError(error, {
        usage: { inputTokens: 0, outputTokens: 0 },
        costUsd: 0,
        ...pricing,
        ...timingMeta(clock, progress.attempts),
        cacheHit: false,
        attempts: progress.attempts,
        ...attemptErrors(),
      });
    }
  }

  return {
    id: provider.id,
    completeWithMeta,
    scrub,
    unpriced,
    complete: async (request, signal) => {
      try {
        return (await completeWithMeta(request, signal)).response;
      } catch (error) {
        throw error instanceof FailedCallError ? error.original : error;
      }
    },
  };
}
