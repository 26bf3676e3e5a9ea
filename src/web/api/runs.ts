/**
 * The evaluation runs' API: the runs list (filter, sort, search, status, success rate with its
 * interval, errors apart from failures), one run (header, metrics with intervals and their
 * definitions, totals, errors grouped, cost by model), its per-task outcomes across samples, its
 * episodes (filtered by outcome, sorted, keyset-paged), and two runs compared task by task.
 * Errors and episodes not run enter no denominator (docs/design.md, "Errors are not failures").
 */
import { Hono } from "hono";
import { z } from "zod";
import type { MetricComparison, RunComparison } from "../../eval/compare.js";
import { normaliseError } from "../../eval/evaluation.js";
import type { Interval, MetricsReport, TaskOutcomes } from "../../eval/metrics.js";
import { environmentsDiffer } from "../../eval/report.js";
import type { SqliteDatabase } from "../../store/database.js";
import {
  addCosts,
  type CostFields,
  describeStatus,
  type ModelUsageSummary,
  type RunRow,
} from "../../store/run-store.js";
import { apiPath } from "../api-path.js";
import { type CursorKey, decodeCursor, page } from "../cursor.js";
import { FingerprintCache } from "../fingerprint-cache.js";
import type { ApiModule, Chosen } from "../server.js";
import { runStoreOn, type StoreView } from "../store-view.js";
import { pageLimit, pageQuery, valid } from "../validate.js";
import {
  type CountedRun,
  countedRuns,
  listSuccessRate,
  type OutcomeCounts,
  type RateWithInterval,
  RUN_STATES,
  type RunMetrics,
  type RunState,
  runCost,
  runState,
} from "./runs-read.js";

// ---------------------------------------------------------------------------------------------
// Response types (the front end imports them with `import type`)

export type { OutcomeCounts, RateWithInterval, RunState };

export interface RunListItem {
  id: string;
  env: string;
  envVersion: string;
  agent: string;
  /** For people: "running", "complete", "interrupted (budget)", "killed (resumable)". */
  status: string;
  state: RunState;
  stopReason: string | null;
  createdAt: string;
  updatedAt: string;
  /** By stored outcome, straight from `episodes` (damaged rows are counted on the run page). */
  counts: OutcomeCounts;
  /** Successes over finished episodes (success + failure), 95% bootstrap interval over tasks. */
  successRate: RateWithInterval;
  cost: CostFields;
}

export interface RunListResponse {
  items: RunListItem[];
  nextCursor: string | null;
  /** Runs that match the filters (all pages). */
  matched: number;
  /** Every env and agent in the store, for the filter's choices. */
  envs: string[];
  agents: string[];
}

export interface RunHeader {
  id: string;
  env: string;
  envVersion: string;
  agent: string;
  config: Record<string, unknown>;
  configDamaged: boolean;
  status: string;
  state: RunState;
  stopReason: string | null;
  owner: { pid: number; host: string } | null;
  createdAt: string;
  updatedAt: string;
}

export interface ErrorGroup {
  /** The message with its volatile parts (numbers, ids) as `#` and `<id>` (normaliseError). */
  pattern: string;
  /** One message of the group, as stored (that of `episode`). */
  message: string;
  count: number;
  /** One episode that ended with it. */
  episode: number;
}

export interface RunResponse {
  run: RunHeader;
  /** Episodes by stored outcome, and those with unusable model replies (parse errors). */
  totals: OutcomeCounts & { withParseErrors: number; parseErrors: number };
  /** Errored episodes grouped by message (numbers and ids aside), most frequent first (20 at most). */
  errors: { groups: ErrorGroup[]; distinct: number; total: number };
  usage: ModelUsageSummary[];
  cost: CostFields;
}

/** One metric beside its 95% interval and definition (docs/metrics.md), as `clade show` prints. */
export interface MetricRow {
  name: string;
  /** null: nothing to compute it from (n/a). */
  value: number | null;
  interval: Interval | null;
  definition: string;
}

export interface RunMetricsResponse {
  runId: string;
  /** `clade show RUN --json`'s metrics (NaN is null in JSON). */
  metrics: MetricsReport;
  rows: MetricRow[];
  /** How the intervals are computed, and what errors do to the denominators. */
  notes: string[];
  /** Episodes whose stored row does not parse: left out of the metrics. */
  damaged: number;
  /** When these metrics were computed (a live run's may trail its last episodes by seconds). */
  computedAt: string;
}

export interface TaskSample {
  sample: number;
  outcome: string;
  episode: number;
}

export interface TaskRow {
  task: number;
  samples: number;
  success: number;
  failure: number;
  error: number;
  notRun: number;
  /** Mean final reward over the task's finished episodes; null when none finished. */
  meanReward: number | null;
  /** One cell per sample in sample order (the first 100 samples). */
  cells: TaskSample[];
}

export interface TaskPage {
  items: TaskRow[];
  nextCursor: string | null;
}

export interface EpisodeRow {
  id: number;
  task: number;
  sample: number;
  seed: number;
  outcome: string;
  reward: number;
  endReason: string;
  error: string | null;
  turns: number;
  parseErrors: number;
  durationMs: number;
  startedAt: string;
}

export interface EpisodePage {
  items: EpisodeRow[];
  nextCursor: string | null;
}

/** One run's side of a task in a comparison. */
export interface CompareSideTask {
  successes: number;
  finished: number;
  errors: number;
  /** successes / finished; null when none finished. */
  rate: number | null;
}

export interface CompareTaskRow {
  task: number;
  a: CompareSideTask | null;
  b: CompareSideTask | null;
  /**
   * gained / lost: B's success rate on the task is higher / lower than A's; same; onlyA / onlyB:
   * the task has finished episodes in one run only.
   */
  change: "gained" | "lost" | "same" | "onlyA" | "onlyB";
  /**
   * Flipped: every finished sample passed in one run and none in the other (one sample per task:
   * passed in one, failed in the other); `clade compare`'s definition.
   */
  flipped: boolean;
}

export interface CompareRunSide {
  run: RunHeader;
  metrics: MetricsReport;
}

export interface CompareResponse {
  a: CompareRunSide;
  b: CompareRunSide;
  /** Each metric of A and B with intervals, and B − A over the shared tasks (paired bootstrap). */
  metrics: MetricComparison[];
  sharedTasks: number;
  onlyA: number;
  onlyB: number;
  flipped: number;
  changed: number;
  /** What the reader must know: different environments, no shared task. */
  warnings: string[];
  /** Definitions of `flipped` and `change`. */
  definitions: Record<string, string>;
  items: CompareTaskRow[];
  nextCursor: string | null;
}

// ---------------------------------------------------------------------------------------------
// Queries

const dir = z.enum(["asc", "desc"]);

const listQuery = z.object({
  q: z.string().max(200).optional(),
  env: z.string().max(200).optional(),
  agent: z.string().max(200).optional(),
  status: z.enum(RUN_STATES as [RunState, ...RunState[]]).optional(),
  sort: z.enum(["created", "updated", "success", "episodes"]).default("created"),
  dir: dir.default("desc"),
  limit: pageLimit,
  cursor: z.string().optional(),
});

export const EPISODE_FILTERS = ["success", "failure", "error", "not_run", "parse_errors"] as const;
export type EpisodeFilter = (typeof EPISODE_FILTERS)[number];

const episodesQuery = z.object({
  outcome: z.enum(EPISODE_FILTERS).optional(),
  task: z.coerce.number().int().min(0).optional(),
  sort: z.enum(["task", "reward", "duration", "turns"]).default("task"),
  dir: dir.default("asc"),
  limit: pageLimit,
  cursor: z.string().optional(),
});

const compareQuery = z.object({
  a: z.string().min(1),
  b: z.string().min(1),
  only: z.enum(["flipped", "changed", "all"]).default("all"),
  limit: pageLimit,
  cursor: z.string().optional(),
});

const idParam = z.object({ id: z.string().min(1) });

/** The definitions shown beside each metric (docs/metrics.md). */
export const METRIC_DEFINITIONS = {
  successRate: "successes / finished episodes; errored and not-run episodes are left out",
  meanReward: "mean final reward over finished episodes (AgentGym's score)",
  avgAtK: "mean final reward over the k samples of each task, averaged over tasks",
  passAtK:
    "unbiased 1 − C(n−c, k) / C(n, k) from n finished samples with c successes, averaged over the tasks with at least k finished samples",
  passHatK:
    "C(c, k) / C(n, k): all of k tries succeed (τ-bench), averaged over the tasks with at least k finished samples",
} as const;

const METRIC_NOTES = [
  "95% intervals: percentile bootstrap over tasks (whole tasks resampled), 1,000 resamples, seeded with the run's seed.",
  "Errors are not failures: an errored episode (exception, timeout, provider error) enters no denominator; episodes not run neither.",
];

const nullable = (value: number): number | null => (Number.isFinite(value) ? value : null);
const nullableInterval = (i: Interval): Interval | null =>
  Number.isFinite(i.low) && Number.isFinite(i.high) ? i : null;

/** The metrics report as rows: name, value, interval and definition (as renderMetrics lays it). */
export function metricRows(report: MetricsReport): MetricRow[] {
  const rows: MetricRow[] = [
    {
      name: "success rate",
      value: nullable(report.successRate),
      interval: nullableInterval(report.successRateInterval),
      definition: `${METRIC_DEFINITIONS.successRate} (${report.successes}/${report.finished}; errors: ${report.errors})`,
    },
    {
      name: "mean reward",
      value: nullable(report.meanReward),
      interval: nullableInterval(report.meanRewardInterval),
      definition: METRIC_DEFINITIONS.meanReward,
    },
    {
      name: `avg@${report.avgAtK.k}`,
      value: nullable(report.avgAtK.value),
      interval: null,
      definition: METRIC_DEFINITIONS.avgAtK,
    },
  ];
  for (const p of report.passAtK) {
    rows.push({
      name: `pass@${p.k}`,
      value: nullable(p.value),
      interval: nullableInterval(p.interval),
      definition: `${METRIC_DEFINITIONS.passAtK} (${p.tasks} tasks)`,
    });
  }
  for (const p of report.passHatK) {
    if (p.k === 1) continue; // pass^1 equals pass@1
    rows.push({
      name: `pass^${p.k}`,
      value: nullable(p.value),
      interval: nullableInterval(p.interval),
      definition: `${METRIC_DEFINITIONS.passHatK} (${p.tasks} tasks)`,
    });
  }
  return rows;
}

function header(run: RunRow): RunHeader {
  return {
    id: run.id,
    env: run.env,
    envVersion: run.envVersion,
    agent: run.agent,
    config: run.config,
    configDamaged: run.configDamaged === true,
    status: describeStatus(run),
    state: runState(run),
    stopReason: run.stopReason,
    owner: run.owner,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
  };
}

/** Orders keys [value, id] in a direction, missing values last either way. */
function compareKeys(x: CursorKey, y: CursorKey, direction: "asc" | "desc"): number {
  const [vx, ix] = x;
  const [vy, iy] = y;
  if ((vx === null) !== (vy === null)) return vx === null ? 1 : -1;
  const sign = direction === "asc" ? 1 : -1;
  const order = (p: unknown, q: unknown) => (p === q ? 0 : (p as number) < (q as number) ? -1 : 1);
  return (vx === null ? 0 : order(vx, vy) * sign) || order(ix, iy) * sign;
}

type ListItemKey = (item: RunListItem) => CursorKey;
const LIST_KEYS: Record<z.infer<typeof listQuery>["sort"], ListItemKey> = {
  created: (r) => [r.createdAt, r.id],
  updated: (r) => [r.updatedAt, r.id],
  success: (r) => [r.successRate.value, r.id],
  episodes: (r) => [r.counts.episodes, r.id],
};

function matches(
  item: RunListItem,
  config: Record<string, unknown>,
  query: z.infer<typeof listQuery>,
) {
  if (query.env && item.env !== query.env) return false;
  if (query.agent && item.agent !== query.agent) return false;
  if (query.status && item.state !== query.status) return false;
  if (query.q) {
    const needle = query.q.toLowerCase();
    const hay = [item.id, item.env, item.agent, item.status, JSON.stringify(config)];
    if (!hay.some((text) => text.toLowerCase().includes(needle))) return false;
  }
  return true;
}

/** Episode sort keys: two columns, unique within a run, so a keyset cursor is exact. */
const EPISODE_SORTS = {
  task: ["task_index", "sample_index"],
  reward: ["reward", "id"],
  duration: ["duration_ms", "id"],
  turns: ["turns", "id"],
} as const;

interface EpisodeRowRaw {
  id: number;
  task_index: number;
  sample_index: number;
  seed: number;
  outcome: string;
  reward: number;
  end_reason: string;
  error: string | null;
  turns: number;
  parse_errors: number;
  duration_ms: number;
  started_at: string;
}

/** The SQL of one page of a run's episodes (exported for the query-plan test). */
export function episodePageSql(
  query: z.infer<typeof episodesQuery>,
  cursor: CursorKey | undefined,
) {
  const [first, second] = EPISODE_SORTS[query.sort];
  const where = ["run_id = ?"];
  const params: (string | number | null)[] = [];
  if (query.outcome === "parse_errors") where.push("parse_errors > 0");
  else if (query.outcome !== undefined) {
    // The outcome index serves the reward order; for the others it would cost a random row read
    // per match before the sort, so the run's rows are read in key order instead (`+`: no index).
    where.push(first === "reward" || first === "task_index" ? "outcome = ?" : "+outcome = ?");
    params.push(query.outcome);
  }
  if (query.task !== undefined) {
    where.push("task_index = ?");
    params.push(query.task);
  }
  if (cursor !== undefined) {
    where.push(`(${first}, ${second}) ${query.dir === "asc" ? ">" : "<"} (?, ?)`);
    params.push(cursor[0] ?? null, cursor[1] ?? null);
  }
  const sql = `SELECT id, task_index, sample_index, seed, outcome, reward, end_reason, error, turns,
      parse_errors, duration_ms, started_at
    FROM episodes WHERE ${where.join(" AND ")}
    ORDER BY ${first} ${query.dir}, ${second} ${query.dir} LIMIT ?`;
  return { sql, params, key: (row: EpisodeRowRaw): CursorKey => [row[first], row[second]] };
}

const toEpisodeRow = (row: EpisodeRowRaw): EpisodeRow => ({
  id: row.id,
  task: row.task_index,
  sample: row.sample_index,
  seed: row.seed,
  outcome: row.outcome,
  reward: row.reward,
  endReason: row.end_reason,
  error: row.error,
  turns: row.turns,
  parseErrors: row.parse_errors,
  durationMs: row.duration_ms,
  startedAt: row.started_at,
});

/** The most error groups the run page lists. */
const ERROR_GROUPS = 20;

/** The most samples per task the per-task table draws as cells. */
const CELLS_PER_TASK = 100;

function taskPage(db: SqliteDatabase, runId: string, after: number | null, size: number): TaskPage {
  const rows = db
    .prepare(
      `SELECT task_index AS task, COUNT(*) AS samples,
         SUM(outcome = 'success') AS success, SUM(outcome = 'failure') AS failure,
         SUM(outcome = 'error') AS error, SUM(outcome = 'not_run') AS notRun,
         AVG(CASE WHEN outcome IN ('success', 'failure') THEN reward END) AS meanReward
       FROM episodes WHERE run_id = ? AND task_index > ?
       GROUP BY task_index ORDER BY task_index LIMIT ?`,
    )
    .all(runId, after ?? -1, size + 1) as Omit<TaskRow, "cells">[];
  const { items, nextCursor } = page(rows, size, (r) => [r.task]);
  const first = items[0];
  const last = items.at(-1);
  const cells = new Map<number, TaskSample[]>(items.map((t) => [t.task, []]));
  if (first && last) {
    const samples = db
      .prepare(
        `SELECT id, task_index, sample_index, outcome FROM episodes
         WHERE run_id = ? AND task_index BETWEEN ? AND ? AND sample_index < ?
         ORDER BY task_index, sample_index`,
      )
      .all(runId, first.task, last.task, CELLS_PER_TASK) as {
      id: number;
      task_index: number;
      sample_index: number;
      outcome: string;
    }[];
    for (const s of samples) {
      cells.get(s.task_index)?.push({ sample: s.sample_index, outcome: s.outcome, episode: s.id });
    }
  }
  return { items: items.map((t) => ({ ...t, cells: cells.get(t.task) ?? [] })), nextCursor };
}

function runDetail(db: SqliteDatabase, counted: CountedRun): RunResponse {
  const { run, counts } = counted;
  const parse = db
    .prepare(
      `SELECT COALESCE(SUM(parse_errors > 0), 0) AS episodes, COALESCE(SUM(parse_errors), 0) AS replies
       FROM episodes WHERE run_id = ?`,
    )
    .get(run.id) as { episodes: number; replies: number };
  // Exact messages from SQL, then merged as the fail-fast rule compares them (numbers and ids
  // left out), so "timeout after 30012 ms" and "timeout after 30007 ms" are one group.
  const exact = db
    .prepare(
      `SELECT COALESCE(error, '(no message)') AS message, COUNT(*) AS count, MIN(id) AS episode
       FROM episodes WHERE run_id = ? AND outcome = 'error' GROUP BY error`,
    )
    .all(run.id) as ErrorGroup[];
  const merged = new Map<string, ErrorGroup>();
  for (const group of exact) {
    const key = normaliseError(group.message);
    const seen = merged.get(key);
    if (seen === undefined) merged.set(key, { ...group, pattern: key });
    else {
      seen.count += group.count;
      if (group.episode < seen.episode)
        Object.assign(seen, { episode: group.episode, message: group.message });
    }
  }
  const groups = [...merged.values()]
    .sort((x, y) => y.count - x.count || x.pattern.localeCompare(y.pattern))
    .slice(0, ERROR_GROUPS);
  const usage = runStoreOn(db).usageByModel(run.id);
  return {
    run: header(run),
    totals: { ...counts, withParseErrors: parse.episodes, parseErrors: parse.replies },
    errors: { groups, distinct: merged.size, total: counts.error },
    usage,
    cost: addCosts(usage),
  };
}

const sideTask = (t: TaskOutcomes | undefined): CompareSideTask | null =>
  t === undefined
    ? null
    : {
        successes: t.successes,
        finished: t.rewards.length,
        errors: t.errors,
        rate: t.rewards.length > 0 ? t.successes / t.rewards.length : null,
      };

/** Every task of two runs side by side, ascending by task. */
export function compareRows(
  tasksA: readonly TaskOutcomes[],
  tasksB: readonly TaskOutcomes[],
  moved: RunComparisonMoved,
): CompareTaskRow[] {
  const byA = new Map(tasksA.map((t) => [t.taskIndex, t]));
  const byB = new Map(tasksB.map((t) => [t.taskIndex, t]));
  const movedBy = new Map(moved.map((m) => [m.taskIndex, m]));
  const all = [...new Set([...byA.keys(), ...byB.keys()])].sort((x, y) => x - y);
  return all.map((task) => {
    const a = sideTask(byA.get(task));
    const b = sideTask(byB.get(task));
    const move = movedBy.get(task);
    const change: CompareTaskRow["change"] = move
      ? move.change
      : a?.rate == null && b?.rate != null
        ? "onlyB"
        : b?.rate == null && a?.rate != null
          ? "onlyA"
          : "same";
    return { task, a, b, change, flipped: move?.flipped === true };
  });
}

type RunComparisonMoved = RunComparison["moved"];

const FLIP_DEFINITIONS = {
  flipped:
    "every finished sample of the task passed in one run and none in the other (one sample per task: passed in one run, failed in the other)",
  change:
    "gained / lost: B's success rate on the task is above / below A's; onlyA / onlyB: the task has finished episodes in one run only",
  difference:
    "B − A over the tasks both runs finished, with a paired bootstrap interval over those tasks",
};

// ---------------------------------------------------------------------------------------------
// Routes

const notFound = (id: string) => ({ error: `no run "${id}" in this store` });
const badCursor = { error: "query.cursor: not a cursor of this list (start again without it)" };

function routes(view: StoreView): Hono {
  // Per run: the slow metrics (every episode read, bootstrap), the header's queries, the list's
  // interval and cost; per pair: the comparison. Kept until the run's episodes change.
  const metricsCache = new FingerprintCache<RunMetrics>();
  const detailCache = new FingerprintCache<RunResponse>(64, 0);
  const listExtras = new FingerprintCache<{ successRate: RateWithInterval; cost: CostFields }>(
    1024,
  );
  const compareCache = new FingerprintCache<{
    comparison: RunComparison;
    rows: CompareTaskRow[];
  }>(16);

  // Every run's counts, read once per version of the store (one pass over the outcome index).
  let counted: { version: number; db: SqliteDatabase; runs: CountedRun[] } | undefined;
  const allRuns = (db: SqliteDatabase): CountedRun[] => {
    const version = view.version();
    if (counted?.version !== version || counted.db !== db) {
      counted = { version, db, runs: countedRuns(db) };
    }
    return counted.runs;
  };
  const oneRun = (db: SqliteDatabase | undefined, id: string) =>
    db && allRuns(db).find((r) => r.run.id === id);

  // In the worker thread: a run of 100,000 episodes takes over a second the first time.
  const metricsOf = (db: SqliteDatabase, counted: CountedRun) =>
    metricsCache.getAsync(
      counted.run.id,
      counted.fingerprint,
      () => view.background().run(db, { kind: "metrics", run: counted.run }),
      runState(counted.run) === "running",
    );

  return new Hono()
    .get("/runs", valid("query", listQuery), (c) => {
      const query = c.req.valid("query");
      const db = view.db;
      const empty: RunListResponse = {
        items: [],
        nextCursor: null,
        matched: 0,
        envs: [],
        agents: [],
      };
      if (db === undefined) return c.json(empty);
      const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 2);
      if (query.cursor !== undefined && cursor === undefined) return c.json(badCursor, 400);
      const all = allRuns(db);
      const items: RunListItem[] = [];
      for (const { run, counts, fingerprint } of all) {
        const state = runState(run);
        const extras = listExtras.get(
          run.id,
          fingerprint,
          () => ({
            successRate: listSuccessRate(db, run),
            cost: runCost(db, run.id),
          }),
          state === "running",
        ).value;
        const item: RunListItem = {
          id: run.id,
          env: run.env,
          envVersion: run.envVersion,
          agent: run.agent,
          status: describeStatus(run),
          state,
          stopReason: run.stopReason,
          createdAt: run.createdAt,
          updatedAt: run.updatedAt,
          counts,
          ...extras,
        };
        if (matches(item, run.config, query)) items.push(item);
      }
      const key = LIST_KEYS[query.sort];
      items.sort((x, y) => compareKeys(key(x), key(y), query.dir));
      const after = cursor
        ? items.filter((r) => compareKeys(key(r), cursor, query.dir) > 0)
        : items;
      const body: RunListResponse = {
        ...page(after.slice(0, query.limit + 1), query.limit, key),
        matched: items.length,
        envs: [...new Set(all.map((r) => r.run.env))].sort(),
        agents: [...new Set(all.map((r) => r.run.agent))].sort(),
      };
      return c.json(body);
    })
    .get("/runs/:id", valid("param", idParam), (c) => {
      const { id } = c.req.valid("param");
      const db = view.db;
      const counted = oneRun(db, id);
      if (!db || !counted) return c.json(notFound(id), 404);
      return c.json(detailCache.get(id, counted.fingerprint, () => runDetail(db, counted)).value);
    })
    .get("/runs/:id/metrics", valid("param", idParam), async (c) => {
      const { id } = c.req.valid("param");
      const db = view.db;
      const counted = oneRun(db, id);
      if (!db || !counted) return c.json(notFound(id), 404);
      const { value, at } = await metricsOf(db, counted);
      const body: RunMetricsResponse = {
        runId: id,
        metrics: value.metrics,
        rows: metricRows(value.metrics),
        notes: METRIC_NOTES,
        damaged: value.damaged,
        computedAt: new Date(at).toISOString(),
      };
      return c.json(body);
    })
    .get("/runs/:id/tasks", valid("param", idParam), valid("query", pageQuery), (c) => {
      const { id } = c.req.valid("param");
      const query = c.req.valid("query");
      const db = view.db;
      if (!db || !oneRun(db, id)) return c.json(notFound(id), 404);
      const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 1);
      if (query.cursor !== undefined && typeof cursor?.[0] !== "number") {
        return c.json(badCursor, 400);
      }
      return c.json(taskPage(db, id, (cursor?.[0] as number | undefined) ?? null, query.limit));
    })
    .get("/runs/:id/episodes", valid("param", idParam), valid("query", episodesQuery), (c) => {
      const { id } = c.req.valid("param");
      const query = c.req.valid("query");
      const db = view.db;
      if (!db || !oneRun(db, id)) return c.json(notFound(id), 404);
      const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 2);
      if (query.cursor !== undefined && cursor === undefined) return c.json(badCursor, 400);
      const { sql, params, key } = episodePageSql(query, cursor);
      const rows = db.prepare(sql).all(id, ...params, query.limit + 1) as EpisodeRowRaw[];
      const { items, nextCursor } = page(rows, query.limit, key);
      const body: EpisodePage = { items: items.map(toEpisodeRow), nextCursor };
      return c.json(body);
    })
    .get("/compare", valid("query", compareQuery), async (c) => {
      const query = c.req.valid("query");
      const db = view.db;
      const a = oneRun(db, query.a);
      const b = oneRun(db, query.b);
      if (!db || !a) return c.json(notFound(query.a), 404);
      if (!b) return c.json(notFound(query.b), 404);
      const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 1);
      if (query.cursor !== undefined && typeof cursor?.[0] !== "number") {
        return c.json(badCursor, 400);
      }
      const [metricsA, metricsB] = await Promise.all([metricsOf(db, a), metricsOf(db, b)]);
      const tasksA = metricsA.value.tasks;
      const tasksB = metricsB.value.tasks;
      const live = runState(a.run) === "running" || runState(b.run) === "running";
      const { comparison, rows } = (
        await compareCache.getAsync(
          `${a.run.id}\n${b.run.id}`,
          `${a.fingerprint}|${b.fingerprint}`,
          async () => {
            const comparison = await view
              .background()
              .run(db, { kind: "compare", a: a.run, tasksA, tasksB });
            return { comparison, rows: compareRows(tasksA, tasksB, comparison.moved) };
          },
          live,
        )
      ).value;
      const shown = rows.filter((r) =>
        query.only === "flipped"
          ? r.flipped
          : query.only === "changed"
            ? r.change !== "same"
            : true,
      );
      const after = cursor ? shown.filter((r) => r.task > (cursor[0] as number)) : shown;
      const warnings: string[] = [];
      const environments = environmentsDiffer(a.run, b.run);
      if (environments !== undefined) warnings.push(environments);
      if (comparison.sharedTasks.length === 0) {
        warnings.push("the runs share no task with a finished episode: nothing to compare");
      }
      const body: CompareResponse = {
        a: { run: header(a.run), metrics: comparison.a },
        b: { run: header(b.run), metrics: comparison.b },
        metrics: comparison.metrics,
        sharedTasks: comparison.sharedTasks.length,
        onlyA: comparison.onlyA,
        onlyB: comparison.onlyB,
        flipped: comparison.moved.filter((m) => m.flipped).length,
        changed: comparison.moved.length,
        warnings,
        definitions: FLIP_DEFINITIONS,
        ...page(after.slice(0, query.limit + 1), query.limit, (r) => [r.task]),
      };
      return c.json(body);
    });
}

/** Outcome filters the run page offers; each is bundled. */
const BUNDLED_FILTERS: readonly (EpisodeFilter | undefined)[] = [undefined, ...EPISODE_FILTERS];
/** With at most this many chosen runs, every ordered pair's comparison is bundled too. */
const BUNDLED_COMPARE_RUNS = 4;

/** The addresses the runs pages ask for about the chosen evaluation runs. */
function bundle(db: SqliteDatabase, chosen: Chosen): string[] {
  const ids = (
    db.prepare("SELECT id FROM runs ORDER BY created_at, id").pluck().all() as string[]
  ).filter((id) => chosen === "all" || chosen.has(id));
  if (ids.length === 0) return [];
  const addresses = [apiPath("/runs")];
  for (const id of ids) {
    const base = `/runs/${encodeURIComponent(id)}`;
    addresses.push(apiPath(base), apiPath(`${base}/metrics`), apiPath(`${base}/tasks`));
    for (const outcome of BUNDLED_FILTERS) addresses.push(apiPath(`${base}/episodes`, { outcome }));
  }
  if (ids.length <= BUNDLED_COMPARE_RUNS) {
    for (const a of ids) {
      for (const b of ids) {
        if (a === b) continue;
        for (const only of [undefined, "flipped"])
          addresses.push(apiPath("/compare", { a, b, only }));
      }
    }
  }
  return addresses;
}

export const runsApi: ApiModule = { routes, bundle };
