/**
 * A production model client: provider SDK, then retries (retry.ts), then per-model limits
 * (rate-limit.ts), then the response cache, with usage, cost and latency accounted per call.
 */

import { type CacheMode, cacheKey, type ResponseCache } from "./cache.js";
import type { AccountedModel, CallMeta } from "./call-record.js";
import { FailedCallError } from "./call-record.js";
import { toModelError } from "./http-errors.js";
import { costUsd } from "./pricing.js";
import { createAnthropicModel } from "./providers/anthropic.js";
import { createOpenAIModel } from "./providers/openai.js";
import { createRateLimiter } from "./rate-limit.js";
import type { ResolvedModel } from "./resolve.js";
import { type RetryPolicy, withRetries } from "./retry.js";
import type { Model, ModelRequest, ModelResponse } from "./types.js";

export interface ModelClientOptions {
  cache?: ResponseCache;
  cacheMode?: CacheMode;
  /** Overrides of the default retry policy (tests shorten the delays). */
  retry?: Partial<RetryPolicy>;
  /** Called after every call that reached the provider or the cache, with its cost. */
  onSpend?: (costUsd: number) => void;
}

/** The provider client for a resolved model, without retries or limits. */
export function createProviderModel(model: ResolvedModel): Model {
  if (model.spec.provider === "anthropic") {
    return createAnthropicModel({
      spec: model.spec,
      ...(model.apiKey ? { apiKey: model.apiKey } : {}),
      ...(model.spec.baseUrl ? { baseUrl: model.spec.baseUrl } : {}),
    });
  }
  return createOpenAIModel({
    spec: model.spec,
    ...(model.apiKey ? { apiKey: model.apiKey } : {}),
    stream: model.stream,
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

  async function completeWithMeta(
    request: ModelRequest,
    signal?: AbortSignal,
  ): Promise<{ response: ModelResponse; meta: CallMeta }> {
    const withDefaults: ModelRequest = {
      ...request,
      params: { ...model.params, ...request.params },
    };
    const key =
      options.cache && cacheMode !== "off" ? cacheKey(provider.id, endpoint, withDefaults) : "";
    if (reads && options.cache) {
      const hit = options.cache.get(key);
      if (hit) {
        return {
          response: hit,
          meta: { usage: hit.usage, costUsd: 0, latencyMs: null, cacheHit: true, attempts: 0 },
        };
      }
    }
    const start = performance.now();
    let attempts = 0;
    try {
      const response = await withRetries(
        (attemptSignal) => {
          attempts++;
          return provider.complete(withDefaults, attemptSignal);
        },
        policy,
        {
          ...(signal ? { signal } : {}),
          // Every attempt, retries included, waits for the model's limits.
          gate: limiter,
          classify: (error) =>
            toModelError(error, {
              ...(model.spec.baseUrl ? { baseUrl: model.spec.baseUrl } : {}),
              ...(model.apiKey ? { secrets: [model.apiKey] } : {}),
            }),
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
          latencyMs: performance.now() - start,
          cacheHit: false,
          attempts,
        },
      };
    } catch (error) {
      throw new FailedCallError(error, {
        usage: { inputTokens: 0, outputTokens: 0 },
        costUsd: 0,
        latencyMs: performance.now() - start,
        cacheHit: false,
        attempts,
      });
    }
  }

  return {
    id: provider.id,
    completeWithMeta,
    complete: async (request, signal) => {
      try {
        return (await completeWithMeta(request, signal)).response;
      } catch (error) {
        throw error instanceof FailedCallError ? error.original : error;
      }
    },
  };
}
