/**
 * `clade curves RUN`: a stored training run's metrics step by step (src/store/training-log.ts),
 * read at any time, also while it trains. A table of at most MAX_ROWS evenly spaced steps, the
 * first and the last always among them; on a terminal, above it, small plots of the mean reward
 * and the success rate over the steps, drawn with block characters (a few lines by hand: a
 * plotting package would bring more than it draws here). `--json` gives every step.
 */
import { existsSync } from "node:fs";
import type { JsonValue } from "../../store/search-log.js";
import {
  type TrainingCheckpoint,
  type TrainingRunRow,
  type TrainingStepRow,
  TrainingStore,
} from "../../store/training-log.js";
import { type CliIo, UsageError } from "../io.js";
import { type Cell, renderTable } from "../table.js";

/** Rows of the table at most. */
export const MAX_ROWS = 30;
/** Columns of a plot at most, and its height in lines. */
const PLOT_WIDTH = 60;
const PLOT_HEIGHT = 4;
/** A column's fill in eighths, 1 to 7 (0 is a space, 8 a full block). */
const EIGHTHS = ["▁", "▂", "▃", "▄", "▅", "▆", "▇"];

export interface CurvesOptions {
  db: string;
  json?: boolean;
}

interface LoadedRun {
  run: TrainingRunRow;
  steps: TrainingStepRow[];
  checkpoints: TrainingCheckpoint[];
}

function loadRun(runId: string, db: string): LoadedRun {
  const unknown = (hint = "") => new UsageError(`no training run "${runId}" in ${db}${hint}`);
  if (!existsSync(db)) throw unknown();
  const store = TrainingStore.open(db, { readonly: true });
  try {
    const run = store.getRun(runId);
    if (!run) {
      const evaluation = store.db.prepare("SELECT 1 FROM runs WHERE id = ?").get(runId);
      throw unknown(evaluation ? ` (it is an evaluation run: clade show ${runId})` : "");
    }
    return { run, steps: store.steps(runId), checkpoints: store.checkpoints(runId) };
  } finally {
    store.close();
  }
}

/** Indices of at most `max` of `count` rows, evenly spaced, the first and the last included. */
export function downsample(count: number, max = MAX_ROWS): number[] {
  if (count <= max) return Array.from({ length: count }, (_, i) => i);
  const picked = new Set<number>();
  for (let i = 0; i < max; i++) picked.add(Math.round((i * (count - 1)) / (max - 1)));
  return [...picked].sort((a, b) => a - b);
}

/** A metric for the table: "-" when it has no value. */
function fixed(value: number | null, digits: number): string {
  if (value === null) return "-";
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}

/** Three significant digits, for metrics whose scale varies (KL, gradient norms). */
function significant(value: number | null): string {
  if (value === null) return "-";
  if (value === 0 || !Number.isFinite(value)) return String(value);
  return Math.abs(value) < 0.001 ? value.toExponential(1) : String(Number(value.toPrecision(3)));
}

const count = (value: number | null) => (value === null ? "-" : String(value));

function stepCells(s: TrainingStepRow): Cell[] {
  return [
    s.step,
    fixed(s.meanReward, 3),
    fixed(s.successRate, 3),
    count(s.horizon),
    fixed(s.entropy, 3),
    significant(s.kl),
    fixed(s.clipFraction, 3),
    significant(s.gradNorm),
    count(s.envSteps),
    fixed(s.seconds, 1),
    count(s.errors),
  ];
}

const HEAD = [
  "step",
  "mean reward",
  "success",
  "horizon",
  "entropy",
  "kl",
  "clip",
  "grad norm",
  "env steps",
  "seconds",
  "errors",
];

/**
 * A small block plot of one metric over the steps: each column is the mean of the steps it
 * covers (at most PLOT_WIDTH columns), its height the value between `low` and `high` in eighths
 * of a line. Steps without a value leave their column blank. Returns the plot's lines.
 */
export function plotMetric(
  label: string,
  values: readonly (number | null)[],
  range?: { low: number; high: number },
): string[] {
  const columns = Math.min(values.length, PLOT_WIDTH);
  const means: (number | null)[] = [];
  for (let c = 0; c < columns; c++) {
    const from = Math.floor((c * values.length) / columns);
    const to = Math.floor(((c + 1) * values.length) / columns);
    const some = values
      .slice(from, to)
      .filter((v): v is number => v !== null && Number.isFinite(v));
    means.push(some.length > 0 ? some.reduce((a, b) => a + b, 0) / some.length : null);
  }
  // The axis spans the values themselves, not the columns' means.
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (known.length === 0) return [`${label}: no values`];
  let low = range?.low ?? Math.min(...known);
  let high = range?.high ?? Math.max(...known);
  if (high - low < 1e-12) {
    low -= 0.5;
    high += 0.5;
  }
  const levels = means.map((v) => {
    if (v === null) return 0;
    const share = Math.min(1, Math.max(0, (v - low) / (high - low)));
    // A value at the bottom still shows as the lowest block.
    return Math.max(1, Math.round(share * PLOT_HEIGHT * 8));
  });
  const axis = [high.toFixed(3), low.toFixed(3)];
  const pad = Math.max(...axis.map((a) => a.length));
  const lines = [`${label}`];
  for (let row = 0; row < PLOT_HEIGHT; row++) {
    const floor = (PLOT_HEIGHT - 1 - row) * 8;
    const cells = levels.map((level, c) => {
      if (means[c] === null) return " ";
      const fill = level - floor;
      return fill >= 8 ? "█" : fill <= 0 ? " " : (EIGHTHS[fill - 1] as string);
    });
    const tick = row === 0 ? axis[0] : row === PLOT_HEIGHT - 1 ? axis[1] : "";
    lines.push(`${(tick ?? "").padStart(pad)} ┤${cells.join("").trimEnd()}`);
  }
  return lines;
}

/** "key=value, ..." for the headline (objects and long values shortened). */
function configLine(config: Record<string, JsonValue>): string {
  const parts = Object.entries(config).map(([key, value]) => {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return `${key}=${text.length > 40 ? `${text.slice(0, 39)}…` : text}`;
  });
  return parts.length > 0 ? parts.join(", ") : "(empty)";
}

function headline({ run, steps, checkpoints }: LoadedRun): string[] {
  const status = run.stopReason ? `${run.status}, ${run.stopReason}` : run.status;
  const last = steps.at(-1);
  const progress =
    last === undefined
      ? "no steps yet"
      : `${steps.length} step${steps.length === 1 ? "" : "s"} (${steps[0]?.step}..${last.step})` +
        (last.seconds !== null ? `, ${last.seconds.toFixed(1)} s` : "") +
        (last.envSteps !== null ? `, ${last.envSteps} env steps` : "");
  const saved = checkpoints.at(-1);
  const lines = [
    `training run ${run.id}: ${status}; ${progress}` +
      (saved
        ? `; ${checkpoints.length} checkpoint${checkpoints.length === 1 ? "" : "s"}, the last at step ${saved.step}: ${saved.path}`
        : ""),
    `config: ${configLine(run.config)}`,
  ];
  return lines;
}

export function curvesCommand(runId: string, options: CurvesOptions, io: CliIo): number {
  const loaded = loadRun(runId, options.db);
  const { run, steps, checkpoints } = loaded;
  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        schema: "clade.curves/1",
        run: run.id,
        config: run.config,
        status: run.status,
        stopReason: run.stopReason,
        createdAt: run.createdAt,
        updatedAt: run.updatedAt,
        steps,
        checkpoints,
      })}\n`,
    );
    return 0;
  }
  const lines = headline(loaded);
  if (steps.length === 0) {
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  }
  if (io.interactive) {
    const first = steps[0]?.step;
    const last = steps.at(-1)?.step;
    const span = `steps ${first}..${last}${steps.length > PLOT_WIDTH ? `, ${PLOT_WIDTH} columns of means` : ""}`;
    lines.push(
      "",
      ...plotMetric(
        "mean reward",
        steps.map((s) => s.meanReward),
      ),
      "",
      ...plotMetric(
        "success rate",
        steps.map((s) => s.successRate),
        { low: 0, high: 1 },
      ),
      `  (${span})`,
    );
  }
  const shown = downsample(steps.length);
  lines.push(
    "",
    renderTable(
      HEAD,
      shown.map((i) => stepCells(steps[i] as TrainingStepRow)),
    ).trimEnd(),
  );
  if (shown.length < steps.length) {
    lines.push(
      `${shown.length} of ${steps.length} steps shown, evenly spaced, the last included (--json gives all)`,
    );
  }
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}
