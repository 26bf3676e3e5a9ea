/**
 * Goal-oriented metrics of labelled conversations, as defined in docs/metrics.md ("Goals"):
 * GSR overall and for multi-turn goals, the turn success rate beside it, the distribution of
 * root causes over failed goals, and percentile bootstrap intervals over sessions. Pure
 * functions; an errored session (a judge failed on it) is counted apart and never scored.
 */
import { createRng } from "../../env/rng.js";
import { type BootstrapOptions, type Interval, percentileInterval } from "../metrics.js";
import type { TurnLabelFields } from "./labels.js";
import { segmentGoals } from "./segment.js";
import type { Taxonomy } from "./taxonomy.js";

/** One conversation's labels, or the error that kept it from being labelled. */
export type SessionLabels =
  | { id: string; status: "labelled"; turns: readonly TurnLabelFields[] }
  | { id: string; status: "errored"; error: string };

/** count / total × 100, with its bootstrap interval; percent is NaN when total is 0. */
export interface Rate {
  count: number;
  total: number;
  percent: number;
  interval: Interval;
}

/** One code's share of the failed goals (their root cause), in percent of failed goals. */
export interface CauseShare {
  code: string;
  name: string;
  count: number;
  percent: number;
  interval: Interval;
}

export interface GoalMetrics {
  /** The taxonomy the causes are counted in. */
  taxonomy: string;
  /** Sessions scored (labelled). */
  sessions: number;
  /** Sessions left out because their judgement errored. */
  erroredSessions: number;
  /** Successful goals / goals × 100. */
  gsr: Rate;
  /** The same over goals of more than one turn. */
  multiTurnGsr: Rate;
  /** Successful turns / turns × 100. */
  turnSuccessRate: Rate;
  failedGoals: number;
  /** Every code of the taxonomy, in its order, zero counts included. */
  causes: CauseShare[];
  /** Failed goals whose earliest failed turn has no cause (ground truth without causes). */
  unattributed: { count: number; percent: number; interval: Interval };
}

/**
 * A session's counts, one row of numbers: every metric is a ratio of two of their sums, so a
 * resample only adds rows. Columns: the fixed ones below, then one per taxonomy code.
 */
const GOALS = 0;
const SUCCESSFUL_GOALS = 1;
const MULTI_TURN_GOALS = 2;
const SUCCESSFUL_MULTI_TURN_GOALS = 3;
const TURNS = 4;
const SUCCESSFUL_TURNS = 5;
const FAILED_GOALS = 6;
const UNATTRIBUTED = 7;
const FIRST_CAUSE = 8;

function countSession(
  id: string,
  turns: readonly TurnLabelFields[],
  codeIndex: ReadonlyMap<string, number>,
  taxonomy: Taxonomy,
  row: Float64Array,
): void {
  row[TURNS] = turns.length;
  row[SUCCESSFUL_TURNS] = turns.filter((t) => t.quality === "success").length;
  const add = (column: number) => {
    row[column] = (row[column] ?? 0) + 1;
  };
  for (const goal of segmentGoals(turns)) {
    add(GOALS);
    if (goal.multiTurn) add(MULTI_TURN_GOALS);
    if (goal.success) {
      add(SUCCESSFUL_GOALS);
      if (goal.multiTurn) add(SUCCESSFUL_MULTI_TURN_GOALS);
      continue;
    }
    add(FAILED_GOALS);
    if (goal.rootCause === null) {
      add(UNATTRIBUTED);
      continue;
    }
    const index = codeIndex.get(goal.rootCause);
    if (index === undefined) {
      // Labels are checked against the taxonomy on the way in; one that was not is a caller's bug.
      throw new RangeError(
        `session ${id}: turn ${goal.firstFailedTurn}: rcof: "${goal.rootCause}" is not a code of taxonomy ${taxonomy.name}`,
      );
    }
    add(FIRST_CAUSE + index);
  }
}

/** bootstrapInterval's stream: with one seed, a rate's interval equals what it would give. */
const BOOTSTRAP_STREAM = 0xb007;

/**
 * Percentile bootstrap over sessions of several rates at once (numerator and denominator
 * columns), × 100. The same resampling as eval/metrics.ts's bootstrapInterval (its generator,
 * stream and draw order), done in one pass over summed rows: through its generic statistic,
 * MAST's 18 rates over 10,000 sessions took 22 s, summed rows take 1.5 s (half of it drawing
 * the indices). A resample whose denominator is 0 is skipped, as bootstrapInterval skips a NaN.
 */
function sessionIntervals(
  rows: Float64Array,
  width: number,
  ratios: ReadonlyArray<readonly [number, number]>,
  options: BootstrapOptions,
): Interval[] {
  const { resamples = 1000, level = 0.95, seed = 0 } = options;
  const n = rows.length / width;
  if (n === 0) return ratios.map(() => ({ low: Number.NaN, high: Number.NaN }));
  const rng = createRng(seed, BOOTSTRAP_STREAM);
  const values = ratios.map((): number[] => []);
  const sums = new Float64Array(width);
  for (let r = 0; r < resamples; r++) {
    sums.fill(0);
    for (let i = 0; i < n; i++) {
      const start = rng.int(n) * width;
      for (let c = 0; c < width; c++) sums[c] = (sums[c] as number) + (rows[start + c] as number);
    }
    ratios.forEach(([num, den], m) => {
      const whole = sums[den] as number;
      if (whole > 0) values[m]?.push(((sums[num] as number) / whole) * 100);
    });
  }
  return values.map((v) => percentileInterval(v, level));
}

/**
 * All goal metrics of a set of sessions. Intervals resample whole sessions (the goals of one
 * conversation stay together) from the seed, every interval of one call from the same
 * resamples, so a report repeats exactly for a given seed.
 */
export function computeGoalMetrics(
  sessions: readonly SessionLabels[],
  taxonomy: Taxonomy,
  options: BootstrapOptions = {},
): GoalMetrics {
  const codeIndex = new Map(taxonomy.codes.map((c, i) => [c.code, i] as const));
  const width = FIRST_CAUSE + taxonomy.codes.length;
  const scored = sessions.filter((s) => s.status === "labelled");
  const rows = new Float64Array(scored.length * width);
  scored.forEach((session, i) => {
    countSession(
      session.id,
      session.turns,
      codeIndex,
      taxonomy,
      rows.subarray(i * width, (i + 1) * width),
    );
  });
  const totals = new Float64Array(width);
  for (let i = 0; i < rows.length; i++) {
    const c = i % width;
    totals[c] = (totals[c] as number) + (rows[i] as number);
  }
  const ratios: [number, number][] = [
    [SUCCESSFUL_GOALS, GOALS],
    [SUCCESSFUL_MULTI_TURN_GOALS, MULTI_TURN_GOALS],
    [SUCCESSFUL_TURNS, TURNS],
    [UNATTRIBUTED, FAILED_GOALS],
    ...taxonomy.codes.map((_, i): [number, number] => [FIRST_CAUSE + i, FAILED_GOALS]),
  ];
  const intervals = sessionIntervals(rows, width, ratios, options);
  const rate = (m: number): Rate => {
    const [num, den] = ratios[m] as [number, number];
    const count = totals[num] as number;
    const total = totals[den] as number;
    return {
      count,
      total,
      percent: total === 0 ? Number.NaN : (count / total) * 100,
      interval: intervals[m] as Interval,
    };
  };
  const unattributed = rate(3);
  return {
    taxonomy: taxonomy.name,
    sessions: scored.length,
    erroredSessions: sessions.length - scored.length,
    gsr: rate(0),
    multiTurnGsr: rate(1),
    turnSuccessRate: rate(2),
    failedGoals: totals[FAILED_GOALS] as number,
    causes: taxonomy.codes.map((c, i): CauseShare => {
      const share = rate(4 + i);
      return {
        code: c.code,
        name: c.name,
        count: share.count,
        percent: share.percent,
        interval: share.interval,
      };
    }),
    unattributed: {
      count: unattributed.count,
      percent: unattributed.percent,
      interval: unattributed.interval,
    },
  };
}
