/**
 * An LLM agent configuration as a CycleQD genome: what the agent is told (named system-prompt
 * parts and few-shot examples), how its model samples (temperature, top_p, max tokens), which
 * LLM agent runs it (react or tools) and, for the tools agent, which tools it may use.
 *
 * Configurations arrive as JSON files a user writes; they are validated here, once, with one
 * line naming the first bad field. Everything past this boundary trusts the type.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { LlmAgentKind } from "../../../agent/llm.js";

// ---------------------------------------------------------------------------------------------
// Bounds and defaults (the operators keep every child inside the bounds)
// ---------------------------------------------------------------------------------------------

export const TEMPERATURE_BOUNDS = { min: 0, max: 2 } as const;
export const TOP_P_BOUNDS = { min: 0, max: 1 } as const;
export const MAX_TOKENS_BOUNDS = { min: 16, max: 8192 } as const;
/** The parameters a configuration file leaves out. */
export const DEFAULT_PARAMS: AgentParams = { temperature: 0.7, topP: 1, maxTokens: 1024 };
/** Longest prompt part or few-shot example, in characters (a rewrite may not grow past it). */
export const MAX_TEXT_CHARS = 8000;
/** Most few-shot examples in one configuration (crossover and mutation never exceed it). */
export const MAX_FEW_SHOT = 8;

export const AGENT_KINDS: readonly LlmAgentKind[] = ["react", "tools"];

// ---------------------------------------------------------------------------------------------
// The genome
// ---------------------------------------------------------------------------------------------

export type AgentKind = LlmAgentKind;

/** One named piece of the system prompt; crossover aligns parents' parts by name. */
export interface PromptPart {
  readonly name: string;
  readonly text: string;
}

/** A worked example shown in the system prompt; `id` names it within a pool. */
export interface FewShotExample {
  readonly id: string;
  readonly text: string;
}

/** The generation parameters a configuration sets (src/model's GenerationParams). */
export interface AgentParams {
  readonly temperature: number;
  readonly topP: number;
  readonly maxTokens: number;
}

export interface AgentConfig {
  readonly kind: AgentKind;
  /** In prompt order; names are unique. */
  readonly parts: readonly PromptPart[];
  /** In prompt order; ids are unique. */
  readonly fewShot: readonly FewShotExample[];
  readonly params: AgentParams;
  /**
   * The tools kind only: the tools (an action's command word, see tool-set.ts) the agent may use,
   * sorted; null: every tool of the environment. The react agent has no tool set: it carries the
   * gene unused, so a child switched to the tools kind inherits it.
   */
  readonly tools: readonly string[] | null;
}

/** Few-shot examples and tools that mutations may add. */
export interface AgentConfigPool {
  readonly fewShot: readonly FewShotExample[];
  readonly tools: readonly string[];
}

export const EMPTY_POOL: AgentConfigPool = { fewShot: [], tools: [] };

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

const NAME = /^[A-Za-z0-9_.-]+$/;
const TOOL = /^[a-z0-9_-]+$/;

const text = z
  .string()
  .refine((s) => s.trim() !== "", "must not be empty")
  .refine((s) => s.length <= MAX_TEXT_CHARS, `must be at most ${MAX_TEXT_CHARS} characters`);
const name = z.string().regex(NAME, "must be letters, digits, '_', '.' or '-'");

const partSchema = z.strictObject({ name, text });
const exampleSchema = z.strictObject({ id: name, text });
const toolName = z.string().regex(TOOL, "must be lowercase letters, digits, '_' or '-'");

function unique<T>(key: (item: T) => string, what: string) {
  return (items: readonly T[], ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const k = key(item);
      if (seen.has(k)) ctx.addIssue({ code: "custom", path: [i], message: `duplicate ${what}` });
      seen.add(k);
    });
  };
}

const bounded = (bounds: { min: number; max: number }) =>
  z.number().min(bounds.min).max(bounds.max);

const examplesSchema = z
  .array(exampleSchema)
  .superRefine(unique((e: FewShotExample) => e.id, "few-shot id"));
const toolsSchema = z
  .array(toolName)
  .superRefine(unique((t: string) => t, "tool"))
  .transform((tools) => [...tools].sort());

export const agentConfigSchema = z.strictObject({
  kind: z.enum(["react", "tools"]).default("react"),
  parts: z
    .array(partSchema)
    .superRefine(unique((p: PromptPart) => p.name, "part name"))
    .default([]),
  fewShot: examplesSchema
    .refine((e) => e.length <= MAX_FEW_SHOT, `must hold at most ${MAX_FEW_SHOT} examples`)
    .default([]),
  params: z
    .strictObject({
      temperature: bounded(TEMPERATURE_BOUNDS).default(DEFAULT_PARAMS.temperature),
      topP: bounded(TOP_P_BOUNDS).default(DEFAULT_PARAMS.topP),
      maxTokens: bounded(MAX_TOKENS_BOUNDS).int().default(DEFAULT_PARAMS.maxTokens),
    })
    .default(DEFAULT_PARAMS),
  tools: toolsSchema.nullable().default(null),
});

export const agentConfigPoolSchema = z.strictObject({
  fewShot: examplesSchema.default([]),
  tools: toolsSchema.default([]),
});

/** The first issue as one line: "WHAT: path.to.field: message". */
function parseOrThrow<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.map(String).join(".") ?? "";
  throw new Error(`${what}: ${path === "" ? "" : `${path}: `}${issue?.message ?? "invalid"}`);
}

/** A configuration from parsed JSON; throws one line naming `source` and the bad field. */
export function parseAgentConfig(json: unknown, source = "agent config"): AgentConfig {
  return parseOrThrow(agentConfigSchema, json, source);
}

/** A pool from parsed JSON; throws one line naming `source` and the bad field. */
export function parseAgentConfigPool(json: unknown, source = "agent config pool"): AgentConfigPool {
  return parseOrThrow(agentConfigPoolSchema, json, source);
}

async function readJson(path: string): Promise<unknown> {
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch (error) {
    throw new Error(`${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new Error(`${path}: not valid JSON (${(error as Error).message.split("\n")[0]})`);
  }
}

/** Reads and validates a configuration file (e.g. an expert); one-line errors. */
export async function readAgentConfigFile(path: string): Promise<AgentConfig> {
  return parseAgentConfig(await readJson(path), path);
}

/** Reads and validates a pool file; one-line errors. */
export async function readAgentConfigPoolFile(path: string): Promise<AgentConfigPool> {
  return parseAgentConfigPool(await readJson(path), path);
}

// ---------------------------------------------------------------------------------------------
// Identity
// ---------------------------------------------------------------------------------------------

/** JSON with every object's keys sorted, so equal configurations serialise equally. */
export function canonicalConfigJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalConfigJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalConfigJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** sha256 of the canonical JSON, first 16 hex characters (as policyId). */
export function agentConfigId(config: AgentConfig): string {
  return createHash("sha256").update(canonicalConfigJson(config)).digest("hex").slice(0, 16);
}
