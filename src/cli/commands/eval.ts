/** `clade eval`: run an agent on tasks of an environment, storing every step; resumable. */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { LlmAgentOptions } from "../../agent/prompting.js";
import { isLlmAgent, resolveAgent, UnknownAgentError } from "../../agent/registry.js";
import { BUILTIN_ENVS, findEnv } from "../../env/registry.js";
import { connectRemoteEnv, fetchCladeEnvInfo } from "../../env/remote/index.js";
import { type EvalResult, runEvaluation } from "../../eval/evaluation.js";
import { runMetrics } from "../../eval/report.js";
import { formatTaskRange, parseTaskRange } from "../../eval/task-range.js";
import { CACHE_MODES, type CacheMode } from "../../model/cache.js";
import { createModelClient } from "../../model/client.js";
import { loadConfig } from "../../model/config.js";
import { checkKey, type ResolvedModel, resolveModel } from "../../model/resolve.js";
import { formatModelSpec } from "../../model/spec.js";
import { createResponseCache } from "../../store/response-cache.js";
import { RunStore } from "../../store/run-store.js";
import { type CliIo, UsageError } from "../io.js";
import { integerOption, parseOptions, runIdSchema } from "../options.js";
import { createProgress } from "../progress.js";
import { renderMetrics, renderUsage } from "../report.js";

const numberOption = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, "must be a number")
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

export const evalOptionsSchema = z.object({
  env: z.string({ error: "is required" }).min(1, "is required"),
  agent: z.string().min(1, "must not be empty").optional(),
  tasks: z.string().min(1, "must not be empty"),
  samples: integerOption(1, 10_000),
  concurrency: integerOption(1, 1024),
  maxTurns: integerOption(1, 100_000).optional(),
  timeout: integerOption(1, 86_400),
  seed: integerOption(0, 2 ** 31 - 1),
  runId: runIdSchema.optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
  model: z.string().min(1, "must not be empty").optional(),
  config: z.string().min(1, "must not be empty").optional(),
  cache: z.enum(CACHE_MODES as [CacheMode, ...CacheMode[]], {
    error: "must be off, read, write or rw",
  }),
  budgetUsd: numberOption(0, 1e9).optional(),
  temperature: numberOption(0, 2).optional(),
  maxTokens: integerOption(1, 1_000_000).optional(),
  history: integerOption(0, 100_000).optional(),
  systemPrompt: z.string().optional(),
  envUrl: z.url({ error: "must be an http(s) URL" }).optional(),
  dialect: z.enum(["id", "env_idx", "clade"], { error: "must be id, env_idx or clade" }),
  envPath: z.string().min(1, "must not be empty").optional(),
  taskField: z
    .string()
    .regex(/^\w+$/, "must be a field name such as data_idx, game or seed")
    .optional(),
  createBody: z.string().optional(),
});

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

/** A remote environment: --env names it, --env-url/--dialect/--env-path say where and how. */
async function connectEnv(options: z.output<typeof evalOptionsSchema>) {
  const url = options.envUrl as string;
  if (options.dialect === "clade") {
    const served = await fetchCladeEnvInfo({ url });
    if (!served) throw new UsageError(`${url} does not answer clade's /v1/info; try --dialect id`);
    if (served.name !== options.env) {
      throw new UsageError(`${url} serves "${served.name}", not "${options.env}"`);
    }
  }
  const createBody = parseCreateBody(options.createBody);
  const remote = await connectRemoteEnv({
    url,
    dialect: options.dialect,
    // AgentGym's servers mostly serve at the root; some (Maze, Wordle) under a prefix.
    ...(options.envPath ? { env: options.envPath } : {}),
    ...(options.taskField ? { taskField: options.taskField } : {}),
    ...(createBody ? { createBody } : {}),
    // A clade server describes itself (/v1/info); for others the name is all we know.
    info: { name: options.env },
  });
  // The random baseline samples as it does in-process when the environment is one clade knows.
  const known = BUILTIN_ENVS.find((def) => def.info.name === options.env);
  return known ? { ...remote, sampleAction: known.sampleAction } : remote;
}

export type RawEvalOptions = z.input<typeof evalOptionsSchema>;

/** Most episodes (tasks × samples) one run may plan: its plan is held in memory. */
export const MAX_EPISODES = 1_000_000;

/**
 * Exit codes of `clade eval` beyond 0 (every episode finished) and 2 (bad input), documented in
 * the README so that scripts and CI can tell outcomes apart.
 */
export const EXIT = {
  budget: 3,
  someErrored: 4,
  allErrored: 5,
} as const;

/** A fresh id: time to the second for readability, random hex so that parallel runs differ. */
function defaultRunId(env: string, agent: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${env}-${agent}-${stamp}-${randomBytes(3).toString("hex")}`;
}

/**
 * A spec fit for the store: credentials a base URL may carry (user:pass@, or a key in the query
 * string) are dropped.
 */
function publicSpec(model: ResolvedModel): string {
  if (!model.spec.baseUrl) return formatModelSpec(model.spec);
  const url = new URL(model.spec.baseUrl);
  url.username = "";
  url.password = "";
  url.search = "";
  url.hash = "";
  return formatModelSpec({ ...model.spec, baseUrl: url.toString().replace(/\/+$/, "") });
}

export async function evalCommand(raw: RawEvalOptions, io: CliIo): Promise<number> {
  const options = parseOptions(evalOptionsSchema, raw);
  // Everything is validated before the store is opened: bad input writes nothing.
  if (!options.envUrl && (options.envPath || options.taskField || options.createBody)) {
    throw new UsageError("--env-path, --task-field and --create-body need --env-url");
  }
  const env = options.envUrl ? await connectEnv(options) : findEnv(options.env);
  const tasks = parseTaskRange(options.tasks, env.info);
  if (tasks.length * options.samples > MAX_EPISODES) {
    throw new UsageError(
      `${tasks.length} tasks × ${options.samples} samples is more than ${MAX_EPISODES} episodes; split the run`,
    );
  }
  const agentName = options.agent ?? (options.model ? "react" : "reference");
  const llm = isLlmAgent(agentName);
  if (llm && !options.model) {
    throw new UnknownAgentError(`agent "${agentName}" needs a model: add --model SPEC`);
  }
  if (!llm && options.model) {
    throw new UsageError(`--model applies to the react and tools agents, not "${agentName}"`);
  }
  let model: ResolvedModel | undefined;
  let agentOptions: LlmAgentOptions = {};
  // A --config that is missing or invalid is an error whatever the agent: the user meant it.
  const { config } =
    options.model || options.config ? await loadConfig(options.config) : { config: undefined };
  if (options.model && config) {
    model = resolveModel(options.model, config);
    checkKey(model);
    const params = {
      ...model.params,
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    };
    model = { ...model, params };
    agentOptions = {
      ...(options.history !== undefined ? { historyWindow: options.history } : {}),
      ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    };
  } else {
    resolveAgent(agentName, env); // unknown agent names fail here, before any write
  }
  const runId = options.runId ?? defaultRunId(env.info.name, agentName);
  const store = RunStore.open(options.db);
  const controller = new AbortController();
  const stop = new AbortController();
  let signalExit = 130;
  const onSignal = (name: NodeJS.Signals) => {
    signalExit = name === "SIGTERM" ? 143 : 130;
    controller.abort(new Error("interrupted"));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // The budget is the run's: a resumed run starts from what its stored calls already cost.
  let spent = store.runCostUsd(runId);
  const checkBudget = () => {
    if (options.budgetUsd !== undefined && spent >= options.budgetUsd && !stop.signal.aborted) {
      stop.abort("budget");
    }
  };
  checkBudget();
  const agent = model
    ? resolveAgent(agentName, env, {
        model: createModelClient(model, {
          cache: createResponseCache(store.db),
          cacheMode: options.cache,
          onSpend: (cost) => {
            spent += cost;
            if (
              options.budgetUsd !== undefined &&
              spent >= options.budgetUsd &&
              !stop.signal.aborted
            ) {
              stop.abort("budget");
            }
          },
        }),
        options: agentOptions,
      })
    : resolveAgent(agentName, env);
  const progress = createProgress(
    io,
    `${env.info.name}/${agentName}`,
    !options.json && !options.quiet,
  );
  let result: EvalResult;
  try {
    result = await runEvaluation({
      store,
      env,
      agent,
      settings: {
        runId,
        tasks,
        // The tasks themselves identify the run, however they were written (test = 0-99).
        taskSpec: formatTaskRange(tasks),
        samples: options.samples,
        maxTurns: options.maxTurns ?? env.info.maxSteps,
        timeoutMs: options.timeout * 1000,
        seed: options.seed,
        concurrency: options.concurrency,
        identity: {
          ...(options.envUrl
            ? {
                envUrl: options.envUrl,
                dialect: options.dialect,
                ...(options.envPath ? { envPath: options.envPath } : {}),
              }
            : {}),
          ...(model ? { model: publicSpec(model), params: model.params, agentOptions } : {}),
        },
      },
      onProgress: (p) => progress.update(p),
      signal: controller.signal,
      stop: stop.signal,
      writerThread: true,
    });
  } finally {
    progress.stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  const report = runMetrics(store.episodes(runId), { seed: options.seed });
  const usage = store.usageByModel(runId);
  store.close();
  if (options.json) {
    io.stdout(`${JSON.stringify({ ...result, metrics: report, usage })}\n`);
  } else {
    const resumedNote = result.resumed
      ? ` (resumed: ${result.skipped} episodes already stored)`
      : "";
    io.stdout(
      `run ${runId}: ${env.info.name} v${env.info.version}, agent ${agentName}${resumedNote}\n\n`,
    );
    io.stdout(renderMetrics(report));
    if (usage.length > 0) io.stdout(`\n${renderUsage(usage)}`);
  }
  if (report.errors > 0) {
    io.stderr(
      `${report.errors} episodes ended in an error (not counted as failures; see clade show ${runId} --episodes); run the same command to retry them\n`,
    );
  }
  if (result.stopReason === "budget") {
    io.stderr(
      `budget of $${options.budgetUsd} reached ($${spent.toFixed(4)} spent): ${result.notRun} episodes not run; raise --budget-usd and run the same command to finish\n`,
    );
    return EXIT.budget;
  }
  if (result.interrupted) {
    io.stderr(`interrupted: ${result.ran} new episodes stored; run the same command to resume\n`);
    return signalExit;
  }
  if (report.errors > 0) return report.finished === 0 ? EXIT.allErrored : EXIT.someErrored;
  return 0;
}
