/**
 * The response cache's key and interface. The key covers everything that shapes a reply —
 * provider and model, messages, tools, generation parameters — and the sample index, so that
 * the k samples of a task stay k independent draws rather than one cached reply. The
 * log-probability settings are generation parameters (logprobs, topLogprobs, tokenIds), so a
 * reply cached without log-probabilities is never served to a request that asks for them.
 */
import { createHash } from "node:crypto";
import type { ModelRequest, ModelResponse } from "./types.js";

export type CacheMode = "off" | "read" | "write" | "rw";

export const CACHE_MODES: readonly CacheMode[] = ["off", "read", "write", "rw"];

export interface ResponseCache {
  /**
   * The stored reply, or undefined. An entry over `maxBytes` (as stored) is treated as absent
   * without being read; the client validates the rest before replaying it.
   */
  get(key: string, options?: { maxBytes?: number }): ModelResponse | undefined;
  set(key: string, model: string, response: ModelResponse): void;
  /** Drops an entry that must not be replayed (where the cache can be written). */
  delete?(key: string): void;
}

/** Stable JSON: object keys sorted, so that equal requests hash equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** `endpoint` distinguishes servers that serve a model of the same name (base URL). */
export function cacheKey(modelId: string, endpoint: string, request: ModelRequest): string {
  return createHash("sha256")
    .update(
      canonical({
        model: modelId,
        endpoint,
        messages: request.messages,
        tools: request.tools ?? [],
        params: request.params ?? {},
        sample: request.sampleIndex ?? 0,
      }),
    )
    .digest("hex");
}
