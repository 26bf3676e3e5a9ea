/**
 * clade.config.json / clade.config.ts: named models, prices, defaults, evals (named
 * evaluations for `clade eval NAME`) and taxonomies (for `clade goals`), validated with zod.
 * A .ts (or .js/.mjs) config default-exports the same object; tsx loads TypeScript.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { CACHE_MODES, type CacheMode } from "./cache.js";
import { ConfigError } from "./errors.js";
import { MAX_REPLY_BYTES_CEILING } from "./reply-limit.js";

export const CONFIG_FILES = [
  "clade.config.json",
  "clade.config.ts",
  "clade.config.mjs",
  "clade.config.js",
] as const;

export { ConfigError };

const paramsSchema = z
  .object({
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
    seed: z.number().int().optional(),
    stop: z.array(z.string()).optional(),
    topP: z.number().min(0).max(1).optional(),
  })
  .strict();

const priceSchema = z
  .object({ inputPerMTok: z.number().min(0), outputPerMTok: z.number().min(0) })
  .strict();

const modelEntrySchema = z
  .object({
    /** A model spec string, e.g. "openai-compatible:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct". */
    model: z.string().min(1),
    /** Name of the environment variable holding the key (instead of the provider's default). */
    apiKeyEnv: z.string().min(1).optional(),
    /** A key written in the config itself (prefer apiKeyEnv; never stored or logged). */
    apiKey: z.string().min(1).optional(),
    params: paramsSchema.optional(),
    price: priceSchema.optional(),
    maxConcurrency: z.number().int().positive().optional(),
    requestsPerMinute: z.number().positive().optional(),
    stream: z.boolean().optional(),
    timeoutMs: z.number().int().positive().optional(),
    maxRetries: z.number().int().min(0).max(20).optional(),
    /** Largest reply accepted, in bytes (default 4 MiB); a bigger one fails its call. */
    maxReplyBytes: z
      .number()
      .int()
      .min(1024, "must be at least 1024 bytes")
      .max(MAX_REPLY_BYTES_CEILING, `must be at most ${MAX_REPLY_BYTES_CEILING} bytes (256 MiB)`)
      .optional(),
  })
  .strict();

/**
 * Bounds of an evaluation's settings, shared by clade.config's evals and `clade eval`'s options
 * so that a value means the same wherever it is written.
 */
export const EVAL_BOUNDS = {
  samples: { min: 1, max: 10_000 },
  limit: { min: 1, max: 1_000_000 },
  concurrency: { min: 1, max: 1024 },
  maxTurns: { min: 1, max: 100_000 },
  /** Seconds. */
  timeout: { min: 1, max: 86_400 },
  seed: { min: 0, max: 2 ** 31 - 1 },
  budgetUsd: { min: 0, max: 1e9 },
  history: { min: 0, max: 100_000 },
  /** Consecutive same-cause errored episodes that stop a run; 0 = never. */
  failOnError: { min: 0, max: 1_000_000 },
} as const;

const bounded = (key: keyof typeof EVAL_BOUNDS, integer = true) => {
  const { min, max } = EVAL_BOUNDS[key];
  const base = integer ? z.number().int("must be a whole number") : z.number();
  return base.min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
};

/** A name usable as (the start of) a run id. */
const evalNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/, "use 1-60 letters, digits, . _ - (not first)");

const oneOrMore = (what: string) => {
  const error = `must be ${what}, or a non-empty list of them`;
  return z.union([z.string().min(1, error), z.array(z.string().min(1, error)).min(1, error)], {
    error,
  });
};

/**
 * One named evaluation: `clade eval NAME` runs every (env × model) combination as a run of its
 * own. Fields mirror `clade eval`'s options (timeout in seconds); flags given on the command line
 * override them. Module paths are relative to the config file.
 */
const evalEntrySchema = z
  .object({
    description: z.string().optional(),
    /** Built-in environment names or module paths (./my-env.ts). */
    env: oneOrMore("an environment name or module path"),
    /** A built-in agent name or a module path (./my-agent.ts). */
    agent: z.string().min(1).optional(),
    /** Model specs or names from `models`; one run per model. */
    model: oneOrMore("a model spec or a name from models").optional(),
    tasks: z.string().min(1, 'must be a task range such as "test" or "0-99"').optional(),
    limit: bounded("limit").optional(),
    samples: bounded("samples").optional(),
    maxTurns: bounded("maxTurns").optional(),
    timeout: bounded("timeout").optional(),
    concurrency: bounded("concurrency").optional(),
    seed: bounded("seed").optional(),
    budgetUsd: bounded("budgetUsd", false).optional(),
    failOnError: bounded("failOnError").optional(),
    cache: z
      .enum(CACHE_MODES as [CacheMode, ...CacheMode[]], {
        error: "must be off, read, write or rw",
      })
      .optional(),
    /** Generation parameters over the model's own. */
    params: paramsSchema.optional(),
    history: bounded("history").optional(),
    systemPrompt: z.string().optional(),
    /** Prefix of the derived run ids (default: the eval's name). */
    runId: evalNameSchema.optional(),
  })
  .strict();

export const configSchema = z
  .object({
    models: z
      .record(z.string().regex(/^[A-Za-z0-9._-]+$/, "use letters, digits, . _ -"), modelEntrySchema)
      .default({}),
    /** Prices by model id ("openai:gpt-4o-mini"), overriding the built-in table. */
    prices: z.record(z.string(), priceSchema).default({}),
    defaults: z
      .object({ model: z.string().optional(), params: paramsSchema.optional() })
      .strict()
      .default({}),
    /** Named evaluations for `clade eval NAME...`. */
    evals: z.record(evalNameSchema, evalEntrySchema).default({}),
    /**
     * Taxonomies of root causes of your own, by name, for `clade goals --taxonomy NAME`: each
     * `{name, description?, codes: [{code, name, definition, group?}]}`. Their content is
     * checked by src/eval/goals/taxonomy.ts (which the model layer does not import) when they
     * are used, in one line naming the entry and the field.
     */
    taxonomies: z
      .record(z.string().regex(/^[A-Za-z0-9._-]+$/, "use letters, digits, . _ -"), z.unknown())
      .default({}),
  })
  .strict();

export type CladeConfig = z.output<typeof configSchema>;
export type ModelEntry = z.output<typeof modelEntrySchema>;
export type ParamsConfig = z.output<typeof paramsSchema>;
export type EvalEntry = z.output<typeof evalEntrySchema>;

/** Formats the first validation problem as one line naming where it is. */
function describeIssue(path: string, error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "(top level)";
  return `${path}: ${where}: ${issue?.message ?? "invalid"}`;
}

export function parseConfig(raw: unknown, path = "config"): CladeConfig {
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(describeIssue(path, result.error));
  return result.data;
}

/**
 * Imports a module through tsx, TypeScript included. tsx imports every file under a fresh
 * namespace: a changed file is read again, never a stale copy from Node's module cache.
 */
export async function importThroughTsx(path: string): Promise<Record<string, unknown>> {
  const { tsImport } = await import("tsx/esm/api");
  return tsImport(pathToFileURL(path).href, import.meta.url);
}

/** A module's default export; a TypeScript file loaded as CommonJS arrives wrapped once more. */
export function defaultExport(module: Record<string, unknown>): unknown {
  const value = module.default;
  if (value && typeof value === "object" && Object.keys(value).join() === "default") {
    return (value as { default: unknown }).default;
  }
  return value;
}

async function readConfigFile(path: string): Promise<unknown> {
  if (path.endsWith(".json")) {
    try {
      return JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw new ConfigError(`${path}: ${(error as Error).message}`);
    }
  }
  try {
    const module: Record<string, unknown> = path.endsWith(".ts")
      ? await importThroughTsx(path)
      : await import(pathToFileURL(path).href);
    return defaultExport(module) ?? module;
  } catch (error) {
    throw new ConfigError(`${path}: cannot load: ${(error as Error).message.split("\n")[0]}`);
  }
}

/**
 * Loads the config named by `explicitPath`, or the first clade.config.* in `directory`; an empty
 * config when there is none. An explicit path that does not exist is an error.
 */
export async function loadConfig(
  explicitPath?: string,
  directory = process.cwd(),
): Promise<{ config: CladeConfig; path?: string }> {
  if (explicitPath) {
    const path = resolve(directory, explicitPath);
    if (!existsSync(path)) throw new ConfigError(`no config file at ${explicitPath}`);
    return { config: parseConfig(await readConfigFile(path), explicitPath), path };
  }
  for (const name of CONFIG_FILES) {
    const path = resolve(directory, name);
    if (existsSync(path)) return { config: parseConfig(await readConfigFile(path), name), path };
  }
  return { config: parseConfig({}) };
}
