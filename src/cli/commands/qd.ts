import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { findEnv } from "../../env/registry.js";
import type { EnvDefinition } from "../../env/types.js";
import { formatTaskRange, parseTaskRange } from "../../eval/task-range.js";
import type { ScoreRange } from "../../improve/qd/archive.js";
import { comparePolicies, type PolicyComparison } from "../../improve/qd/compare.js";
import {
  CYCLEQD_BINS,
  type CycleState,
  type GenerationRecord,
  type InitRecord,
  type Variant,
} from "../../improve/qd/cycle.js";
import { type QdTask, type TrainingPhase, trainBaseAndExperts } from "../../improve/qd/experts.js";
import { policyFinalists } from "../../improve/qd/final.js";
import { createPolicyGenome, FilePolicyStore } from "../../improve/qd/policy-genome.js";
import { recordSummary, runStoredCycle } from "../../improve/qd/stored-cycle.js";
import { loadPolicy, type PolicyModel, savePolicy } from "../../improve/rl/policy/model.js";
import type { StepMetrics } from "../../improve/rl/train/train.js";
import { QdStore } from "../../store/qd-log.js";
import type { JsonValue } from "../../store/search-log.js";
import { type CliIo, sha256OfFile, UsageError } from "../io.js";
import { integerOption, parseOptions, runIdSchema } from "../options.js";
import { formatRate } from "../table.js";
import { throttled, withInterruption } from "./evolve.js";
import type { RawQdAgentOptions } from "./qd-agent.js";
import { archivesJson, comparisonJson, renderArchiveStats, renderComparison } from "./qd-report.js";

/** Defaults of the command (the algorithm's own are in src/improve/qd/cycle.ts). */
export const QD_DEFAULTS = {
  generations: 100,
  baseSteps: 30,
  expertSteps: 30,
  searchTasks: 20,
  testTasks: 50,
} as const;

const VARIANT_NAMES = ["paper", "released"] as const;

/** The options of the search itself, the same for policies and agent configurations. */
export const QD_SEARCH_OPTIONS = {
  tasks: z.string().min(1, "must not be empty"),
  variant: z.enum(VARIANT_NAMES, { error: "must be paper or released" }).optional(),
  generations: integerOption(0, 1_000_000).optional(),
  runId: runIdSchema,
  searchTasks: integerOption(1, 100_000).optional(),
  testTasks: integerOption(0, 100_000).optional(),
  bins: integerOption(2, 1000).optional(),
  ranges: z.string().min(1, "must not be empty").optional(),
  seed: integerOption(0, 2 ** 31 - 1).optional(),
  dir: z.string().min(1, "must not be empty").optional(),
  out: z.string().min(1, "must not be empty").optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
};

const qdOptionsSchema = z.object({
  ...QD_SEARCH_OPTIONS,
  expert: z.array(z.string()).optional(),
  base: z.string().min(1, "must not be empty").optional(),
  baseSteps: integerOption(1, 100_000).optional(),
  expertSteps: integerOption(1, 100_000).optional(),
  batch: integerOption(1, 4096).optional(),
  group: integerOption(2, 1024).optional(),
});

export type RawQdOptions = z.input<typeof qdOptionsSchema>;

/** One task as written in --tasks: an environment and, optionally, its train tasks. */
export interface TaskSpec {
  readonly label: string;
  readonly env: EnvDefinition;
  readonly train: number[];
}

/**
 * "maze,textcraft:100-299,gridworld": environments, each optionally with the train tasks the task
 * is made of (a task range; commas inside a range continue it, since env names start with a
 * letter). Without a range, a task is the environment's whole train split.
 */
export function parseQdTasks(text: string): TaskSpec[] {
  const parts: string[] = [];
  for (const piece of text.split(",")) {
    const trimmed = piece.trim();
    if (/^[A-Za-z]/.test(trimmed) || parts.length === 0) parts.push(trimmed);
    else parts[parts.length - 1] += `,${trimmed}`;
  }
  const specs = parts.map((part) => {
    const colon = part.indexOf(":");
    const name = colon < 0 ? part : part.slice(0, colon);
    let env: EnvDefinition;
    try {
      env = findEnv(name);
    } catch (error) {
      throw new UsageError(`--tasks: ${(error as Error).message}`);
    }
    const range = colon < 0 ? "train" : part.slice(colon + 1);
    let train: number[];
    try {
      train = parseTaskRange(range, env.info);
    } catch (error) {
      throw new UsageError(`--tasks ${part}: ${(error as Error).message}`);
    }
    const test = env.info.splits.test;
    if (train.some((t) => t >= test.start && t < test.end)) {
      throw new UsageError(
        `--tasks ${part}: names test tasks; a task trains and searches on train tasks only (the test split is held out)`,
      );
    }
    return { label: colon < 0 ? name : `${name}:${formatTaskRange(train)}`, env, train };
  });
  if (specs.length < 2) throw new UsageError("--tasks: CycleQD needs at least 2 tasks");
  const labels = specs.map((s) => s.label);
  const repeated = labels.find((label, i) => labels.indexOf(label) !== i);
  if (repeated !== undefined) throw new UsageError(`--tasks lists ${repeated} twice`);
  return specs;
}

/** "0:1,0:0.5" → one range per task; [0, 1] for every task when not given. */
export function parseRanges(text: string | undefined, count: number): ScoreRange[] {
  if (text === undefined) return Array.from({ length: count }, () => ({ min: 0, max: 1 }));
  const ranges = text.split(",").map((part) => {
    const match = /^\s*(-?\d+(?:\.\d+)?)\s*:\s*(-?\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!match) throw new UsageError(`--ranges: "${part}" is not MIN:MAX`);
    const range = { min: Number(match[1]), max: Number(match[2]) };
    if (!(range.min < range.max)) throw new UsageError(`--ranges: ${part}: MIN must be below MAX`);
    return range;
  });
  if (ranges.length !== count) {
    throw new UsageError(`--ranges gives ${ranges.length} range(s) for ${count} tasks`);
  }
  return ranges;
}

/**
 * --expert TASK=FILE, TASK a label of --tasks (or its environment's name when unambiguous); also
 * --agent-config's (qd-agent.ts), named by `flag` with its `example`.
 */
export function expertFiles(
  entries: readonly string[],
  specs: readonly TaskSpec[],
  flag = "--expert",
  example = "maze=maze.safetensors",
): (string | undefined)[] {
  const files: (string | undefined)[] = specs.map(() => undefined);
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    if (eq <= 0 || eq === entry.length - 1) {
      throw new UsageError(`${flag} "${entry}": use TASK=FILE, e.g. ${example}`);
    }
    const name = entry.slice(0, eq);
    let k = specs.findIndex((s) => s.label === name);
    if (k < 0) {
      const byEnv = specs.flatMap((s, i) => (s.env.info.name === name ? [i] : []));
      if (byEnv.length === 1) k = byEnv[0] as number;
    }
    if (k < 0) {
      throw new UsageError(
        `${flag} ${entry}: "${name}" is not one of --tasks (${specs.map((s) => s.label).join(", ")})`,
      );
    }
    if (files[k] !== undefined) throw new UsageError(`${flag} gives task ${name} twice`);
    files[k] = resolve(entry.slice(eq + 1));
  }
  return files;
}

async function loadGiven(path: string, what: string): Promise<PolicyModel> {
  if (!existsSync(path)) throw new UsageError(`${what}: no file ${path}`);
  try {
    return await loadPolicy(path);
  } catch (error) {
    throw new UsageError(`${what}: ${(error as Error).message}`);
  }
}

/** What both paths of `clade qd` take from the search options (defaults applied). */
export function searchSettings(
  options: {
    variant?: Variant | undefined;
    generations?: number | undefined;
    searchTasks?: number | undefined;
    testTasks?: number | undefined;
    seed?: number | undefined;
    bins?: number | undefined;
  },
  specs: readonly TaskSpec[],
) {
  const searchCount = options.searchTasks ?? QD_DEFAULTS.searchTasks;
  const testCount = options.testTasks ?? QD_DEFAULTS.testTasks;
  const tasks: QdTask[] = specs.map((s) => {
    const { test } = s.env.info.splits;
    return {
      label: s.label,
      env: s.env,
      train: s.train,
      search: s.train.slice(0, searchCount),
      test: Array.from(
        { length: Math.min(testCount, test.end - test.start) },
        (_, i) => test.start + i,
      ),
    };
  });
  return {
    variant: options.variant ?? ("paper" as Variant),
    generations: options.generations ?? QD_DEFAULTS.generations,
    seed: options.seed ?? 0,
    bins: options.bins ?? CYCLEQD_BINS,
    testCount,
    tasks,
  };
}

/** The start of a stored run's configuration: the genome kind, the tasks and the archives' shape. */
export function storedSearchHead(
  kind: string,
  tasks: readonly QdTask[],
  search: { variant: Variant; ranges: readonly ScoreRange[]; bins: number; seed: number },
): Record<string, JsonValue> {
  return {
    kind,
    tasks: tasks.map((t) => ({
      label: t.label,
      env: t.env.info.name,
      envVersion: t.env.info.version,
      train: formatTaskRange(t.train),
      search: formatTaskRange(t.search),
    })),
    variant: search.variant,
    ranges: search.ranges.map((r) => ({ min: r.min, max: r.max })),
    bins: search.bins,
    seed: search.seed,
  };
}

/**
 * Runs a stored CycleQD run's body with Ctrl-C / SIGTERM as an abort, and records how it ended:
 * complete (exit 0); stopped by a signal (exit 130/143: the same command resumes); or stopped by
 * an error, which is thrown on.
 */
export async function runStoredQd(
  store: QdStore,
  runId: string,
  io: CliIo,
  body: (signal: AbortSignal) => Promise<number>,
): Promise<number> {
  let exitCode: number;
  try {
    exitCode = await withInterruption(body, io);
  } catch (error) {
    store.setStatus(runId, "stopped", "error");
    throw error;
  }
  store.setStatus(runId, exitCode === 0 ? "complete" : "stopped", exitCode === 0 ? null : "signal");
  return exitCode;
}

/** The progress line: the generation, its quality task, coverage, QD-score and errored count. */
export function qdProgressLine(
  runId: string,
  record: InitRecord | GenerationRecord,
  generations: number,
  labels: readonly string[],
  errored: number,
): string {
  const { coverage, qdScore } = recordSummary(record);
  const q = "qualityTask" in record ? `, quality ${labels[record.qualityTask]}` : "";
  return `qd ${runId}: generation ${record.generation}/${generations}${q}, coverage ${formatRate(coverage)}, QD-score ${formatRate(qdScore)}, errored ${errored}`;
}

/** Options of the --agent-config path only (qd-agent.ts), by flag. */
const AGENT_CONFIG_ONLY = {
  model: "--model",
  mutatorModel: "--mutator-model",
  pool: "--pool",
  samples: "--samples",
  maxTurns: "--max-turns",
  timeout: "--timeout",
  config: "--config",
} as const;

export async function qdCommand(
  raw: RawQdOptions & Partial<Record<"agentConfig" | keyof typeof AGENT_CONFIG_ONLY, unknown>>,
  io: CliIo,
): Promise<number> {
  // LLM agent configurations instead of embedded policies: their own command body.
  if (raw.agentConfig !== undefined) {
    const { qdAgentCommand } = await import("./qd-agent.js");
    return qdAgentCommand(raw as RawQdAgentOptions, io);
  }
  const agentOnly = Object.entries(AGENT_CONFIG_ONLY).flatMap(([key, flag]) =>
    raw[key as keyof typeof AGENT_CONFIG_ONLY] === undefined ? [] : [flag],
  );
  if (agentOnly.length > 0) {
    throw new UsageError(
      `${agentOnly.join(", ")} appl${agentOnly.length === 1 ? "ies" : "y"} to LLM agent configurations only: add --agent-config TASK=FILE`,
    );
  }
  const options = parseOptions(qdOptionsSchema, raw);
  // Everything is checked before the store is opened: bad input writes nothing.
  const specs = parseQdTasks(options.tasks);
  const ranges = parseRanges(options.ranges, specs.length);
  const files = expertFiles(options.expert ?? [], specs);
  if (files.some((f) => f !== undefined) && options.base === undefined) {
    throw new UsageError(
      "--expert needs --base FILE: task vectors are taken against the experts' base",
    );
  }
  const base = options.base ? await loadGiven(resolve(options.base), "--base") : undefined;
  const givenExperts = await Promise.all(
    files.map((f, k) => (f ? loadGiven(f, `--expert ${specs[k]?.label}`) : undefined)),
  );
  const { variant, generations, seed, bins, testCount, tasks } = searchSettings(options, specs);
  const training = {
    ...(options.batch !== undefined ? { batchTasks: options.batch } : {}),
    ...(options.group !== undefined ? { groupSize: options.group } : {}),
  };
  const baseSteps = options.baseSteps ?? QD_DEFAULTS.baseSteps;
  const expertSteps = options.expertSteps ?? QD_DEFAULTS.expertSteps;
  const config: Record<string, JsonValue> = {
    ...storedSearchHead("policy", tasks, { variant, ranges, bins, seed }),
    base: options.base
      ? { file: resolve(options.base), sha256: sha256OfFile(resolve(options.base)) }
      : { baseSteps },
    experts: files.map(
      (f): JsonValue => (f ? { file: f, sha256: sha256OfFile(f) } : { expertSteps }),
    ),
    training,
  };
  const dir = resolve(options.dir ?? join(dirname(resolve(options.db)), "qd", options.runId));
  const progress = !options.json && !options.quiet;
  const say = (line: string) => {
    if (progress) io.stderr(`${line}\n`);
  };

  mkdirSync(dirname(resolve(options.db)), { recursive: true });
  const store = QdStore.open(options.db);
  try {
    const { resumed } = store.beginRun(options.runId, config);
    return await runStoredQd(store, options.runId, io, async (signal) => {
      // -- 1. The base and the experts --
      const trainingProgress = throttled(progress, (phase: TrainingPhase, m: StepMetrics) => {
        const who = phase.kind === "base" ? "base" : `expert ${tasks[phase.task]?.label}`;
        const steps = phase.kind === "base" ? baseSteps : expertSteps;
        say(
          `qd ${options.runId}: training ${who}, step ${m.step + 1}/${steps}, success ${formatRate(m.successRate)}`,
        );
      });
      const trained = await trainBaseAndExperts({
        tasks,
        baseSteps,
        expertSteps,
        seed,
        hyperparameters: training,
        ...(base ? { base } : {}),
        experts: givenExperts,
        dir: join(dir, "training"),
        signal,
        onStep: trainingProgress,
      });
      if (trained.stopped) return 130;
      await savePolicy(join(dir, "base.safetensors"), trained.base);

      // -- 2. The search --
      const genome = createPolicyGenome({
        base: trained.base,
        experts: trained.experts,
        tasks: tasks.map((t) => ({ env: t.env, tasks: t.search })),
        variant,
      });
      const genomes = new FilePolicyStore(join(dir, "elites"));
      const setup = { genome, store: genomes, seed, variant };
      const labels = tasks.map((t) => t.label);
      const generationProgress = throttled(progress, (record: GenerationRecord, errored: number) =>
        say(qdProgressLine(options.runId, record, generations, labels, errored)),
      );
      let lastRecord: InitRecord | GenerationRecord | undefined;
      const run = await runStoredCycle({
        store,
        runId: options.runId,
        setup,
        experts: () => trained.experts,
        ranges,
        bins,
        generations,
        signal,
        onRecord: (record, now) => {
          lastRecord = record;
          if (record.generation > 0) generationProgress(record as GenerationRecord, now.errored);
        },
      });
      const { state } = run;
      if (run.resumedAfter !== undefined) {
        say(`qd ${options.runId}: resumed after generation ${run.resumedAfter}`);
      }
      if (lastRecord) {
        say(qdProgressLine(options.runId, lastRecord, generations, labels, state.errored));
      }
      if (run.stopped === "aborted") return 130;

      // -- 3. The finalists on held-out test tasks --
      const finalists = await policyFinalists(state.archives, genomes, trained.base);
      await savePolicy(join(dir, "final-best-mean.safetensors"), finalists.bestMean.policy);
      await savePolicy(join(dir, "final-merge.safetensors"), finalists.merge.policy);
      if (options.out) {
        mkdirSync(dirname(resolve(options.out)), { recursive: true });
        copyFileSync(join(dir, "final-best-mean.safetensors"), resolve(options.out));
      }
      let comparison: PolicyComparison[] = [];
      if (testCount > 0) {
        say(
          `qd ${options.runId}: playing the finalists, the base and the experts on the test tasks`,
        );
        comparison = await comparePolicies(
          [
            { name: "CycleQD best-mean", policy: finalists.bestMean.policy },
            { name: "CycleQD merge", policy: finalists.merge.policy },
            { name: "base", policy: trained.base },
            ...trained.experts.map((policy, k) => ({ name: `expert ${tasks[k]?.label}`, policy })),
          ],
          tasks,
          signal,
        );
      }
      const result = {
        schema: "clade.qd/1",
        runId: options.runId,
        variant,
        seed,
        tasks: tasks.map((t) => t.label),
        generations: state.generation,
        resumed,
        errored: state.errored,
        archives: archivesJson(state, labels),
        finalists: {
          bestMean: {
            id: finalists.bestMean.elite.id,
            scores: [...finalists.bestMean.elite.scores],
          },
          merge: { members: finalists.merge.elites.map((e) => e.id) },
        },
        test: comparisonJson(comparison, labels),
        dir,
      };
      if (options.json) {
        io.stdout(`${JSON.stringify(result)}\n`);
        return 0;
      }
      io.stdout(`${renderQdResult(result, comparison, tasks, state)}\n`);
      return 0;
    });
  } finally {
    store.close();
  }
}

function renderQdResult(
  result: {
    runId: string;
    variant: string;
    seed: number;
    generations: number;
    errored: number;
    dir: string;
  },
  comparison: readonly PolicyComparison[],
  tasks: readonly QdTask[],
  state: CycleState,
): string {
  const lines = [
    `CycleQD ${result.runId}: ${result.variant} variant, seed ${result.seed}, ${result.generations} generations, ${result.errored} errored evaluation(s)`,
    renderArchiveStats(
      state,
      tasks.map((t) => t.label),
    ),
  ];
  lines.push(...renderComparison(comparison, tasks, "policy"));
  lines.push(
    `finalists: ${join(result.dir, "final-best-mean.safetensors")}, ${join(result.dir, "final-merge.safetensors")}; archives: clade archive ${result.runId}`,
  );
  return lines.join("\n");
}
