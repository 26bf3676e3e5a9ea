/**
 * Training runs of the embedded policy in the store (migration 8): one row per run (its
 * configuration and status), its metrics step by step, and the checkpoints it saved.
 *
 * Each metric is a column of its own rather than one JSON document per step, so that a curve is
 * plain SQL (`SELECT step, mean_reward FROM training_steps WHERE run_id = ?`), SQLite keeps
 * numbers as numbers, and a step's row stays small. Metrics the trainer adds later go to the
 * row's `extra` JSON object until a migration gives them a column.
 *
 * A step is written once per step number: a resumed run that writes step k again (it went back
 * to an earlier checkpoint) replaces the row, so the curves describe the weights that went on.
 * `rewind` removes the rows and checkpoint records after a step, for a resume from there.
 */
import {
  beginConfiguredRow,
  type ConfiguredRow,
  ConfiguredStore,
  openStore,
} from "./configured-rows.js";
import { type SqliteDatabase, StoreError } from "./database.js";
import type { JsonValue } from "./search-log.js";

export type TrainingStatus = "running" | "stopped" | "complete";

/**
 * One optimiser step's metrics, as the trainer reports them. Every metric but `step` may be
 * null (or NaN, stored as null) when it has no value, e.g. a success rate over no finished
 * episode. Fields beyond these are kept in `extra`.
 */
export interface TrainingStepMetrics {
  /** The optimiser step, 0, 1, 2, ... */
  step: number;
  /** Mean final reward of the step's finished episodes. */
  meanReward: number | null;
  /** Successes / finished episodes of the step. */
  successRate: number | null;
  /** The turn limit of the step's episodes (the horizon schedule's value). */
  horizon: number | null;
  /** Mean entropy of π over the step's turns. */
  entropy: number | null;
  /** Approximate KL divergence from the policy that collected the step's episodes. */
  kl: number | null;
  /** Share of the turns whose ratio was clipped. */
  clipFraction: number | null;
  /** The gradient's global norm before clipping. */
  gradNorm: number | null;
  /** Environment steps so far, this one included. */
  envSteps: number | null;
  /** Wall-clock seconds so far. */
  seconds: number | null;
  /** The step's episodes that ended in an error (never counted as failures). */
  errors: number | null;
}

/**
 * What appendStep takes: the step and any of the metrics (those left out are stored as null).
 * Other fields of the object given (a trainer's metrics type may have more) are kept, as JSON
 * values, in `extra`.
 */
export type TrainingStepInput = Pick<TrainingStepMetrics, "step"> &
  Partial<Omit<TrainingStepMetrics, "step">>;

/** A stored step: the metrics, any others the trainer reported, and when it was written. */
export interface TrainingStepRow extends TrainingStepMetrics {
  /** Metrics beyond the columns (a JSON object); absent when there were none. */
  extra?: Record<string, JsonValue>;
  at: string;
}

/** The metric columns, in the table's order, by their field names. */
export const STEP_METRICS = [
  "meanReward",
  "successRate",
  "horizon",
  "entropy",
  "kl",
  "clipFraction",
  "gradNorm",
  "envSteps",
  "seconds",
  "errors",
] as const satisfies readonly Exclude<keyof TrainingStepMetrics, "step">[];

const COLUMNS: Record<(typeof STEP_METRICS)[number], string> = {
  meanReward: "mean_reward",
  successRate: "success_rate",
  horizon: "horizon",
  entropy: "entropy",
  kl: "kl",
  clipFraction: "clip_fraction",
  gradNorm: "grad_norm",
  envSteps: "env_steps",
  seconds: "seconds",
  errors: "errors",
};

/** A training run's row: its configuration, status and times. */
export type TrainingRunRow = ConfiguredRow<TrainingStatus>;

export interface TrainingCheckpoint {
  step: number;
  /** Where the policy file was written (as the trainer gave it). */
  path: string;
  /** sha256 of the file's bytes, hex. */
  sha256: string;
}

/** A training run id is reused with a configuration that differs from the stored one. */
export class TrainingConflictError extends StoreError {
  override name = "TrainingConflictError";
}

/** A training_steps row: run_id, step, the metric columns, extra, at. */
type StepRowRaw = Record<string, unknown> & { step: number; extra: string | null; at: string };

const isStep = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** A metric as stored: a number, or null for no value (undefined, null, NaN). */
function metricValue(name: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number") {
    throw new StoreError(`training step metric "${name}" is not a number (${String(value)})`);
  }
  return Number.isNaN(value) ? null : value;
}

export class TrainingStore extends ConfiguredStore<TrainingStatus> {
  private readonly upsertStep;

  constructor(db: SqliteDatabase) {
    super(db, {
      table: "training_runs",
      marker: "training_steps",
      tables: "training",
      noun: "training run",
    });
    const columns = STEP_METRICS.map((name) => COLUMNS[name]);
    this.upsertStep = db.prepare(
      `INSERT INTO training_steps (run_id, step, ${columns.join(", ")}, extra, at)
       VALUES (?, ?, ${columns.map(() => "?").join(", ")}, ?, ?)
       ON CONFLICT (run_id, step) DO UPDATE SET
         ${columns.map((c) => `${c} = excluded.${c}`).join(", ")},
         extra = excluded.extra, at = excluded.at`,
    );
  }

  static open(path: string, options: { readonly?: boolean } = {}): TrainingStore {
    return openStore(path, options, (db) => new TrainingStore(db));
  }

  /**
   * Creates the run, or checks that the stored one with this id has the same configuration and
   * marks it running again (a resume). Returns whether it existed and its last stored step (-1
   * when none).
   */
  beginRun(id: string, config: Record<string, JsonValue>): { resumed: boolean; lastStep: number } {
    const resumed = beginConfiguredRow(this.db, "training_runs", id, config, {
      noun: "training run",
      error: TrainingConflictError,
    });
    return { resumed, lastStep: this.lastStep(id) };
  }

  /**
   * Stores one step's metrics, durable when this returns. Writing a step that is stored already
   * replaces it (a resumed run redoing step k). Fields beyond the metric columns go to `extra`.
   */
  appendStep(id: string, metrics: TrainingStepInput): void {
    const { step } = metrics;
    if (!isStep(step)) throw new StoreError(`training step ${String(step)} is not a count`);
    const values = STEP_METRICS.map((name) => metricValue(name, metrics[name]));
    const extra: Record<string, JsonValue> = {};
    for (const [key, value] of Object.entries(metrics as Record<string, unknown>)) {
      if (key === "step" || (STEP_METRICS as readonly string[]).includes(key)) continue;
      if (value !== undefined) extra[key] = value as JsonValue;
    }
    const extraJson = Object.keys(extra).length > 0 ? JSON.stringify(extra) : null;
    const now = new Date().toISOString();
    const update = this.db.prepare("UPDATE training_runs SET updated_at = ? WHERE id = ?");
    this.db.transaction(() => {
      if (update.run(now, id).changes === 0) throw new StoreError(`no training run "${id}"`);
      this.upsertStep.run(id, step, ...values, extraJson, now);
    })();
  }

  /** A run's steps, in step order. */
  steps(id: string): TrainingStepRow[] {
    const rows = this.db
      .prepare("SELECT * FROM training_steps WHERE run_id = ? ORDER BY step")
      .all(id) as StepRowRaw[];
    return rows.map((row) => {
      const step = { step: row.step } as TrainingStepRow;
      for (const name of STEP_METRICS) step[name] = (row[COLUMNS[name]] as number | null) ?? null;
      if (row.extra !== null) step.extra = JSON.parse(row.extra) as Record<string, JsonValue>;
      step.at = row.at;
      return step;
    });
  }

  /** The last stored step; -1 when none. */
  lastStep(id: string): number {
    const last = this.db
      .prepare("SELECT MAX(step) FROM training_steps WHERE run_id = ?")
      .pluck()
      .get(id) as number | null;
    return last ?? -1;
  }

  /** Records a saved policy file; a second record for the same step replaces the first. */
  addCheckpoint(id: string, checkpoint: TrainingCheckpoint): void {
    if (!isStep(checkpoint.step)) {
      throw new StoreError(`checkpoint step ${String(checkpoint.step)} is not a count`);
    }
    if (!/^[0-9a-f]{64}$/.test(checkpoint.sha256)) {
      throw new StoreError(`checkpoint sha256 "${checkpoint.sha256}" is not 64 hex digits`);
    }
    if (!this.getRun(id)) throw new StoreError(`no training run "${id}"`);
    this.db
      .prepare(
        `INSERT INTO training_checkpoints (run_id, step, path, sha256, at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (run_id, step) DO UPDATE SET
           path = excluded.path, sha256 = excluded.sha256, at = excluded.at`,
      )
      .run(id, checkpoint.step, checkpoint.path, checkpoint.sha256, new Date().toISOString());
  }

  /** A run's checkpoints, in step order. */
  checkpoints(id: string): TrainingCheckpoint[] {
    return this.db
      .prepare("SELECT step, path, sha256 FROM training_checkpoints WHERE run_id = ? ORDER BY step")
      .all(id) as TrainingCheckpoint[];
  }

  /** The checkpoint of the highest step; undefined when none was saved. */
  latestCheckpoint(id: string): TrainingCheckpoint | undefined {
    return this.checkpoints(id).at(-1);
  }

  /**
   * Forgets the steps and checkpoint records after `step` (a resume from the checkpoint of
   * `step`: what came after it belongs to weights that are gone). The files are left alone.
   */
  rewind(id: string, step: number): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM training_steps WHERE run_id = ? AND step > ?").run(id, step);
      this.db
        .prepare("DELETE FROM training_checkpoints WHERE run_id = ? AND step > ?")
        .run(id, step);
    })();
  }
}
