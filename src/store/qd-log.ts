/**
 * CycleQD runs in the store (migration 9): one row per run (its configuration and status) and one
 * per generation (its record as JSON, with coverage, QD-score and whether the child errored as
 * columns for plain SQL curves).
 *
 * The archives themselves are not stored: they are a fold of the generations' offers, which the
 * records hold with their scores, so the caller rebuilds any generation's archives by replaying
 * the records in order (src/improve/qd/replay.ts). One source of truth, and a generation costs a
 * small row rather than K archives. A generation is written once; a resumed run that redoes
 * generation g (it was killed before g's row was written) writes it for the first time.
 */
import {
  beginConfiguredRow,
  type ConfiguredRow,
  ConfiguredStore,
  openStore,
} from "./configured-rows.js";
import { type SqliteDatabase, StoreError } from "./database.js";
import type { JsonValue } from "./search-log.js";

export type QdStatus = "running" | "stopped" | "complete";

export type QdRunRow = ConfiguredRow<QdStatus>;

/** One generation as written: its number, the summary columns and the whole record. */
export interface QdGenerationInput {
  generation: number;
  /** The archive the parents came from; null for generation 0 (the experts). */
  qualityTask: number | null;
  /** Coverage, the mean over the archives of each one's share of filled cells. */
  coverage: number;
  /** QD-score summed over the archives (each with its offset). */
  qdScore: number;
  /** Whether the generation's child errored (never scored). */
  errored: boolean;
  record: JsonValue;
}

export interface QdGenerationRow extends QdGenerationInput {
  at: string;
}

/** A CycleQD run id is reused with a configuration that differs from the stored one. */
export class QdConflictError extends StoreError {
  override name = "QdConflictError";
}

interface GenerationRaw {
  generation: number;
  quality_task: number | null;
  coverage: number;
  qd_score: number;
  errored: number;
  record: string;
  at: string;
}

const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

export class QdStore extends ConfiguredStore<QdStatus> {
  constructor(db: SqliteDatabase) {
    super(db, {
      table: "qd_runs",
      marker: "qd_generations",
      tables: "CycleQD",
      noun: "CycleQD run",
    });
  }

  static open(path: string, options: { readonly?: boolean } = {}): QdStore {
    return openStore(path, options, (db) => new QdStore(db));
  }

  /**
   * Creates the run, or checks that the stored one has the same configuration and marks it
   * running again (a resume). Returns whether it existed and its last generation (-1: none).
   */
  beginRun(
    id: string,
    config: Record<string, JsonValue>,
  ): { resumed: boolean; lastGeneration: number } {
    const resumed = beginConfiguredRow(this.db, "qd_runs", id, config, {
      noun: "CycleQD run",
      error: QdConflictError,
    });
    return { resumed, lastGeneration: this.lastGeneration(id) };
  }

  /**
   * Stores one generation, durable when this returns. Generations are written in order: the
   * next one must be the last stored + 1, so the log never has a hole to replay across.
   */
  appendGeneration(id: string, input: QdGenerationInput): void {
    const { generation } = input;
    if (!isCount(generation))
      throw new StoreError(`generation ${String(generation)} is not a count`);
    for (const [name, value] of [
      ["coverage", input.coverage],
      ["qdScore", input.qdScore],
    ] as const) {
      if (!Number.isFinite(value))
        throw new StoreError(`generation ${generation}: ${name} is ${value}`);
    }
    const now = new Date().toISOString();
    this.db.transaction(() => {
      const touched = this.db
        .prepare("UPDATE qd_runs SET updated_at = ? WHERE id = ?")
        .run(now, id).changes;
      if (touched === 0) throw new StoreError(`no CycleQD run "${id}"`);
      const last = this.lastGeneration(id);
      if (generation !== last + 1) {
        throw new StoreError(
          `CycleQD run "${id}": generation ${generation} written after generation ${last}`,
        );
      }
      this.db
        .prepare(
          `INSERT INTO qd_generations
             (run_id, generation, quality_task, coverage, qd_score, errored, record, at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          generation,
          input.qualityTask,
          input.coverage,
          input.qdScore,
          input.errored ? 1 : 0,
          JSON.stringify(input.record),
          now,
        );
    })();
  }

  /** A run's generations 0..upTo (all by default), in order. */
  generations(id: string, upTo = Number.MAX_SAFE_INTEGER): QdGenerationRow[] {
    const rows = this.db
      .prepare(
        `SELECT generation, quality_task, coverage, qd_score, errored, record, at
         FROM qd_generations WHERE run_id = ? AND generation <= ? ORDER BY generation`,
      )
      .all(id, upTo) as GenerationRaw[];
    return rows.map((row) => ({
      generation: row.generation,
      qualityTask: row.quality_task,
      coverage: row.coverage,
      qdScore: row.qd_score,
      errored: row.errored === 1,
      record: JSON.parse(row.record) as JsonValue,
      at: row.at,
    }));
  }

  /** The last stored generation; -1 when none. */
  lastGeneration(id: string): number {
    const last = this.db
      .prepare("SELECT MAX(generation) FROM qd_generations WHERE run_id = ?")
      .pluck()
      .get(id) as number | null;
    return last ?? -1;
  }
}
