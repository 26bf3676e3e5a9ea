/**
 * `clade eval`: run an agent on tasks of an environment, storing every step; resumable.
 *
 * Two forms:
 * - `clade eval --env ENV ...`: one run from the command line's options;
 * - `clade eval NAME...`: the named evals of clade.config, each (env × model) a run of its own,
 *   then a combined table. Options given beside the names override the eval's values.
 *
 * The command is three steps: requests (what was asked: options, or options over an eval) →
 * plans (everything resolved and validated: environment, agent, model, tasks; nothing written
 * yet) → runs (each plan executed against the store, giving an outcome and an exit code).
 *
 * `--user-model SPEC` (helpdesk only) makes a model the simulated employee's voice: it is stored
 * in the run's configuration (`userModel`, `userModelParams`) and marks the environment's
 * version (`+user-model`); its calls are stored with each episode as the user's and count
 * toward the run's spend and --budget-usd.
 */
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { withModelUser } from "../../agent/helpdesk/user-model.js";
import { type LlmAgentOptions, SEND_MODES, type SendMode } from "../../agent/prompting.js";
import {
  type AgentFactory,
  isLlmAgent,
  resolveAgent,
  UnknownAgentError,
} from "../../agent/registry.js";
import { userModelInfo } from "../../env/helpdesk/voice.js";
import { BUILTIN_ENVS, findEnv } from "../../env/registry.js";
import {
  connectRemoteEnv,
  fetchCladeEnvInfo,
  guessAgentgymServer,
} from "../../env/remote/index.js";
import type { EnvDefinition } from "../../env/types.js";
import {
  DEFAULT_FAIL_FAST_ERRORS,
  defaultRunId,
  type EvalResult,
  FAIL_FAST_STOP,
  runEvaluation,
} from "../../eval/evaluation.js";
import type { MetricsReport } from "../../eval/metrics.js";
import { runMetrics } from "../../eval/report.js";
import { formatTaskRange, parseTaskRange } from "../../eval/task-range.js";
import { CACHE_MODES, type CacheMode } from "../../model/cache.js";
import { createModelClient } from "../../model/client.js";
import {
  type CladeConfig,
  ConfigError,
  EVAL_BOUNDS,
  type EvalEntry,
  loadConfig,
  type ParamsConfig,
} from "../../model/config.js";
import { assertPricedForBudget } from "../../model/pricing.js";
import {
  checkKey,
  publicModelSpec,
  type ResolvedModel,
  resolveModel,
} from "../../model/resolve.js";
import { parseModelSpec } from "../../model/spec.js";
import type { Model } from "../../model/types.js";
import { SANDBOX_MODES, setDefaultSandboxMode } from "../../sandbox/mode.js";
import { createResponseCache } from "../../store/response-cache.js";
import { addCosts, RunConflictError, RunStore } from "../../store/run-store.js";
import { type CliIo, EXIT, errorJson, UsageError } from "../io.js";
import { integerOption, numberOption, parseOptions, runIdSchema } from "../options.js";
import { createProgress } from "../progress.js";
import { formatCost, renderMetrics, renderUsage } from "../report.js";
import { formatInterval, formatRate, renderTable } from "../table.js";
import {
  isPolicySpec,
  loadAgentModule,
  loadEnvModule,
  loadPolicyAgent,
  looksLikePath,
  type ModuleIdentity,
  POLICY_PREFIX,
  UserModuleError,
} from "../user-modules.js";

const bounded = (key: keyof typeof EVAL_BOUNDS) =>
  integerOption(EVAL_BOUNDS[key].min, EVAL_BOUNDS[key].max);

/**
 * The command line's options. Settings an eval may also give have no default here (see
 * EVAL_DEFAULTS), so that a flag left out never overrides the eval's value.
 */
export const evalOptionsSchema = z.object({
  env: z.string().min(1, "must not be empty").optional(),
  agent: z.string().min(1, "must not be empty").optional(),
  tasks: z.string().min(1, "must not be empty").optional(),
  limit: bounded("limit").optional(),
  samples: bounded("samples").optional(),
  concurrency: bounded("concurrency").optional(),
  maxTurns: bounded("maxTurns").optional(),
  timeout: bounded("timeout").optional(),
  seed: bounded("seed").optional(),
  runId: runIdSchema.optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
  model: z.string().min(1, "must not be empty").optional(),
  userModel: z.string().min(1, "must not be empty").optional(),
  bladeDir: z.string().min(1, "must not be empty").optional(),
  runtime: z.enum(["sql", "python"], { error: 'must be "sql" or "python"' }).optional(),
  config: z.string().min(1, "must not be empty").optional(),
  cache: z
    .enum(CACHE_MODES as [CacheMode, ...CacheMode[]], {
      error: "must be off, read, write or rw",
    })
    .optional(),
  budgetUsd: numberOption(EVAL_BOUNDS.budgetUsd.min, EVAL_BOUNDS.budgetUsd.max).optional(),
  failOnError: bounded("failOnError").optional(),
  sandbox: z.enum(SANDBOX_MODES, { error: 'must be "bwrap" (the sandbox) or "none"' }).optional(),
  temperature: numberOption(0, 2).optional(),
  maxTokens: integerOption(1, 1_000_000).optional(),
  history: bounded("history").optional(),
  systemPrompt: z.string().optional(),
  envUrl: z.url({ error: "must be an http(s) URL" }).optional(),
  dialect: z.enum(["id", "env_idx", "clade"], { error: "must be id, env_idx or clade" }).optional(),
  envPath: z.string().min(1, "must not be empty").optional(),
  taskField: z
    .string()
    .regex(/^\w+$/, "must be a field name such as data_idx, game or seed")
    .optional(),
  createBody: z.string().optional(),
  send: z
    .enum(SEND_MODES as [SendMode, ...SendMode[]], { error: "must be action or reply" })
    .optional(),
});

export type RawEvalOptions = z.input<typeof evalOptionsSchema>;
type EvalOptions = z.output<typeof evalOptionsSchema>;

/** What a run uses when neither the command line nor the eval says. */
export const EVAL_DEFAULTS = {
  tasks: "test",
  samples: 1,
  concurrency: 8,
  /** Seconds per episode. */
  timeout: 300,
  seed: 0,
  cache: "rw" as CacheMode,
  dialect: "id" as const,
  failOnError: DEFAULT_FAIL_FAST_ERRORS,
};

/** Most episodes (tasks × samples) one run may plan: its plan is held in memory. */
export const MAX_EPISODES = 1_000_000;

/**
 * An eval set's exit code is its worst run's, in this order: a refused run (2), a run stopped
 * by --fail-on-error (6), every episode errored (5), some errored (4), the budget stopped it (3), all finished (0). An
 * interruption (130/143) ends the set at once and is its exit code.
 */
const EXIT_SEVERITY: readonly number[] = [
  EXIT.badInput,
  EXIT.failFast,
  EXIT.allErrored,
  EXIT.someErrored,
  EXIT.budget,
  0,
];

export function worstExitCode(codes: readonly number[]): number {
  let worst = 0;
  for (const code of codes) {
    const rank = EXIT_SEVERITY.indexOf(code);
    if (rank >= 0 && rank < EXIT_SEVERITY.indexOf(worst)) worst = code;
  }
  return worst;
}

// ---------------------------------------------------------------------------------------------
// Requests: what one run was asked to be.

/** An HTTP environment (`--env-url`): only from the command line, for a single run. */
interface RemoteRequest {
  url: string;
  dialect: "id" | "env_idx" | "clade";
  envPath?: string;
  taskField?: string;
  createBody?: string;
}

/** One run as asked for: the command line alone, or one (env × model) of an eval under it. */
interface RunRequest {
  /** The eval it comes from (eval sets only). */
  evalName?: string;
  /** An explicit run id (single runs); eval sets derive theirs from `runIdPrefix`. */
  runId?: string;
  runIdPrefix?: string;
  /** A built-in name or a module path (absolute when it came from the config file). */
  env: string;
  agent?: string;
  model?: string;
  /** --user-model: the helpdesk's simulated employee's model (spec or config name). */
  userModel?: string;
  /** --blade-dir: a folder of BLADE datasets for the blade environment. */
  bladeDir?: string;
  /** --runtime: the blade environment's analysis runtime. */
  runtime?: "sql" | "python";
  tasks: string;
  limit?: number;
  samples: number;
  maxTurns?: number;
  /** Seconds. */
  timeout: number;
  concurrency: number;
  seed: number;
  budgetUsd?: number;
  /** Consecutive same-cause errored episodes that stop the run; 0 = never. */
  failOnError: number;
  cache: CacheMode;
  /** Generation parameters over the model's own (eval's params, then --temperature etc.). */
  params: ParamsConfig;
  history?: number;
  systemPrompt?: string;
  /** --send: what the react agent passes to the env; undefined: the default for the env. */
  send?: SendMode;
  remote?: RemoteRequest;
}

/** The command line's generation parameters. */
function cliParams(options: EvalOptions): ParamsConfig {
  return {
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
  };
}

/** The settings, command line first, then the eval, then the defaults. */
function mergeSettings(options: EvalOptions, entry: Partial<EvalEntry> = {}) {
  const optional = <K extends string, T>(key: K, value: T | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, T>>;
  return {
    tasks: options.tasks ?? entry.tasks ?? EVAL_DEFAULTS.tasks,
    samples: options.samples ?? entry.samples ?? EVAL_DEFAULTS.samples,
    timeout: options.timeout ?? entry.timeout ?? EVAL_DEFAULTS.timeout,
    concurrency: options.concurrency ?? entry.concurrency ?? EVAL_DEFAULTS.concurrency,
    seed: options.seed ?? entry.seed ?? EVAL_DEFAULTS.seed,
    cache: options.cache ?? entry.cache ?? EVAL_DEFAULTS.cache,
    failOnError: options.failOnError ?? entry.failOnError ?? EVAL_DEFAULTS.failOnError,
    params: { ...entry.params, ...cliParams(options) },
    ...optional("limit", options.limit ?? entry.limit),
    ...optional("maxTurns", options.maxTurns ?? entry.maxTurns),
    ...optional("budgetUsd", options.budgetUsd ?? entry.budgetUsd),
    ...optional("history", options.history ?? entry.history),
    ...optional("systemPrompt", options.systemPrompt ?? entry.systemPrompt),
    ...optional("send", options.send),
    ...optional("userModel", options.userModel),
    ...optional("bladeDir", options.bladeDir),
    ...optional("runtime", options.runtime),
  };
}

/** `clade eval --env ENV ...`: one request from the command line. */
function singleRequest(options: EvalOptions): RunRequest {
  if (!options.env) {
    throw new UsageError(
      "give --env NAME (or ./module.ts), or the name of an eval in clade.config: clade eval NAME",
    );
  }
  const hasRemoteDetail = options.envPath || options.taskField || options.createBody;
  if (!options.envUrl && hasRemoteDetail) {
    throw new UsageError("--env-path, --task-field and --create-body need --env-url");
  }
  if (options.envUrl && looksLikePath(options.env)) {
    throw new UsageError("with --env-url, --env names the served environment, not a module path");
  }
  return {
    env: options.env,
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.runId ? { runId: options.runId } : {}),
    ...mergeSettings(options),
    ...(options.envUrl
      ? {
          remote: {
            url: options.envUrl,
            dialect: options.dialect ?? EVAL_DEFAULTS.dialect,
            ...(options.envPath ? { envPath: options.envPath } : {}),
            ...(options.taskField ? { taskField: options.taskField } : {}),
            ...(options.createBody !== undefined ? { createBody: options.createBody } : {}),
          },
        }
      : {}),
  };
}

/** For `clade eval maze`: the user probably meant --env maze. */
function envHint(name: string): string {
  const isEnv = looksLikePath(name) || BUILTIN_ENVS.some((def) => def.info.name === name);
  return isEnv ? `; to evaluate an environment, use --env ${name}` : "";
}

const asList = (value: string | string[] | undefined): (string | undefined)[] =>
  value === undefined ? [undefined] : Array.isArray(value) ? value : [value];

/**
 * `clade eval NAME...`: one request per (env × model) of each named eval. Options given on the
 * command line replace the eval's values (--env and --model replace its whole lists). Module
 * paths in the file are taken from the config file's folder.
 */
function evalSetRequests(
  names: readonly string[],
  options: EvalOptions,
  config: CladeConfig,
  configPath: string | undefined,
): RunRequest[] {
  if (options.envUrl || options.envPath || options.taskField || options.createBody) {
    throw new UsageError("--env-url and its options apply to a single run, not to named evals");
  }
  const known = Object.keys(config.evals);
  if (!configPath || known.length === 0) {
    const where = configPath ? `${configPath} defines no evals` : "no clade.config file found";
    const hint =
      envHint(names[0] as string) || `; name evals in clade.config's "evals", or give --env`;
    throw new ConfigError(`unknown eval "${names[0]}" (${where})${hint}`);
  }
  const baseDir = dirname(configPath);
  const fromFile = (value: string) =>
    isPolicySpec(value)
      ? `${POLICY_PREFIX}${resolve(baseDir, value.slice(POLICY_PREFIX.length))}`
      : looksLikePath(value)
        ? resolve(baseDir, value)
        : value;
  const requests: RunRequest[] = [];
  for (const name of new Set(names)) {
    const entry = config.evals[name];
    if (!entry) {
      throw new ConfigError(`unknown eval "${name}" (known: ${known.join(", ")})${envHint(name)}`);
    }
    const envs = options.env ? [options.env] : asList(entry.env).map((e) => fromFile(String(e)));
    const models = options.model ? [options.model] : asList(entry.model);
    const agent = options.agent ?? (entry.agent ? fromFile(entry.agent) : undefined);
    for (const env of envs) {
      for (const model of models) {
        requests.push({
          evalName: name,
          runIdPrefix: options.runId ?? entry.runId ?? name,
          env: env as string,
          ...(agent ? { agent } : {}),
          ...(model ? { model } : {}),
          ...mergeSettings(options, entry),
        });
      }
    }
  }
  return requests;
}

// ---------------------------------------------------------------------------------------------
// Plans: a request resolved and validated; nothing is written until every plan is ready.

/** One run, ready to execute. */
interface RunPlan {
  evalName?: string;
  runId: string;
  env: EnvDefinition;
  agentName: string;
  /** The agent for the runner, given the run's model client when it has a model. */
  buildAgent: (model?: Model) => AgentFactory;
  model?: ResolvedModel;
  /** The helpdesk's user model (--user-model), with its own client, cache and spend. */
  userModel?: ResolvedModel;
  tasks: number[];
  samples: number;
  maxTurns: number;
  timeoutMs: number;
  seed: number;
  concurrency: number;
  cache: CacheMode;
  budgetUsd?: number;
  failOnError: number;
  /** Settings beyond tasks/samples/limits that identify the run (stored with it). */
  identity: Record<string, unknown>;
}

/** --create-body: extra JSON fields for /create (e.g. TextCraft's {"goal": ...}). */
function parseCreateBody(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {}
  throw new UsageError(
    `--create-body must be a JSON object (got ${JSON.stringify(text.slice(0, 60))})`,
  );
}

/** A JSON value with every object's keys sorted, so that key order never tells runs apart. */
function canonicalJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return Object.fromEntries(entries.map(([key, inner]) => [key, canonicalJson(inner)]));
}

/**
 * What reset and create send decides which tasks are played, so a resume with another
 * --task-field or --create-body is another configuration. Each is kept only where it changes
 * what is sent (the clade dialect sends neither; data_idx is the id dialect's default; {} adds
 * nothing), so that settings that act alike compare alike, and runs from before resume.
 */
function remoteIdentity(remote: RemoteRequest): Record<string, unknown> {
  if (remote.dialect === "clade") return {};
  const { taskField } = remote;
  const createBody = parseCreateBody(remote.createBody);
  const fieldMatters =
    taskField !== undefined && !(remote.dialect === "id" && taskField === "data_idx");
  return {
    ...(fieldMatters ? { taskField } : {}),
    ...(createBody && Object.keys(createBody).length > 0
      ? { createBody: canonicalJson(createBody) }
      : {}),
  };
}

/**
 * What the react agent sends when --send is not given: the whole reply to the AgentGym servers
 * whose own client sends it (the tool servers, which parse "Action: tool with Action Input:
 * ..." themselves), named by --env-path or --env and spoken to in their dialect; else the
 * action alone.
 */
function defaultSend(name: string, remote: RemoteRequest | undefined): SendMode {
  if (!remote) return "action";
  const server = guessAgentgymServer({ dialect: remote.dialect, envPath: remote.envPath, name });
  return server?.action === "reply" ? "reply" : "action";
}

/** A remote environment: --env names it, --env-url/--dialect/--env-path say where and how. */
async function connectEnv(
  name: string,
  remote: RemoteRequest,
  warn: (message: string) => void,
): Promise<EnvDefinition> {
  const { url } = remote;
  if (remote.dialect === "clade") {
    const served = await fetchCladeEnvInfo({ url });
    if (!served) throw new UsageError(`${url} does not answer clade's /v1/info; try --dialect id`);
    if (served.name !== name) {
      throw new UsageError(`${url} serves "${served.name}", not "${name}"`);
    }
  }
  const createBody = parseCreateBody(remote.createBody);
  const connected = await connectRemoteEnv({
    url,
    dialect: remote.dialect,
    // AgentGym's servers mostly serve at the root; some (Maze, Wordle) under a prefix.
    ...(remote.envPath ? { env: remote.envPath } : {}),
    ...(remote.taskField ? { taskField: remote.taskField } : {}),
    ...(createBody ? { createBody } : {}),
    // A clade server describes itself (/v1/info); for others the name is all we know.
    info: { name },
    onWarning: warn,
  });
  // The random baseline samples as it does in-process when the environment is one clade knows.
  const known = BUILTIN_ENVS.find((def) => def.info.name === name);
  return known ? { ...connected, sampleAction: known.sampleAction } : connected;
}

/** A fragment of a run id: letters, digits, '.', '_' and '-'. */
function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+|-+$/g, "") || "x";
}

/** How a model appears in run ids and tables: its config name, else the spec's model name. */
function modelLabel(nameOrSpec: string): string {
  if (!nameOrSpec.includes(":")) return nameOrSpec;
  try {
    return parseModelSpec(nameOrSpec).model;
  } catch {
    return nameOrSpec;
  }
}

/** An eval's run id, stable so that running the eval again resumes each of its runs. */
function derivedRunId(request: RunRequest, env: string, agent: string): string {
  const last = request.model ? modelLabel(request.model) : agent;
  const id = `${request.runIdPrefix}-${slug(env)}-${slug(last)}`;
  if (!runIdSchema.safeParse(id).success) {
    throw new UsageError(
      `eval "${request.evalName}": the run id "${id.slice(0, 120)}" is longer than 100 characters; give the eval a shorter runId`,
    );
  }
  return id;
}

/** Resolves and validates a request: the environment, agent, model and tasks. Writes nothing. */
async function preparePlan(
  request: RunRequest,
  loadModelConfig: () => Promise<CladeConfig>,
  warn: (message: string) => void,
): Promise<RunPlan> {
  // Checked before anything is connected or loaded: only the built-in helpdesk has a user.
  if (request.userModel !== undefined && (request.remote || request.env !== "helpdesk")) {
    const what = request.remote ? "an environment served over HTTP" : `"${request.env}"`;
    throw new UsageError(
      `--user-model applies to the helpdesk environment only (it phrases the simulated employee's messages), not ${what}`,
    );
  }
  const bladeVariant = request.bladeDir !== undefined || request.runtime !== undefined;
  if (bladeVariant && (request.remote || request.env !== "blade")) {
    throw new UsageError(
      `--blade-dir and --runtime apply to the blade environment only, not ${request.remote ? "an environment served over HTTP" : `"${request.env}"`}`,
    );
  }
  let env: EnvDefinition;
  let envModule: ModuleIdentity | undefined;
  if (bladeVariant) {
    const { bladeEnvDefinition, requireRuntime } = await import("../../env/blade/index.js");
    env = bladeEnvDefinition({
      ...(request.bladeDir !== undefined ? { dir: request.bladeDir } : {}),
      ...(request.runtime !== undefined ? { runtime: request.runtime } : {}),
    });
    // A missing runtime is one line now, not an error in every episode.
    await requireRuntime(env.info);
  } else if (request.remote) {
    env = await connectEnv(request.env, request.remote, warn);
  } else if (looksLikePath(request.env)) {
    const loaded = await loadEnvModule(request.env);
    env = loaded.definition;
    envModule = loaded.identity;
  } else {
    env = findEnv(request.env);
  }
  const allTasks = parseTaskRange(request.tasks, env.info);
  // --limit: the first N tasks of the selection; the stored task list says which.
  const tasks = request.limit === undefined ? allTasks : allTasks.slice(0, request.limit);
  if (tasks.length * request.samples > MAX_EPISODES) {
    throw new UsageError(
      `${tasks.length} tasks × ${request.samples} samples is more than ${MAX_EPISODES} episodes; split the run`,
    );
  }

  // --agent policy:FILE: a trained embedded policy, which takes no model.
  const policySpec = request.agent !== undefined && isPolicySpec(request.agent);
  if (policySpec && request.model) {
    throw new UsageError(
      `--model does not apply to a policy (--agent ${request.agent}): it chooses among the listed actions itself`,
    );
  }
  const policy =
    request.agent && policySpec ? await loadPolicyAgent(request.agent, env.info) : undefined;
  const agentModule =
    request.agent && !policy && looksLikePath(request.agent)
      ? await loadAgentModule(request.agent)
      : undefined;
  const agentName =
    policy?.name ?? agentModule?.name ?? request.agent ?? (request.model ? "react" : "reference");
  const llm = !agentModule && !policy && isLlmAgent(agentName);
  if (llm && !request.model) {
    throw new UnknownAgentError(`agent "${agentName}" needs a model: add --model SPEC`);
  }
  if (!llm && !agentModule && request.model) {
    throw new UsageError(
      `--model applies to the react and tools agents and to agent modules, not "${agentName}"`,
    );
  }
  const react = llm && agentName === "react";
  if (request.send !== undefined && !react) {
    throw new UsageError(`--send applies to the react agent, not "${agentName}"`);
  }
  const send = request.send ?? defaultSend(request.env, request.remote);
  if (!agentModule && !request.model && envModule && agentName === "reference") {
    throw new UnknownAgentError(
      `no reference solver for environment "${env.info.name}" (${request.env}); give --agent (random, or a module such as ./my-agent.ts)`,
    );
  }

  let model: ResolvedModel | undefined;
  let agentOptions: LlmAgentOptions = {};
  if (request.model) {
    const config = await loadModelConfig();
    const resolved = resolveModel(request.model, config);
    checkKey(resolved);
    if (request.budgetUsd !== undefined) assertPricedForBudget(resolved);
    model = { ...resolved, params: { ...resolved.params, ...request.params } };
    if (llm) {
      agentOptions = {
        ...(request.history !== undefined ? { historyWindow: request.history } : {}),
        ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}),
        // Stored only when not the default "action", so runs from before --send still resume.
        ...(react && send === "reply" ? { send } : {}),
      };
    }
  }
  const buildAgent = (client?: Model): AgentFactory => {
    if (policy) return policy.factory();
    if (agentModule) return agentModule.factory(client ? { model: client } : {});
    if (client) return resolveAgent(agentName, env, { model: client, options: agentOptions });
    return resolveAgent(agentName, env);
  };
  if (!model) buildAgent(); // unknown agent names fail here, before any write

  let userModel: ResolvedModel | undefined;
  if (request.userModel !== undefined) {
    userModel = resolveModel(request.userModel, await loadModelConfig());
    checkKey(userModel);
    if (request.budgetUsd !== undefined) assertPricedForBudget(userModel);
    // The version stored and shown says the user is a model's (comparisons warn across it).
    env = { ...env, info: userModelInfo(env.info) };
  }

  const { remote } = request;
  return {
    ...(request.evalName ? { evalName: request.evalName } : {}),
    runId:
      request.runId ??
      (request.runIdPrefix !== undefined
        ? derivedRunId(request, env.info.name, agentName)
        : defaultRunId(env.info.name, agentName)),
    env,
    agentName,
    buildAgent,
    ...(model ? { model } : {}),
    ...(userModel ? { userModel } : {}),
    tasks,
    samples: request.samples,
    maxTurns: request.maxTurns ?? env.info.maxSteps,
    timeoutMs: request.timeout * 1000,
    seed: request.seed,
    concurrency: request.concurrency,
    cache: request.cache,
    failOnError: request.failOnError,
    ...(request.budgetUsd !== undefined ? { budgetUsd: request.budgetUsd } : {}),
    identity: {
      ...(remote
        ? {
            envUrl: remote.url,
            dialect: remote.dialect,
            ...(remote.envPath ? { envPath: remote.envPath } : {}),
            ...remoteIdentity(remote),
          }
        : {}),
      // A module is identified by where it is and by its content: a changed file is a
      // different configuration, so resuming with it is refused.
      ...(envModule ? { envModule } : {}),
      ...(agentModule ? { agentModule: agentModule.identity } : {}),
      // A policy by its file and the step its weights were saved at.
      ...(policy ? { policy: policy.identity } : {}),
      ...(model
        ? {
            model: publicModelSpec(model),
            params: model.params,
            ...(agentModule ? {} : { agentOptions }),
          }
        : {}),
      // Absent without --user-model, so runs of the rule-based user keep their configuration.
      ...(userModel
        ? { userModel: publicModelSpec(userModel), userModelParams: userModel.params }
        : {}),
      // Where a blade run's datasets are, so its analyses can be scored again (with --judge).
      ...(request.bladeDir !== undefined ? { bladeDir: resolve(request.bladeDir) } : {}),
      ...(request.runtime !== undefined ? { runtime: request.runtime } : {}),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Runs: one plan against the store.

/** What a run ended with. */
interface RunOutcome {
  plan: RunPlan;
  exitCode: number;
  result?: EvalResult;
  metrics?: MetricsReport;
  /** The run's model calls by model, this invocation and earlier ones. */
  usage?: ReturnType<RunStore["usageByModel"]>;
  /** Why the run was refused (exit code 2), e.g. its id belongs to another configuration. */
  error?: string;
}

/** Ctrl-C / SIGTERM for the whole command: the run in flight stops, no further run starts. */
interface Interruption {
  signal: AbortSignal;
  exitCode(): number;
}

/** Runs one plan: episodes stored as they finish; notes on stderr; the exit code. */
async function executeRun(
  plan: RunPlan,
  store: RunStore,
  io: CliIo,
  interruption: Interruption,
  showProgress: boolean,
  json = false,
): Promise<RunOutcome> {
  const { runId } = plan;
  const stop = new AbortController();
  // The budget is the run's: a resumed run starts from what its stored calls already cost.
  let spent = store.runCostUsd(runId);
  const checkBudget = () => {
    if (plan.budgetUsd !== undefined && spent >= plan.budgetUsd && !stop.signal.aborted) {
      stop.abort("budget");
    }
  };
  checkBudget();
  // The agent's model and the user model (--user-model) spend from the same budget.
  const onSpend = (cost: number) => {
    spent += cost;
    checkBudget();
  };
  const client = plan.model
    ? createModelClient(plan.model, {
        cache: createResponseCache(store.db),
        cacheMode: plan.cache,
        onSpend,
      })
    : undefined;
  let env = plan.env;
  let agent = plan.buildAgent(client);
  if (plan.userModel) {
    // The user's own client: its limits, the run's response cache, and spend on the budget.
    const userClient = createModelClient(plan.userModel, {
      cache: createResponseCache(store.db),
      cacheMode: plan.cache,
      onSpend,
    });
    ({ env, agent } = withModelUser(plan.env, agent, { model: userClient }));
  }
  const progress = createProgress(io, `${plan.env.info.name}/${plan.agentName}`, showProgress);
  let result: EvalResult;
  try {
    result = await runEvaluation({
      store,
      env,
      agent,
      settings: {
        runId,
        tasks: plan.tasks,
        // The tasks themselves identify the run, however they were written (test = 0-99).
        taskSpec: formatTaskRange(plan.tasks),
        samples: plan.samples,
        maxTurns: plan.maxTurns,
        timeoutMs: plan.timeoutMs,
        seed: plan.seed,
        concurrency: plan.concurrency,
        identity: plan.identity,
      },
      onProgress: (p) => progress.update(p),
      signal: interruption.signal,
      stop: stop.signal,
      writerThread: true,
      failFast: plan.failOnError > 0 ? { consecutiveErrors: plan.failOnError } : false,
    });
  } finally {
    progress.stop();
  }
  const metrics = runMetrics(store.episodes(runId), { seed: plan.seed });
  const outcome = {
    plan,
    result,
    metrics,
    usage: store.usageByModel(runId),
  };
  if (result.stopReason === FAIL_FAST_STOP && result.failFast) {
    const message = `stopped after ${result.failFast.episodes} episodes failed with the same error: ${result.failFast.error}`;
    io.stderr(json ? errorJson("run", "FailFastStop", message) : `clade: error: ${message}\n`);
    return { ...outcome, exitCode: EXIT.failFast };
  }
  if (metrics.errors > 0) {
    io.stderr(
      `${metrics.errors} episodes ended in an error (not counted as failures; see clade show ${runId} --episodes); run the same command to retry them\n`,
    );
  }
  if (result.stopReason === "budget") {
    io.stderr(
      `${runId}: budget of $${plan.budgetUsd} reached ($${spent.toFixed(4)} spent): ${result.notRun} episodes not run; raise --budget-usd and run the same command to finish\n`,
    );
    return { ...outcome, exitCode: EXIT.budget };
  }
  if (result.interrupted) {
    io.stderr(`interrupted: ${result.ran} new episodes stored; run the same command to resume\n`);
    return { ...outcome, exitCode: interruption.exitCode() };
  }
  if (metrics.errors > 0) {
    return {
      ...outcome,
      exitCode: metrics.finished === 0 ? EXIT.allErrored : EXIT.someErrored,
    };
  }
  return { ...outcome, exitCode: 0 };
}

/** Installs Ctrl-C / SIGTERM handlers for `body`, removed when it ends. */
async function withInterruption<T>(body: (interruption: Interruption) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let signalExit = 130;
  const onSignal = (name: NodeJS.Signals) => {
    signalExit = name === "SIGTERM" ? 143 : 130;
    controller.abort(new Error("interrupted"));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await body({ signal: controller.signal, exitCode: () => signalExit });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

// ---------------------------------------------------------------------------------------------
// Reports.

/** A run as `--json` gives it (inside `clade.eval/1`, or one of `clade.eval-set/1`'s runs). */
function outcomeJson(outcome: RunOutcome): Record<string, unknown> {
  const { plan } = outcome;
  return {
    ...(plan.evalName ? { eval: plan.evalName } : {}),
    runId: plan.runId,
    ...outcome.result,
    env: plan.env.info.name,
    envVersion: plan.env.info.version,
    agent: plan.agentName,
    model: plan.model ? publicModelSpec(plan.model) : null,
    ...(plan.userModel ? { userModel: publicModelSpec(plan.userModel) } : {}),
    exitCode: outcome.exitCode,
    ...(outcome.error !== undefined ? { error: outcome.error } : {}),
    // What its model calls cost in all: null when none was priced, unpriced when any was not.
    ...(outcome.usage ? addCosts(outcome.usage) : {}),
    ...(outcome.metrics ? { metrics: outcome.metrics } : {}),
    ...(outcome.usage ? { usage: outcome.usage } : {}),
  };
}

function runHeading(outcome: RunOutcome): string {
  const { plan, result } = outcome;
  const model = plan.model ? `, model ${modelLabel(plan.model.name)}` : "";
  const user = plan.userModel ? `, user model ${modelLabel(plan.userModel.name)}` : "";
  const resumed = result?.resumed ? ` (resumed: ${result.skipped} episodes already stored)` : "";
  return `run ${plan.runId}: ${plan.env.info.name} v${plan.env.info.version}, agent ${plan.agentName}${model}${user}${resumed}`;
}

/** One row per run: the eval set's combined table. */
function renderEvalSet(outcomes: readonly RunOutcome[]): string {
  return renderTable(
    [
      "run",
      "env",
      "agent",
      "model",
      "success",
      "95% CI",
      "mean reward",
      "errors",
      "cost",
      "episodes",
      "exit",
    ],
    outcomes.map(({ plan, metrics, usage, exitCode }) => [
      plan.runId,
      plan.env.info.name,
      plan.agentName,
      plan.model ? modelLabel(plan.model.name) : "-",
      metrics ? formatRate(metrics.successRate) : "-",
      metrics ? formatInterval(metrics.successRateInterval) : "-",
      metrics ? formatRate(metrics.meanReward) : "-",
      metrics ? metrics.errors : "-",
      usage && usage.length > 0 ? formatCost(addCosts(usage)) : "-",
      metrics ? metrics.episodes : "-",
      exitCode,
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// The command.

/**
 * `clade eval [NAME...] [options]`: with no names, one run from the options (--env required);
 * with names, the named evals of clade.config (--config PATH says which file), every run of them
 * in turn and a combined table.
 */
export async function evalCommand(
  names: readonly string[],
  raw: RawEvalOptions,
  io: CliIo,
): Promise<number> {
  const options = parseOptions(evalOptionsSchema, raw);
  // --sandbox none is the user's explicit choice for this command only (the coding env's
  // version then says so, in the stored run and on every report of it).
  if (options.sandbox === undefined) return evaluate(names, options, io);
  setDefaultSandboxMode(options.sandbox);
  try {
    return await evaluate(names, options, io);
  } finally {
    setDefaultSandboxMode(undefined);
  }
}

async function evaluate(
  names: readonly string[],
  options: EvalOptions,
  io: CliIo,
): Promise<number> {
  // Everything is validated before the store is opened: bad input writes nothing.
  let configLoaded: Promise<{ config: CladeConfig; path?: string }> | undefined;
  // A --config that is missing or invalid is an error whatever the agent: the user meant it.
  const loadModelConfig = async () => {
    configLoaded ??= loadConfig(options.config);
    return (await configLoaded).config;
  };
  if (options.config) await loadModelConfig();
  // Warnings while a run goes on (a remote env's task field that seems ignored): one line each.
  const warn = (message: string) => io.stderr(`warning: ${message}\n`);

  if (names.length === 0) {
    const plan = await preparePlan(singleRequest(options), loadModelConfig, warn);
    const store = RunStore.open(options.db);
    let outcome: RunOutcome;
    try {
      outcome = await withInterruption((interruption) =>
        executeRun(plan, store, io, interruption, !options.json && !options.quiet, options.json),
      );
    } finally {
      store.close();
    }
    if (options.json) {
      io.stdout(`${JSON.stringify({ schema: "clade.eval/1", ...outcomeJson(outcome) })}\n`);
    } else {
      io.stdout(`${runHeading(outcome)}\n\n`);
      if (outcome.metrics) io.stdout(renderMetrics(outcome.metrics));
      if (outcome.usage && outcome.usage.length > 0) io.stdout(`\n${renderUsage(outcome.usage)}`);
    }
    return outcome.exitCode;
  }

  if (options.runId !== undefined && options.runId.length > 60) {
    throw new UsageError(
      "--run-id with eval names is a prefix of the run ids: at most 60 characters",
    );
  }
  await loadModelConfig();
  const { config, path } = await (configLoaded as Promise<{ config: CladeConfig; path?: string }>);
  const requests = evalSetRequests(names, options, config, path);
  const plans: RunPlan[] = [];
  for (const request of requests) plans.push(await preparePlan(request, loadModelConfig, warn));
  const seen = new Map<string, RunPlan>();
  for (const plan of plans) {
    const other = seen.get(plan.runId);
    if (other) {
      throw new UsageError(
        `two runs of eval "${plan.evalName}" would share the run id "${plan.runId}"; give them distinct model names (clade.config models) or environment names`,
      );
    }
    seen.set(plan.runId, plan);
  }

  const store = RunStore.open(options.db);
  const outcomes: RunOutcome[] = [];
  let interruptedExit: number | undefined;
  try {
    await withInterruption(async (interruption) => {
      for (const plan of plans) {
        if (interruption.signal.aborted) {
          interruptedExit = interruption.exitCode();
          break;
        }
        try {
          const outcome = await executeRun(
            plan,
            store,
            io,
            interruption,
            !options.json && !options.quiet,
            options.json,
          );
          outcomes.push(outcome);
          if (!options.json) {
            const m = outcome.metrics as MetricsReport;
            io.stdout(
              `${runHeading(outcome)}: ${m.successes}/${m.finished} succeeded, ${m.errors} errors\n`,
            );
          }
          if (outcome.result?.interrupted && outcome.result.stopReason === "signal") {
            interruptedExit = outcome.exitCode;
            break;
          }
        } catch (error) {
          // A run refused (its id holds another configuration, or a module failed at run time)
          // is reported and the others still run.
          if (!(error instanceof RunConflictError || error instanceof UserModuleError)) throw error;
          io.stderr(
            options.json
              ? errorJson("usage", error.name, error.message)
              : `clade: error: ${error.message}\n`,
          );
          outcomes.push({ plan, exitCode: EXIT.badInput, error: error.message });
        }
      }
    });
  } finally {
    store.close();
  }
  const exitCode = interruptedExit ?? worstExitCode(outcomes.map((o) => o.exitCode));
  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        schema: "clade.eval-set/1",
        evals: [...new Set(names)],
        exitCode,
        runs: outcomes.map(outcomeJson),
      })}\n`,
    );
  } else {
    io.stdout(`\n${renderEvalSet(outcomes)}`);
  }
  return exitCode;
}
