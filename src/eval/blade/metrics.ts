/**
 * BLADE's score intervals and clade's conclusion rates over runs (docs/metrics.md "BLADE"); the
 * scores themselves are the environment's (env/blade/scores.ts).
 */

import type { ConclusionVerdict } from "../../env/blade/conclusion.js";
import {
  BladeMetricsError,
  type BladeScoreOptions,
  type BladeScores,
  CATEGORIES,
  type Category,
  checkK,
  DEFAULT_COVERAGE_K,
  meanOf,
  prepareDatasets,
  type RunMatch,
  scorePrepared,
} from "../../env/blade/scores.js";
import { createRng } from "../../env/rng.js";
import {
  type BootstrapOptions,
  bootstrapInterval,
  type Interval,
  percentileInterval,
} from "../metrics.js";

/** Resamples of the bootstrap, as BLADE's analysis_metric_bootstrap_calculation. */
export const DEFAULT_RESAMPLES = 1000;
/** Two-sided level of the intervals: BLADE's quantiles 0.025 and 0.975. */
export const DEFAULT_LEVEL = 0.95;
/** Generator stream of the score bootstrap, so it never shares draws with other bootstraps. */
const BLADE_BOOTSTRAP_STREAM = 0xb1ade;

/** A statistic's value on the original runs, its mean over resamples and its interval. */
export interface BootstrappedValue {
  point: number;
  /** Mean over the resamples (BLADE's mean_bootstrapped_*). */
  bootstrapMean: number;
  interval: Interval;
}

export interface BladeBootstrap {
  k: number;
  resamples: number;
  seed: number;
  level: number;
  weighted: BootstrappedValue;
  unweighted: BootstrappedValue;
  unweightedAsBladeCodes: BootstrappedValue;
  hitRate: Record<Category, BootstrappedValue>;
  coverage: Record<Category, BootstrappedValue>;
  f1: Record<Category, BootstrappedValue>;
}

export interface BladeBootstrapOptions extends BootstrapOptions, BladeScoreOptions {}

/**
 * Percentile bootstrap of the scores (get_model_metrics.py: analysis_metric_bootstrap_calculation):
 * each resample draws every dataset's runs (after datasetRuns) with replacement to its own length,
 * datasets in the map's order, and recomputes everything, coverage on the first k runs of the
 * resample. Intervals are the (1 − level)/2 and (1 + level)/2 quantiles, linear interpolation as
 * numpy's. Unlike BLADE, a dataset may have k runs or fewer (coverage then pools all of them), and
 * the draws are seeded, so an interval repeats exactly; the per-category intervals come from the
 * same resamples (BLADE's own per-metric bootstrap, get_bootstrap_scores, pools runs differently).
 */
export function bootstrapScores(
  byDataset: ReadonlyMap<string, readonly RunMatch[]>,
  options: BladeBootstrapOptions = {},
): BladeBootstrap {
  const {
    k = DEFAULT_COVERAGE_K,
    resamples = DEFAULT_RESAMPLES,
    level = DEFAULT_LEVEL,
    seed = 0,
  } = options;
  checkK(k);
  if (!Number.isInteger(resamples) || resamples < 1) {
    throw new BladeMetricsError(
      `bootstrap resamples: must be a whole number ≥ 1, got ${resamples}`,
    );
  }
  const datasets = prepareDatasets(byDataset);
  const point = scorePrepared(datasets, k);

  // One list of resampled values per statistic, filled in a fixed order.
  const extract = (s: BladeScores): number[] => [
    s.weighted,
    s.unweighted,
    s.unweightedAsBladeCodes,
    ...CATEGORIES.map((c) => s.hitRate[c]),
    ...CATEGORIES.map((c) => s.coverage[c]),
    ...CATEGORIES.map((c) => s.f1[c]),
  ];
  const pointValues = extract(point);
  const samples = pointValues.map((): number[] => []);
  const rng = createRng(seed, BLADE_BOOTSTRAP_STREAM);
  for (let r = 0; r < resamples; r++) {
    const drawn = datasets.map((d) => ({
      ...d,
      runs: d.runs.map(() => d.runs[rng.int(d.runs.length)] as RunMatch),
    }));
    extract(scorePrepared(drawn, k)).forEach((v, i) => {
      samples[i]?.push(v);
    });
  }
  const stats = samples.map(
    (values, i): BootstrappedValue => ({
      point: pointValues[i] as number,
      bootstrapMean: meanOf(values),
      interval: percentileInterval(values, level),
    }),
  );
  const stat = (i: number) => stats[i] as BootstrappedValue;
  const byCategory = (offset: number): Record<Category, BootstrappedValue> => {
    const out = {} as Record<Category, BootstrappedValue>;
    CATEGORIES.forEach((c, i) => {
      out[c] = stat(offset + i);
    });
    return out;
  };
  return {
    k,
    resamples,
    seed,
    level,
    weighted: stat(0),
    unweighted: stat(1),
    unweightedAsBladeCodes: stat(2),
    hitRate: byCategory(3),
    coverage: byCategory(3 + CATEGORIES.length),
    f1: byCategory(3 + 2 * CATEGORIES.length),
  };
}

// ---- Conclusion correctness (clade's addition, for datasets with a known true effect) ----

/** count / total, NaN (reported "n/a") when total is 0, with its bootstrap interval. */
export interface ConclusionRate {
  count: number;
  total: number;
  rate: number;
  interval: Interval;
}

export interface ConclusionRates {
  runs: number;
  /** Runs with the right direction, over all runs. */
  direction: ConclusionRate;
  /** Runs with the size within tolerance, over the runs where it was comparable. */
  size: ConclusionRate;
}

function conclusionRate(hits: readonly boolean[], options: BootstrapOptions): ConclusionRate {
  const rateOf = (sample: readonly boolean[]) =>
    sample.length === 0 ? Number.NaN : sample.filter(Boolean).length / sample.length;
  const count = hits.filter(Boolean).length;
  return {
    count,
    total: hits.length,
    rate: rateOf(hits),
    interval: bootstrapInterval(hits, rateOf, options),
  };
}

/**
 * Shares of runs whose conclusion has the true direction, and whose size is within tolerance
 * (over comparable runs), each with a percentile bootstrap interval over runs (eval/metrics.ts's
 * bootstrapInterval: 1000 resamples, seeded).
 */
export function conclusionRates(
  verdicts: readonly ConclusionVerdict[],
  options: BootstrapOptions = {},
): ConclusionRates {
  // A run that reached no conclusion (no fitted model, no IV term) counts as a wrong direction.
  const sizes = verdicts.flatMap((v) => (v.size === "not comparable" ? [] : [v.size === "within"]));
  return {
    runs: verdicts.length,
    direction: conclusionRate(
      verdicts.map((v) => v.direction === "right"),
      options,
    ),
    size: conclusionRate(sizes, options),
  };
}
