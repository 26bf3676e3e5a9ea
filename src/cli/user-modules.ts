/**
 * Environments and agents from the user's own files: `clade eval --env ./my-env.ts --agent
 * ./my-agent.js`. A module is loaded at run time (TypeScript through tsx), its default export is
 * checked, and its identity (resolved path and sha256 of the file) becomes part of the run's
 * configuration, so that resuming a run with a changed module is refused. A trained policy
 * (`--agent policy:FILE`, a safetensors file) is data, not code: it is read, never imported.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { basename, extname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { readAgentFolder } from "../agent/folder/files.js";
import { type FolderAgentFactory, folderAgentFactory } from "../agent/folder/sandboxed-agent.js";
import type { AgentFactory } from "../agent/registry.js";
import type { Agent, EpisodeContext } from "../agent/types.js";
import { trainedOnEnv } from "../env/mixture.js";
import type { Env, EnvDefinition, EnvInfo } from "../env/types.js";
import { Featurizer } from "../improve/rl/policy/features.js";
import { type PolicyModel, policyFromSafetensors } from "../improve/rl/policy/model.js";
import { createPolicyAgent } from "../improve/rl/policy/policy-agent.js";
import { decodeSafetensors, SafetensorsError } from "../improve/rl/policy/safetensors.js";
import { CallRecorder } from "../model/call-record.js";
import { defaultExport, importThroughTsx } from "../model/config.js";
import type { Model } from "../model/types.js";
import { checkSandbox } from "../sandbox/index.js";
import { UsageError } from "./io.js";

/** File endings read as modules (beside values starting with ./, ../ or /). */
export const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"] as const;

/** Whether an --env or --agent value names a file rather than a built-in. */
export function looksLikePath(value: string): boolean {
  return (
    value.startsWith("./") ||
    value.startsWith("../") ||
    isAbsolute(value) ||
    MODULE_EXTENSIONS.some((ext) => value.endsWith(ext))
  );
}

/** A module that cannot be used: missing, unloadable, or exporting the wrong thing (exit 2). */
export class UserModuleError extends UsageError {
  override name = "UserModuleError";
}

/** What identifies a module in a run's stored configuration. */
export interface ModuleIdentity {
  /** The resolved, absolute path. */
  path: string;
  /** sha256 of the file's bytes (the files it imports are not covered). */
  sha256: string;
}

/** What a custom agent's create() gets beside the episode: the run's model, when --model is given. */
export interface AgentSetup {
  /**
   * The model of `--model`, with clade's retries, rate limits, cache, budget and accounting; each
   * call is stored with the turn that made it. Undefined without --model.
   */
  model?: Model;
}

/**
 * The default export of an agent module: a factory, or a plain function `(context, setup) =>
 * Agent` (named after the file).
 */
export interface AgentModule {
  name?: string;
  create(context: EpisodeContext, setup: AgentSetup): Agent;
}

const firstLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split("\n")[0]?.trim() || "failed";

/** Reads, hashes and imports a module; every failure is one UserModuleError line. */
async function importUserModule(
  what: string,
  path: string,
  baseDir: string,
): Promise<{ value: unknown; identity: ModuleIdentity }> {
  const absolute = resolve(baseDir, path);
  let bytes: Buffer;
  try {
    if (!statSync(absolute).isFile()) throw new Error("not a file");
    bytes = readFileSync(absolute);
  } catch {
    throw new UserModuleError(`${what} module ${path} not found (looked at ${absolute})`);
  }
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  let module: Record<string, unknown>;
  try {
    // Through tsx for .ts, .js and .mjs alike, so that a changed file is always read anew.
    module = await importThroughTsx(absolute);
  } catch (error) {
    throw new UserModuleError(`${what} module ${path}: cannot load: ${firstLine(error)}`);
  }
  const value = defaultExport(module);
  if (value === undefined) {
    throw new UserModuleError(`${what} module ${path} has no default export`);
  }
  return { value, identity: { path: absolute, sha256 } };
}

const isFunction = (what: string) =>
  z.custom<(...args: never[]) => unknown>((v) => typeof v === "function", {
    error: `must be a function (${what})`,
  });

const nameSchema = z
  .string({ error: "must be a string" })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/, "use 1-60 letters, digits, . _ - (not first)");

const rangeSchema = z
  .object({ start: z.number().int().min(0), end: z.number().int().min(0) })
  .refine((r) => r.end >= r.start, "end must not be before start");

const envDefinitionSchema = z.object({
  info: z.object(
    {
      name: nameSchema,
      version: z.string().min(1),
      description: z.string(),
      instruction: z.string(),
      splits: z.object({ train: rangeSchema, test: rangeSchema }),
      successThreshold: z.number(),
      maxSteps: z.number().int().min(1),
    },
    { error: "is missing" },
  ),
  create: isFunction("create(): Env"),
  sampleAction: isFunction("sampleAction(random, observation): string").optional(),
});

const agentModuleSchema = z.union([
  isFunction("(context, setup) => Agent"),
  z.object({ name: nameSchema.optional(), create: isFunction("create(context, setup): Agent") }),
]);

/** The first problem as "field: message". */
function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue?.message ?? "invalid"}`;
}

export interface LoadedEnv {
  definition: EnvDefinition;
  identity: ModuleIdentity;
}

/**
 * Loads an environment module: its default export is an environment definition, `{ info,
 * create, sampleAction? }` (EnvDefinition). Relative paths are taken from `baseDir`.
 */
export async function loadEnvModule(path: string, baseDir = process.cwd()): Promise<LoadedEnv> {
  const { value, identity } = await importUserModule("environment", path, baseDir);
  const checked = envDefinitionSchema.safeParse(value);
  if (!checked.success) {
    throw new UserModuleError(
      `environment module ${path}: the default export is not an environment definition ({ info, create }): ${describe(checked.error)}`,
    );
  }
  const raw = value as {
    info: EnvInfo;
    create: () => unknown;
    sampleAction?: EnvDefinition["sampleAction"];
  };
  const info = raw.info;
  const sampler = raw.sampleAction;
  const definition: EnvDefinition = {
    info,
    create: () => {
      let env: Partial<Env> | undefined;
      try {
        env = raw.create() as Partial<Env> | undefined;
      } catch (error) {
        throw new UserModuleError(
          `environment module ${path}: create() failed: ${firstLine(error)}`,
        );
      }
      if (!env || typeof env.reset !== "function" || typeof env.step !== "function") {
        throw new UserModuleError(
          `environment module ${path}: create() must return an Env with reset() and step()`,
        );
      }
      return env as Env;
    },
    ...(sampler ? { sampleAction: sampler } : {}),
  };
  return { definition, identity };
}

export interface LoadedAgent {
  name: string;
  identity: ModuleIdentity;
  /** The agent for the runner; `model`, when given, is passed to every create() call. */
  factory(setup: AgentSetup): AgentFactory;
}

/** A name from the file: ./agents/my-agent.ts → my-agent. */
function nameFromFile(path: string): string {
  const stem = basename(path, extname(path)).replace(/[^A-Za-z0-9._-]+/g, "-");
  return /^[A-Za-z0-9]/.test(stem) ? stem.slice(0, 60) : `agent-${stem}`.slice(0, 60);
}

/**
 * Loads an agent module: its default export is `{ name?, create(context, setup) }` or a plain
 * function `(context, setup) => Agent`. Relative paths are taken from `baseDir`.
 */
export async function loadAgentModule(path: string, baseDir = process.cwd()): Promise<LoadedAgent> {
  if (isDirectory(resolve(baseDir, path))) return loadAgentFolder(path, baseDir);
  const { value, identity } = await importUserModule("agent", path, baseDir);
  const checked = agentModuleSchema.safeParse(value);
  if (!checked.success) {
    throw new UserModuleError(
      `agent module ${path}: the default export must be an agent factory ({ name?, create(context, setup) }) or a function (context, setup) => Agent: ${describe(checked.error)}`,
    );
  }
  const module =
    typeof value === "function"
      ? { create: value as AgentModule["create"] }
      : (value as AgentModule);
  const name = module.name ?? nameFromFile(path);
  const create = (context: EpisodeContext, setup: AgentSetup): Agent => {
    let agent: Agent | undefined;
    try {
      agent = module.create(context, setup);
    } catch (error) {
      throw new UserModuleError(`agent module ${path}: create() failed: ${firstLine(error)}`);
    }
    if (!agent || typeof agent.act !== "function") {
      throw new UserModuleError(
        `agent module ${path}: create() must return an agent with act(state, signal)`,
      );
    }
    return agent;
  };
  return {
    name,
    identity,
    factory: ({ model }) => ({
      name,
      create: (context) => {
        if (!model) return create(context, {});
        // Each episode talks to the model through its own recorder, as the built-in LLM agents
        // do, so every call is stored with the turn that made it.
        const recorder = new CallRecorder(model);
        const agent = create(context, { model: recorder });
        return {
          act: (state, signal) => agent.act(state, signal),
          takeCalls: () => [...recorder.take(), ...(agent.takeCalls?.() ?? [])],
        };
      },
    }),
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * An agent folder (`clade init-agent`): untrusted code, so every episode runs it in the sandbox,
 * with its model calls served from here. Its identity is the folder's path and the hash of all
 * its files; a run in sandbox mode "none" carries that in the agent's name, shown on every report.
 */
export async function loadAgentFolder(path: string, baseDir = process.cwd()): Promise<LoadedAgent> {
  const absolute = resolve(baseDir, path);
  let files: Map<string, string>;
  let factory: FolderAgentFactory;
  try {
    files = readAgentFolder(absolute);
    factory = folderAgentFactory({ files });
  } catch (error) {
    throw new UserModuleError(`agent folder ${path}: ${firstLine(error)}`);
  }
  // Before any write: without bubblewrap, one line saying how to install it.
  if (factory.mode === "bwrap") await checkSandbox();
  const name = factory.mode === "none" ? `${factory.name}+sandbox-none` : factory.name;
  return {
    name,
    identity: { path: absolute, sha256: factory.sha256 },
    factory: ({ model }) => ({
      ...folderAgentFactory({ files, ...(model ? { model } : {}), mode: factory.mode }),
      name,
    }),
  };
}

/** The prefix of an --agent value that names a policy file (safetensors): policy:PATH. */
export const POLICY_PREFIX = "policy:";

/** Whether an --agent value names a policy file. */
export function isPolicySpec(value: string): boolean {
  return value.startsWith(POLICY_PREFIX);
}

/** What identifies a policy in a run's stored configuration. */
export interface PolicyIdentity extends ModuleIdentity {
  /** The optimiser step its weights were saved at (its metadata's "step"). */
  step: number;
}

export interface LoadedPolicy {
  /** The agent's name in runs and reports. */
  name: string;
  identity: PolicyIdentity;
  model: PolicyModel;
  /** The agent for the runner: the policy, greedy, one agent per episode. */
  factory(): AgentFactory;
}

/**
 * Loads `policy:PATH`: the safetensors file of an embedded policy (src/improve/rl/policy). It
 * must have been trained on this environment at this version, as its metadata says: a policy
 * reads observations through features learnt on them, so on another environment (or another
 * version's tasks) its results would mean nothing. The file is read once, so that its sha256 is
 * that of the weights played. Every failure is one UserModuleError line (exit 2).
 */
export async function loadPolicyAgent(
  spec: string,
  env: EnvInfo,
  baseDir = process.cwd(),
): Promise<LoadedPolicy> {
  const path = spec.slice(POLICY_PREFIX.length);
  if (path === "") {
    throw new UserModuleError(`--agent ${spec}: give the policy file, as policy:PATH`);
  }
  const absolute = resolve(baseDir, path);
  let bytes: Buffer;
  try {
    if (!statSync(absolute).isFile()) throw new Error("not a file");
    bytes = readFileSync(absolute);
  } catch {
    throw new UserModuleError(`policy file ${path} not found (looked at ${absolute})`);
  }
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  let model: PolicyModel;
  try {
    const content = decodeSafetensors(
      new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    );
    model = policyFromSafetensors(content, `policy file ${absolute}`);
  } catch (error) {
    if (!(error instanceof SafetensorsError)) throw error;
    // As readSafetensors (and so loadPolicy) words it: the path after "safetensors: ".
    throw new UserModuleError(
      firstLine(error).replace(/^safetensors: /, `safetensors: ${absolute}: `),
    );
  }
  const trained = model.provenance;
  if (!trainedOnEnv({ name: trained.env, version: trained.envVersion }, env)) {
    throw new UserModuleError(
      `policy file ${path} was trained on ${trained.env} v${trained.envVersion}, but --env is ` +
        `${env.name} v${env.version}: evaluate a policy on the environment and version it was trained on`,
    );
  }
  const name = "policy";
  const identity = { path: absolute, sha256, step: trained.step };
  return {
    name,
    identity,
    model,
    factory: () => {
      // One featurizer for the run: its caches are shared, its output depends on its input alone.
      const featurizer = new Featurizer(model.features);
      return {
        name,
        create: (context: EpisodeContext) =>
          createPolicyAgent(model, context, { mode: "greedy", featurizer }),
      };
    },
  };
}
