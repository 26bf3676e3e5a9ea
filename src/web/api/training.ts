/**
 * The training API: the multi-turn RL runs the store holds (tables training_runs, training_steps
 * and training_checkpoints, written by `clade train`), for the training page's learning curves.
 *
 *   GET /training?limit=&cursor=   runs, newest first: env, algorithm, schedule, status, how far
 *   GET /training/:id?since=       one run: its config, checkpoints, the horizon schedule's stages
 *                                  and its curve as column arrays (one array per metric)
 *
 * Steps are read with TrainingStore (the reader `clade curves` uses) and the stages come from
 * the run's stored schedule through schedule.ts, so the page and the CLI agree on both.
 */
import { Hono } from "hono";
import { z } from "zod";
import { type HorizonSchedule, parseSchedule, type Stage } from "../../improve/rl/schedule.js";
import type { Algorithm } from "../../improve/rl/train/train.js";
import type { SqliteDatabase } from "../../store/database.js";
import type { JsonValue } from "../../store/search-log.js";
import {
  STEP_METRICS,
  type TrainingCheckpoint,
  type TrainingStatus,
  type TrainingStepRow,
  TrainingStore,
} from "../../store/training-log.js";
import { apiPath } from "../api-path.js";
import { decodeCursor, page } from "../cursor.js";
import type { ApiModule, Chosen } from "../server.js";
import type { StoreView } from "../store-view.js";
import { pageQuery, valid } from "../validate.js";

/** A metric column of training_steps, by its field name. */
export type StepMetric = (typeof STEP_METRICS)[number];

/** One training run in the list (and the head of its own page). */
export interface TrainingRunItem {
  id: string;
  env: string | null;
  envVersion: string | null;
  /** grpo, ppo, rloo, reinforce++ or remax (config.algo). */
  algorithm: string | null;
  /** The advantage estimator behind the algorithm (verl's name: gae for ppo). */
  estimator: string | null;
  /** The horizon schedule as written, e.g. "scaling:16,32,64@15". */
  schedule: string | null;
  status: TrainingStatus;
  stopReason: string | null;
  /** Steps stored so far. */
  steps: number;
  /** The last stored step's number and metrics; null before the first step. */
  lastStep: number | null;
  meanReward: number | null;
  successRate: number | null;
  horizon: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface TrainingListResponse {
  items: TrainingRunItem[];
  nextCursor: string | null;
}

/**
 * A run's curve, column by column: `step[i]` and every metric's `[i]` describe one step. The
 * metric columns of training_steps are always there (null where a step has no value); `extra`
 * holds the numbers the trainer reported beyond them (nested ones as "timing.rolloutMs").
 */
export type TrainingCurve = { step: number[] } & Record<StepMetric, (number | null)[]> & {
    extra: Record<string, (number | null)[]>;
  };

export interface TrainingRunResponse {
  run: TrainingRunItem;
  config: Record<string, JsonValue>;
  checkpoints: TrainingCheckpoint[];
  /** The stages of the stored schedule (step ranges with their horizon); null without one. */
  schedule: { spec: string; kind: string; stages: Stage[] } | null;
  /** Why the stored schedule could not be read, when it could not. */
  scheduleError: string | null;
  /** Only steps after this one are in `curve` (the request's `since`); null: all of them. */
  since: number | null;
  curve: TrainingCurve;
}

interface RunRowRaw {
  id: string;
  config: string;
  status: TrainingStatus;
  stop_reason: string | null;
  created_at: string;
  updated_at: string;
  steps: number;
  last_step: number | null;
  mean_reward: number | null;
  success_rate: number | null;
  horizon: number | null;
}

/** The run row with its step count and last step, by correlated lookups on the primary key. */
const RUN_SELECT = `
  SELECT r.id, r.config, r.status, r.stop_reason, r.created_at, r.updated_at,
    (SELECT COUNT(*) FROM training_steps s WHERE s.run_id = r.id) AS steps,
    l.step AS last_step, l.mean_reward, l.success_rate, l.horizon
  FROM training_runs r
  LEFT JOIN training_steps l ON l.run_id = r.id
    AND l.step = (SELECT MAX(step) FROM training_steps m WHERE m.run_id = r.id)`;

const text = (value: JsonValue | undefined): string | null =>
  typeof value === "string" ? value : null;

/** The trainer's algorithm → estimator table, loaded on the first request (the trainer is big). */
type Estimators = Readonly<Record<Algorithm, string>>;
let estimatorTable: Promise<Estimators> | undefined;
const estimators = (): Promise<Estimators> =>
  (estimatorTable ??= import("../../improve/rl/train/train.js").then((m) => m.ESTIMATOR_OF));

function runItem(
  row: RunRowRaw,
  estimatorOf: Estimators,
): { item: TrainingRunItem; config: Record<string, JsonValue> } {
  const config = JSON.parse(row.config) as Record<string, JsonValue>;
  const algorithm = text(config.algo);
  const estimator =
    algorithm !== null && Object.hasOwn(estimatorOf, algorithm)
      ? estimatorOf[algorithm as Algorithm]
      : null;
  return {
    config,
    item: {
      id: row.id,
      env: text(config.env),
      envVersion: text(config.envVersion),
      algorithm,
      estimator,
      schedule: text(config.schedule),
      status: row.status,
      stopReason: row.stop_reason,
      steps: row.steps,
      lastStep: row.last_step,
      meanReward: row.mean_reward,
      successRate: row.success_rate,
      horizon: row.horizon,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
  };
}

/** Newest first; the cursor is the last row's (created_at, id). */
function listRuns(
  db: SqliteDatabase,
  limit: number,
  after: readonly unknown[] | undefined,
  estimatorOf: Estimators,
) {
  const where = after ? "WHERE (r.created_at, r.id) < (?, ?)" : "";
  const rows = db
    .prepare(`${RUN_SELECT} ${where} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`)
    .all(...(after ?? []), limit + 1) as RunRowRaw[];
  return page(
    rows.map((row) => runItem(row, estimatorOf).item),
    limit,
    (item) => [item.createdAt, item.id],
  );
}

/** The stored schedule's stages, or why there are none. */
function scheduleOf(config: Record<string, JsonValue>): {
  schedule: HorizonSchedule | null;
  error: string | null;
} {
  const spec = text(config.schedule);
  if (spec === null) return { schedule: null, error: null };
  try {
    return { schedule: parseSchedule(spec), error: null };
  } catch (error) {
    return { schedule: null, error: (error as Error).message };
  }
}

/**
 * Step rows as columns. An extra field that is a number (or an object of numbers, one level
 * deep) becomes a column of its own, null on the steps that lack it; anything else (error
 * messages, per-task lists) is left to `clade curves --json`.
 */
export function curveColumns(steps: readonly TrainingStepRow[]): TrainingCurve {
  const curve = { step: steps.map((s) => s.step), extra: {} } as unknown as TrainingCurve;
  for (const name of STEP_METRICS) curve[name] = steps.map((s) => s[name]);
  steps.forEach((row, i) => {
    const put = (name: string, value: JsonValue | undefined) => {
      if (typeof value !== "number" || !Number.isFinite(value)) return;
      curve.extra[name] ??= new Array<number | null>(steps.length).fill(null);
      (curve.extra[name] as (number | null)[])[i] = value;
    };
    for (const [key, value] of Object.entries(row.extra ?? {})) {
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        for (const [inner, number] of Object.entries(value)) put(`${key}.${inner}`, number);
      } else {
        put(key, value);
      }
    }
  });
  return curve;
}

const runParam = z.object({ id: z.string().min(1) });
const runQuery = z.object({ since: z.coerce.number().int().min(0).optional() });

function routes(view: StoreView): Hono {
  return new Hono()
    .get("/training", valid("query", pageQuery), async (c) => {
      const { limit, cursor } = c.req.valid("query");
      const after = cursor === undefined ? undefined : decodeCursor(cursor, 2);
      if (cursor !== undefined && after === undefined) {
        return c.json({ error: "query.cursor: not a cursor this server gave" }, 400);
      }
      const db = view.db;
      const body: TrainingListResponse = db
        ? listRuns(db, limit, after, await estimators())
        : emptyList();
      return c.json(body);
    })
    .get("/training/:id", valid("param", runParam), valid("query", runQuery), async (c) => {
      const { id } = c.req.valid("param");
      const { since } = c.req.valid("query");
      const estimatorOf = await estimators(); // before the reads, so they see one moment
      const db = view.db;
      const row = db?.prepare(`${RUN_SELECT} WHERE r.id = ?`).get(id) as RunRowRaw | undefined;
      if (db === undefined || row === undefined) {
        return c.json({ error: `no training run "${id}"` }, 404);
      }
      const { item, config } = runItem(row, estimatorOf);
      const store = new TrainingStore(db);
      const steps = store.steps(id);
      const { schedule, error } = scheduleOf(config);
      const body: TrainingRunResponse = {
        run: item,
        config,
        checkpoints: store.checkpoints(id),
        schedule: schedule && {
          spec: schedule.spec,
          kind: schedule.kind,
          stages: [...schedule.stages],
        },
        scheduleError: error,
        since: since ?? null,
        curve: curveColumns(since === undefined ? steps : steps.filter((s) => s.step > since)),
      };
      return c.json(body);
    });
}

const emptyList = (): TrainingListResponse => ({ items: [], nextCursor: null });

/** The list and the page of every chosen training run (ids of other kinds are skipped). */
function bundle(db: SqliteDatabase, chosen: Chosen): string[] {
  const ids = db.prepare("SELECT id FROM training_runs ORDER BY id").pluck().all() as string[];
  const picked = chosen === "all" ? ids : ids.filter((id) => chosen.has(id));
  if (picked.length === 0) return [];
  return [
    apiPath("/training"),
    ...picked.map((id) => apiPath(`/training/${encodeURIComponent(id)}`)),
  ];
}

export const trainingApi: ApiModule = { routes, bundle };
