/**
 * The BLADE report over many analyses (a run's episodes, or a submissions file): BLADE's scores
 * with bootstrap intervals, per dataset, clade's conclusion rates, and every ground-truth
 * decision with the number of analyses that matched it (so a reader sees what was missed).
 */
import type { ConclusionVerdict } from "../../env/blade/conclusion.js";
import { bladeEnvInfo, parseBladeAction } from "../../env/blade/env.js";
import type { RuntimeName } from "../../env/blade/runtime/index.js";
import type { BladeRecord } from "../../env/blade/score.js";
import {
  type BladeScores,
  bladeScores,
  type Category,
  DEFAULT_COVERAGE_K,
  type GroundTruthCounts,
  type RunMatch,
  zeroRun,
} from "../../env/blade/scores.js";
import {
  BladeTaskError,
  type BladeTaskSource,
  bladeTaskSource,
  OWN_DATASETS_DIR,
} from "../../env/blade/tasks.js";
import { sandboxedVersion } from "../../env/unsandboxed.js";
import type { RunRow, RunStore, StoredEpisode } from "../../store/run-store.js";
import {
  type BladeBootstrap,
  bootstrapScores,
  type ConclusionRates,
  conclusionRates,
  DEFAULT_RESAMPLES,
} from "./metrics.js";

/** What a stored blade episode left: the analysis as submitted, its record, or an error. */
export interface StoredAnalysis {
  /** The episode it was read from. */
  episode: StoredEpisode;
  task: number;
  /** The submitted analysis's JSON text; undefined when the episode submitted none. */
  submitted: string | undefined;
  record: BladeRecord | undefined;
  errored: boolean;
}

/** The datasets folder and runtime a stored blade run was configured with. */
export function storedRunConfig(config: Record<string, unknown>): {
  dir: string;
  runtime: RuntimeName | undefined;
} {
  const dir = typeof config.bladeDir === "string" ? config.bladeDir : OWN_DATASETS_DIR;
  const runtime =
    config.runtime === "python" || config.runtime === "sql" ? config.runtime : undefined;
  return { dir, runtime };
}

/**
 * The task source a stored blade run was made on, to score its analyses again or show their
 * ground truth; refused in one line when its datasets no longer give the run's version.
 */
export function storedRunSource(
  run: Pick<RunRow, "id" | "config" | "envVersion">,
): BladeTaskSource {
  const { dir, runtime } = storedRunConfig(run.config);
  const source = bladeTaskSource(dir, runtime);
  const expected = bladeEnvInfo(source, source.root === OWN_DATASETS_DIR).version;
  if (sandboxedVersion(run.envVersion) !== expected) {
    throw new BladeTaskError(
      `run "${run.id}" was made on blade ${run.envVersion}, but ${dir} now gives ${expected}: its datasets changed`,
    );
  }
  return source;
}

/** The finished (and errored) episodes of a stored blade run, in store order. */
export function storedAnalyses(store: RunStore, runId: string): StoredAnalysis[] {
  return store.episodes(runId).flatMap((episode) => storedAnalysis(store, episode) ?? []);
}

/** One episode's analysis; undefined for an episode that did not finish (not run, damaged). */
export function storedAnalysis(
  store: RunStore,
  episode: StoredEpisode,
): StoredAnalysis | undefined {
  const errored = episode.outcome === "error";
  if (!errored && episode.outcome !== "success" && episode.outcome !== "failure") return undefined;
  const last = errored ? undefined : store.steps(episode.id).at(-1);
  const action = last ? parseBladeAction(last.action) : undefined;
  return {
    episode,
    task: episode.taskIndex,
    submitted: action?.kind === "submit" ? action.payload : undefined,
    record: last?.info.blade as BladeRecord | undefined,
    errored,
  };
}

/**
 * The stored analyses as the report takes them; one that submitted nothing or errored is named
 * by the dataset its task's scored analyses name, else by its task.
 */
export function reportedAnalyses(stored: readonly StoredAnalysis[]): ReportedAnalysis[] {
  const datasetOfTask = new Map<number, string>();
  for (const a of stored) if (a.record) datasetOfTask.set(a.task, a.record.dataset);
  return stored.map((a) => reportedAnalysis(a, datasetOfTask.get(a.task) ?? `task ${a.task}`));
}

/**
 * One stored analysis as the report takes it: scored when it has a record and did not error;
 * `dataset` names it otherwise.
 */
export function reportedAnalysis(a: StoredAnalysis, dataset: string): ReportedAnalysis {
  return a.record && !a.errored
    ? { kind: "scored", record: a.record }
    : { kind: a.errored ? "errored" : "not-submitted", dataset };
}

/** The dataset a reported analysis is counted under. */
export function reportedDataset(a: ReportedAnalysis): string {
  return a.kind === "scored" ? a.record.dataset : a.dataset;
}

/** One analysis as the report sees it: a scored record, or a run that produced none. */
export type ReportedAnalysis =
  | { kind: "scored"; record: BladeRecord }
  /** The agent submitted nothing usable (BLADE's LM_GENERATION_FAILED: scored as zero). */
  | { kind: "not-submitted"; dataset: string }
  /** The episode errored (infrastructure): left out, never scored as a failure. */
  | { kind: "errored"; dataset: string };

export interface DecisionCount {
  item: string;
  /** Analyses whose match included it. */
  matched: number;
}

export interface DatasetDecisions {
  dataset: string;
  analyses: number;
  cvars: DecisionCount[];
  models: DecisionCount[];
  /** Expanded ground-truth transforms: matched by value / by graph. */
  transforms: { item: string; verb: string; value: number; graph: number }[];
}

export interface BladeReport {
  k: number;
  analyses: number;
  notSubmitted: number;
  errored: number;
  scores: BladeScores;
  /** Absent with a single analysis per dataset or fewer (nothing to resample). */
  bootstrap?: BladeBootstrap;
  conclusions?: ConclusionRates;
  decisions: DatasetDecisions[];
}

export interface BladeReportOptions {
  k?: number;
  resamples?: number;
  seed?: number;
}

/** The counts of a dataset none of whose analyses was scored: nothing known, all zero. */
const NO_COUNTS: GroundTruthCounts = {
  gtCvarCount: 0,
  gtModelCount: 0,
  gtModelUniqueCount: 0,
  gtTransformCount: 0,
};

function countItems(
  records: readonly BladeRecord[],
  all: readonly string[],
  of: (r: BladeRecord) => readonly string[],
): DecisionCount[] {
  return all.map((item) => ({ item, matched: records.filter((r) => of(r).includes(item)).length }));
}

function decisionsOf(
  dataset: string,
  records: readonly BladeRecord[],
  analyses: number,
): DatasetDecisions {
  const cvars = [
    ...new Set(records.flatMap((r) => [...r.cvars.matchedGt, ...r.cvars.unmatchedGt])),
  ];
  const models = [...new Set(records.flatMap((r) => r.model.decisions.map((d) => d.text)))];
  const transforms = new Map<
    string,
    { item: string; verb: string; value: number; graph: number }
  >();
  for (const record of records) {
    for (const spec of record.transforms.gt) {
      const entry = transforms.get(spec.name) ?? {
        item: spec.name,
        verb: spec.verb,
        value: 0,
        graph: 0,
      };
      transforms.set(spec.name, entry);
    }
    // Counted once per analysis, by name (BLADE counts coverage by name).
    for (const name of new Set(record.run.matchedValueGt)) {
      const entry = transforms.get(name);
      if (entry) entry.value++;
    }
    for (const name of new Set(record.run.matchedGraphGt)) {
      const entry = transforms.get(name);
      if (entry) entry.graph++;
    }
  }
  return {
    dataset,
    analyses,
    cvars: countItems(records, cvars, (r) => r.cvars.matchedGt),
    models: countItems(records, models, (r) =>
      r.model.decisions.filter((d) => d.matched).map((d) => d.text),
    ),
    transforms: [...transforms.values()],
  };
}

/** The report of a set of analyses, datasets in name order. Throws when none was scored. */
export function buildBladeReport(
  analyses: readonly ReportedAnalysis[],
  options: BladeReportOptions = {},
): BladeReport {
  const k = options.k ?? DEFAULT_COVERAGE_K;
  const byDataset = new Map<string, RunMatch[]>();
  const recordsByDataset = new Map<string, BladeRecord[]>();
  const counted = new Map<string, number>();
  const verdicts: ConclusionVerdict[] = [];
  const names = [...new Set(analyses.map(reportedDataset))].sort();
  for (const name of names) {
    const mine = analyses.filter((a) => reportedDataset(a) === name);
    const records = mine.flatMap((a) => (a.kind === "scored" ? [a.record] : []));
    const runs: RunMatch[] = [];
    for (const a of mine) {
      if (a.kind === "scored") runs.push(a.record.run);
      else if (a.kind === "not-submitted") runs.push(zeroRun(records[0]?.run ?? NO_COUNTS));
    }
    if (runs.length === 0) continue;
    byDataset.set(name, runs);
    recordsByDataset.set(name, records);
    counted.set(name, runs.length);
    for (const record of records) if (record.conclusion) verdicts.push(record.conclusion);
    // A dataset with a true effect: an analysis that submitted nothing concluded nothing.
    if (records.some((r) => r.conclusion)) {
      for (const a of mine) {
        if (a.kind === "not-submitted") {
          verdicts.push({
            direction: "undetermined",
            size: "not comparable",
            reason: "no analysis",
          });
        }
      }
    }
  }
  const scores = bladeScores(byDataset, { k });
  const resampleable = [...byDataset.values()].some((runs) => runs.length > 1);
  const bootstrap = resampleable
    ? bootstrapScores(byDataset, {
        k,
        resamples: options.resamples ?? DEFAULT_RESAMPLES,
        seed: options.seed ?? 0,
      })
    : undefined;
  return {
    k,
    analyses: analyses.length,
    notSubmitted: analyses.filter((a) => a.kind === "not-submitted").length,
    errored: analyses.filter((a) => a.kind === "errored").length,
    scores,
    ...(bootstrap ? { bootstrap } : {}),
    ...(verdicts.length > 0
      ? { conclusions: conclusionRates(verdicts, { seed: options.seed ?? 0 }) }
      : {}),
    decisions: [...recordsByDataset.entries()].map(([name, records]) =>
      decisionsOf(name, records, counted.get(name) ?? 0),
    ),
  };
}

export const CATEGORY_LABELS: Record<Category, string> = {
  cvar: "conceptual variables",
  model: "models",
  modelCvar: "model + variables",
  transformGraph: "transforms (graph)",
  transformValue: "transforms (value)",
};
