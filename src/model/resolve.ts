/**
 * Turns what the user wrote (`--model qwen` naming a config entry, or a spec string) into
 * everything needed to build a client: spec, key, parameters, price and limits.
 */
import type { CladeConfig, ModelEntry } from "./config.js";
import { BUILTIN_PRICES, type Price } from "./pricing.js";
import {
  defaultKeyVariable,
  formatModelSpec,
  type ModelSpec,
  ModelSpecError,
  parseModelSpec,
} from "./spec.js";
import type { GenerationParams } from "./types.js";

export interface ResolvedModel {
  /** The config entry name, or the spec string. */
  name: string;
  spec: ModelSpec;
  /** Never stored, logged or exported. */
  apiKey?: string;
  /** Where the key is looked up, for `clade models`. */
  keyVariable?: string;
  params: GenerationParams;
  price?: Price;
  maxConcurrency?: number;
  requestsPerMinute?: number;
  stream: boolean;
  timeoutMs?: number;
  maxRetries?: number;
  /** Largest reply accepted, in bytes; DEFAULT_MAX_REPLY_BYTES when unset. */
  maxReplyBytes?: number;
}

/** Whether a provider can be used without a key (a local server usually needs none). */
export function keyRequired(spec: ModelSpec): boolean {
  return spec.provider !== "openai-compatible";
}

export class MissingKeyError extends Error {
  override name = "MissingKeyError";
}

export function resolveModel(
  nameOrSpec: string,
  config: CladeConfig,
  environment: NodeJS.ProcessEnv = process.env,
): ResolvedModel {
  const entry: ModelEntry | undefined = config.models[nameOrSpec];
  if (!entry && !nameOrSpec.includes(":")) {
    const known = Object.keys(config.models);
    throw new ModelSpecError(
      `unknown model "${nameOrSpec}"${known.length ? ` (configured: ${known.join(", ")})` : ""}; ` +
        "give a spec such as openai:gpt-4o-mini or name a model in clade.config",
    );
  }
  const spec = parseModelSpec(entry ? entry.model : nameOrSpec);
  const keyVariable = entry?.apiKeyEnv ?? defaultKeyVariable(spec.provider);
  const apiKey = entry?.apiKey ?? environment[keyVariable] ?? undefined;
  const id = formatModelSpec(spec);
  const priceId = spec.provider === "openai-compatible" ? `openai-compatible:${spec.model}` : id;
  const price = entry?.price ?? config.prices[priceId] ?? config.prices[id] ?? BUILTIN_PRICES[id];
  return {
    name: nameOrSpec,
    spec,
    ...(apiKey ? { apiKey } : {}),
    keyVariable: entry?.apiKey ? "(config file)" : keyVariable,
    params: { ...config.defaults.params, ...entry?.params },
    ...(price ? { price } : {}),
    ...(entry?.maxConcurrency ? { maxConcurrency: entry.maxConcurrency } : {}),
    ...(entry?.requestsPerMinute ? { requestsPerMinute: entry.requestsPerMinute } : {}),
    stream: entry?.stream ?? false,
    ...(entry?.timeoutMs ? { timeoutMs: entry.timeoutMs } : {}),
    ...(entry?.maxRetries !== undefined ? { maxRetries: entry.maxRetries } : {}),
    ...(entry?.maxReplyBytes ? { maxReplyBytes: entry.maxReplyBytes } : {}),
  };
}

/** Throws a clear error when a provider that needs a key has none. */
export function checkKey(model: ResolvedModel): void {
  if (!model.apiKey && keyRequired(model.spec)) {
    throw new MissingKeyError(
      `model "${model.name}" needs an API key: set ${model.keyVariable} (or apiKeyEnv in clade.config)`,
    );
  }
}

/**
 * A spec fit for the store: credentials a base URL may carry (user:pass@, or a key in the query
 * string) are dropped.
 */
export function publicModelSpec(model: Pick<ResolvedModel, "spec">): string {
  if (!model.spec.baseUrl) return formatModelSpec(model.spec);
  const url = new URL(model.spec.baseUrl);
  url.username = "";
  url.password = "";
  url.search = "";
  url.hash = "";
  return formatModelSpec({ ...model.spec, baseUrl: url.toString().replace(/\/+$/, "") });
}
