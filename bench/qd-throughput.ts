/**
 * CycleQD throughput on embedded policies (src/improve/qd), K = 3 tasks (maze, textcraft,
 * gridworld): generations per second, where a generation's time goes, and the operators' cost
 * per child (merge + mutation) against that child's evaluation. Each figure prints as one JSON
 * line with its absolute value and its ratio to a baseline measured in the same run.
 *
 * Set-up (not timed): a fresh base policy of the trainer's default size (TRAIN_DEFAULTS'
 * featureDim × hidden, seed BASE_SEED) and three experts, each the base trained with `train` for
 * EXPERT_STEPS small steps on its environment's evaluation tasks, so that every expert has its own
 * nonzero task vector and the SVD mutation moves along real directions. Each task is scored on a
 * fixed set of EVAL_TASKS train-split tasks, greedily, up to the environment's own step limit.
 * The experts are evaluated once (initCycle, generation 0); both variants start from copies of
 * that state and run GENERATIONS generations each, with the genome's crossover, mutate and
 * evaluate wrapped to time them.
 *
 * Figures, for each variant ("paper": elite sampling and SVD mutation; "released": uniform
 * sampling and Gaussian mutation):
 * - qd_<variant>_generations_per_s: generations per second of runCycle after initCycle.
 *   Baseline: the evaluation alone of the same children, in evaluations per second, so the ratio
 *   is the evaluation's share of the generation (`generation_over_evaluation` is its inverse:
 *   generation time / evaluation time, the loop's overhead factor over evaluating alone).
 * - qd_<variant>_share_evaluation, _share_operators, _share_other: seconds of the generations
 *   spent in the genome's evaluate, in its crossover + mutate, and in everything else (parent
 *   sampling, the genome store, ids, archive offers); baseline: the generations' wall clock
 *   (ratio = the share; the three sum to 1).
 * - qd_<variant>_operators_ms_per_child: mean crossover + mutation time per child (merge + SVD
 *   mutation for "paper", merge + Gaussian for "released"); baseline: the mean evaluation time of
 *   the same children (ratio = operators / evaluation). The expert SVDs are computed before the
 *   run (the genome caches them on its first mutation toward each task), so they are not in it.
 * - qd_svd_one_off_ms: the one-off thin SVDs of the three experts' task vectors (every 2-D
 *   matrix), as the genome computes them; baseline: the paper run's mean evaluation time per
 *   child (ratio = how many child evaluations the one-off costs). Measured first, so it includes
 *   compiling the SVD code, as a run's first mutation does; `genome_first_mutation_ms` is the
 *   genome's own first mutation toward each task afterwards (the SVDs again, compiled, plus one
 *   mutation), done before the timed generations so that they do not include it.
 *
 * Deterministic: fixed seeds for the base, the experts' training and the cycle; greedy
 * evaluation. Only the timings vary between runs.
 */
// The compiled library (npm run bench builds it first).
import { findEnv } from "../dist/env/registry.js";
import { createRng } from "../dist/env/rng.js";
import type { EnvDefinition } from "../dist/env/types.js";
import {
  type CycleState,
  createPolicyGenome,
  cycleStateFromJSON,
  cycleStateToJSON,
  expertSvds,
  type Genome,
  initCycle,
  MemoryGenomeStore,
  runCycle,
  taskVector,
  VARIANTS,
  type Variant,
} from "../dist/improve/qd/index.js";
import { createPolicyModel, type PolicyModel } from "../dist/improve/rl/policy/index.js";
import { TRAIN_DEFAULTS, train } from "../dist/improve/rl/train/index.js";

process.setSourceMapsEnabled(false);

/** K = 3 tasks, in task order. */
const ENVS = ["maze", "textcraft", "gridworld"] as const;
/** Evaluation tasks per environment: the first EVAL_TASKS of its train split. */
const EVAL_TASKS = 16;
/** Generations measured per variant (a multiple of K, so each quality task gets as many). */
const GENERATIONS = Number(process.env.BENCH_QD_GENERATIONS ?? 12);
/** Seeds: the base's weights, the experts' training, the cycle. */
const BASE_SEED = 7;
const EXPERT_SEED = 1;
const CYCLE_SEED = 11;
/** Each expert: the base trained this many steps of EXPERT_BATCH tasks × EXPERT_GROUP samples. */
const EXPERT_STEPS = 3;
const EXPERT_BATCH = 4;
const EXPERT_GROUP = 4;
/** Every task's score range (success rates), cut into the default 15 bins. */
const RANGES = ENVS.map(() => ({ min: 0, max: 1 }));

const line = (figure: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(figure)}\n`);
const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);
const mean = (xs: readonly number[]) => sum(xs) / xs.length;
const benchStarted = performance.now();

// ---- Set-up: the tasks, the base and the experts (not timed) ----

const envs: EnvDefinition[] = ENVS.map((name) => findEnv(name));
const evalTasks = envs.map((env) =>
  Array.from({ length: EVAL_TASKS }, (_, i) => env.info.splits.train.start + i),
);
const tasks = envs.map((env, k) => ({ env, tasks: evalTasks[k] as number[] }));

const first = envs[0] as EnvDefinition;
const base = createPolicyModel({
  env: first.info.name,
  envVersion: first.info.version,
  seed: BASE_SEED,
  features: { dim: TRAIN_DEFAULTS.featureDim },
  hidden: TRAIN_DEFAULTS.hidden,
  valueHidden: TRAIN_DEFAULTS.valueHidden,
});

const trainStarted = performance.now();
const experts: PolicyModel[] = [];
for (const env of envs) {
  // On its own evaluation tasks: a few steps there give the experts distinct scores, which
  // initCycle needs (two distinct cells in every archive).
  const run = await train({
    env,
    model: base,
    steps: EXPERT_STEPS,
    batchTasks: EXPERT_BATCH,
    groupSize: EXPERT_GROUP,
    checkpointEvery: 0,
    seed: EXPERT_SEED,
    trainTasks: evalTasks[experts.length] as number[],
  });
  experts.push(run.model);
}
const trainSeconds = (performance.now() - trainStarted) / 1000;

/** Frobenius norm of each expert's task vector (all tensors); all must be nonzero and distinct. */
const vectorNorms = experts.map((expert) => {
  let squares = 0;
  for (const t of taskVector(expert.params, base.params).values()) {
    for (const v of t.data) squares += v * v;
  }
  return Math.sqrt(squares);
});
if (vectorNorms.some((n) => !(n > 0)) || new Set(vectorNorms).size !== vectorNorms.length) {
  throw new Error(
    `qd bench: the experts' task vectors are not nonzero and distinct: ${vectorNorms}`,
  );
}

// ---- The one-off expert SVDs, as the genome computes them on its first mutation per task ----

const svdMs = experts.map((expert) => {
  const started = performance.now();
  expertSvds(taskVector(expert.params, base.params));
  return performance.now() - started;
});

// ---- Timed genomes ----

interface Timings {
  crossover: number[];
  mutate: number[];
  evaluate: number[];
}

type PolicyGenome = Genome<PolicyModel>;

/**
 * Runs `call` and pushes its duration to `into`: until it returns, or, when it returns a promise,
 * until that settles. Returns what `call` returns, so it fits a genome's operators whether they
 * are synchronous or not.
 */
function timeCall<T>(into: number[], call: () => T): T {
  const started = performance.now();
  const out = call();
  const done = () => into.push(performance.now() - started);
  if (out instanceof Promise) return out.finally(done) as T;
  done();
  return out;
}

/** The variant's policy genome with its calls timed (one entry per call, in call order). */
async function timedGenome(variant: Variant): Promise<{
  genome: PolicyGenome;
  timings: Timings;
  /** The warm-up's mutations, one per task ("paper": each computes that expert's SVDs). */
  firstMutateMs: number[];
}> {
  const inner = createPolicyGenome({ base, experts, tasks, variant });
  // Warm the operators and fill the genome's SVD cache (one mutation toward each task), so the
  // timed children pay neither the one-off SVDs nor the first calls' compilation.
  const rng = createRng(CYCLE_SEED, 0xbe7c);
  const firstMutateMs: number[] = [];
  for (let q = 0; q < experts.length; q++) {
    const parents = [experts[q] as PolicyModel, experts[(q + 1) % experts.length] as PolicyModel];
    const merged = await inner.crossover(parents, rng);
    await timeCall(firstMutateMs, () => inner.mutate(merged, q, rng));
  }
  const timings: Timings = { crossover: [], mutate: [], evaluate: [] };
  const genome: PolicyGenome = {
    crossover: (...args: Parameters<PolicyGenome["crossover"]>) =>
      timeCall(timings.crossover, () => inner.crossover(...args)),
    mutate: (...args: Parameters<PolicyGenome["mutate"]>) =>
      timeCall(timings.mutate, () => inner.mutate(...args)),
    evaluate: (...args: Parameters<PolicyGenome["evaluate"]>) =>
      timeCall(timings.evaluate, () => inner.evaluate(...args)),
    id: (genome) => inner.id(genome),
  };
  return { genome, timings, firstMutateMs };
}

// ---- Generation 0, once: the experts evaluated and offered to the three archives ----

const paper = await timedGenome("paper");
const released = await timedGenome("released");
const initStore = new MemoryGenomeStore<PolicyModel>();
const initStarted = performance.now();
const init = await initCycle(
  { genome: paper.genome, store: initStore, seed: CYCLE_SEED, variant: "paper" },
  { experts, ranges: RANGES },
);
const initSeconds = (performance.now() - initStarted) / 1000;
const expertScores = init.record.experts.map((offered) => offered.scores);
paper.timings.evaluate.length = 0; // the experts' evaluations are not the generations'

// ---- The generations of each variant ----

async function measure(variant: Variant, timed: Awaited<ReturnType<typeof timedGenome>>) {
  const state: CycleState = cycleStateFromJSON(cycleStateToJSON(init.state));
  const store = new MemoryGenomeStore<PolicyModel>();
  for (const [id, genome] of initStore.genomes) store.put(id, genome);
  let kept = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await runCycle({ genome: timed.genome, store, seed: CYCLE_SEED, variant }, state, {
    generations: GENERATIONS,
    onGeneration: (record) => {
      if (record.child.kept) kept++;
    },
  });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const { crossover, mutate, evaluate } = timed.timings;
  const operators = crossover.map((c, i) => c + (mutate[i] as number));
  const evalMs = sum(evaluate);
  const operatorsMs = sum(operators);
  const generations = evaluate.length;
  const rate = generations / (wallMs / 1000);
  const evalRate = generations / (evalMs / 1000);
  const stats = state.archives.stats();
  const mutation = VARIANTS[variant].mutation;
  const mutationName = mutation.kind === "svd" ? "SVD mutation" : "Gaussian mutation";

  line({
    name: `qd_${variant}_generations_per_s`,
    value: round(rate),
    unit: "generations/s (runCycle after initCycle)",
    ratio: round(rate / evalRate),
    baseline: round(evalRate),
    baseline_unit: "evaluations/s of the same children alone (ratio = evaluation's share)",
    generation_over_evaluation: round(wallMs / evalMs),
    generations,
    wall_s: round(wallMs / 1000, 2),
    cpu_s: round((cpu.user + cpu.system) / 1e6, 2),
    variant: { sampling: VARIANTS[variant].sampling, mutation },
    kept,
    errored: state.errored,
    elites: stats.map((s) => s.elites),
  });
  for (const [part, ms] of [
    ["evaluation", evalMs],
    ["operators", operatorsMs],
    ["other", wallMs - evalMs - operatorsMs],
  ] as const) {
    line({
      name: `qd_${variant}_share_${part}`,
      value: round(ms / 1000, 3),
      unit: "s",
      ratio: round(ms / wallMs, 4),
      baseline: round(wallMs / 1000, 2),
      baseline_unit: "s of the generations' wall clock (ratio = share; the three sum to 1)",
    });
  }
  line({
    name: `qd_${variant}_operators_ms_per_child`,
    value: round(mean(operators), 2),
    unit: `ms per child, merge + ${mutationName}`,
    ratio: round(operatorsMs / evalMs, 4),
    baseline: round(mean(evaluate), 1),
    baseline_unit: `ms per child, evaluation (${ENVS.length} tasks × ${EVAL_TASKS} episodes)`,
    crossover_ms: round(mean(crossover), 2),
    mutate_ms: round(mean(mutate), 2),
  });
  return { evalMsPerChild: mean(evaluate) };
}

line({
  name: "qd_setup",
  envs: ENVS,
  eval_tasks: evalTasks.map((t) => `${t[0]}-${t[t.length - 1]}`),
  policy: { featureDim: TRAIN_DEFAULTS.featureDim, hidden: TRAIN_DEFAULTS.hidden },
  base: `fresh policy, seed ${BASE_SEED}`,
  experts:
    `the base trained with train(): ${EXPERT_STEPS} steps × ${EXPERT_BATCH} tasks × ` +
    `${EXPERT_GROUP} samples on each env's evaluation tasks, seed ${EXPERT_SEED}`,
  expert_train_s: round(trainSeconds, 2),
  task_vector_norms: vectorNorms.map((n) => round(n, 3)),
  expert_scores: expertScores.map((s) => s?.map((x) => round(x, 4)) ?? null),
  init_s: round(initSeconds, 2),
  generations_per_variant: GENERATIONS,
  cycle_seed: CYCLE_SEED,
});
const paperRun = await measure("paper", paper);
await measure("released", released);
line({
  name: "qd_svd_one_off_ms",
  value: round(sum(svdMs), 1),
  unit: `ms, thin SVDs of the ${experts.length} experts' task vectors (every 2-D matrix)`,
  ratio: round(sum(svdMs) / paperRun.evalMsPerChild, 3),
  baseline: round(paperRun.evalMsPerChild, 1),
  baseline_unit: "ms per child, evaluation (paper run)",
  per_expert_ms: svdMs.map((ms) => round(ms, 1)),
  genome_first_mutation_ms: paper.firstMutateMs.map((ms) => round(ms, 1)),
  bench_s: round((performance.now() - benchStarted) / 1000, 1),
});
