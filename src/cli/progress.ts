/**
 * Progress of an evaluation run, for everyone: a bar on an interactive terminal, and without one
 * (CI logs, pipes, `nohup`) a plain line on stderr every few seconds and one at the end. Both say
 * the same: episodes done of planned, successes, failures, errors, cost and tokens of the model
 * calls, time elapsed and the time left.
 */
import cliProgress from "cli-progress";
import type { EvalProgress } from "../eval/evaluation.js";
import type { CostFields } from "../store/run-store.js";
import { addCosts } from "../store/run-store.js";
import type { CliIo } from "./io.js";
import { callCost, formatCost } from "./report.js";

export interface ProgressReporter {
  update(progress: EvalProgress): void;
  stop(): void;
}

/** Without a terminal, a line this often while episodes finish. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 5_000;
/** While nothing finishes, a line only every this many intervals (still alive, just slow). */
const QUIET_INTERVALS = 6;
/** How often the terminal bar redraws its clock when nothing else changes. */
const BAR_REFRESH_MS = 1_000;

export interface ProgressOptions {
  /** Milliseconds between lines without a terminal; default DEFAULT_PROGRESS_INTERVAL_MS. */
  intervalMs?: number;
  /** The clock, in milliseconds (tests pass a fake one); default performance.now. */
  now?: () => number;
}

/** Everything a progress line or the bar shows. */
export interface ProgressSnapshot {
  done: number;
  total: number;
  /** Stored before this invocation (a resume), part of done. */
  skipped: number;
  successes: number;
  failures: number;
  errors: number;
  /** Model calls made by the episodes finished so far. */
  calls: number;
  /** Their cost as every report adds it up (unpriced calls are unknown, not $0). */
  cost: CostFields;
  tokens: number;
  elapsedMs: number;
  /** Estimated time left, from this invocation's pace; undefined before the first episode. */
  etaMs?: number;
}

/** "45s", "1m 20s", "2h 05m". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  const minutes = Math.floor(seconds / 60);
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** The counts part, shared by the line and the bar. */
function describeCounts(snapshot: ProgressSnapshot): string {
  const parts = [
    `${snapshot.successes} ok`,
    `${snapshot.failures} failed`,
    `${snapshot.errors} ${snapshot.errors === 1 ? "error" : "errors"}`,
  ];
  if (snapshot.calls > 0) {
    parts.push(formatCost(snapshot.cost), `${snapshot.tokens.toLocaleString("en-US")} tokens`);
  }
  return parts.join(", ");
}

/**
 * One progress line, e.g. `progress maze/react: 40/100 episodes, 31 ok, 7 failed, 2 errors,
 * $0.0123, 45,210 tokens, 12.3 s elapsed, ETA 1m 20s`. Cost and tokens only when models were
 * called; the ETA only while episodes remain and one has finished.
 */
export function formatProgressLine(label: string, snapshot: ProgressSnapshot): string {
  const stored = snapshot.skipped > 0 ? ` (${snapshot.skipped} already stored)` : "";
  const eta = snapshot.etaMs === undefined ? "" : `, ETA ${formatDuration(snapshot.etaMs)}`;
  return (
    `progress ${label}: ${snapshot.done}/${snapshot.total} episodes${stored}, ` +
    `${describeCounts(snapshot)}, ${(snapshot.elapsedMs / 1000).toFixed(1)} s elapsed${eta}`
  );
}

/** Adds up what the finished episodes report. */
class Tally {
  done = 0;
  total = 0;
  skipped = 0;
  successes = 0;
  failures = 0;
  errors = 0;
  calls = 0;
  cost: CostFields = { costUsd: null };
  tokens = 0;

  add(progress: EvalProgress): void {
    this.done = progress.done;
    this.total = progress.total;
    this.skipped = progress.skipped;
    const last = progress.last;
    if (!last) return;
    if (last.outcome === "success") this.successes++;
    else if (last.outcome === "failure") this.failures++;
    else this.errors++;
    const calls = last.calls ?? [];
    for (const call of calls) {
      this.calls++;
      this.tokens += call.usage.inputTokens + call.usage.outputTokens;
    }
    if (calls.length > 0) this.cost = addCosts([this.cost, ...calls.map(callCost)]);
  }

  snapshot(elapsedMs: number, final: boolean): ProgressSnapshot {
    const ran = this.done - this.skipped;
    const remaining = this.total - this.done;
    const etaMs =
      !final && ran > 0 && remaining > 0 && elapsedMs > 0
        ? (remaining * elapsedMs) / ran
        : undefined;
    return {
      done: this.done,
      total: this.total,
      skipped: this.skipped,
      successes: this.successes,
      failures: this.failures,
      errors: this.errors,
      calls: this.calls,
      cost: this.cost,
      tokens: this.tokens,
      elapsedMs,
      ...(etaMs === undefined ? {} : { etaMs }),
    };
  }
}

const silent: ProgressReporter = { update: () => {}, stop: () => {} };

/**
 * A reporter for one run. `enabled` false (--quiet, --json) says nothing at all; otherwise a bar
 * when io.interactive, else lines on stderr every `intervalMs` and one when the run stops.
 */
export function createProgress(
  io: CliIo,
  label: string,
  enabled: boolean,
  options: ProgressOptions = {},
): ProgressReporter {
  if (!enabled) return silent;
  const now = options.now ?? (() => performance.now());
  return io.interactive ? createBar(label, now) : createLines(io, label, now, options);
}

function createLines(
  io: CliIo,
  label: string,
  now: () => number,
  options: ProgressOptions,
): ProgressReporter {
  const intervalMs = Math.max(1, options.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  const tally = new Tally();
  let start: number | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let changed = false;
  let quietTicks = 0;
  let stopped = false;
  const print = (final: boolean) => {
    const elapsed = now() - (start ?? now());
    io.stderr(`${formatProgressLine(label, tally.snapshot(elapsed, final))}\n`);
    changed = false;
    quietTicks = 0;
  };
  const tick = () => {
    quietTicks++;
    if (changed || quietTicks >= QUIET_INTERVALS) print(false);
  };
  return {
    update(progress) {
      if (stopped) return;
      if (start === undefined) {
        start = now();
        timer = setInterval(tick, intervalMs);
        // A progress line is no reason to keep the process alive.
        timer.unref?.();
      }
      tally.add(progress);
      changed = true;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      if (start !== undefined) print(true);
    },
  };
}

/** The bar's fields beside its count: `{counts} | {elapsed} elapsed | {eta}`. */
export function barFields(snapshot: ProgressSnapshot): {
  counts: string;
  elapsed: string;
  eta: string;
} {
  return {
    counts: describeCounts(snapshot),
    elapsed: formatDuration(snapshot.elapsedMs),
    eta: snapshot.etaMs === undefined ? "ETA --" : `ETA ${formatDuration(snapshot.etaMs)}`,
  };
}

function createBar(label: string, now: () => number): ProgressReporter {
  const bar = new cliProgress.SingleBar(
    {
      // Tokens of our own: cli-progress's {eta} and {duration} would override same-named ones.
      format: `${label} [{bar}] {value}/{total} episodes | {counts} | {elapsedText} elapsed | {etaText}`,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const tally = new Tally();
  let start: number | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  const payload = () => {
    const fields = barFields(tally.snapshot(now() - (start ?? now()), false));
    return { counts: fields.counts, elapsedText: fields.elapsed, etaText: fields.eta };
  };
  return {
    update(progress) {
      tally.add(progress);
      if (start === undefined) {
        start = now();
        bar.start(progress.total, progress.done, payload());
        // The clock and the ETA move even while no episode finishes.
        timer = setInterval(() => bar.update(payload()), BAR_REFRESH_MS);
        timer.unref?.();
      } else {
        bar.update(progress.done, payload());
      }
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      if (start !== undefined) bar.stop();
    },
  };
}
