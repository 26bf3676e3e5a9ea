/**
 * The run store: runs, their episodes and every step, in SQLite.
 * An episode and all its steps are written in one transaction, so a killed process leaves each
 * episode either wholly stored or absent; resuming redoes the absent ones. Steps are kept as one
 * JSON document per episode (trajectory-codec.ts).
 */
import type { Observation } from "../env/types.js";
import type { EndReason, EpisodeRecord, Outcome, StepRecord } from "../rollout/episode.js";
import { openDatabase, type SqliteDatabase, StoreError } from "./database.js";
import { decodeSteps, encodeColumns, type StepColumns, toColumns } from "./trajectory-codec.js";

export type RunStatus = "running" | "interrupted" | "complete";

export interface RunHeader {
  id: string;
  env: string;
  envVersion: string;
  agent: string;
  /** The full configuration the run was started with (JSON object). */
  config: Record<string, unknown>;
}

export interface RunRow extends RunHeader {
  status: RunStatus;
  createdAt: string;
  updatedAt: string;
}

export interface RunSummary extends RunRow {
  episodes: number;
  successes: number;
  failures: number;
  errors: number;
  steps: number;
}

export interface StoredEpisode {
  id: number;
  taskIndex: number;
  sampleIndex: number;
  seed: number;
  outcome: Outcome;
  reward: number;
  endReason: EndReason;
  error: string | null;
  initialObservation: Observation | null;
  turns: number;
  startedAt: string;
  durationMs: number;
}

/** An episode ready for storage: its steps as columns (cheap to pass to a writer thread). */
export type EncodedEpisode = Omit<EpisodeRecord, "steps"> & { turns: number; columns: StepColumns };

export function encodeEpisode(record: EpisodeRecord): EncodedEpisode {
  const { steps, ...rest } = record;
  return { ...rest, turns: steps.length, columns: toColumns(steps, record.initialObservation) };
}

/** A run id is reused with a configuration that differs from the stored one. */
export class RunConflictError extends StoreError {
  override name = "RunConflictError";
}

interface EpisodeRowRaw {
  id: number;
  task_index: number;
  sample_index: number;
  seed: number;
  outcome: Outcome;
  reward: number;
  end_reason: EndReason;
  error: string | null;
  initial_observation: string | null;
  initial_actions: string | null;
  turns: number;
  started_at: string;
  duration_ms: number;
}

interface RunRowRaw {
  id: string;
  env: string;
  env_version: string;
  agent: string;
  config: string;
  status: RunStatus;
  created_at: string;
  updated_at: string;
}

const toRun = (row: RunRowRaw): RunRow => ({
  id: row.id,
  env: row.env,
  envVersion: row.env_version,
  agent: row.agent,
  config: JSON.parse(row.config) as Record<string, unknown>,
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toEpisode = (row: EpisodeRowRaw): StoredEpisode => ({
  id: row.id,
  taskIndex: row.task_index,
  sampleIndex: row.sample_index,
  seed: row.seed,
  outcome: row.outcome,
  reward: row.reward,
  endReason: row.end_reason,
  error: row.error,
  initialObservation:
    row.initial_observation === null
      ? null
      : {
          text: row.initial_observation,
          ...(row.initial_actions ? { availableActions: JSON.parse(row.initial_actions) } : {}),
        },
  turns: row.turns,
  startedAt: row.started_at,
  durationMs: row.duration_ms,
});

/** Lists the top-level keys whose values differ, for a readable conflict message. */
function differingKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

export class RunStore {
  private readonly statements;
  private readonly writeEpisodes: (runId: string, records: readonly EncodedEpisode[]) => void;

  private constructor(readonly db: SqliteDatabase) {
    this.statements = {
      insertEpisode: db.prepare(
        `INSERT INTO episodes (run_id, task_index, sample_index, seed, outcome, reward, end_reason,
           error, initial_observation, initial_actions, turns, started_at, duration_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      deleteEpisode: db.prepare(
        "DELETE FROM episodes WHERE run_id = ? AND task_index = ? AND sample_index = ?",
      ),
      insertTrajectory: db.prepare("INSERT INTO trajectories (episode_id, steps) VALUES (?, ?)"),
      selectTrajectory: db.prepare(
        `SELECT t.steps, e.initial_observation, e.initial_actions
         FROM trajectories t JOIN episodes e ON e.id = t.episode_id WHERE t.episode_id = ?`,
      ),
    };
    this.writeEpisodes = db.transaction((runId: string, records: readonly EncodedEpisode[]) => {
      const { insertEpisode, deleteEpisode, insertTrajectory } = this.statements;
      for (const record of records) {
        deleteEpisode.run(runId, record.taskIndex, record.sampleIndex);
        const initial = record.initialObservation;
        const { lastInsertRowid } = insertEpisode.run(
          runId,
          record.taskIndex,
          record.sampleIndex,
          record.seed,
          record.outcome,
          record.reward,
          record.endReason,
          record.error ?? null,
          initial?.text ?? null,
          initial?.availableActions ? JSON.stringify(initial.availableActions) : null,
          record.turns,
          record.startedAt,
          record.durationMs,
        );
        insertTrajectory.run(lastInsertRowid, encodeColumns(record.columns));
      }
    });
  }

  static open(path: string, options: { readonly?: boolean } = {}): RunStore {
    return new RunStore(openDatabase(path, options));
  }

  close(): void {
    this.db.close();
  }

  getRun(id: string): RunRow | undefined {
    const row = this.db.prepare("SELECT * FROM runs WHERE id = ?").get(id) as RunRowRaw | undefined;
    return row ? toRun(row) : undefined;
  }

  /**
   * Creates the run, or checks that an existing run with this id has the same configuration.
   * Returns whether the run already existed (a resume).
   */
  startRun(header: RunHeader): { resumed: boolean } {
    const existing = this.getRun(header.id);
    const now = new Date().toISOString();
    if (existing) {
      const stored = { env: existing.env, envVersion: existing.envVersion, agent: existing.agent };
      const given = { env: header.env, envVersion: header.envVersion, agent: header.agent };
      const differ = [
        ...differingKeys(stored, given),
        ...differingKeys(existing.config, header.config),
      ];
      if (differ.length > 0) {
        throw new RunConflictError(
          `run "${header.id}" already exists with a different configuration (${[...new Set(differ)].join(", ")}); choose another --run-id`,
        );
      }
      this.setStatus(header.id, "running");
      return { resumed: true };
    }
    this.db
      .prepare(
        `INSERT INTO runs (id, env, env_version, agent, config, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'running', ?, ?)`,
      )
      .run(
        header.id,
        header.env,
        header.envVersion,
        header.agent,
        JSON.stringify(header.config),
        now,
        now,
      );
    return { resumed: false };
  }

  setStatus(id: string, status: RunStatus): void {
    this.db
      .prepare("UPDATE runs SET status = ?, updated_at = ? WHERE id = ?")
      .run(status, new Date().toISOString(), id);
  }

  /** Keys "task:sample" of episodes that need no rerun (success or failure; errors are redone). */
  finishedEpisodeKeys(runId: string): Set<string> {
    const rows = this.db
      .prepare(
        "SELECT task_index, sample_index FROM episodes WHERE run_id = ? AND outcome != 'error'",
      )
      .all(runId) as { task_index: number; sample_index: number }[];
    return new Set(rows.map((r) => `${r.task_index}:${r.sample_index}`));
  }

  /**
   * Writes episodes and all their steps in one transaction, replacing earlier errored attempts.
   * Several episodes per transaction amortise the commit (see EpisodeWriter).
   */
  saveEpisodes(runId: string, records: readonly EpisodeRecord[]): void {
    this.saveEncoded(runId, records.map(encodeEpisode));
  }

  /** As saveEpisodes, for episodes already encoded (e.g. by the writer thread's sender). */
  saveEncoded(runId: string, records: readonly EncodedEpisode[]): void {
    if (records.length > 0) this.writeEpisodes(runId, records);
  }

  listRuns(): RunSummary[] {
    const rows = this.db
      .prepare(
        `SELECT r.*,
           COUNT(e.id) AS episodes,
           COALESCE(SUM(e.outcome = 'success'), 0) AS successes,
           COALESCE(SUM(e.outcome = 'failure'), 0) AS failures,
           COALESCE(SUM(e.outcome = 'error'), 0) AS errors,
           COALESCE(SUM(e.turns), 0) AS steps
         FROM runs r LEFT JOIN episodes e ON e.run_id = r.id
         GROUP BY r.id ORDER BY r.created_at, r.id`,
      )
      .all() as (RunRowRaw & {
      episodes: number;
      successes: number;
      failures: number;
      errors: number;
      steps: number;
    })[];
    return rows.map((row) => ({
      ...toRun(row),
      episodes: row.episodes,
      successes: row.successes,
      failures: row.failures,
      errors: row.errors,
      steps: row.steps,
    }));
  }

  episodes(runId: string): StoredEpisode[] {
    const rows = this.db
      .prepare("SELECT * FROM episodes WHERE run_id = ? ORDER BY task_index, sample_index")
      .all(runId) as EpisodeRowRaw[];
    return rows.map(toEpisode);
  }

  steps(episodeId: number): StepRecord[] {
    const row = this.statements.selectTrajectory.get(episodeId) as
      | { steps: string; initial_observation: string | null; initial_actions: string | null }
      | undefined;
    if (!row) return [];
    const initial = row.initial_actions
      ? { text: row.initial_observation ?? "", availableActions: JSON.parse(row.initial_actions) }
      : null;
    return decodeSteps(row.steps, initial);
  }
}
