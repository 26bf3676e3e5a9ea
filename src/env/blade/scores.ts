/**
 * BLADE's scores (docs/blade-spec.md §7, docs/metrics.md "BLADE"): per-run hit rates, coverage@k,
 * F1 per category, the weighted and unweighted overall scores (the environment's reward is the
 * weighted score of one run; eval/blade/metrics.ts adds the bootstrap intervals), read
 * from BLADE's eval/metrics/final_metrics.py, eval/datamodel/run.py and eval/get_model_metrics.py.
 * Pure functions over matched items: the matching itself (transforms, variables, models) happens
 * elsewhere and hands each run over as a `RunMatch`. Where clade departs from BLADE's code (the
 * typo in the unweighted score, 0 instead of NaN, fewer than k runs, a seed) the comment says so.
 */

/** Runs per dataset whose matched ground-truth items are pooled for coverage (BLADE's k). */
export const DEFAULT_COVERAGE_K = 10;

/** Thrown on a run record that cannot be scored; the message names the dataset, run and field. */
export class BladeMetricsError extends Error {
  override name = "BladeMetricsError";
}

/** The five decision categories, in BLADE's order. */
export const CATEGORIES = [
  "cvar",
  "model",
  "modelCvar",
  "transformGraph",
  "transformValue",
] as const;
export type Category = (typeof CATEGORIES)[number];
export type PerCategory = Record<Category, number>;

/** BLADE's name of each category (the keys of its metric dictionaries), for reports. */
export const BLADE_CATEGORY_NAMES: Record<Category, string> = {
  cvar: "cvar",
  model: "model",
  modelCvar: "model_cvar",
  transformGraph: "transform_graph",
  transformValue: "transform_value",
};

/**
 * How a run ended, for scoring: "scored" = BLADE's FINISHED_SUCCESSFULLY (a run whose transform
 * stage alone failed is scored too, with empty transform lists and agentTransformCount 0);
 * "generation-failed" = LM_GENERATION_FAILED, scored as an all-zero run; "failed" = any other
 * failure (conversion, ground-truth loading, matching, metrics), which BLADE drops.
 */
export type RunStatus = "scored" | "generation-failed" | "failed";

/**
 * One run's matched items as BLADE keeps them (`SingleRunMetrics`, §7.1). Lists named "set" are
 * read as sets (duplicates count once); the agent's transform lists keep duplicates, as BLADE's.
 * The ground-truth counts are the dataset's and must agree across its scored runs.
 */
export interface RunMatch {
  status: RunStatus;
  /** matched_cvar: set of ground-truth variable texts matched with similarity ≥ 8. */
  matchedCvarsGt: readonly string[];
  /** matched_cvar2: set of agent variable texts in those pairs. */
  matchedCvarsAgent: readonly string[];
  /** num_cvars2: agent variables judged (those of a role present in the ground truth). */
  agentCvarCount: number;
  /** num_cvars1: all ground-truth variables. */
  gtCvarCount: number;
  /** matched_model: [specification of the first unique match's ground-truth model] or []. */
  matchedModels: readonly string[];
  /** num_mspecs1: ground-truth models. */
  gtModelCount: number;
  /** num_mspecs1_unique: ground-truth models after de-duplication by normalised specification. */
  gtModelUniqueCount: number;
  /** matched_model_cvar: ["<spec_name> | <variable texts>"] for a model whose variables all match, or []. */
  matchedModelCvar: readonly string[];
  /** matched_vspec: set of names of ground-truth expanded transform specs matched by value (ROOT excluded). */
  matchedValueGt: readonly string[];
  /** matched_gspec: the same for graph matches. */
  matchedGraphGt: readonly string[];
  /** matched_vspec2: names of the agent's expanded specs matched by value (a list, duplicates kept). */
  matchedValueAgent: readonly string[];
  /** matched_gspec2: the same for graph matches. */
  matchedGraphAgent: readonly string[];
  /** num_tspecs1: ground-truth expanded specs − 1 (ROOT). */
  gtTransformCount: number;
  /** num_tspecs2: the agent's expanded specs − 1 (ROOT); 0 when its transform stage failed. */
  agentTransformCount: number;
}

const distinct = (items: readonly string[]): number => new Set(items).size;

/**
 * A run's hit rate (precision) per category (run.py: SingleRunMetrics.hit_rate_*): matched agent
 * decisions over the agent's decisions, the denominators guarded with max(…, 1) as BLADE's.
 * A run proposes one model, so models and model+variables divide by 1.
 */
export function runHitRates(run: RunMatch): PerCategory {
  const transforms = Math.max(run.agentTransformCount, 1);
  return {
    cvar: distinct(run.matchedCvarsAgent) / Math.max(run.agentCvarCount, 1),
    model: run.matchedModels.length / 1,
    modelCvar: run.matchedModelCvar.length / 1,
    transformGraph: run.matchedGraphAgent.length / transforms,
    transformValue: run.matchedValueAgent.length / transforms,
  };
}

/** A dataset's ground-truth counts, which every run of it carries. */
export type GroundTruthCounts = Pick<
  RunMatch,
  "gtCvarCount" | "gtModelCount" | "gtModelUniqueCount" | "gtTransformCount"
>;

/** An all-zero run carrying the dataset's ground-truth counts (BLADE's empty SingleRunMetrics). */
export function zeroRun(counts: GroundTruthCounts): RunMatch {
  return {
    status: "generation-failed",
    matchedCvarsGt: [],
    matchedCvarsAgent: [],
    agentCvarCount: 0,
    gtCvarCount: counts.gtCvarCount,
    matchedModels: [],
    gtModelCount: counts.gtModelCount,
    gtModelUniqueCount: counts.gtModelUniqueCount,
    matchedModelCvar: [],
    matchedValueGt: [],
    matchedGraphGt: [],
    matchedValueAgent: [],
    matchedGraphAgent: [],
    gtTransformCount: counts.gtTransformCount,
    agentTransformCount: 0,
  };
}

/**
 * The runs a dataset is scored on (MetricsAcrossRuns.get_single_run_metrics): its scored runs in
 * order, then one all-zero run per generation failure, at the end; other failures are dropped.
 * The zero runs take the ground-truth counts of the first scored run (BLADE's dataset-level
 * counts), or their own record's when no run was scored.
 */
export function datasetRuns(runs: readonly RunMatch[]): RunMatch[] {
  const scored = runs.filter((r) => r.status === "scored");
  const zeros = runs
    .filter((r) => r.status === "generation-failed")
    .map((r) => zeroRun(scored[0] ?? r));
  return [...scored, ...zeros];
}

/** count / denominator, 0 when the denominator is 0 (BLADE would raise ZeroDivisionError). */
const share = (count: number, denominator: number): number =>
  denominator === 0 ? 0 : count / denominator;

function unionSize(runs: readonly RunMatch[], items: (run: RunMatch) => readonly string[]): number {
  const union = new Set<string>();
  for (const run of runs) for (const item of items(run)) union.add(item);
  return union.size;
}

export function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1) {
    throw new BladeMetricsError(`coverage k: must be a whole number ≥ 1, got ${k}`);
  }
}

/**
 * Coverage@k of one dataset (final_metrics.py: calculate_coverage): the ground-truth items matched
 * in any of the first k runs over the ground truth's size. Denominators: variables num_cvars1;
 * models min(num_mspecs1_unique, runs taken); model+variables min(num_mspecs1, runs taken);
 * transforms num_tspecs1. With fewer than k runs all of them are taken (BLADE asserts more than k
 * in its bootstrap). Items are counted by name, so equal names count once (coverage may stay
 * below 1, as BLADE's).
 */
export function coverageAtK(
  runs: readonly RunMatch[],
  k: number = DEFAULT_COVERAGE_K,
): PerCategory {
  checkK(k);
  const taken = runs.slice(0, k);
  const first = taken[0];
  if (first === undefined) throw new BladeMetricsError("coverage: a dataset has no runs to score");
  return {
    cvar: share(
      unionSize(taken, (r) => r.matchedCvarsGt),
      first.gtCvarCount,
    ),
    model: share(
      unionSize(taken, (r) => r.matchedModels),
      Math.min(first.gtModelUniqueCount, taken.length),
    ),
    modelCvar: share(
      unionSize(taken, (r) => r.matchedModelCvar),
      Math.min(first.gtModelCount, taken.length),
    ),
    transformGraph: share(
      unionSize(taken, (r) => r.matchedGraphGt),
      first.gtTransformCount,
    ),
    transformValue: share(
      unionSize(taken, (r) => r.matchedValueGt),
      first.gtTransformCount,
    ),
  };
}

/**
 * F1 = 2·h·c / (h + c), the harmonic mean of hit rate and coverage (final_metrics.py:
 * harmonic_mean). 0 when both are 0, where BLADE's numpy division gives NaN.
 */
export function f1(hitRate: number, coverage: number): number {
  const sum = hitRate + coverage;
  return sum === 0 ? 0 : (2 * hitRate * coverage) / sum;
}

const perCategory = (value: (c: Category) => number): PerCategory => ({
  cvar: value("cvar"),
  model: value("model"),
  modelCvar: value("modelCvar"),
  transformGraph: value("transformGraph"),
  transformValue: value("transformValue"),
});

export const meanOf = (values: readonly number[]): number =>
  values.reduce((sum, v) => sum + v, 0) / values.length;

/** One dataset's part of the scores. */
export interface DatasetScores {
  name: string;
  /** Runs scored on: the scored runs plus one zero run per generation failure. */
  runs: number;
  generationFailures: number;
  /** Runs that failed otherwise and enter nothing. */
  dropped: number;
  /** Runs pooled for coverage: min(k, runs). */
  coverageRuns: number;
  /** Mean over the dataset's runs. */
  hitRate: PerCategory;
  coverage: PerCategory;
}

/** The dataset totals behind the weights (§7.2). */
export interface ScoreTotals {
  /** T = Σ num_tspecs1. */
  transforms: number;
  /** C = Σ num_cvars1. */
  cvars: number;
  /** M = Σ min(num_mspecs1, k). */
  models: number;
  /** U = Σ min(num_mspecs1_unique, k). */
  modelsUnique: number;
}

export interface BladeScores {
  k: number;
  datasets: DatasetScores[];
  /** Mean over runs, then unweighted mean over datasets (calculate_hit_rate). */
  hitRate: PerCategory;
  /** Coverage@k, mean over datasets (calculate_coverage). */
  coverage: PerCategory;
  /** Harmonic mean of the two. */
  f1: PerCategory;
  totals: ScoreTotals;
  /** C/S, U/S, M/S, T/2S, T/2S with S = T + C + M + U (0 each when S is 0). */
  weights: PerCategory;
  /** Σ weight·F1 (calculate_analysis_scores' weighted_score). */
  weighted: number;
  /** The intended unweighted score: (F1_cvar + F1_model + F1_model_cvar + ½F1_graph + ½F1_value) / 4. */
  unweighted: number;
  /**
   * What BLADE's code computes instead (commit c4e6a38, a typo `0.5 * f1_g + 0.5 + f1_v`):
   * (F1_cvar + F1_model + F1_model_cvar + ½F1_graph + ½ + F1_value) / 4. For comparison only.
   */
  unweightedAsBladeCodes: number;
}

/** A dataset's runs after datasetRuns, checked once. */
export interface PreparedDataset {
  name: string;
  runs: RunMatch[];
  generationFailures: number;
  dropped: number;
}

const STATUSES: readonly RunStatus[] = ["scored", "generation-failed", "failed"];
const COUNT_FIELDS = [
  "agentCvarCount",
  "gtCvarCount",
  "gtModelCount",
  "gtModelUniqueCount",
  "gtTransformCount",
  "agentTransformCount",
] as const;
const LIST_FIELDS = [
  "matchedCvarsGt",
  "matchedCvarsAgent",
  "matchedModels",
  "matchedModelCvar",
  "matchedValueGt",
  "matchedGraphGt",
  "matchedValueAgent",
  "matchedGraphAgent",
] as const;
/** Fields that must agree across a dataset's scored runs: BLADE keeps them once per dataset. */
const GT_COUNT_FIELDS = [
  "gtCvarCount",
  "gtModelCount",
  "gtModelUniqueCount",
  "gtTransformCount",
] as const;

function checkRun(run: RunMatch, where: string): void {
  if (!STATUSES.includes(run.status)) {
    throw new BladeMetricsError(
      `${where}: status: expected one of ${STATUSES.join(", ")}, got ${String(run.status)}`,
    );
  }
  if (run.status === "failed") return;
  for (const field of COUNT_FIELDS) {
    const value = run[field];
    if (!Number.isInteger(value) || value < 0) {
      throw new BladeMetricsError(
        `${where}: ${field}: expected a whole number ≥ 0, got ${String(value)}`,
      );
    }
  }
  if (run.status === "generation-failed") return;
  for (const field of LIST_FIELDS) {
    if (!Array.isArray(run[field]))
      throw new BladeMetricsError(`${where}: ${field}: expected a list`);
  }
  for (const field of ["matchedModels", "matchedModelCvar"] as const) {
    if (run[field].length > 1) {
      throw new BladeMetricsError(
        `${where}: ${field}: at most one item per run (BLADE keeps the first match), got ${run[field].length}`,
      );
    }
  }
}

export function prepareDatasets(
  byDataset: ReadonlyMap<string, readonly RunMatch[]>,
): PreparedDataset[] {
  if (byDataset.size === 0) throw new BladeMetricsError("BLADE scores: no datasets given");
  const prepared: PreparedDataset[] = [];
  for (const [name, runs] of byDataset) {
    runs.forEach((run, i) => {
      checkRun(run, `dataset ${name}: run ${i}`);
    });
    const kept = datasetRuns(runs);
    const first = kept[0];
    if (first === undefined) {
      throw new BladeMetricsError(
        `dataset ${name}: no run to score (every one of its ${runs.length} runs failed before scoring)`,
      );
    }
    // The runs whose counts are used: the scored ones, or the generation failures if none was.
    const counted = first.status === "scored" ? "scored" : "generation-failed";
    for (const [i, run] of runs.entries()) {
      if (run.status !== counted) continue;
      for (const field of GT_COUNT_FIELDS) {
        if (run[field] !== first[field]) {
          throw new BladeMetricsError(
            `dataset ${name}: run ${i}: ${field}: ${run[field]} differs from the dataset's ${first[field]} (its first ${counted} run)`,
          );
        }
      }
    }
    const generationFailures = runs.filter((r) => r.status === "generation-failed").length;
    prepared.push({
      name,
      runs: kept,
      generationFailures,
      dropped: runs.length - kept.length,
    });
  }
  return prepared;
}

export function scorePrepared(datasets: readonly PreparedDataset[], k: number): BladeScores {
  const perDataset = datasets.map((d): DatasetScores => {
    const rates = d.runs.map(runHitRates);
    return {
      name: d.name,
      runs: d.runs.length,
      generationFailures: d.generationFailures,
      dropped: d.dropped,
      coverageRuns: Math.min(k, d.runs.length),
      hitRate: perCategory((c) => meanOf(rates.map((r) => r[c]))),
      coverage: coverageAtK(d.runs, k),
    };
  });
  const hitRate = perCategory((c) => meanOf(perDataset.map((d) => d.hitRate[c])));
  const coverage = perCategory((c) => meanOf(perDataset.map((d) => d.coverage[c])));
  const f1s = perCategory((c) => f1(hitRate[c], coverage[c]));

  const totals: ScoreTotals = { transforms: 0, cvars: 0, models: 0, modelsUnique: 0 };
  for (const d of datasets) {
    const counts = d.runs[0] as RunMatch;
    totals.transforms += counts.gtTransformCount;
    totals.cvars += counts.gtCvarCount;
    // min(…, k) even when a dataset has fewer than k runs, as BLADE's get_weights.
    totals.models += Math.min(counts.gtModelCount, k);
    totals.modelsUnique += Math.min(counts.gtModelUniqueCount, k);
  }
  const sum = totals.transforms + totals.cvars + totals.models + totals.modelsUnique;
  const weights: PerCategory = {
    cvar: share(totals.cvars, sum),
    model: share(totals.modelsUnique, sum),
    modelCvar: share(totals.models, sum),
    transformGraph: share(totals.transforms, 2 * sum),
    transformValue: share(totals.transforms, 2 * sum),
  };
  const weighted = CATEGORIES.reduce((s, c) => s + weights[c] * f1s[c], 0);
  const head = f1s.cvar + f1s.model + f1s.modelCvar + 0.5 * f1s.transformGraph;
  return {
    k,
    datasets: perDataset,
    hitRate,
    coverage,
    f1: f1s,
    totals,
    weights,
    weighted,
    unweighted: (head + 0.5 * f1s.transformValue) / 4,
    unweightedAsBladeCodes: (head + 0.5 + f1s.transformValue) / 4,
  };
}

export interface BladeScoreOptions {
  /** Runs pooled for coverage; 10 by default. */
  k?: number;
}

/**
 * BLADE's final scores over datasets (final_metrics.py: calculate_analysis_scores), from each
 * dataset's runs in the order they were made (every status; datasetRuns picks the scored ones).
 */
export function bladeScores(
  byDataset: ReadonlyMap<string, readonly RunMatch[]>,
  options: BladeScoreOptions = {},
): BladeScores {
  const { k = DEFAULT_COVERAGE_K } = options;
  checkK(k);
  return scorePrepared(prepareDatasets(byDataset), k);
}
