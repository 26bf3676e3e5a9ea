/**
 * `clade qd --tasks maze,textcraft,gridworld --variant paper|released --generations N --run-id ID
 * [--expert TASK=FILE --base FILE]`: CycleQD over embedded policies (src/improve/qd).
 *
 *   1. The base (trained briefly on all tasks, mixed) and one expert per task (the base trained
 *      further on that task), unless given as files. Checkpoints in DIR/training, resumed.
 *   2. The search: generation 0 offers the experts to the K archives, then one child per
 *      generation. Each generation's record goes to the store (`clade archive ID` draws the
 *      archives); kept genomes go to DIR/elites/<id>.safetensors.
 *   3. The finalists (the best-mean elite and the merge of the per-task best) beside the base and
 *      the experts on each task's held-out test tasks, with intervals.
 *
 * Resume: the same command continues a killed run. Training resumes from its checkpoints; the
 * archives are replayed from the stored records, and since every generation's randomness is
 * keyed by (seed, generation), the run goes on exactly as an uninterrupted one.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
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
  initCycle,
  runCycle,
  type Variant,
} from "../../improve/qd/cycle.js";
import { type QdTask, type TrainingPhase, trainBaseAndExperts } from "../../improve/qd/experts.js";
import { policyFinalists } from "../../improve/qd/final.js";
import { createPolicyGenome, FilePolicyStore } from "../../improve/qd/policy-genome.js";
import { parseCycleRecord, replayCycle } from "../../improve/qd/replay.js";
import { loadPolicy, type PolicyModel, savePolicy } from "../../improve/rl/policy/model.js";
import type { StepMetrics } from "../../improve/rl/train/train.js";
import { QdStore } from "../../store/qd-log.js";
import type { JsonValue } from "../../store/search-log.js";
import { type CliIo, UsageError } from "../io.js";
import { integerOption, parseOptions, runIdSchema } from "../options.js";
import { formatInterval, renderTable } from "../table.js";
import { throttled, withInterruption } from "./evolve.js";

/** Defaults of the command (the algorithm's own are in src/improve/qd/cycle.ts). */
export const QD_DEFAULTS = {
  generations: 100,
  baseSteps: 30,
  expertSteps: 30,
  searchTasks: 20,
  testTasks: 50,
} as const;

const VARIANT_NAMES = ["paper", "released"] as const;

const qdOptionsSchema = z.object({
  tasks: z.string().min(1, "must not be empty"),
  variant: z.enum(VARIANT_NAMES, { error: "must be paper or released" }).optional(),
  generations: integerOption(0, 1_000_000).optional(),
  runId: runIdSchema,
  expert: z.array(z.string()).optional(),
  base: z.string().min(1, "must not be empty").optional(),
  baseSteps: integerOption(1, 100_000).optional(),
  expertSteps: integerOption(1, 100_000).optional(),
  batch: integerOption(1, 4096).optional(),
  group: integerOption(2, 1024).optional(),
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
});

export type RawQdOptions = z.input<typeof qdOptionsSchema>;

/** One task as written in --tasks: an environment and, optionally, its train tasks. */
interface TaskSpec {
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
function parseRanges(text: string | undefined, count: number): ScoreRange[] {
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

/** --expert TASK=FILE, TASK a label of --tasks (or its environment's name when unambiguous). */
function expertFiles(
  entries: readonly string[],
  specs: readonly TaskSpec[],
): (string | undefined)[] {
  const files: (string | undefined)[] = specs.map(() => undefined);
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    if (eq <= 0 || eq === entry.length - 1) {
      throw new UsageError(`--expert "${entry}": use TASK=FILE, e.g. maze=maze.safetensors`);
    }
    const name = entry.slice(0, eq);
    let k = specs.findIndex((s) => s.label === name);
    if (k < 0) {
      const byEnv = specs.flatMap((s, i) => (s.env.info.name === name ? [i] : []));
      if (byEnv.length === 1) k = byEnv[0] as number;
    }
    if (k < 0) {
      throw new UsageError(
        `--expert ${entry}: "${name}" is not one of --tasks (${specs.map((s) => s.label).join(", ")})`,
      );
    }
    if (files[k] !== undefined) throw new UsageError(`--expert gives task ${name} twice`);
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

const sha256Of = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const fixed = (value: number | null, digits = 3) =>
  value === null || !Number.isFinite(value) ? "n/a" : value.toFixed(digits);

/** Mean coverage and summed QD-score over the archives after a generation. */
function summary(record: InitRecord | GenerationRecord) {
  const coverage = record.stats.reduce((a, s) => a + s.coverage, 0) / record.stats.length;
  const qdScore = record.stats.reduce((a, s) => a + s.qdScore, 0);
  return { coverage, qdScore };
}

export async function qdCommand(raw: RawQdOptions, io: CliIo): Promise<number> {
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
  const variant: Variant = options.variant ?? "paper";
  const generations = options.generations ?? QD_DEFAULTS.generations;
  const searchCount = options.searchTasks ?? QD_DEFAULTS.searchTasks;
  const testCount = options.testTasks ?? QD_DEFAULTS.testTasks;
  const seed = options.seed ?? 0;
  const bins = options.bins ?? CYCLEQD_BINS;
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
  const training = {
    ...(options.batch !== undefined ? { batchTasks: options.batch } : {}),
    ...(options.group !== undefined ? { groupSize: options.group } : {}),
  };
  const baseSteps = options.baseSteps ?? QD_DEFAULTS.baseSteps;
  const expertSteps = options.expertSteps ?? QD_DEFAULTS.expertSteps;
  const config: Record<string, JsonValue> = {
    kind: "policy",
    tasks: tasks.map((t) => ({
      label: t.label,
      env: t.env.info.name,
      envVersion: t.env.info.version,
      train: formatTaskRange(t.train),
      search: formatTaskRange(t.search),
    })),
    variant,
    ranges: ranges.map((r) => ({ min: r.min, max: r.max })),
    bins,
    seed,
    base: options.base
      ? { file: resolve(options.base), sha256: sha256Of(resolve(options.base)) }
      : { baseSteps },
    experts: files.map((f): JsonValue => (f ? { file: f, sha256: sha256Of(f) } : { expertSteps })),
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
    const { resumed, lastGeneration } = store.beginRun(options.runId, config);
    let stopped = true;
    const exitCode = await withInterruption(async (signal) => {
      // -- 1. The base and the experts --
      const trainingProgress = throttled(progress, (phase: TrainingPhase, m: StepMetrics) => {
        const who = phase.kind === "base" ? "base" : `expert ${tasks[phase.task]?.label}`;
        const steps = phase.kind === "base" ? baseSteps : expertSteps;
        say(
          `qd ${options.runId}: training ${who}, step ${m.step + 1}/${steps}, success ${fixed(m.successRate)}`,
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
      let state: CycleState;
      if (lastGeneration >= 0) {
        const records = store
          .generations(options.runId)
          .map((row) => parseCycleRecord(row.record, row.generation));
        state = replayCycle({ ranges, bins }, records);
        say(`qd ${options.runId}: resumed after generation ${state.generation}`);
      } else {
        const init = await initCycle(setup, { experts: trained.experts, ranges, bins, signal });
        state = init.state;
        const s = summary(init.record);
        store.appendGeneration(options.runId, {
          generation: 0,
          qualityTask: null,
          coverage: s.coverage,
          qdScore: s.qdScore,
          errored: init.record.experts.some((e) => e.error !== null),
          record: init.record as unknown as JsonValue,
        });
      }
      const report = (record: InitRecord | GenerationRecord, errored: number) => {
        const s = summary(record);
        const q = "qualityTask" in record ? `, quality ${tasks[record.qualityTask]?.label}` : "";
        return `qd ${options.runId}: generation ${record.generation}/${generations}${q}, coverage ${fixed(s.coverage)}, QD-score ${fixed(s.qdScore)}, errored ${errored}`;
      };
      const generationProgress = throttled(progress, (record: GenerationRecord, errored: number) =>
        say(report(record, errored)),
      );
      let lastRecord: GenerationRecord | undefined;
      const run = await runCycle(setup, state, {
        generations,
        signal,
        onGeneration: (record, now) => {
          const s = summary(record);
          store.appendGeneration(options.runId, {
            generation: record.generation,
            qualityTask: record.qualityTask,
            coverage: s.coverage,
            qdScore: s.qdScore,
            errored: record.child.error !== null,
            record: record as unknown as JsonValue,
          });
          lastRecord = record;
          generationProgress(record, now.errored);
        },
      });
      if (lastRecord) say(report(lastRecord, state.errored));
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
      stopped = false;
      const result = {
        schema: "clade.qd/1",
        runId: options.runId,
        variant,
        seed,
        tasks: tasks.map((t) => t.label),
        generations: state.generation,
        resumed,
        errored: state.errored,
        archives: state.archives
          .stats()
          .map((s, k) => ({ task: tasks[k]?.label ?? String(k), ...s })),
        finalists: {
          bestMean: {
            id: finalists.bestMean.elite.id,
            scores: [...finalists.bestMean.elite.scores],
          },
          merge: { members: finalists.merge.elites.map((e) => e.id) },
        },
        test: comparison.map((c) => ({
          name: c.name,
          mean: c.mean,
          meanInterval: c.meanInterval,
          perTask: c.perTask.map((t, k) => ({ task: tasks[k]?.label ?? String(k), ...t })),
        })),
        dir,
      };
      if (options.json) {
        io.stdout(`${JSON.stringify(result)}\n`);
        return 0;
      }
      io.stdout(`${renderQdResult(result, comparison, tasks, state)}\n`);
      return 0;
    }, io);
    store.setStatus(options.runId, stopped ? "stopped" : "complete", stopped ? "signal" : null);
    return exitCode;
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
    renderTable(
      ["archive (quality)", "elites", "coverage", "QD-score", "max", "mean"],
      state.archives
        .stats()
        .map((s, k) => [
          tasks[k]?.label ?? String(k),
          `${s.elites}/${s.cells}`,
          fixed(s.coverage),
          fixed(s.qdScore),
          fixed(s.objMax),
          fixed(s.objMean),
        ]),
    ),
  ];
  if (comparison.length > 0) {
    lines.push(
      `held-out test tasks (greedy success, 95% bootstrap intervals; ${tasks.map((t) => `${t.label} ${t.test.length}`).join(", ")})`,
      renderTable(
        ["policy", ...tasks.map((t) => t.label), "mean"],
        comparison.map((c) => [
          c.name,
          ...c.perTask.map((t) => `${fixed(t.rate)} ${formatInterval(t.interval)}`),
          `${fixed(c.mean)} ${formatInterval(c.meanInterval)}`,
        ]),
      ),
    );
  }
  lines.push(
    `finalists: ${join(result.dir, "final-best-mean.safetensors")}, ${join(result.dir, "final-merge.safetensors")}; archives: clade archive ${result.runId}`,
  );
  return lines.join("\n");
}
