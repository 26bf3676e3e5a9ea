/**
 * clade.config.json / clade.config.ts: named models, prices and defaults, validated with zod.
 * A .ts (or .js/.mjs) config default-exports the same object; tsx loads TypeScript.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { MAX_REPLY_BYTES_CEILING } from "./reply-limit.js";

export const CONFIG_FILES = [
  "clade.config.json",
  "clade.config.ts",
  "clade.config.mjs",
  "clade.config.js",
] as const;

export class ConfigError extends Error {
  override name = "ConfigError";
}

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
  })
  .strict();

export type CladeConfig = z.output<typeof configSchema>;
export type ModelEntry = z.output<typeof modelEntrySchema>;
export type ParamsConfig = z.output<typeof paramsSchema>;

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

async function readConfigFile(path: string): Promise<unknown> {
  if (path.endsWith(".json")) {
    try {
      return JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw new ConfigError(`${path}: ${(error as Error).message}`);
    }
  }
  try {
    const module = path.endsWith(".ts")
      ? await (await import("tsx/esm/api")).tsImport(pathToFileURL(path).href, import.meta.url)
      : await import(pathToFileURL(path).href);
    let value = module.default ?? module;
    // A TypeScript file loaded as CommonJS arrives wrapped once more.
    if (value && typeof value === "object" && Object.keys(value).join() === "default") {
      value = value.default;
    }
    return value;
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
