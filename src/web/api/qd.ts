/**
 * The quality-diversity API: CycleQD runs (tables qd_runs and qd_generations, written by
 * `clade qd`), for the page that draws each archive as a heat map with a generation slider.
 *
 *   GET /qd?limit=&cursor=                  runs, newest first: genome kind, tasks, status, how far,
 *                                           coverage and QD-score at the last generation
 *   GET /qd/:id                             one run: configuration, the archives' geometry, the
 *                                           per-generation series and the generations a bundle holds
 *   GET /qd/:id/archives?generation=g       every archive after generation g (default: the last):
 *                                           its statistics and its elites as heat-map cells
 *   GET /qd/:id/elites/:elite?generation=g  one elite: its scores and bins on every task, how it
 *                                           was made, what each archive did with it, its genome
 *
 * The archives are not stored: they are rebuilt by replaying the generation records
 * (improve/qd/replay.ts, as `clade archive` does), and a record is written once, so a replay is
 * kept per (run, generation) in a small LRU: replaying is the cost, and a slider asks often.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { Hono } from "hono";
import { z } from "zod";
import {
  type AddResult,
  type ArchiveStats,
  heatMapElites,
  type ScoreRange,
  type TaskArchive,
} from "../../improve/qd/archive.js";
import { binEdges, binIndexInEdges } from "../../improve/qd/bins.js";
import type { CycleState, GenerationRecord, InitRecord } from "../../improve/qd/cycle.js";
import {
  type CycleRecord,
  parseCycleRecord,
  replayCycle,
  storedGeometrySchema,
} from "../../improve/qd/replay.js";
import type { SqliteDatabase } from "../../store/database.js";
import { type QdStatus, QdStore } from "../../store/qd-log.js";
import type { JsonValue } from "../../store/search-log.js";
import { apiPath } from "../api-path.js";
import { decodeCursor, page } from "../cursor.js";
import { FingerprintCache } from "../fingerprint-cache.js";
import type { ApiModule, Chosen } from "../server.js";
import type { StoreView } from "../store-view.js";
import { pageQuery, valid } from "../validate.js";

// ---------------------------------------------------------------------------------------------
// Response types (the page imports them with `import type`).

/** One CycleQD run in the list (and the head of its own page). */
export interface QdRunItem {
  id: string;
  /** The genome: "policy" (embedded policies), "agent-config" (LLM agent configurations). */
  kind: string | null;
  /** The task labels, in task order (archive k's quality is task k's score). */
  tasks: string[];
  /** paper or released. */
  variant: string | null;
  status: QdStatus;
  stopReason: string | null;
  /** Generations stored so far (generation 0, the experts, included). */
  generations: number;
  /** The last stored generation; null before generation 0 is stored. */
  lastGeneration: number | null;
  /** At the last generation: mean coverage over the archives, summed QD-score. */
  coverage: number | null;
  qdScore: number | null;
  /** Generations whose child errored (generation 0: some expert errored). */
  erroredGenerations: number;
  createdAt: string;
  updatedAt: string;
}

export interface QdListResponse {
  items: QdRunItem[];
  nextCursor: string | null;
}

/**
 * Where an archive's elites sit on its heat map: archive k's cell is the bins of the other
 * tasks' scores; rows are the first other task's bins (high at the top), columns the second's
 * (one column when K = 2). With K > 3 the map shows, per (row, column), the best elite over the
 * remaining tasks' bins (`folded`), as `clade archive` draws it.
 */
export interface QdArchiveGeometry {
  task: number;
  label: string;
  qualityRange: ScoreRange;
  rowTask: number;
  rowLabel: string;
  rowRange: ScoreRange;
  columnTask: number | null;
  columnLabel: string | null;
  columnRange: ScoreRange | null;
  folded: string[];
  /** Rows and columns of the map. */
  rows: number;
  columns: number;
}

export interface QdGeometry {
  tasks: string[];
  ranges: ScoreRange[];
  bins: number;
  archives: QdArchiveGeometry[];
}

/** The run's curves, one entry per stored generation, from the generation rows' columns. */
export interface QdSeries {
  generation: number[];
  /** The archive the parents came from (null for generation 0). */
  qualityTask: (number | null)[];
  coverage: number[];
  qdScore: number[];
  errored: boolean[];
}

export interface QdRunResponse {
  run: QdRunItem;
  config: Record<string, JsonValue>;
  /** Null when the stored configuration lacks tasks, ranges or bins (`configError` says so). */
  geometry: QdGeometry | null;
  configError: string | null;
  series: QdSeries;
  /**
   * The generations a static bundle holds archives for: every one up to 51, beyond that 50
   * evenly spaced ones and the last. A page in a bundle offers only these.
   */
  bundledGenerations: number[];
}

/** How an elite was made. */
export type QdOrigin =
  | { kind: "expert"; index: number }
  | { kind: "child"; qualityTask: number; parents: string[] };

/** One filled cell of a heat map: its elite. */
export interface QdCell {
  row: number;
  column: number;
  /** The archive's own cell: the bins of the other tasks' scores, in task order. */
  cell: number[];
  id: string;
  quality: number;
  /** Scores on every task, in task order, and each score's bin. */
  scores: number[];
  bins: number[];
  /** The generation that made it (0: an expert). */
  generation: number;
  origin: QdOrigin | null;
}

export interface QdArchiveView extends QdArchiveGeometry {
  stats: ArchiveStats;
  /** The filled cells, row by row (empty cells are absent). */
  cells: QdCell[];
}

export interface QdArchivesResponse {
  runId: string;
  generation: number;
  lastGeneration: number;
  archives: QdArchiveView[];
}

export interface QdEliteResponse {
  runId: string;
  /** The generation whose archives were looked in. */
  generation: number;
  id: string;
  /** Its generation of birth (0: an expert). */
  bornAt: number;
  origin: QdOrigin | null;
  /** Its score and that score's bin on every task. */
  scores: { task: number; label: string; score: number; bin: number }[];
  /** What each archive did when it was offered (new, improved or not_added, and by how much). */
  atBirth: ({ task: number; label: string } & AddResult)[];
  /** The archives it is the elite of at `generation`, with its cell there. */
  placements: { task: number; label: string; cell: number[]; quality: number }[];
  /**
   * The genome: its kind, and its file where `clade qd` keeps it by default (beside the store,
   * qd/<run>/elites/<id>.*; null when not there). An agent configuration's file is shown whole.
   */
  genome: { kind: string | null; file: string | null; bytes: number | null; config: JsonValue };
}

// ---------------------------------------------------------------------------------------------
// The run list and one run.

interface RunRowRaw {
  id: string;
  config: string;
  status: QdStatus;
  stop_reason: string | null;
  created_at: string;
  updated_at: string;
  generations: number;
  errored: number;
  last_generation: number | null;
  coverage: number | null;
  qd_score: number | null;
}

/** The run row with its generation count and last generation, by lookups on the primary key. */
const RUN_SELECT = `
  SELECT r.id, r.config, r.status, r.stop_reason, r.created_at, r.updated_at,
    (SELECT COUNT(*) FROM qd_generations g WHERE g.run_id = r.id) AS generations,
    (SELECT COALESCE(SUM(g.errored), 0) FROM qd_generations g WHERE g.run_id = r.id) AS errored,
    l.generation AS last_generation, l.coverage, l.qd_score
  FROM qd_runs r
  LEFT JOIN qd_generations l ON l.run_id = r.id
    AND l.generation = (SELECT MAX(generation) FROM qd_generations m WHERE m.run_id = r.id)`;

const text = (value: JsonValue | undefined): string | null =>
  typeof value === "string" ? value : null;

function runItem(row: RunRowRaw): { item: QdRunItem; config: Record<string, JsonValue> } {
  const config = JSON.parse(row.config) as Record<string, JsonValue>;
  const tasks = Array.isArray(config.tasks)
    ? config.tasks.map((t, k) =>
        t !== null && typeof t === "object" && !Array.isArray(t) && typeof t.label === "string"
          ? t.label
          : String(k),
      )
    : [];
  return {
    config,
    item: {
      id: row.id,
      kind: text(config.kind),
      tasks,
      variant: text(config.variant),
      status: row.status,
      stopReason: row.stop_reason,
      generations: row.generations,
      lastGeneration: row.last_generation,
      coverage: row.coverage,
      qdScore: row.qd_score,
      erroredGenerations: row.errored,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    },
  };
}

function readRun(db: SqliteDatabase, id: string) {
  const row = db.prepare(`${RUN_SELECT} WHERE r.id = ?`).get(id) as RunRowRaw | undefined;
  return row && runItem(row);
}

/** Newest first; the cursor is the last row's (created_at, id). */
function listRuns(db: SqliteDatabase, limit: number, after: readonly unknown[] | undefined) {
  const where = after ? "WHERE (r.created_at, r.id) < (?, ?)" : "";
  const rows = db
    .prepare(`${RUN_SELECT} ${where} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`)
    .all(...(after ?? []), limit + 1) as RunRowRaw[];
  return page(
    rows.map((row) => runItem(row).item),
    limit,
    (item) => [item.createdAt, item.id],
  );
}

function geometryOf(config: Record<string, JsonValue>): {
  geometry: QdGeometry | null;
  error: string | null;
} {
  const parsed = storedGeometrySchema.safeParse(config);
  if (!parsed.success || parsed.data.ranges.length !== parsed.data.tasks.length) {
    return {
      geometry: null,
      error: "the stored configuration has no tasks, ranges and bins that clade can read",
    };
  }
  const { ranges, bins } = parsed.data;
  const tasks = parsed.data.tasks.map((t) => t.label);
  const archives = tasks.map((label, k): QdArchiveGeometry => {
    const others = tasks.map((_, i) => i).filter((i) => i !== k);
    const rowTask = others[0] as number;
    const columnTask = others[1] ?? null;
    return {
      task: k,
      label,
      qualityRange: ranges[k] as ScoreRange,
      rowTask,
      rowLabel: tasks[rowTask] as string,
      rowRange: ranges[rowTask] as ScoreRange,
      columnTask,
      columnLabel: columnTask === null ? null : (tasks[columnTask] as string),
      columnRange: columnTask === null ? null : (ranges[columnTask] as ScoreRange),
      folded: others.slice(2).map((i) => tasks[i] as string),
      rows: bins,
      columns: columnTask === null ? 1 : bins,
    };
  });
  return { geometry: { tasks, ranges, bins, archives }, error: null };
}

/** The most generations a bundle holds archives for, besides the last. */
export const BUNDLED_GENERATIONS = 50;

/** Generations 0..last, or 50 evenly spaced ones and the last when there are more. */
export function bundledGenerations(last: number): number[] {
  if (last < 0) return [];
  if (last <= BUNDLED_GENERATIONS) return Array.from({ length: last + 1 }, (_, g) => g);
  const picked = new Set<number>();
  for (let i = 0; i <= BUNDLED_GENERATIONS; i++) {
    picked.add(Math.round((i * last) / BUNDLED_GENERATIONS));
  }
  return [...picked].sort((a, b) => a - b);
}

function seriesOf(db: SqliteDatabase, id: string): QdSeries {
  const rows = db
    .prepare(
      `SELECT generation, quality_task, coverage, qd_score, errored
       FROM qd_generations WHERE run_id = ? ORDER BY generation`,
    )
    .all(id) as {
    generation: number;
    quality_task: number | null;
    coverage: number;
    qd_score: number;
    errored: number;
  }[];
  return {
    generation: rows.map((r) => r.generation),
    qualityTask: rows.map((r) => r.quality_task),
    coverage: rows.map((r) => r.coverage),
    qdScore: rows.map((r) => r.qd_score),
    errored: rows.map((r) => r.errored === 1),
  };
}

/** Every task's bin of a score vector, by the archives' own rule (bins.ts). */
function binner(geometry: QdGeometry): (scores: readonly number[]) => number[] {
  const edges = geometry.ranges.map((range) => binEdges({ ...range, bins: geometry.bins }));
  return (scores) => scores.map((score, k) => binIndexInEdges(score, edges[k] as number[]));
}

// ---------------------------------------------------------------------------------------------
// Archives at a generation: the replay, kept in a small LRU.

interface Replayed {
  state: CycleState;
  /** Records 0..generation, indexed by generation. */
  records: CycleRecord[];
}

/** A replay of up to a few thousand records costs milliseconds to tens; 16 cover a slider's drag. */
const REPLAYS_KEPT = 16;

/** The archive's own rule for who made an elite, from its generation's record. */
function originOf(
  records: readonly CycleRecord[],
  generation: number,
  id: string,
): { origin: QdOrigin | null; results: readonly AddResult[] | null } {
  const record = records[generation];
  if (record === undefined) return { origin: null, results: null };
  if (record.generation === 0) {
    const experts = (record as InitRecord).experts;
    const index = experts.findIndex((e) => e.id === id);
    return {
      origin: index < 0 ? null : { kind: "expert", index },
      results: experts[index]?.results ?? null,
    };
  }
  const { child, parents, qualityTask } = record as GenerationRecord;
  if (child.id !== id) return { origin: null, results: null };
  return {
    origin: { kind: "child", qualityTask, parents: [...parents] },
    results: child.results,
  };
}

/** Archive k's elites as heat-map cells: per (row, column) the best over folded tasks' bins. */
function archiveCells(
  archive: TaskArchive,
  records: readonly CycleRecord[],
  binsOf: (scores: readonly number[]) => number[],
): QdCell[] {
  return [...heatMapElites(archive).values()]
    .map(
      (elite): QdCell => ({
        row: elite.cell[0] as number,
        column: elite.cell[1] ?? 0,
        cell: [...elite.cell],
        id: elite.id,
        quality: elite.quality,
        scores: [...elite.scores],
        bins: binsOf(elite.scores),
        generation: elite.generation,
        origin: originOf(records, elite.generation, elite.id).origin,
      }),
    )
    .sort((a, b) => a.row - b.row || a.column - b.column);
}

/** Where an agent configuration's or a policy's file is kept by `clade qd` without --dir. */
const GENOME_FILES = [".json", ".safetensors"];
const SAFE_ID = /^[A-Za-z0-9_-]+$/;
/** An agent configuration bigger than this is not shown inline. */
const MAX_SHOWN_CONFIG = 256 * 1024;

function genomeOf(storePath: string, runId: string, kind: string | null, id: string) {
  const none = { kind, file: null, bytes: null, config: null };
  if (!SAFE_ID.test(id) || !SAFE_ID.test(runId)) return none;
  for (const extension of GENOME_FILES) {
    const file = join(dirname(storePath), "qd", runId, "elites", `${id}${extension}`);
    if (!existsSync(file)) continue;
    const bytes = statSync(file).size;
    let config: JsonValue = null;
    if (extension === ".json" && bytes <= MAX_SHOWN_CONFIG) {
      try {
        config = JSON.parse(readFileSync(file, "utf8")) as JsonValue;
      } catch {
        config = null;
      }
    }
    return { kind, file, bytes, config };
  }
  return none;
}

// ---------------------------------------------------------------------------------------------
// Routes.

const runParam = z.object({ id: z.string().min(1) });
const eliteParam = z.object({ id: z.string().min(1), elite: z.string().min(1) });
const generationQuery = z.object({ generation: z.coerce.number().int().min(0).optional() });

type Failure = { error: string; status: 404 | 409 };

function routes(view: StoreView): Hono {
  const replays = new FingerprintCache<Replayed>(REPLAYS_KEPT);

  /** The run's configuration and the replayed state at generation g (the last by default). */
  function replayAt(
    id: string,
    wanted: number | undefined,
  ): Failure | { item: QdRunItem; geometry: QdGeometry; generation: number; replayed: Replayed } {
    const db = view.db;
    const run = db && readRun(db, id);
    if (db === undefined || run === undefined) {
      return { error: `no CycleQD run "${id}"`, status: 404 };
    }
    const { geometry, error } = geometryOf(run.config);
    if (geometry === null) return { error: `CycleQD run "${id}": ${error}`, status: 409 };
    const last = run.item.lastGeneration;
    if (last === null) return { error: `CycleQD run "${id}" has no generation yet`, status: 404 };
    const generation = wanted ?? last;
    if (generation > last) {
      return { error: `CycleQD run "${id}" has generations 0-${last}`, status: 404 };
    }
    try {
      // A generation's record is written once, so (run, creation, generation) names one state:
      // the key alone says whether a replay is still good (no fingerprint).
      const key = JSON.stringify([id, run.item.createdAt, generation]);
      const replayed = replays.get(key, "", () => {
        const records = new QdStore(db)
          .generations(id, generation)
          .map((row) => parseCycleRecord(row.record, row.generation));
        const { ranges, bins } = geometry;
        return { state: replayCycle({ ranges, bins }, records), records };
      }).value;
      return { item: run.item, geometry, generation, replayed };
    } catch (failure) {
      return { error: `CycleQD run "${id}": ${(failure as Error).message}`, status: 409 };
    }
  }

  return new Hono()
    .get("/qd", valid("query", pageQuery), (c) => {
      const { limit, cursor } = c.req.valid("query");
      const after = cursor === undefined ? undefined : decodeCursor(cursor, 2);
      if (cursor !== undefined && after === undefined) {
        return c.json({ error: "query.cursor: not a cursor this server gave" }, 400);
      }
      const db = view.db;
      const body: QdListResponse = db
        ? listRuns(db, limit, after)
        : { items: [], nextCursor: null };
      return c.json(body);
    })
    .get("/qd/:id", valid("param", runParam), (c) => {
      const { id } = c.req.valid("param");
      const db = view.db;
      const run = db && readRun(db, id);
      if (db === undefined || run === undefined) {
        return c.json({ error: `no CycleQD run "${id}"` }, 404);
      }
      const { geometry, error } = geometryOf(run.config);
      const body: QdRunResponse = {
        run: run.item,
        config: run.config,
        geometry,
        configError: error,
        series: seriesOf(db, id),
        bundledGenerations: bundledGenerations(run.item.lastGeneration ?? -1),
      };
      return c.json(body);
    })
    .get("/qd/:id/archives", valid("param", runParam), valid("query", generationQuery), (c) => {
      const { id } = c.req.valid("param");
      const at = replayAt(id, c.req.valid("query").generation);
      if ("error" in at) return c.json({ error: at.error }, at.status);
      const { geometry, replayed } = at;
      const binsOf = binner(geometry);
      const body: QdArchivesResponse = {
        runId: id,
        generation: at.generation,
        lastGeneration: at.item.lastGeneration as number,
        archives: replayed.state.archives.archives.map((archive) => ({
          ...(geometry.archives[archive.task] as QdArchiveGeometry),
          stats: archive.stats(),
          cells: archiveCells(archive, replayed.records, binsOf),
        })),
      };
      return c.json(body);
    })
    .get(
      "/qd/:id/elites/:elite",
      valid("param", eliteParam),
      valid("query", generationQuery),
      (c) => {
        const { id, elite: eliteId } = c.req.valid("param");
        const at = replayAt(id, c.req.valid("query").generation);
        if ("error" in at) return c.json({ error: at.error }, at.status);
        const { geometry, replayed, generation } = at;
        const held = replayed.state.archives.archives.flatMap((archive) => {
          const elite = archive.elites().find((e) => e.id === eliteId);
          return elite ? [{ archive, elite }] : [];
        });
        const first = held[0];
        if (first === undefined) {
          return c.json(
            {
              error: `no elite "${eliteId}" in run "${id}"'s archives at generation ${generation}`,
            },
            404,
          );
        }
        const { elite } = first;
        const { origin, results } = originOf(replayed.records, elite.generation, elite.id);
        const label = (k: number) => geometry.tasks[k] as string;
        const bins = binner(geometry)(elite.scores);
        const body: QdEliteResponse = {
          runId: id,
          generation,
          id: elite.id,
          bornAt: elite.generation,
          origin,
          scores: elite.scores.map((score, k) => ({
            task: k,
            label: label(k),
            score,
            bin: bins[k] as number,
          })),
          atBirth: (results ?? []).map((result, k) => ({ task: k, label: label(k), ...result })),
          placements: held.map(({ archive, elite: e }) => ({
            task: archive.task,
            label: label(archive.task),
            cell: [...e.cell],
            quality: e.quality,
          })),
          genome: genomeOf(view.path, id, at.item.kind, elite.id),
        };
        return c.json(body);
      },
    );
}

/**
 * For every chosen CycleQD run: the list, its page, and its archives at each bundled generation
 * (bundledGenerations: at most 51). Elites' own addresses are not bundled: the page opens an
 * elite from its cell in the archives response, which carries its scores and origin.
 */
function bundle(db: SqliteDatabase, chosen: Chosen): string[] {
  const runs = db
    .prepare(
      "SELECT r.id, (SELECT MAX(generation) FROM qd_generations g WHERE g.run_id = r.id) AS last FROM qd_runs r ORDER BY r.id",
    )
    .all() as { id: string; last: number | null }[];
  const picked = chosen === "all" ? runs : runs.filter((run) => chosen.has(run.id));
  if (picked.length === 0) return [];
  return [
    apiPath("/qd"),
    ...picked.flatMap(({ id, last }) => {
      const base = `/qd/${encodeURIComponent(id)}`;
      return [
        apiPath(base),
        ...bundledGenerations(last ?? -1).map((generation) =>
          apiPath(`${base}/archives`, { generation }),
        ),
      ];
    }),
  ];
}

export const qdApi: ApiModule = { routes, bundle };
