/**
 * The CycleQD loop (/work/shared/reference/cycleqd.md), generic over the genome:
 *
 *   init: evaluate the experts on all K tasks; offer each to every archive (generation 0).
 *   for gen in 1..G:
 *     q = gen mod K
 *     p1, p2 = two distinct elites of archive q (the variant's sampling)
 *     child = mutate(crossover([p1, p2]), q)
 *     scores = evaluate(child) on all K tasks; offer the child to every archive
 *
 * Determinism and resume: generation g draws only from generators keyed by (seed, g, CYCLE_STREAM,
 * purpose), never from one stream carried across generations. So what generation g draws does not
 * depend on how many numbers earlier generations drew, and a run restored from its `CycleState`
 * after generation g continues exactly as an uninterrupted run would, with no RNG state stored.
 * Each purpose (parents, crossover, mutation) has its own generator, so a genome whose crossover
 * draws more numbers does not shift the mutation's draws.
 *
 * Errors are not failures: a child whose evaluation throws (or returns anything but K finite
 * scores) is dropped, counted in `errored` and recorded with its error, never scored 0 and never
 * offered to an archive. An abort is not an error: an evaluation that fails because the signal
 * was aborted leaves the state untouched, so a resumed run redoes that generation.
 */
import { z } from "zod";
import { createRng, type Rng } from "../../env/rng.js";
import {
  type AddCounts,
  type AddResult,
  type ArchiveStats,
  type Elite,
  PAPER_ELITE_QUALITY_RANGE,
  type QualityNormRange,
  RELEASED_ELITE_QUALITY_RANGE,
  type SampleMode,
  type ScoreRange,
} from "./archive.js";
import { CycleArchives, type CycleArchivesJson, qualityTask } from "./archives.js";
import { DEFAULT_BINS } from "./bins.js";
import { MERGE_WEIGHT_STD } from "./operators/merge.js";
import { GAUSSIAN_MUTATION_STD, SVD_MUTATION_RATE } from "./operators/mutate.js";

// ---------------------------------------------------------------------------------------------
// Hyperparameters (the reference's values). K is the number of tasks, i.e. of score ranges.
// ---------------------------------------------------------------------------------------------

/** G: the paper's number of generations. */
export const CYCLEQD_GENERATIONS = 1200;
/** B: bins per task score, so each archive of K = 3 tasks is a 15 × 15 grid. */
export const CYCLEQD_BINS = DEFAULT_BINS;
/**
 * The paper's per-task score ranges, in its task order (AgentBench OS, MBPP, AgentBench DB).
 * Other task sets name their own ranges; these are the reference's, for comparison.
 */
export const CYCLEQD_PAPER_RANGES: readonly ScoreRange[] = [
  { min: 0, max: 0.45 },
  { min: 0, max: 0.75 },
  { min: 0, max: 0.45 },
];
/** σ of the merge weights wᵢ ~ Normal(1, σ²), one per parent. */
export const CYCLEQD_MERGE_WEIGHT_STD = MERGE_WEIGHT_STD;
/** Parents per child: two distinct elites of the quality archive. */
export const CYCLEQD_PARENTS = 2;

/** "paper": the paper's elite sampling and SVD mutation; "released": the public code's defaults. */
export type Variant = "paper" | "released";

export type MutationSpec =
  | { readonly kind: "svd"; readonly rate: number }
  | { readonly kind: "gaussian"; readonly std: number };

export interface VariantSpec {
  /** How parents are drawn from the quality archive. */
  readonly sampling: SampleMode;
  /** Elite sampling's quality normalisation range (unused by uniform sampling). */
  readonly qualityRange: QualityNormRange;
  /** Which mutation the genome's `mutate` should apply (the loop only passes it on). */
  readonly mutation: MutationSpec;
}

export const VARIANTS: Readonly<Record<Variant, VariantSpec>> = {
  paper: {
    sampling: "elite",
    qualityRange: PAPER_ELITE_QUALITY_RANGE,
    mutation: { kind: "svd", rate: SVD_MUTATION_RATE },
  },
  released: {
    sampling: "uniform",
    qualityRange: RELEASED_ELITE_QUALITY_RANGE,
    mutation: { kind: "gaussian", std: GAUSSIAN_MUTATION_STD },
  },
};

/** The purpose tag of every generator the loop draws from: createRng(seed, gen, CYCLE_STREAM, …). */
export const CYCLE_STREAM = 0xc1c1;
const PARENTS_DRAWS = 1;
const CROSSOVER_DRAWS = 2;
const MUTATION_DRAWS = 3;

// ---------------------------------------------------------------------------------------------
// The genome and where elites' genomes are kept
// ---------------------------------------------------------------------------------------------

/**
 * What the loop needs of a genome (an agent configuration, whose mutation may ask a model). The
 * operators may be async; they take every random draw from `rng` before their first await, so
 * the draws stay fixed by the seed.
 */
export interface AsyncGenome<G> {
  /** The crossover; draws only from `rng`. */
  crossover(parents: readonly G[], rng: Rng): G | Promise<G>;
  /**
   * The variant's mutation, toward quality task `qualityTask`; draws only from `rng`. `signal`
   * is the run's: a mutation that waits on a model stops with it.
   */
  mutate(child: G, qualityTask: number, rng: Rng, signal?: AbortSignal): G | Promise<G>;
  /** K scores in task order. Throwing means an evaluation error: never read as a score of 0. */
  evaluate(genome: G, signal?: AbortSignal): Promise<number[]>;
  /** A stable id (archives and records name genomes by it); equal genomes may share one. */
  id(genome: G): string;
}

/** A genome with synchronous operators (policy weights, a test vector). */
export interface Genome<G> extends AsyncGenome<G> {
  /** The crossover (task-vector merging for weights); draws only from `rng`. */
  crossover(parents: readonly G[], rng: Rng): G;
  /** The variant's mutation, toward quality task `qualityTask`; draws only from `rng`. */
  mutate(child: G, qualityTask: number, rng: Rng): G;
}

/** Elites' genomes by id: in memory for tests, weight files for the CLI. */
export interface GenomeStore<G> {
  put(id: string, genome: G): void | Promise<void>;
  get(id: string): G | undefined | Promise<G | undefined>;
}

/** A GenomeStore in a Map. */
export class MemoryGenomeStore<G> implements GenomeStore<G> {
  readonly genomes = new Map<string, G>();
  put(id: string, genome: G): void {
    this.genomes.set(id, genome);
  }
  get(id: string): G | undefined {
    return this.genomes.get(id);
  }
}

/** Everything a run's generations share. */
export interface CycleSetup<G> {
  readonly genome: AsyncGenome<G>;
  readonly store: GenomeStore<G>;
  readonly seed: number;
  /** Parent sampling (and the mutation the genome was built with); default "paper". */
  readonly variant?: Variant;
}

// ---------------------------------------------------------------------------------------------
// State and records
// ---------------------------------------------------------------------------------------------

export interface CycleState {
  /** The last generation done (0: only the experts). */
  generation: number;
  /** Children dropped because their evaluation failed, over all generations (experts included). */
  errored: number;
  readonly archives: CycleArchives;
}

export interface CycleStateJson {
  readonly version: 1;
  readonly generation: number;
  readonly errored: number;
  readonly archives: CycleArchivesJson;
}

/** One evaluated genome's outcome: its statuses per archive, or the error that dropped it. */
export type Offered =
  | {
      readonly id: string;
      readonly scores: number[];
      readonly results: AddResult[];
      readonly kept: boolean;
      readonly error: null;
    }
  | {
      readonly id: string;
      readonly scores: null;
      readonly results: null;
      readonly kept: false;
      readonly error: string;
    };

export interface ArchivesSnapshot {
  /** Each archive's statistics after the generation. */
  readonly stats: ArchiveStats[];
  /** Each archive's add statuses during the generation. */
  readonly adds: AddCounts[];
}

/** Generation 0: the experts. */
export interface InitRecord extends ArchivesSnapshot {
  readonly generation: 0;
  readonly experts: Offered[];
}

export type GenerationRecord = ArchivesSnapshot & {
  readonly generation: number;
  readonly qualityTask: number;
  /** The parents' ids, in draw order. */
  readonly parents: string[];
  readonly child: Offered;
};

const count = z.number().int().nonnegative();
const stateSchema = z.strictObject({
  version: z.literal(1),
  generation: count,
  errored: count,
  archives: z.unknown(),
});

export function cycleStateToJSON(state: CycleState): CycleStateJson {
  return {
    version: 1,
    generation: state.generation,
    errored: state.errored,
    archives: state.archives.toJSON(),
  };
}

/** Restores a state stored by `cycleStateToJSON`; one-line errors. */
export function cycleStateFromJSON(json: unknown): CycleState {
  const parsed = stateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join(".") ?? "";
    throw new Error(`invalid cycle state JSON: ${path === "" ? "" : `${path}: `}${issue?.message}`);
  }
  const { generation, errored, archives } = parsed.data;
  return { generation, errored, archives: CycleArchives.fromJSON(archives) };
}

// ---------------------------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------------------------

/** Scores, or why they cannot be offered: K finite numbers or nothing. */
async function evaluateOnce<G>(
  genome: AsyncGenome<G>,
  child: G,
  taskCount: number,
  signal: AbortSignal | undefined,
): Promise<{ scores: number[] } | { error: string }> {
  let scores: unknown;
  try {
    scores = await genome.evaluate(child, signal);
  } catch (error) {
    // An aborted run stops; it does not turn the interrupted evaluation into an errored child.
    if (signal?.aborted) throw error;
    return { error: error instanceof Error ? error.message : String(error) };
  }
  if (!Array.isArray(scores) || scores.length !== taskCount) {
    return { error: `evaluation returned ${describe(scores)}, not ${taskCount} scores` };
  }
  const bad = scores.find((s) => typeof s !== "number" || !Number.isFinite(s));
  if (bad !== undefined) return { error: `evaluation returned a non-finite score: ${bad}` };
  return { scores: [...(scores as number[])] };
}

function describe(value: unknown): string {
  return Array.isArray(value) ? `${value.length} value(s)` : typeof value;
}

/** Evaluates, offers to every archive when the scores are usable, and keeps a kept genome. */
async function offer<G>(
  setup: CycleSetup<G>,
  state: CycleState,
  genome: G,
  generation: number,
  signal: AbortSignal | undefined,
): Promise<Offered> {
  const id = setup.genome.id(genome);
  const outcome = await evaluateOnce(setup.genome, genome, state.archives.taskCount, signal);
  if ("error" in outcome) {
    state.errored++;
    return { id, scores: null, results: null, kept: false, error: outcome.error };
  }
  const { results, kept } = state.archives.offerToAll({ id, scores: outcome.scores, generation });
  // Only genomes that entered an archive can ever be drawn as parents: only they are kept.
  if (kept) await setup.store.put(id, genome);
  return { id, scores: outcome.scores, results: [...results], kept, error: null };
}

function snapshot(archives: CycleArchives): ArchivesSnapshot {
  return { stats: archives.stats(), adds: archives.takeAddCounts() };
}

export interface InitOptions<G> {
  /** The seed genomes (the experts), usually one per task. */
  readonly experts: readonly G[];
  /** One score range per task (K ≥ 2). */
  readonly ranges: readonly ScoreRange[];
  /** B; default CYCLEQD_BINS. */
  readonly bins?: number;
  readonly signal?: AbortSignal;
}

/**
 * Generation 0: K empty archives, each expert evaluated on all tasks (one after another, so the
 * order of offers is fixed) and offered to every archive. Throws one line when some archive then
 * holds fewer than two elites, since no generation could draw two distinct parents from it.
 */
export async function initCycle<G>(
  setup: CycleSetup<G>,
  options: InitOptions<G>,
): Promise<{ state: CycleState; record: InitRecord }> {
  const archives = CycleArchives.create({
    ranges: options.ranges,
    bins: options.bins ?? CYCLEQD_BINS,
  });
  const state: CycleState = { generation: 0, errored: 0, archives };
  const experts: Offered[] = [];
  for (const expert of options.experts) {
    experts.push(await offer(setup, state, expert, 0, options.signal));
  }
  // Every scored expert enters every archive (an empty cell takes anyone), so an empty archive
  // means that no expert could be scored.
  if (archives.archives.some((archive) => archive.size === 0)) {
    throw new Error(
      `no expert could be evaluated (${experts.length} tried): CycleQD needs a scored expert to start from`,
    );
  }
  return { state, record: { generation: 0, experts, ...snapshot(archives) } };
}

/**
 * Generation state.generation + 1: parents from the quality archive, crossover, mutation,
 * evaluation, offer. Advances `state` and returns the generation's record; when the signal aborts
 * the mutation or the evaluation it throws and leaves the state as it was. Any other throw (the
 * genome store, an operator) may leave the archives part-way through the generation: the caller
 * drops this state and resumes from the one it stored after the previous generation.
 */
export async function runGeneration<G>(
  setup: CycleSetup<G>,
  state: CycleState,
  signal?: AbortSignal,
): Promise<GenerationRecord> {
  const generation = state.generation + 1;
  const variant = VARIANTS[setup.variant ?? "paper"];
  const q = qualityTask(generation, state.archives.taskCount);
  const draws = (purpose: number) => createRng(setup.seed, generation, CYCLE_STREAM, purpose);

  // Two distinct parents, as the reference draws them; an archive whose one elite is all the
  // experts filled (they shared its cell) gives that elite as both: its merge with itself is
  // itself, so the child is the elite mutated.
  const archive = state.archives.qualityArchive(generation);
  const drawn = archive.sampleElites(
    Math.min(CYCLEQD_PARENTS, archive.size),
    draws(PARENTS_DRAWS),
    variant.sampling,
    variant.qualityRange,
  );
  const elites = drawn.length === 1 ? [drawn[0] as Elite, drawn[0] as Elite] : drawn;
  const parents: G[] = [];
  for (const elite of elites) {
    const parent = await setup.store.get(elite.id);
    if (parent === undefined) throw new Error(`elite ${elite.id} is not in the genome store`);
    parents.push(parent);
  }
  const merged = await setup.genome.crossover(parents, draws(CROSSOVER_DRAWS));
  const child = await setup.genome.mutate(merged, q, draws(MUTATION_DRAWS), signal);

  // offer() changes the archives only after a successful evaluation, so an abort leaves them be.
  const outcome = await offer(setup, state, child, generation, signal);
  state.generation = generation;
  return {
    generation,
    qualityTask: q,
    parents: elites.map((elite) => elite.id),
    child: outcome,
    ...snapshot(state.archives),
  };
}

export interface RunCycleOptions {
  /** G: the last generation to run. */
  readonly generations: number;
  /** Called after each generation, before the next starts: the caller stores record and state. */
  readonly onGeneration?: (record: GenerationRecord, state: CycleState) => void | Promise<void>;
  /** Checked between generations and passed to evaluations. */
  readonly signal?: AbortSignal;
}

/**
 * Runs generations state.generation + 1 .. G. Stops between generations once the signal is
 * aborted ("aborted"); an evaluation the abort interrupts also ends as "aborted", with that
 * generation left undone.
 */
export async function runCycle<G>(
  setup: CycleSetup<G>,
  state: CycleState,
  options: RunCycleOptions,
): Promise<{ stopped: "done" | "aborted"; generation: number }> {
  const { generations, onGeneration, signal } = options;
  if (!Number.isInteger(generations) || generations < 0) {
    throw new RangeError(`generations must be an integer ≥ 0, got ${generations}`);
  }
  while (state.generation < generations) {
    if (signal?.aborted) return { stopped: "aborted", generation: state.generation };
    let record: GenerationRecord;
    try {
      record = await runGeneration(setup, state, signal);
    } catch (error) {
      if (signal?.aborted) return { stopped: "aborted", generation: state.generation };
      throw error;
    }
    await onGeneration?.(record, state);
  }
  return { stopped: "done", generation: state.generation };
}
