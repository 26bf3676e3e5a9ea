/**
 * The training page's arithmetic, kept apart from drawing so it stays plain: which metrics get a
 * chart, several runs' curves joined on one step axis (uPlot wants one x array and aligned y
 * arrays), and the horizon schedule's stages as the bands and boundary lines a chart draws.
 */
import type { StepMetric, TrainingCurve, TrainingRunResponse } from "../../../api/training.js";

/** A run on the page: its response and the colour of its lines. */
export interface ShownRun {
  id: string;
  color: string;
  data: TrainingRunResponse;
}

export interface MetricChoice {
  /** A metric column's name, or `extra:<name>` for a number the trainer reported beyond them. */
  key: string;
  label: string;
  /** A fixed y range (rates); the data's own range otherwise. */
  range?: [number, number];
}

/** The learning curves every training page shows. */
export const MAIN_METRICS: readonly MetricChoice[] = [
  { key: "meanReward", label: "mean reward" },
  { key: "successRate", label: "success rate", range: [0, 1] },
  { key: "horizon", label: "horizon (turn limit)" },
  { key: "entropy", label: "entropy (nats)" },
  { key: "kl", label: "KL (π_old ‖ π_new)" },
];

/** The other stored columns, which a user may add as charts. */
const OTHER_COLUMNS: readonly MetricChoice[] = [
  { key: "clipFraction", label: "clip fraction", range: [0, 1] },
  { key: "gradNorm", label: "gradient norm" },
  { key: "envSteps", label: "environment steps" },
  { key: "seconds", label: "seconds" },
  { key: "errors", label: "errored episodes" },
];

/** Every metric the runs have beyond the main five: the other columns, then their extras. */
export function otherMetrics(runs: readonly ShownRun[]): MetricChoice[] {
  const extras = new Set<string>();
  for (const run of runs) for (const name of Object.keys(run.data.curve.extra)) extras.add(name);
  return [
    ...OTHER_COLUMNS,
    ...[...extras].sort().map((name) => ({ key: `extra:${name}`, label: name })),
  ];
}

/** A metric's choice by key (an unknown extra still gets a chart: it may appear later). */
export function metricChoice(key: string): MetricChoice {
  const known = [...MAIN_METRICS, ...OTHER_COLUMNS].find((m) => m.key === key);
  return known ?? { key, label: key.replace(/^extra:/, "") };
}

/** A metric's values, one per step of the curve (nulls when the run never reported it). */
function metricValues(curve: TrainingCurve, key: string): (number | null)[] {
  if (key.startsWith("extra:")) {
    return curve.extra[key.slice(6)] ?? curve.step.map(() => null);
  }
  return curve[key as StepMetric] ?? curve.step.map(() => null);
}

/**
 * Several runs' values of a metric on one step axis: [steps, run 1's values, run 2's, ...],
 * each null at the steps its run does not have.
 */
export function alignCurves(
  runs: readonly ShownRun[],
  key: string,
): [number[], ...(number | null)[][]] {
  const steps = [...new Set(runs.flatMap((run) => run.data.curve.step))].sort((a, b) => a - b);
  const position = new Map(steps.map((step, i) => [step, i]));
  const columns = runs.map((run) => {
    const values = new Array<number | null>(steps.length).fill(null);
    const own = metricValues(run.data.curve, key);
    run.data.curve.step.forEach((step, i) => {
      values[position.get(step) as number] = own[i] ?? null;
    });
    return values;
  });
  return [steps, ...columns];
}

/** One stage as a chart draws it: a band of steps with its horizon, in a run's colour. */
export interface StageBand {
  startStep: number;
  /** First step after the stage; null for the last, open-ended one. */
  endStep: number | null;
  horizon: number;
  color: string;
  /** Which label row (one per distinct schedule, so labels of different runs do not overlap). */
  row: number;
  /** Every other stage is shaded, so neighbouring stages are told apart. */
  shaded: boolean;
}

const NEUTRAL = "#6b7385";

/**
 * The stages of the runs' schedules. Runs on the same schedule share one set of bands, in grey
 * when every run shown has it, else in the colour of the first run with it.
 */
export function stageBands(runs: readonly ShownRun[]): StageBand[] {
  const bySpec = new Map<string, ShownRun>();
  for (const run of runs) {
    const spec = run.data.schedule?.spec;
    if (spec !== undefined && !bySpec.has(spec)) bySpec.set(spec, run);
  }
  const shared = bySpec.size === 1;
  return [...bySpec.values()].flatMap((run, row) =>
    (run.data.schedule?.stages ?? []).map((stage) => ({
      startStep: stage.startStep,
      endStep: stage.endStep,
      horizon: stage.horizon,
      color: shared ? NEUTRAL : run.color,
      row,
      shaded: stage.index % 2 === 1,
    })),
  );
}

/**
 * The stage boundaries within the steps shown (a stage that starts after step 0 and no later
 * than the last step): the vertical lines the charts draw.
 */
export function stageMarkers(bands: readonly StageBand[], steps: readonly number[]): StageBand[] {
  const first = steps[0];
  const last = steps.at(-1);
  if (first === undefined || last === undefined) return [];
  return bands.filter((band) => band.startStep > first && band.startStep <= last);
}

/** Distinct colours for overlaid runs (the selection's order picks them). */
const PALETTE = [
  "#2b63d9",
  "#d9572b",
  "#1f8a4c",
  "#9b3fd1",
  "#c79a00",
  "#0f9aa8",
  "#c0392b",
  "#5d6d7e",
  "#e377c2",
  "#7f5f2a",
];

export const colorOf = (index: number): string => PALETTE[index % PALETTE.length] as string;
