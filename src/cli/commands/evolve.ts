/**
 * `clade evolve`: self-improvement search (docs/search.md), for now over simulated processes:
 *
 * - `clade evolve --simulate SCENARIO [--method hgm,dgm,greedy,random] [--seeds N]`: the methods
 *   compared over seeds 0..N-1 in memory (clade.evolve-simulation/1);
 * - `clade evolve --simulate SCENARIO --method M --seed S --run-id ID`: one search stored in the
 *   store's event log, resumable by running the same command again (clade.evolve/1).
 *
 * - `clade evolve --agent DIR --env ENV --modify-model SPEC --run-id ID ...`: a search over a real
 *   agent folder, every agent in the sandbox (evolve-agent.ts).
 * - `clade evolve --policy FILE --env ENV --run-id ID ...`: a search over training branches of an
 *   embedded policy (evolve-policy.ts).
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { SearchResult, StopReason } from "../../improve/search/engine.js";
import {
  createPolicy,
  isMethod,
  METHODS,
  type Method,
} from "../../improve/search/policies/index.js";
import { lowerQuantile, quantileChoice } from "../../improve/search/policy.js";
import {
  type Estimate,
  type MethodSummary,
  runSimulatedSearch,
  runSimulation,
  type SimulationReport,
} from "../../improve/search/simulation/experiment.js";
import { BUILTIN_SCENARIO_NAMES, builtinScenario } from "../../improve/search/simulation/index.js";
import { agentOf } from "../../improve/search/simulation/process.js";
import {
  bestQuality,
  parseScenario,
  type Scenario,
} from "../../improve/search/simulation/scenario.js";
import type { SearchTree } from "../../improve/search/tree.js";
import { SANDBOX_MODES, setDefaultSandboxMode } from "../../sandbox/mode.js";
import { type JsonValue, SearchStore } from "../../store/search-log.js";
import { type CliIo, UsageError } from "../io.js";
import { integerOption, numberOption, parseOptions, runIdSchema } from "../options.js";
import { type Cell, renderTable } from "../table.js";

const DEFAULT_BUDGET = 800;
const DEFAULT_SEEDS = 100;
/** How often a running search prints its progress line (without --json or --quiet). */
/** How often a search's progress line is printed. */
const PROGRESS_INTERVAL_MS = 2000;

/** What a stored search over agents or training branches is asked for, besides its own kind. */
export interface SearchRequestBase {
  env: string;
  tasks: string;
  method: Method;
  seed: number;
  T: number;
  W: number;
  runId: string;
  db: string;
  json: boolean;
  progress: boolean;
}

function searchRequestBase(options: EvolveOptions, method: Method): SearchRequestBase {
  return {
    env: options.env as string,
    tasks: options.tasks ?? "test",
    method,
    seed: options.seed ?? 0,
    T: options.budget ?? DEFAULT_BUDGET,
    W: options.workers ?? 1,
    runId: options.runId as string,
    db: options.db,
    json: options.json ?? false,
    progress: !options.json && !options.quiet,
  };
}

const evolveOptionsSchema = z.object({
  simulate: z.string().min(1, "must not be empty").optional(),
  method: z.string().min(1, "must not be empty").optional(),
  seeds: integerOption(1, 10_000).optional(),
  seed: integerOption(0, 2 ** 31 - 1).optional(),
  budget: integerOption(0, 1_000_000).optional(),
  workers: integerOption(1, 256).optional(),
  budgetUsd: numberOption(0, 1_000_000).optional(),
  latencyMs: integerOption(0, 60_000).optional(),
  runId: runIdSchema.optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
  // A search over a real agent folder (evolve-agent.ts).
  agent: z.string().min(1, "must not be empty").optional(),
  env: z.string().min(1, "must not be empty").optional(),
  tasks: z.string().min(1, "must not be empty").optional(),
  model: z.string().min(1, "must not be empty").optional(),
  modifyModel: z.string().min(1, "must not be empty").optional(),
  maxTurns: integerOption(1, 10_000).optional(),
  timeout: integerOption(1, 86_400).optional(),
  sandbox: z.enum(SANDBOX_MODES, { error: 'must be "bwrap" (the sandbox) or "none"' }).optional(),
  config: z.string().min(1, "must not be empty").optional(),
  // A search over training branches of a policy (evolve-policy.ts).
  policy: z.string().min(1, "must not be empty").optional(),
  dir: z.string().min(1, "must not be empty").optional(),
});

/** Options that belong to one kind of search only. */
const AGENT_ONLY = {
  env: "--env",
  tasks: "--tasks",
  model: "--model",
  modifyModel: "--modify-model",
  maxTurns: "--max-turns",
  timeout: "--timeout",
  sandbox: "--sandbox",
  config: "--config",
} as const;
const SIMULATION_ONLY = { seeds: "--seeds", latencyMs: "--latency-ms" } as const;
const DEFAULT_AGENT_TIMEOUT_SECONDS = 300;

export type RawEvolveOptions = z.input<typeof evolveOptionsSchema>;
type EvolveOptions = z.output<typeof evolveOptionsSchema>;

export async function evolveCommand(raw: RawEvolveOptions, io: CliIo): Promise<number> {
  const options = parseOptions(evolveOptionsSchema, raw);
  if (options.policy !== undefined) return evolvePolicy(options, io);
  if (options.dir !== undefined) {
    throw new UsageError("--dir is for a search over training branches: give --policy FILE");
  }
  if (options.agent !== undefined) return evolveAgent(options, io);
  for (const [key, flag] of Object.entries(AGENT_ONLY)) {
    if (options[key as keyof typeof AGENT_ONLY] !== undefined) {
      const policyToo = key === "env" || key === "tasks" ? " (or --policy FILE)" : "";
      throw new UsageError(
        `${flag} is for a search over an agent folder: give --agent DIR${policyToo}`,
      );
    }
  }
  if (options.simulate === undefined) {
    throw new UsageError(
      "give --agent DIR (a real agent folder; see clade init-agent), --policy FILE (training " +
        "branches of a policy; see clade train) or --simulate SCENARIO " +
        `(${BUILTIN_SCENARIO_NAMES.join(", ")}, or a JSON file)`,
    );
  }
  const scenario = loadScenario(options.simulate);
  const methods = parseMethods(options.method, options.runId === undefined);
  const stored = options.runId !== undefined;
  const onlyStored = { seed: "--seed", budgetUsd: "--budget-usd", latencyMs: "--latency-ms" };
  for (const [key, flag] of Object.entries(onlyStored)) {
    if (!stored && options[key as keyof typeof onlyStored] !== undefined) {
      throw new UsageError(`${flag} is for one stored search: give --run-id too`);
    }
  }
  if (stored && options.seeds !== undefined) {
    throw new UsageError(
      "--seeds compares seeds in memory; a stored search (--run-id) takes --seed",
    );
  }
  if (stored && methods.length !== 1) {
    throw new UsageError("a stored search (--run-id) takes one --method");
  }
  const common = {
    scenario,
    T: options.budget ?? DEFAULT_BUDGET,
    W: options.workers ?? 1,
    progress: !options.json && !options.quiet,
  };
  return withInterruption(async (signal) => {
    if (stored) {
      return storedSearch(
        {
          ...common,
          method: methods[0] as Method,
          seed: options.seed ?? 0,
          runId: options.runId as string,
          db: options.db,
          budgetUsd: options.budgetUsd,
          latencyMs: options.latencyMs,
          json: options.json ?? false,
        },
        signal,
        io,
      );
    }
    const seeds = options.seeds ?? DEFAULT_SEEDS;
    const report = await runSimulation({
      scenario: common.scenario,
      methods,
      seeds,
      T: common.T,
      W: common.W,
      signal,
      onRun: throttled(common.progress, (method, seed) =>
        io.stderr(`evolve --simulate ${scenario.name}: ${method}, ${seed + 1}/${seeds} seeds\n`),
      ),
    });
    io.stdout(
      options.json ? `${JSON.stringify(simulationJson(report))}\n` : renderSimulation(report),
    );
    return 0;
  }, io);
}

const RUN_ID_FLAG = "--run-id ID (the same command resumes the search)";

/** One line naming every option a kind of stored search needs and was not given. */
function requireOptions(
  options: EvolveOptions,
  kind: string,
  required: readonly [keyof EvolveOptions, string][],
): void {
  const missing = required.filter(([key]) => options[key] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`${kind} needs ${missing.map(([, flag]) => flag).join(", ")}`);
  }
}

/** `--agent DIR`: a search over a real agent folder, stored and resumable (evolve-agent.ts). */
async function evolveAgent(options: EvolveOptions, io: CliIo): Promise<number> {
  if (options.simulate !== undefined) {
    throw new UsageError("--agent and --simulate are two kinds of search: give one");
  }
  for (const [key, flag] of Object.entries(SIMULATION_ONLY)) {
    if (options[key as keyof typeof SIMULATION_ONLY] !== undefined) {
      throw new UsageError(`${flag} is for simulated searches, not --agent`);
    }
  }
  requireOptions(options, "--agent", [
    ["env", "--env ENV"],
    ["modifyModel", "--modify-model SPEC (the model that writes the self-modifications)"],
    ["runId", RUN_ID_FLAG],
  ]);
  const methods = parseMethods(options.method, false);
  if (methods.length !== 1) throw new UsageError("a search over an agent takes one --method");
  if (options.sandbox !== undefined) setDefaultSandboxMode(options.sandbox);
  try {
    const { agentSearch } = await import("./evolve-agent.js");
    return await withInterruption(
      (signal) =>
        agentSearch(
          {
            ...searchRequestBase(options, methods[0] as Method),
            agent: options.agent as string,
            ...(options.model ? { model: options.model } : {}),
            modifyModel: options.modifyModel as string,
            ...(options.budgetUsd !== undefined ? { budgetUsd: options.budgetUsd } : {}),
            ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
            timeoutSeconds: options.timeout ?? DEFAULT_AGENT_TIMEOUT_SECONDS,
            ...(options.config ? { config: options.config } : {}),
          },
          signal,
          io,
        ),
      io,
    );
  } finally {
    if (options.sandbox !== undefined) setDefaultSandboxMode(undefined);
  }
}

/** `--policy FILE`: a search over training branches, stored and resumable (evolve-policy.ts). */
async function evolvePolicy(options: EvolveOptions, io: CliIo): Promise<number> {
  if (options.agent !== undefined || options.simulate !== undefined) {
    throw new UsageError(
      `--policy and ${options.agent !== undefined ? "--agent" : "--simulate"} are two kinds of search: give one`,
    );
  }
  const notHere = {
    ...SIMULATION_ONLY,
    model: "--model",
    modifyModel: "--modify-model",
    maxTurns: "--max-turns",
    timeout: "--timeout",
    sandbox: "--sandbox",
    config: "--config",
    budgetUsd: "--budget-usd",
  } as const;
  for (const [key, flag] of Object.entries(notHere)) {
    if (options[key as keyof typeof notHere] !== undefined) {
      throw new UsageError(
        `${flag} is not for a search over training branches (--policy: no model, no sandbox, no cost)`,
      );
    }
  }
  requireOptions(options, "--policy", [
    ["env", "--env ENV"],
    ["runId", RUN_ID_FLAG],
  ]);
  const methods = parseMethods(options.method, false);
  if (methods.length !== 1) {
    throw new UsageError("a search over training branches takes one --method");
  }
  const { policySearch } = await import("./evolve-policy.js");
  return withInterruption(
    (signal) =>
      policySearch(
        {
          ...searchRequestBase(options, methods[0] as Method),
          policy: options.policy as string,
          ...(options.dir !== undefined ? { dir: options.dir } : {}),
        },
        signal,
        io,
      ),
    io,
  );
}

/** A built-in scenario's name, or a JSON file of one (a value with '/' or ending in .json). */
function loadScenario(value: string): Scenario {
  if (!value.includes("/") && !value.endsWith(".json")) {
    const scenario = builtinScenario(value);
    if (!scenario) {
      throw new UsageError(
        `unknown scenario "${value}" (built in: ${BUILTIN_SCENARIO_NAMES.join(", ")}; or a JSON file)`,
      );
    }
    return scenario;
  }
  let input: unknown;
  try {
    input = JSON.parse(readFileSync(value, "utf8"));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`--simulate ${value}: cannot read a JSON scenario (${reason})`);
  }
  try {
    return parseScenario(input);
  } catch (error) {
    const issue = (error as z.ZodError).issues?.[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new UsageError(`--simulate ${value}: ${where}${issue?.message ?? String(error)}`);
  }
}

function parseMethods(value: string | undefined, comparison: boolean): Method[] {
  if (value === undefined) return comparison ? [...METHODS] : ["hgm"];
  const names = value.split(",").map((name) => name.trim());
  for (const name of names) {
    if (!isMethod(name)) {
      throw new UsageError(`--method: unknown method "${name}" (known: ${METHODS.join(", ")})`);
    }
  }
  if (new Set(names).size !== names.length) throw new UsageError("--method lists a method twice");
  return names as Method[];
}

/** Runs `body` with Ctrl-C / SIGTERM turned into an abort; exit 130 / 143 when it fired. */
export async function withInterruption(
  body: (signal: AbortSignal) => Promise<number>,
  io: CliIo,
): Promise<number> {
  const controller = new AbortController();
  let exitCode = 130;
  const onSignal = (name: NodeJS.Signals) => {
    exitCode = name === "SIGTERM" ? 143 : 130;
    controller.abort(Object.assign(new Error("interrupted"), { exitCode }));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const code = await body(controller.signal);
    return controller.signal.aborted ? exitCode : code;
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    io.stderr("clade: interrupted\n");
    return exitCode;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** A callback called at most once per PROGRESS_INTERVAL_MS (never when `enabled` is false). */
export function throttled<A extends unknown[]>(enabled: boolean, report: (...args: A) => void) {
  let last = performance.now();
  return (...args: A) => {
    if (!enabled) return;
    const now = performance.now();
    if (now - last < PROGRESS_INTERVAL_MS) return;
    last = now;
    report(...args);
  };
}

/** What every stored search's configuration begins with: its kind, method and budget. */
export function storedSearchConfig(
  kind: string,
  request: Pick<SearchRequestBase, "method" | "seed" | "T" | "W">,
): Record<string, JsonValue> {
  return {
    kind,
    method: request.method,
    hyperparameters: createPolicy(request.method).hyperparameters,
    seed: request.seed,
    budget: request.T,
    workers: request.W,
  };
}

/** The progress line's "best so far" for a search over real agents: the chosen node's record. */
export function bestSoFar(tree: SearchTree): string {
  const best = quantileChoice(tree, 1);
  if (best === null) return "none yet";
  const { s, f } = tree.node(best);
  return `node ${best} (${s}/${s + f} passed)`;
}

// ---------------------------------------------------------------------------------------------
// One stored search.

interface StoredSearchRequest {
  scenario: Scenario;
  method: Method;
  seed: number;
  T: number;
  W: number;
  runId: string;
  db: string;
  budgetUsd: number | undefined;
  latencyMs: number | undefined;
  json: boolean;
  progress: boolean;
}

const EXIT_CODES: Record<StopReason, number> = {
  budget: 0,
  exhausted: 0,
  "budget-usd": 3,
  // Nothing more can be made: what was found stands; the reason is printed.
  "improvements-failing": 0,
  signal: 130,
};

/** The exit code of a stored search that stopped for this reason (130/143 when interrupted). */
export function searchExitCode(stopReason: StopReason, signal: AbortSignal): number {
  return stopReason === "signal"
    ? ((signal.reason as { exitCode?: number } | undefined)?.exitCode ?? 130)
    : EXIT_CODES[stopReason];
}

/** The JSON fields every stored search reports, simulated or over agents. */
export function searchProgressJson(result: SearchResult): Record<string, unknown> {
  const { tree } = result;
  return {
    resumed: result.resumed,
    redispatched: result.redispatched,
    stopReason: result.stopReason,
    t: tree.t,
    nodes: tree.size - 1,
    improvements: {
      started: tree.improvementsStarted,
      finished: tree.improvementsFinished,
      failed: tree.improvementsFailed,
    },
    evaluations: { passes: tree.passes, fails: tree.fails, errors: tree.errors },
  };
}

async function storedSearch(
  request: StoredSearchRequest,
  signal: AbortSignal,
  io: CliIo,
): Promise<number> {
  const { scenario, method, seed, T, W, runId } = request;
  const store = SearchStore.open(request.db);
  try {
    const config: Record<string, JsonValue> = {
      ...storedSearchConfig("simulation", request),
      scenario: scenario as unknown as JsonValue,
    };
    const { log } = store.beginSearch(runId, config);
    const progress = throttled(request.progress, (tree: SearchTree) =>
      io.stderr(`${progressLine(runId, tree, T, scenario)}\n`),
    );
    const { result } = await runSimulatedSearch({
      scenario,
      method,
      seed,
      T,
      W,
      log,
      signal,
      onEvent: (_event, tree) => progress(tree),
      ...(request.budgetUsd !== undefined ? { budgetUsd: request.budgetUsd } : {}),
      ...(request.latencyMs ? { latencyMs: request.latencyMs } : {}),
    });
    const { tree, chosen, stopReason } = result;
    const finished = stopReason === "budget" || stopReason === "exhausted";
    store.setStatus(runId, finished ? "complete" : "stopped", finished ? null : stopReason);
    const epsilon = Number(createPolicy(method).hyperparameters.epsilon);
    const choice =
      chosen === null
        ? null
        : {
            node: chosen,
            s: tree.node(chosen).s,
            f: tree.node(chosen).f,
            lowerQuantile: lowerQuantile(tree.node(chosen), epsilon),
            quality: agentOf(tree.node(chosen)).p,
          };
    const exitCode = searchExitCode(stopReason, signal);
    if (request.json) {
      io.stdout(
        `${JSON.stringify({
          schema: "clade.evolve/1",
          runId,
          method,
          scenario: scenario.name,
          seed,
          budget: T,
          workers: W,
          ...searchProgressJson(result),
          costUsd: round(tree.usage.costUsd, 6),
          chosen: choice,
          bestQuality: bestQuality(scenario),
          exitCode,
        })}\n`,
      );
      return exitCode;
    }
    const lines = [
      `search ${runId}: ${method} on ${scenario.name}, seed ${seed}` +
        (result.resumed ? ` (resumed; ${result.redispatched} in flight dispatched again)` : ""),
      `  ${tree.t}/${T} evaluations, ${tree.size - 1} nodes; ${tree.improvementsStarted} improvements ` +
        `(${tree.improvementsFailed} gave no child); ${tree.errors} evaluations errored (not counted as fails)`,
      choice
        ? `  final choice: node ${choice.node} (${choice.s} passed, ${choice.f} failed; ` +
          `${epsilon} % quantile ${choice.lowerQuantile.toFixed(3)}), true quality ` +
          `${choice.quality.toFixed(3)} of a best reachable ${bestQuality(scenario).toFixed(3)}`
        : "  final choice: none (no node has a finished evaluation)",
      `  cost $${tree.usage.costUsd.toFixed(2)} (simulated)` +
        (finished ? "" : `; stopped: ${stopReason} (run the same command to resume)`),
    ];
    io.stdout(`${lines.join("\n")}\n`);
    return exitCode;
  } finally {
    store.close();
  }
}

function progressLine(runId: string, tree: SearchTree, T: number, scenario: Scenario): string {
  const best = quantileChoice(tree, 1);
  const bestText =
    best === null ? "none yet" : `node ${best} (true ${agentOf(tree.node(best)).p.toFixed(3)})`;
  return (
    `evolve ${runId} (${scenario.name}): ${tree.t}/${T} evaluations, ${tree.size - 1} nodes, ` +
    `best so far ${bestText}, $${tree.usage.costUsd.toFixed(2)}`
  );
}

// ---------------------------------------------------------------------------------------------
// Reports of a comparison (also used by `clade demo`).

const round = (value: number | null, digits = 4) =>
  value === null ? null : Number(value.toFixed(digits));

function estimateJson(value: Estimate): Estimate {
  return { mean: round(value.mean), low: round(value.low), high: round(value.high), n: value.n };
}

function methodJson(summary: MethodSummary): Record<string, unknown> {
  return {
    method: summary.method,
    hyperparameters: summary.hyperparameters,
    quality: estimateJson(summary.quality),
    regret: estimateJson(summary.regret),
    bestFound: estimateJson(summary.bestFound),
    evalsToBest: estimateJson(summary.evalsToBest),
    nodes: estimateJson(summary.nodes),
    improvements: estimateJson(summary.improvements),
    cmpCorrelation: {
      weighted: estimateJson(summary.cmpCorrelation.weighted),
      unweighted: estimateJson(summary.cmpCorrelation.unweighted),
    },
    trueCmpCorrelation: {
      weighted: estimateJson(summary.trueCmpCorrelation.weighted),
      unweighted: estimateJson(summary.trueCmpCorrelation.unweighted),
    },
    expansionShare: Object.fromEntries(
      Object.entries(summary.expansionShare).map(([branch, share]) => [branch, round(share)]),
    ),
    workHours: estimateJson(summary.workHours),
    qualityDifference: summary.qualityDifference ? estimateJson(summary.qualityDifference) : null,
    seconds: round(summary.seconds, 3),
  };
}

/** The clade.evolve-simulation/1 object (without `schema` it is `clade demo`'s `search`). */
export function simulationJson(report: SimulationReport): Record<string, unknown> {
  return {
    schema: "clade.evolve-simulation/1",
    scenario: { ...report.scenario, bestQuality: round(report.scenario.bestQuality) },
    budget: report.T,
    workers: report.W,
    seeds: report.seeds,
    methods: report.methods.map(methodJson),
  };
}

const fixed = (value: number | null, digits = 3) =>
  value === null ? "n/a" : value.toFixed(digits);
const interval = (value: Estimate, digits = 3) =>
  value.low === null ? "n/a" : `[${fixed(value.low, digits)}, ${fixed(value.high, digits)}]`;

export function renderSimulation(report: SimulationReport): string {
  const first = report.methods[0]?.method;
  const rows: Cell[][] = report.methods.map((m) => [
    m.method,
    fixed(m.quality.mean),
    interval(m.quality),
    m.qualityDifference
      ? `${fixed(m.qualityDifference.mean)} ${interval(m.qualityDifference)}`
      : "",
    fixed(m.regret.mean),
    fixed(m.bestFound.mean),
    fixed(m.evalsToBest.mean, 0),
    fixed(m.nodes.mean, 1),
    `${fixed(m.cmpCorrelation.weighted.mean, 2)} / ${fixed(m.cmpCorrelation.unweighted.mean, 2)}`,
    m.seconds.toFixed(2),
  ]);
  const head = [
    "method",
    "quality",
    "95% CI",
    `vs ${first} (95% CI)`,
    "regret",
    "best made",
    "evals to best",
    "nodes",
    "CMP corr. w / u",
    "s",
  ];
  const { scenario } = report;
  return (
    `scenario ${scenario.name}: ${scenario.description}\n` +
    `best reachable quality ${scenario.bestQuality.toFixed(3)}; budget ${report.T} evaluations; ` +
    `${report.seeds} seeds; ${report.W} worker${report.W === 1 ? "" : "s"}\n\n` +
    renderTable(head, rows) +
    "\nquality = true pass probability of the final choice (mean over seeds; CI: 95 % bootstrap);\n" +
    "regret = best reachable - quality; best made = true quality of the best agent the run made;\n" +
    "evals to best = evaluations before the run made it; CMP corr. = correlation of the method's\n" +
    "CMP estimate with the empirical CMP (best true quality among a node's descendants), weighted\n" +
    "by evaluations / unweighted. docs/search.md\n"
  );
}
