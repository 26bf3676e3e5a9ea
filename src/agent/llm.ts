/**
 * An LLM agent in one call, built as `clade eval --model` builds it: the model resolved from a
 * spec or a clade.config name, its key checked, a client with retries, limits, accounting and
 * (with a store) the response cache, and a call recorder per episode so every model call is
 * stored with the turn that made it.
 *
 * This is the one module of src/agent that reaches into src/store: for the response cache, which
 * lives in the run store's SQLite file.
 */
import type { CacheMode } from "../model/cache.js";
import type { AccountedModel } from "../model/call-record.js";
import { createModelClient } from "../model/client.js";
import { type CladeConfig, loadConfig, parseConfig } from "../model/config.js";
import { checkKey, publicModelSpec, type ResolvedModel, resolveModel } from "../model/resolve.js";
import type { RetryPolicy } from "../model/retry.js";
import { ModelSpecError, parseModelSpec } from "../model/spec.js";
import type { GenerationParams } from "../model/types.js";
import { createResponseCache } from "../store/response-cache.js";
import type { RunStore } from "../store/run-store.js";
import type { LlmAgentOptions, SendMode } from "./prompting.js";
import { type AgentFactory, llmAgentFactory } from "./registry.js";

export type LlmAgentKind = "react" | "tools";

export interface CreateLlmAgentOptions {
  /** "react" (Thought/Action text, the default) or "tools" (function calling). */
  kind?: LlmAgentKind;
  /**
   * A spec (`openai:gpt-4o-mini`, `anthropic:claude-sonnet-4-5`,
   * `openai-compatible:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct`), a model named in the
   * config, or, with `baseUrl`, the bare model name an OpenAI-compatible server serves.
   */
  model: string;
  /** The key; default the provider's variable (OPENAI_API_KEY, ANTHROPIC_API_KEY). */
  apiKey?: string;
  /**
   * Where the provider is: redirects `openai:` and `anthropic:` specs (a proxy) and replaces an
   * `openai-compatible:` spec's URL; with a bare model name it means an OpenAI-compatible server.
   */
  baseUrl?: string;
  /** Generation parameters, over the config's (temperature, maxTokens, seed, stop, topP). */
  params?: GenerationParams;
  /**
   * clade.config as an object or the path of its file. Default: clade.config.* in the current
   * directory when there is one, as the CLI reads it.
   */
  config?: CladeConfig | Record<string, unknown> | string;
  /** Caches responses in this run store (the same one as the run's, usually). */
  store?: RunStore;
  /** Cache mode with a store: off, read, write or rw (the default). */
  cache?: CacheMode;
  /** Replaces the agent's system prompt; null sends none. */
  systemPrompt?: string | null;
  /** Past turns kept in the prompt; default all of them. */
  historyWindow?: number;
  /** Corrective re-asks per turn after an unusable reply; default 2. */
  maxParseRetries?: number;
  /** List the observation's available actions under its text; default true. */
  showAvailableActions?: boolean;
  /**
   * react only: "reply" passes the model's whole reply to env.step instead of its action, for
   * servers that parse replies themselves (AgentGym's tool servers); default "action".
   */
  send?: SendMode;
  /** Overrides of the retry policy (src/model/retry.ts). */
  retry?: Partial<RetryPolicy>;
  /** Called after every call that reached the provider or the cache, with its cost in USD. */
  onSpend?: (costUsd: number) => void;
  /** Where keys and base URLs are looked up; default process.env. */
  environment?: NodeJS.ProcessEnv;
}

/** An AgentFactory for runEvaluation, with the model client it shares across episodes. */
export interface LlmAgent extends AgentFactory {
  name: LlmAgentKind;
  /** The model spec as stored: credentials in a base URL are removed. */
  modelSpec: string;
  /** The client every episode's agent calls (one limiter and one cache for the whole run). */
  model: AccountedModel;
  /** What identifies runs of this agent: model, parameters and agent options (as the CLI). */
  identity: Record<string, unknown>;
}

async function configOf(config: CreateLlmAgentOptions["config"]): Promise<CladeConfig> {
  if (typeof config === "string") return (await loadConfig(config)).config;
  if (config !== undefined) return parseConfig(config, "config");
  return (await loadConfig()).config;
}

/** Checks a base URL the way a spec's is checked: http(s), no query. */
function checkedBaseUrl(baseUrl: string): string {
  return parseModelSpec(`openai-compatible:${baseUrl}#model`).baseUrl as string;
}

function resolve(options: CreateLlmAgentOptions, config: CladeConfig): ResolvedModel {
  const environment = options.environment ?? process.env;
  const bare = !Object.hasOwn(config.models, options.model) && !options.model.includes(":");
  if (bare && !options.baseUrl) {
    // resolveModel says what a bare name needs.
    return resolveModel(options.model, config, environment);
  }
  const baseUrl = options.baseUrl === undefined ? undefined : checkedBaseUrl(options.baseUrl);
  const name = bare ? `openai-compatible:${baseUrl}#${options.model}` : options.model;
  const resolved = resolveModel(name, config, environment);
  return {
    ...resolved,
    spec: baseUrl ? { ...resolved.spec, baseUrl } : resolved.spec,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    params: { ...resolved.params, ...options.params },
  };
}

/**
 * Builds an LLM agent (react or tools) on a model, ready for runEvaluation:
 *
 *     const agent = await createLlmAgent({ kind: "react", model: "openai:gpt-4o-mini" });
 *     await runEvaluation({ env: "wordle", tasks: "0-9", agent });
 *
 * Throws MissingKeyError when the provider needs a key and none is set, ModelSpecError for a bad
 * spec or an unknown model name, ConfigError for a bad config.
 */
export async function createLlmAgent(options: CreateLlmAgentOptions): Promise<LlmAgent> {
  const kind = options.kind ?? "react";
  if (kind !== "react" && kind !== "tools") {
    throw new ModelSpecError(`unknown LLM agent kind "${kind as string}" (react or tools)`);
  }
  const resolved = resolve(options, await configOf(options.config));
  checkKey(resolved);
  const cacheMode: CacheMode = options.store ? (options.cache ?? "rw") : "off";
  const model = createModelClient(resolved, {
    ...(options.store && cacheMode !== "off"
      ? { cache: createResponseCache(options.store.db), cacheMode }
      : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.onSpend ? { onSpend: options.onSpend } : {}),
  });
  const agentOptions: LlmAgentOptions = {
    ...(options.historyWindow !== undefined ? { historyWindow: options.historyWindow } : {}),
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.maxParseRetries !== undefined ? { maxParseRetries: options.maxParseRetries } : {}),
    ...(options.showAvailableActions !== undefined
      ? { showAvailableActions: options.showAvailableActions }
      : {}),
    // Only when it differs from the default, so runs stored before the option still resume.
    ...(options.send !== undefined && options.send !== "action" ? { send: options.send } : {}),
  };
  const factory = llmAgentFactory(kind, { model, options: agentOptions });
  const modelSpec = publicModelSpec(resolved);
  return {
    name: kind,
    create: factory.create,
    modelSpec,
    model,
    // As `clade eval --model` stores it, so the CLI can resume a run the library started.
    identity: { model: modelSpec, params: resolved.params, agentOptions },
  };
}
