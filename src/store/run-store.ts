/**
 * The run store: runs, their episodes and every step, in SQLite.
 * An episode and all its steps are written in one transaction, so a killed process leaves each
 * episode either wholly stored or absent; resuming redoes the absent ones. Steps are kept as one
 * JSON document per episode (trajectory-codec.ts).
 */
import { hostname } from "node:os";
import type { Statement } from "better-sqlite3";
import type { Observation } from "../env/types.js";
import type { ModelCallRecord } from "../model/call-record.js";
import type { ModelRequest } from "../model/types.js";
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

/** Episode counts of a run that were found damaged, for the one warning line readers print. */
export function damagedWarning(runId: string, damaged: number): string {
  return (
    `warning: ${damaged} episode${damaged === 1 ? "" : "s"} of run ${runId} could not be read ` +
    "(damaged rows): shown as damaged, left out of metrics, run again on resume\n"
  );
}

export interface RunRow extends RunHeader {
  status: RunStatus;
  stopReason: string | null;
  /** The process that last ran it (pid on host). */
  owner: { pid: number; host: string } | null;
  createdAt: string;
  updatedAt: string;
  /** The stored configuration does not parse; the run can be read but not resumed. */
  configDamaged?: true;
}

export interface RunSummary extends RunRow {
  episodes: number;
  successes: number;
  failures: number;
  errors: number;
  notRun: number;
  damaged: number;
  steps: number;
}

/**
 * A run still marked running whose process is gone from this machine was killed (SIGKILL, a
 * crash, a power cut): running the same command resumes it. Runs owned by another host are taken
 * as running.
 */
export function ownerGone(run: Pick<RunRow, "status" | "owner">): boolean {
  if (run.status !== "running" || !run.owner || run.owner.host !== hostname()) return false;
  try {
    process.kill(run.owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Costs added up: the priced ones summed (null when none), `unpriced` when any had no price. */
export function addCosts(costs: readonly CostFields[]): CostFields {
  let sum = 0;
  let priced = false;
  let unpriced = false;
  for (const cost of costs) {
    if (cost.unpriced) unpriced = true;
    if (cost.costUsd !== null) {
      priced = true;
      sum += cost.costUsd;
    }
  }
  return { costUsd: priced ? sum : null, ...(unpriced ? { unpriced: true } : {}) };
}

/** A call as `show --episode --json` gives it: cost null when unpriced (see CostFields). */
export function callForJson(call: ModelCallRecord): Omit<ModelCallRecord, "costUsd"> & CostFields {
  return call.unpriced ? { ...call, costUsd: null } : call;
}

/**
 * A run's status for people: a run still marked running whose process is gone from this machine
 * was killed (SIGKILL, a crash, a power cut); running the same command resumes it.
 */
export function describeStatus(run: RunRow): string {
  if (ownerGone(run)) return "killed (resumable)";
  return run.stopReason ? `${run.status} (${run.stopReason})` : run.status;
}

/**
 * A stored episode's outcome: not_run marks one planned but never started (budget); damaged, one
 * whose stored row does not parse (left out of metrics and run again on resume).
 */
export type StoredOutcome = Outcome | "not_run" | "damaged";

export interface StoredEpisode {
  id: number;
  taskIndex: number;
  sampleIndex: number;
  seed: number;
  outcome: StoredOutcome;
  reward: number;
  endReason: EndReason | "not_run";
  error: string | null;
  initialObservation: Observation | null;
  turns: number;
  parseErrors: number;
  startedAt: string;
  durationMs: number;
}

/**
 * Cost in reports and JSON: `costUsd` is the sum over calls whose model had a price (cache hits
 * are priced: they cost nothing); `unpriced: true` is added when some calls had none, and then
 * `costUsd` is that partial sum, or null when no call was priced. Absent `unpriced` = fully priced.
 */
export interface CostFields {
  costUsd: number | null;
  unpriced?: true;
}

export interface EpisodeUsage extends CostFields {
  calls: number;
  /** Calls that ended in an error (after their retries, or abandoned). */
  failedCalls: number;
  inputTokens: number;
  outputTokens: number;
}

export interface ModelUsageSummary extends CostFields {
  model: string;
  calls: number;
  cacheHits: number;
  /** Calls that ended in an error: after their retries, oversized, or abandoned at a deadline. */
  failedCalls: number;
  /** Attempts that failed, including those a retry recovered from (tokens unknown, counted 0). */
  failedAttempts: number;
  inputTokens: number;
  outputTokens: number;
  /** The provider's time, over calls that reached it (cache hits have no latency). */
  meanLatencyMs: number | null;
  /** Waiting for the model's limiter, per call and in all; null when no call recorded it. */
  meanQueueMs: number | null;
  totalQueueMs: number | null;
  /** Sleeping between attempts (backoff, Retry-After), per call and in all. */
  meanRetryMs: number | null;
  totalRetryMs: number | null;
  retries: number;
}

/**
 * SQL (alias c): the call had no price. Rows written before migration 4 (unpriced NULL) are
 * taken as unpriced when they used tokens, cost 0 and were no cache hit.
 */
const UNPRICED_CALL = `COALESCE(c.unpriced,
  c.cost_usd = 0 AND c.cache_hit = 0 AND c.input_tokens + c.output_tokens > 0)`;

/** SQL aggregates of CostFields over the calls (alias c) of a group. */
const COST_COLUMNS = `SUM(CASE WHEN ${UNPRICED_CALL} THEN NULL ELSE c.cost_usd END) AS costUsd,
  MAX(${UNPRICED_CALL}) AS anyUnpriced`;

/** CostFields from the aggregate row of COST_COLUMNS. */
function costFields<T extends { costUsd: number | null; anyUnpriced: number }>(
  row: T,
): Omit<T, "anyUnpriced"> & CostFields {
  const { anyUnpriced, ...rest } = row;
  return anyUnpriced ? { ...rest, unpriced: true } : rest;
}

/** An episode ready for storage: its steps as columns (cheap to pass to a writer thread). */
export type EncodedEpisode = Omit<EpisodeRecord, "steps"> & { turns: number; columns: StepColumns };

export function encodeEpisode(record: EpisodeRecord): EncodedEpisode {
  const { steps, ...rest } = record;
  return { ...rest, turns: steps.length, columns: toColumns(steps, record.initialObservation) };
}

/** A stored episode row or trajectory does not parse. */
export class DamagedEpisodeError extends StoreError {
  override name = "DamagedEpisodeError";
}

/** What a reader gets of a damaged part: nothing of it, and its one-line problem in `problems`. */
export function orDamaged<T>(read: () => T[], problems: string[]): T[] {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof DamagedEpisodeError)) throw error;
    problems.push(error.message);
    return [];
  }
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
  outcome: StoredOutcome;
  reward: number;
  end_reason: EndReason | "not_run";
  /** 1 when the row and its trajectory are readable (SOUND_EPISODE). */
  sound: number;
  error: string | null;
  initial_observation: string | null;
  initial_actions: string | null;
  turns: number;
  parse_errors: number;
  started_at: string;
  duration_ms: number;
}

interface ModelCallRowRaw {
  id: number;
  turn: number;
  model: string;
  request: string;
  response: string | null;
  error: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  latency_ms: number | null;
  cache_hit: number;
  attempts: number;
  started_at: string;
  attempt_errors: string | null;
  /** Set on rows that store their request by difference (migration 3). */
  base_call: number | null;
  base_messages: number | null;
  /** Migration 4; NULL on older rows. */
  unpriced: number | null;
  queue_ms: number | null;
  retry_ms: number | null;
}

/**
 * JSON.stringify-equality without building the text: same values, same keys in the same order
 * (undefined-valued keys skipped, as JSON drops them), so a request rebuilt from a shared prefix
 * serialises exactly as the one recorded.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keysX = Object.keys(x).filter((k) => x[k] !== undefined);
  const keysY = Object.keys(y).filter((k) => y[k] !== undefined);
  if (keysX.length !== keysY.length) return false;
  for (let i = 0; i < keysX.length; i++) {
    const key = keysX[i] as string;
    if (key !== keysY[i] || !sameJson(x[key], y[key])) return false;
  }
  return true;
}

/**
 * What a call's request adds to the previous call's in the same episode: the messages after
 * their common prefix, and `tools: null` when the tools are unchanged (a ToolSpec[] is never
 * null). Undefined when nothing is shared, so the row holds the whole request. Spreading keeps
 * every key where it was, so the rebuilt request has the recorded key order.
 */
function requestDelta(
  request: ModelRequest,
  previous: ModelRequest | undefined,
): { request: Record<string, unknown>; baseMessages: number } | undefined {
  if (!previous) return undefined;
  const { messages } = request;
  const limit = Math.min(messages.length, previous.messages.length);
  let shared = 0;
  while (shared < limit && sameJson(messages[shared], previous.messages[shared])) shared++;
  const sameTools = request.tools !== undefined && sameJson(request.tools, previous.tools);
  if (shared === 0 && !sameTools) return undefined;
  return {
    request: {
      ...request,
      messages: shared === 0 ? messages : messages.slice(shared),
      ...(sameTools ? { tools: null } : {}),
    },
    baseMessages: shared,
  };
}

/** A row's whole request, from its base's (already rebuilt, in `whole`) when stored by difference. */
function wholeRequest(row: ModelCallRowRaw, whole: Map<number, ModelRequest>): ModelRequest {
  const stored = JSON.parse(row.request) as ModelRequest & { tools?: ModelRequest["tools"] | null };
  if (row.base_call === null) return stored;
  const base = whole.get(row.base_call);
  const shared = row.base_messages ?? 0;
  if (!base || base.messages.length < shared) {
    throw new Error(`call ${row.id} refers to call ${row.base_call}, which is missing or shorter`);
  }
  const request: ModelRequest & { tools?: ModelRequest["tools"] | null } = {
    ...stored,
    messages: shared > 0 ? base.messages.slice(0, shared).concat(stored.messages) : stored.messages,
  };
  if (stored.tools === null) request.tools = base.tools;
  return request as ModelRequest;
}

/** A row's call had no price (as UNPRICED_CALL, for rows read one by one). */
function unpricedRow(row: ModelCallRowRaw): boolean {
  if (row.unpriced !== null) return row.unpriced === 1;
  return row.cost_usd === 0 && row.cache_hit === 0 && row.input_tokens + row.output_tokens > 0;
}

/** A `runs` row as SQLite gives it (`SELECT r.*`). */
export interface RunRowRaw {
  id: string;
  env: string;
  env_version: string;
  agent: string;
  config: string;
  status: RunStatus;
  stop_reason: string | null;
  owner_pid: number | null;
  owner_host: string | null;
  created_at: string;
  updated_at: string;
}

/** A stored JSON object, or undefined when the text is not one (a damaged row). */
function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A `runs` row read: a configuration that does not parse is marked damaged. */
export const toRun = (row: RunRowRaw): RunRow => {
  const config = parseObject(row.config);
  return {
    id: row.id,
    env: row.env,
    envVersion: row.env_version,
    agent: row.agent,
    config: config ?? {},
    ...(config ? {} : { configDamaged: true }),
    status: row.status,
    stopReason: row.stop_reason,
    owner:
      row.owner_pid !== null && row.owner_host !== null
        ? { pid: row.owner_pid, host: row.owner_host }
        : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
};

/** SQL: the column holds a JSON array. CASE, since AND may evaluate json_type on bad JSON. */
const jsonArray = (column: string) =>
  `(CASE WHEN json_valid(${column}) THEN json_type(${column}) = 'array' ELSE 0 END)`;

/**
 * Whether an episode row (alias e) and its trajectory (alias t, LEFT JOINed) can be read: the
 * JSON columns parse to arrays and the numbers are numbers. SQLite checks it, so resume and the
 * counts agree with what the readers find. A row that fails is reported as damaged, never as
 * a stack trace, and is run again on resume.
 */
const SOUND_EPISODE = `(
  typeof(e.reward) IN ('integer', 'real') AND typeof(e.duration_ms) IN ('integer', 'real')
  AND typeof(e.turns) = 'integer'
  AND (e.initial_actions IS NULL OR ${jsonArray("e.initial_actions")})
  AND (e.outcome = 'not_run' OR (t.steps IS NOT NULL AND ${jsonArray("t.steps")}))
)`;

const toEpisode = (row: EpisodeRowRaw): StoredEpisode =>
  row.sound === 1
    ? soundEpisode(row)
    : {
        ...soundEpisode({ ...row, initial_actions: null }),
        outcome: "damaged",
        reward: 0,
        turns: 0,
        durationMs: 0,
        error: `stored row does not parse (was ${row.outcome}); run the same eval again to redo it`,
      };

const soundEpisode = (row: EpisodeRowRaw): StoredEpisode => ({
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
  parseErrors: row.parse_errors,
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
  /** Instruction texts already stored, by text (ids of committed rows only). */
  private readonly instructionIds = new Map<string, number | bigint>();
  private selectEpisodeInstruction: Statement | undefined;

  private constructor(readonly db: SqliteDatabase) {
    this.statements = {
      insertEpisode: db.prepare(
        `INSERT INTO episodes (run_id, task_index, sample_index, seed, outcome, reward, end_reason,
           error, initial_observation, initial_actions, turns, parse_errors, started_at, duration_ms,
           instruction_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      deleteEpisode: db.prepare(
        "DELETE FROM episodes WHERE run_id = ? AND task_index = ? AND sample_index = ?",
      ),
      insertCall: db.prepare(
        `INSERT INTO model_call_rows (episode_id, turn, model, request, response, error,
           input_tokens, output_tokens, cost_usd, latency_ms, cache_hit, attempts, started_at,
           attempt_errors, base_call, base_messages, unpriced, queue_ms, retry_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      selectCalls: db.prepare("SELECT * FROM model_call_rows WHERE episode_id = ? ORDER BY id"),
      insertTrajectory: db.prepare("INSERT INTO trajectories (episode_id, steps) VALUES (?, ?)"),
      selectTrajectory: db.prepare(
        `SELECT t.steps, e.initial_observation, e.initial_actions
         FROM trajectories t JOIN episodes e ON e.id = t.episode_id WHERE t.episode_id = ?`,
      ),
    };
    const insertInstruction = db.prepare(
      "INSERT INTO instructions (text) VALUES (?) ON CONFLICT (text) DO NOTHING",
    );
    const selectInstruction = db.prepare("SELECT id FROM instructions WHERE text = ?").pluck();
    /** The id of an instruction's row, stored first when new (inside the caller's transaction). */
    const instructionId = (text: string | undefined): number | bigint | null => {
      if (text === undefined) return null;
      let id = this.instructionIds.get(text);
      if (id === undefined) {
        insertInstruction.run(text);
        id = selectInstruction.get(text) as number | bigint;
        this.instructionIds.set(text, id);
      }
      return id;
    };
    this.writeEpisodes = db.transaction((runId: string, records: readonly EncodedEpisode[]) => {
      const { insertEpisode, deleteEpisode, insertTrajectory, insertCall } = this.statements;
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
          record.parseErrors,
          record.startedAt,
          record.durationMs,
          instructionId(record.instruction),
        );
        insertTrajectory.run(lastInsertRowid, encodeColumns(record.columns));
        let previous: { id: number | bigint; request: ModelRequest } | undefined;
        for (const call of record.calls ?? []) {
          const delta = requestDelta(call.request, previous?.request);
          const { lastInsertRowid: callId } = insertCall.run(
            lastInsertRowid,
            call.turn,
            call.model,
            JSON.stringify(delta ? delta.request : call.request),
            call.response ? JSON.stringify(call.response) : null,
            call.error ?? null,
            call.usage.inputTokens,
            call.usage.outputTokens,
            call.costUsd,
            call.latencyMs,
            call.cacheHit ? 1 : 0,
            call.attempts,
            call.startedAt,
            call.attemptErrors?.length ? JSON.stringify(call.attemptErrors) : null,
            delta ? previous?.id : null,
            delta ? delta.baseMessages : null,
            // Every clade client says when a call is unpriced: no flag means priced (a model
            // priced at 0 included). Only rows written before migration 4 hold NULL.
            call.unpriced ? 1 : 0,
            call.queueMs ?? null,
            call.retryMs ?? null,
          );
          previous = { id: callId, request: call.request };
        }
      }
    });
  }

  static open(path: string, options: { readonly?: boolean } = {}): RunStore {
    return new RunStore(openDatabase(path, options));
  }

  /** A run store over a connection opened elsewhere (the viewer's), still its owner's to close. */
  static over(db: SqliteDatabase): RunStore {
    return new RunStore(db);
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
    if (existing?.configDamaged) {
      throw new RunConflictError(
        `run "${header.id}" has a damaged stored configuration, so it cannot be resumed; choose another --run-id`,
      );
    }
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
      this.claim(header.id);
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
    this.claim(header.id);
    return { resumed: false };
  }

  /** Records this process as the run's owner. */
  private claim(id: string): void {
    this.db
      .prepare("UPDATE runs SET owner_pid = ?, owner_host = ? WHERE id = ?")
      .run(process.pid, hostname(), id);
  }

  setStatus(id: string, status: RunStatus, stopReason: string | null = null): void {
    this.db
      .prepare("UPDATE runs SET status = ?, stop_reason = ?, updated_at = ? WHERE id = ?")
      .run(status, stopReason, new Date().toISOString(), id);
  }

  /** Records planned episodes that were never started, so reports show them as not run. */
  markNotRun(
    runId: string,
    episodes: readonly { taskIndex: number; sampleIndex: number; seed: number }[],
  ): void {
    const insert = this.db.prepare(
      `INSERT OR IGNORE INTO episodes (run_id, task_index, sample_index, seed, outcome, reward,
         end_reason, turns, started_at, duration_ms)
       VALUES (?, ?, ?, ?, 'not_run', 0, 'not_run', 0, ?, 0)`,
    );
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const e of episodes) insert.run(runId, e.taskIndex, e.sampleIndex, e.seed, now);
    })();
  }

  /**
   * Keys "task:sample" of episodes that need no rerun: sound successes and failures (errored and
   * damaged episodes are redone).
   */
  finishedEpisodeKeys(runId: string): Set<string> {
    const rows = this.db
      .prepare(
        `SELECT e.task_index, e.sample_index FROM episodes e
         LEFT JOIN trajectories t ON t.episode_id = e.id
         WHERE e.run_id = ? AND e.outcome IN ('success', 'failure') AND ${SOUND_EPISODE}`,
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
    if (records.length === 0) return;
    try {
      this.writeEpisodes(runId, records);
    } catch (error) {
      // A rolled-back transaction may have taken instruction rows with it.
      this.instructionIds.clear();
      throw error;
    }
  }

  listRuns(): RunSummary[] {
    const rows = this.db
      .prepare(
        `SELECT r.*,
           COUNT(e.id) AS episodes,
           COALESCE(SUM(e.sound AND e.outcome = 'success'), 0) AS successes,
           COALESCE(SUM(e.sound AND e.outcome = 'failure'), 0) AS failures,
           COALESCE(SUM(e.sound AND e.outcome = 'error'), 0) AS errors,
           COALESCE(SUM(e.sound AND e.outcome = 'not_run'), 0) AS not_run,
           COALESCE(SUM(NOT e.sound), 0) AS damaged,
           COALESCE(SUM(CASE WHEN e.sound THEN e.turns ELSE 0 END), 0) AS steps
         FROM runs r LEFT JOIN (
           SELECT e.id, e.run_id, e.outcome, e.turns, ${SOUND_EPISODE} AS sound
           FROM episodes e LEFT JOIN trajectories t ON t.episode_id = e.id
         ) e ON e.run_id = r.id
         GROUP BY r.id ORDER BY r.created_at, r.id`,
      )
      .all() as (RunRowRaw & {
      episodes: number;
      successes: number;
      failures: number;
      errors: number;
      not_run: number;
      damaged: number;
      steps: number;
    })[];
    return rows.map((row) => ({
      ...toRun(row),
      episodes: row.episodes,
      successes: row.successes,
      failures: row.failures,
      errors: row.errors,
      notRun: row.not_run,
      damaged: row.damaged,
      steps: row.steps,
    }));
  }

  episodes(runId: string): StoredEpisode[] {
    const rows = this.db
      .prepare(
        `SELECT e.*, ${SOUND_EPISODE} AS sound
         FROM episodes e LEFT JOIN trajectories t ON t.episode_id = e.id
         WHERE e.run_id = ? ORDER BY e.task_index, e.sample_index`,
      )
      .all(runId) as EpisodeRowRaw[];
    return rows.map(toEpisode);
  }

  /** One episode by its id (as episodes() reads it: damaged rows read as damaged). */
  episode(id: number): (StoredEpisode & { runId: string }) | undefined {
    const row = this.db
      .prepare(
        `SELECT e.*, ${SOUND_EPISODE} AS sound
         FROM episodes e LEFT JOIN trajectories t ON t.episode_id = e.id WHERE e.id = ?`,
      )
      .get(id) as (EpisodeRowRaw & { run_id: string }) | undefined;
    return row ? { ...toEpisode(row), runId: row.run_id } : undefined;
  }

  /**
   * The instruction an episode's agent was given, or null when the episode does not record it
   * (written before migration 5, or never started).
   */
  instruction(episodeId: number): string | null {
    this.selectEpisodeInstruction ??= this.db
      .prepare(
        `SELECT i.text FROM episodes e JOIN instructions i ON i.id = e.instruction_id
         WHERE e.id = ?`,
      )
      .pluck();
    return (this.selectEpisodeInstruction.get(episodeId) as string | undefined) ?? null;
  }

  /** Finished episodes (success or failure) of a run that do not record their instruction. */
  finishedWithoutInstruction(runId: string): number {
    return this.db
      .prepare(
        `SELECT COUNT(*) FROM episodes
         WHERE run_id = ? AND outcome IN ('success', 'failure') AND instruction_id IS NULL`,
      )
      .pluck()
      .get(runId) as number;
  }

  steps(episodeId: number): StepRecord[] {
    const row = this.statements.selectTrajectory.get(episodeId) as
      | { steps: string; initial_observation: string | null; initial_actions: string | null }
      | undefined;
    if (!row) return [];
    try {
      const initial = row.initial_actions
        ? { text: row.initial_observation ?? "", availableActions: JSON.parse(row.initial_actions) }
        : null;
      return decodeSteps(row.steps, initial);
    } catch (error) {
      throw new DamagedEpisodeError(
        `the trajectory of episode ${episodeId} could not be read (${(error as Error).message})`,
      );
    }
  }

  /**
   * Model calls of one episode, in order, each with its whole request. Requests rebuilt from an
   * earlier call share that call's message objects (read them, do not mutate them).
   */
  calls(episodeId: number): ModelCallRecord[] {
    return this.callRows(episodeId).map((row) => row.call);
  }

  /** The model calls of one episode as `calls` gives them, each with its row id. */
  callRows(episodeId: number): { id: number; call: ModelCallRecord }[] {
    const rows = this.statements.selectCalls.all(episodeId) as ModelCallRowRaw[];
    try {
      // Each base is an earlier row of the episode, so one pass in order rebuilds every request.
      const whole = new Map<number, ModelRequest>();
      return rows.map((row) => {
        const call = this.toCall(row, whole);
        whole.set(row.id, call.request);
        return { id: row.id, call };
      });
    } catch (error) {
      throw new DamagedEpisodeError(
        `the model calls of episode ${episodeId} could not be read (${(error as Error).message})`,
      );
    }
  }

  private toCall(row: ModelCallRowRaw, whole: Map<number, ModelRequest>): ModelCallRecord {
    return {
      turn: row.turn,
      model: row.model,
      request: wholeRequest(row, whole),
      ...(row.response ? { response: JSON.parse(row.response) } : {}),
      ...(row.error ? { error: row.error } : {}),
      usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
      costUsd: row.cost_usd,
      ...(unpricedRow(row) ? { unpriced: true as const } : {}),
      latencyMs: row.latency_ms,
      ...(row.queue_ms !== null ? { queueMs: row.queue_ms } : {}),
      ...(row.retry_ms !== null ? { retryMs: row.retry_ms } : {}),
      cacheHit: row.cache_hit === 1,
      attempts: row.attempts,
      ...(row.attempt_errors ? { attemptErrors: JSON.parse(row.attempt_errors) as string[] } : {}),
      startedAt: row.started_at,
    };
  }

  /** Model calls, tokens and cost of each episode of a run that made any, by episode id. */
  episodeUsage(runId: string): Map<number, EpisodeUsage> {
    const rows = this.db
      .prepare(
        `SELECT c.episode_id AS id, COUNT(*) AS calls, SUM(c.error IS NOT NULL) AS failedCalls,
           SUM(c.input_tokens) AS inputTokens,
           SUM(c.output_tokens) AS outputTokens, ${COST_COLUMNS}
         FROM model_call_rows c JOIN episodes e ON e.id = c.episode_id
         WHERE e.run_id = ? GROUP BY c.episode_id`,
      )
      .all(runId) as (Omit<EpisodeUsage, "unpriced"> & { id: number; anyUnpriced: number })[];
    return new Map(rows.map(({ id, ...usage }) => [id, costFields(usage)]));
  }

  /**
   * What a run's model calls have cost so far, in USD (0 for a new run). Unpriced calls add
   * nothing: a budget needs a priced model (assertPricedForBudget).
   */
  runCostUsd(runId: string): number {
    const row = this.db
      .prepare(
        `SELECT COALESCE(SUM(c.cost_usd), 0) AS cost
         FROM model_call_rows c JOIN episodes e ON e.id = c.episode_id WHERE e.run_id = ?`,
      )
      .get(runId) as { cost: number };
    return row.cost;
  }

  /** Tokens, cost and time (latency, queue, retry waits) of a run's model calls, by model. */
  usageByModel(runId: string): ModelUsageSummary[] {
    const rows = this.db
      .prepare(
        `SELECT c.model AS model,
           COUNT(*) AS calls,
           SUM(c.cache_hit) AS cacheHits,
           SUM(c.error IS NOT NULL) AS failedCalls,
           COALESCE(SUM(CASE WHEN json_valid(c.attempt_errors) THEN json_array_length(c.attempt_errors) END), 0) AS failedAttempts,
           SUM(c.input_tokens) AS inputTokens,
           SUM(c.output_tokens) AS outputTokens,
           ${COST_COLUMNS},
           AVG(c.latency_ms) AS meanLatencyMs,
           AVG(c.queue_ms) AS meanQueueMs,
           SUM(c.queue_ms) AS totalQueueMs,
           AVG(c.retry_ms) AS meanRetryMs,
           SUM(c.retry_ms) AS totalRetryMs,
           SUM(MAX(c.attempts - 1, 0)) AS retries
         FROM model_call_rows c JOIN episodes e ON e.id = c.episode_id
         WHERE e.run_id = ? GROUP BY c.model ORDER BY c.model`,
      )
      .all(runId) as (Omit<ModelUsageSummary, "unpriced"> & { anyUnpriced: number })[];
    return rows.map(costFields);
  }
}
