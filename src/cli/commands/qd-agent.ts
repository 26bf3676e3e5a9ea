/**
 * `clade qd --tasks maze:100-119,gridworld:100-119 --agent-config maze=a.json --model SPEC
 * [--mutator-model SPEC] [--pool pool.json] --generations N --run-id ID`: CycleQD over LLM agent
 * configurations (src/improve/qd/agent-config), the path `clade qd` hands over to when
 * --agent-config is given.
 *
 *   1. The seed configurations ("experts", one file per task, at least one) and the pool are read
 *      and validated, the models resolved with their keys checked, before the store is opened.
 *   2. The search: generation 0 offers the seed configurations to the K archives, then one child
 *      per generation (crossover and mutation by the genome's operators, the rewrite by the
 *      mutator model among them; no SVD: --variant only changes how parents are drawn). Each
 *      generation's record goes to the same tables as the policy path (`clade archive ID`); kept
 *      configurations go to DIR/elites/<id>.json.
 *   3. The finalists: the best-mean elite (DIR/final-best-mean.json) and each archive's best
 *      (DIR/final-task-<k>.json). There is no merge of configurations. The best-mean elite and
 *      the seed configurations are played on each task's held-out test tasks, with intervals.
 *
 * Resume: the same command replays the stored records and goes on. As `clade evolve --agent`,
 * the model clients have no response cache: a generation that is redone asks the models again,
 * so it reaches the uninterrupted run's archives when the models answer alike (a seeded or
 * deterministic server; every request carries a seed).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import {
  type AgentConfig,
  type AgentConfigPool,
  type AgentConfigTask,
  createAgentConfigGenome,
  type EpisodeOptions,
  FileAgentConfigStore,
  type MutatorRole,
  readAgentConfigFile,
  readAgentConfigPoolFile,
  runConfigTask,
} from "../../improve/qd/agent-config/index.js";
import type { Elite } from "../../improve/qd/archive.js";
import { type Comparison, comparisonOf, type PlayedTask } from "../../improve/qd/compare.js";
import type {
  AsyncGenome,
  CycleState,
  GenerationRecord,
  InitRecord,
} from "../../improve/qd/cycle.js";
import { bestMeanElite, perTaskBest } from "../../improve/qd/final.js";
import { runStoredCycle, type StoredCycleResult } from "../../improve/qd/stored-cycle.js";
import type { AccountedModel } from "../../model/call-record.js";
import { createModelClient } from "../../model/client.js";
import { loadConfig } from "../../model/config.js";
import {
  checkKey,
  publicModelSpec,
  type ResolvedModel,
  resolveModel,
} from "../../model/resolve.js";
import { QdStore } from "../../store/qd-log.js";
import type { JsonValue } from "../../store/search-log.js";
import { type CliIo, sha256OfFile, UsageError } from "../io.js";
import { integerOption, parseOptions } from "../options.js";
import { throttled } from "./evolve.js";
import {
  expertFiles,
  parseQdTasks,
  parseRanges,
  QD_SEARCH_OPTIONS,
  qdProgressLine,
  runStoredQd,
  searchSettings,
  storedSearchHead,
} from "./qd.js";
import { archivesJson, comparisonJson, renderArchiveStats, renderComparison } from "./qd-report.js";

/** Defaults of the agent-configuration path beyond QD_DEFAULTS. */
export const QD_AGENT_DEFAULTS = { samples: 1, timeoutSeconds: 300 } as const;

const qdAgentOptionsSchema = z.object({
  ...QD_SEARCH_OPTIONS,
  agentConfig: z.array(z.string()).min(1, "needs at least one TASK=FILE"),
  model: z.string().min(1, "must not be empty"),
  mutatorModel: z.string().min(1, "must not be empty").optional(),
  pool: z.string().min(1, "must not be empty").optional(),
  samples: integerOption(1, 1000).optional(),
  maxTurns: integerOption(1, 100_000).optional(),
  timeout: integerOption(1, 86_400).optional(),
  config: z.string().min(1, "must not be empty").optional(),
});

/** The options of the policy path only, by flag: refused beside --agent-config. */
const POLICY_ONLY = {
  base: "--base",
  expert: "--expert",
  baseSteps: "--base-steps",
  expertSteps: "--expert-steps",
  batch: "--batch",
  group: "--group",
} as const;

export type RawQdAgentOptions = z.input<typeof qdAgentOptionsSchema> &
  Partial<Record<keyof typeof POLICY_ONLY, unknown>>;

/** One task: its label, environment, search tasks (train split) and held-out test tasks. */
interface AgentQdTask extends AgentConfigTask {
  readonly label: string;
  readonly train: readonly number[];
  readonly test: readonly number[];
}

/**
 * Plays a configuration on every task's test tasks. A test task's score is its success rate over
 * its samples that did not error; a test task whose samples all errored is left out (counted in
 * `errors`), never scored 0.
 */
async function compareConfig(
  name: string,
  config: AgentConfig,
  model: AccountedModel,
  tasks: readonly AgentQdTask[],
  episode: EpisodeOptions,
  signal: AbortSignal,
): Promise<Comparison> {
  const testTasks = tasks.map((t) => ({ env: t.env, tasks: t.test }));
  const played: PlayedTask[] = [];
  for (let k = 0; k < tasks.length; k++) {
    const byTask = new Map<number, { successes: number; played: number }>();
    await runConfigTask(config, k, {
      model,
      tasks: testTasks,
      episode,
      signal,
      onEpisode: (_k, record) => {
        if (record.outcome === "error") return;
        const seen = byTask.get(record.taskIndex) ?? { successes: 0, played: 0 };
        seen.played++;
        if (record.outcome === "success") seen.successes++;
        byTask.set(record.taskIndex, seen);
      },
    });
    const test = tasks[k]?.test ?? [];
    const scores = test.flatMap((t) => {
      const seen = byTask.get(t);
      return seen ? [seen.successes / seen.played] : [];
    });
    played.push({ scores, total: test.length });
  }
  return comparisonOf(name, played);
}

/** A resolved model in a role, its key checked (as `clade evolve --agent` resolves its roles). */
function resolveRole(spec: string, config: Awaited<ReturnType<typeof loadConfig>>["config"]) {
  const resolved = resolveModel(spec, config);
  checkKey(resolved);
  return resolved;
}

async function readGiven<T>(read: (path: string) => Promise<T>, path: string): Promise<T> {
  try {
    return await read(path);
  } catch (error) {
    // "FILE: field: message" (or "FILE: cannot read (ENOENT)"): already one line.
    throw new UsageError((error as Error).message);
  }
}

export async function qdAgentCommand(raw: RawQdAgentOptions, io: CliIo): Promise<number> {
  // Everything is checked before the store is opened: bad input writes nothing.
  const policyOnly = Object.entries(POLICY_ONLY).flatMap(([key, flag]) =>
    raw[key as keyof typeof POLICY_ONLY] === undefined ? [] : [flag],
  );
  if (policyOnly.length > 0) {
    throw new UsageError(
      `${policyOnly.join(", ")} appl${policyOnly.length === 1 ? "ies" : "y"} to embedded policies only, not to --agent-config runs`,
    );
  }
  if (raw.model === undefined) {
    throw new UsageError("--agent-config needs --model SPEC: the model the configured agents call");
  }
  const options = parseOptions(qdAgentOptionsSchema, raw);
  const specs = parseQdTasks(options.tasks);
  const ranges = parseRanges(options.ranges, specs.length);
  const files = expertFiles(options.agentConfig, specs, "--agent-config", "maze=maze.json");
  const seeds: { k: number; file: string; config: AgentConfig }[] = [];
  for (const [k, file] of files.entries()) {
    if (file !== undefined)
      seeds.push({ k, file, config: await readGiven(readAgentConfigFile, file) });
  }
  const poolFile = options.pool ? resolve(options.pool) : undefined;
  const pool: AgentConfigPool | undefined = poolFile
    ? await readGiven(readAgentConfigPoolFile, poolFile)
    : undefined;
  const { config: cladeConfig } = await loadConfig(options.config);
  const agentModel = resolveRole(options.model, cladeConfig);
  const mutatorModel = options.mutatorModel
    ? resolveRole(options.mutatorModel, cladeConfig)
    : undefined;

  const settings = searchSettings(options, specs);
  const { variant, generations, seed, bins, testCount } = settings;
  const samples = options.samples ?? QD_AGENT_DEFAULTS.samples;
  const tasks: AgentQdTask[] = settings.tasks.map((t) => ({ ...t, tasks: t.search }));
  const labels = tasks.map((t) => t.label);
  // Every request carries a seed (per episode, from the run's): a seeded provider answers a
  // redone generation as it answered the first time.
  const episode: EpisodeOptions = {
    samples,
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    timeoutMs: (options.timeout ?? QD_AGENT_DEFAULTS.timeoutSeconds) * 1000,
    seed: 0,
    generationSeed: seed,
  };

  // No response cache, as `clade evolve --agent`: a search draws again where it asks again.
  let spentUsd = 0;
  const onSpend = (cost: number) => {
    spentUsd += cost;
  };
  const client = (resolved: ResolvedModel) => createModelClient(resolved, { onSpend });
  const model = client(agentModel);
  const mutatorClient = mutatorModel ? client(mutatorModel) : undefined;
  const mutator: MutatorRole | undefined =
    mutatorModel && mutatorClient
      ? { spec: publicModelSpec(mutatorModel), client: mutatorClient }
      : undefined;
  // Unpriced (a local server): the cost is unknown, never $0.
  const unpriced = model.unpriced === true || mutatorClient?.unpriced === true;
  const genome = createAgentConfigGenome({
    model,
    tasks,
    ...(pool ? { pool } : {}),
    ...(mutator ? { mutator } : {}),
    episode,
  });
  // The last evaluation error, to say why when no seed configuration could be scored.
  let lastEvaluationError: string | undefined;
  const scoring: AsyncGenome<AgentConfig> = {
    crossover: (parents, rng) => genome.crossover(parents, rng),
    mutate: (child, q, rng, signal) => genome.mutate(child, q, rng, signal),
    id: (config) => genome.id(config),
    evaluate: async (config, signal) => {
      try {
        return await genome.evaluate(config, signal);
      } catch (error) {
        lastEvaluationError = error instanceof Error ? error.message : String(error);
        throw error;
      }
    },
  };

  const config: Record<string, JsonValue> = {
    ...storedSearchHead("agent-config", settings.tasks, { variant, ranges, bins, seed }),
    // Public specs only: a base URL's credentials are dropped, and keys are never stored.
    model: publicModelSpec(agentModel),
    mutatorModel: mutator?.spec ?? null,
    experts: files.map((f): JsonValue => (f ? { file: f, sha256: sha256OfFile(f) } : null)),
    pool: poolFile ? { file: poolFile, sha256: sha256OfFile(poolFile) } : null,
    mutation: {
      rates: { ...genome.settings.rates },
      rewriteAttempts: genome.settings.rewriteAttempts,
    },
    episode: { samples, maxTurns: options.maxTurns ?? null, seed: 0 },
  };
  const dir = resolve(options.dir ?? join(dirname(resolve(options.db)), "qd", options.runId));
  const progress = !options.json && !options.quiet;
  const say = (line: string) => {
    if (progress) io.stderr(`${line}\n`);
  };
  if (mutator && seeds.every((s) => s.config.parts.length === 0)) {
    say(
      `qd ${options.runId}: no seed configuration has a prompt part, so the mutator's rewrite never applies`,
    );
  }

  mkdirSync(dirname(resolve(options.db)), { recursive: true });
  const store = QdStore.open(options.db);
  try {
    const { resumed } = store.beginRun(options.runId, config);
    return await runStoredQd(store, options.runId, io, async (signal) => {
      // -- 1. The search --
      const genomes = new FileAgentConfigStore(join(dir, "elites"));
      const setup = { genome: scoring, store: genomes, seed, variant };
      const generationProgress = throttled(progress, (record: GenerationRecord, errored: number) =>
        say(qdProgressLine(options.runId, record, generations, labels, errored)),
      );
      let lastRecord: InitRecord | GenerationRecord | undefined;
      let run: StoredCycleResult;
      try {
        run = await runStoredCycle({
          store,
          runId: options.runId,
          setup,
          experts: () => seeds.map((s) => s.config),
          ranges,
          bins,
          generations,
          signal,
          onRecord: (record, now) => {
            lastRecord = record;
            if (record.generation > 0) generationProgress(record as GenerationRecord, now.errored);
          },
        });
      } catch (error) {
        if (signal.aborted || lastEvaluationError === undefined) throw error;
        if (!/^no expert could be evaluated/.test((error as Error).message)) throw error;
        throw new UsageError(
          `qd ${options.runId}: no seed configuration could be evaluated (is the model up?); last error: ${lastEvaluationError}`,
        );
      }
      const { state } = run;
      if (run.resumedAfter !== undefined) {
        say(`qd ${options.runId}: resumed after generation ${run.resumedAfter}`);
      }
      if (lastRecord) {
        say(qdProgressLine(options.runId, lastRecord, generations, labels, state.errored));
      }
      if (run.stopped === "aborted") return 130;

      // -- 2. The finalists: the best-mean elite, and each archive's best --
      const load = async (elite: Elite) => {
        const found = await genomes.get(elite.id);
        if (!found) throw new Error(`final selection: elite ${elite.id} is not in ${genomes.dir}`);
        return found;
      };
      const write = (path: string, value: AgentConfig) => {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
      };
      const best = bestMeanElite(state.archives);
      const bestConfig = await load(best);
      const bestFile = join(dir, "final-best-mean.json");
      write(bestFile, bestConfig);
      if (options.out) write(resolve(options.out), bestConfig);
      const perTask = perTaskBest(state.archives);
      const perTaskFiles: string[] = [];
      for (const [k, elite] of perTask.entries()) {
        const file = join(dir, `final-task-${k}.json`);
        write(file, await load(elite));
        perTaskFiles.push(file);
      }

      // -- 3. The best-mean config and the seed configs on held-out test tasks --
      const comparison: Comparison[] = [];
      if (testCount > 0) {
        say(
          `qd ${options.runId}: playing the best-mean configuration and the seed configurations on the test tasks`,
        );
        // A configuration met twice (the best-mean elite is a seed) is played once.
        const byId = new Map<string, Comparison>();
        const play = async (name: string, played: AgentConfig) => {
          const id = genome.id(played);
          const known = byId.get(id);
          const result = known
            ? { ...known, name }
            : await compareConfig(name, played, model, tasks, episode, signal);
          byId.set(id, result);
          comparison.push(result);
        };
        await play("CycleQD best-mean", bestConfig);
        for (const s of seeds) await play(`expert ${labels[s.k]}`, s.config);
      }
      const stats = genome.stats;
      const result = {
        schema: "clade.qd-agent/1",
        runId: options.runId,
        variant,
        seed,
        tasks: labels,
        model: publicModelSpec(agentModel),
        mutatorModel: mutator?.spec ?? null,
        samples,
        generations: state.generation,
        resumed,
        errored: state.errored,
        archives: archivesJson(state, labels),
        mutations: {
          applied: { ...stats.applied },
          rewrites: { ...stats.rewrites },
          lastRewriteFailure: stats.lastRewriteFailure,
        },
        finalists: {
          bestMean: { id: best.id, scores: [...best.scores], file: bestFile },
          perTask: perTask.map((e, k) => ({
            task: labels[k] ?? String(k),
            id: e.id,
            scores: [...e.scores],
            file: perTaskFiles[k] as string,
          })),
        },
        test: comparisonJson(comparison, labels),
        costUsd: unpriced ? null : Number(spentUsd.toFixed(6)),
        dir,
      };
      if (options.json) {
        io.stdout(`${JSON.stringify(result)}\n`);
        return 0;
      }
      io.stdout(`${renderQdAgentResult(result, comparison, tasks, state)}\n`);
      return 0;
    });
  } finally {
    store.close();
  }
}

function renderQdAgentResult(
  result: {
    runId: string;
    variant: string;
    seed: number;
    model: string;
    mutatorModel: string | null;
    generations: number;
    errored: number;
    mutations: {
      applied: Record<string, number>;
      rewrites: { succeeded: number; failed: number };
      lastRewriteFailure: string | null;
    };
    costUsd: number | null;
    dir: string;
  },
  comparison: readonly Comparison[],
  tasks: readonly AgentQdTask[],
  state: CycleState,
): string {
  const { applied, rewrites, lastRewriteFailure } = result.mutations;
  const mutations = Object.entries(applied)
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name} ${n}`);
  const lines = [
    `CycleQD ${result.runId} over agent configurations: ${result.variant} parent sampling, seed ${result.seed}, ${result.generations} generations, ${result.errored} errored evaluation(s)`,
    `  model ${result.model}; mutator ${result.mutatorModel ?? "none (no rewrite)"}; cost ${result.costUsd === null ? "unpriced" : `$${result.costUsd.toFixed(4)}`}`,
    renderArchiveStats(
      state,
      tasks.map((t) => t.label),
    ),
    `mutations this invocation: ${mutations.length > 0 ? mutations.join(", ") : "none"}; rewrites ${rewrites.succeeded} used, ${rewrites.failed} failed` +
      (rewrites.failed > 0 && lastRewriteFailure ? ` (last: ${lastRewriteFailure})` : ""),
  ];
  lines.push(...renderComparison(comparison, tasks, "configuration"));
  lines.push(
    `finalists: ${join(result.dir, "final-best-mean.json")}, ${join(result.dir, "final-task-<k>.json")} (no merge for configurations); archives: clade archive ${result.runId}`,
  );
  return lines.join("\n");
}
