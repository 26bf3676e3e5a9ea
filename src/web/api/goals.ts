/**
 * The goals API: goal-oriented evaluations of conversations (tables goal_runs,
 * goal_conversations, goal_judgements and goal_reviews, written by `clade goals`), and the
 * viewer's one write, a reviewer's label.
 *
 *   GET  /goals?limit=&cursor=                   evaluations, newest first, with their GSR
 *   GET  /goals/:id                              config, counts, the report (reviews applied)
 *   GET  /goals/:id/conversations?status=&...    the conversations, by position
 *   GET  /goals/:id/conversations/:position      one conversation segmented by goals, each turn
 *                                                with every judge's label side by side
 *   GET  /goals/:id/queue?all=&limit=&cursor=    the fields left to a reviewer (clade review --json)
 *   POST /goals/:id/reviews                      a reviewer's label → the GSR before and after
 *
 * Everything is computed by the functions `clade goals report` and `clade review` use
 * (buildGoalReport, applyReviews, openItems, segmentGoals, checkReviewValue), so the page and
 * the terminal agree. A report is cached per evaluation until its rows change: the page asks
 * again on every change in the store, and a report's bootstrap is the costly part.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import { LABEL_FIELDS, type LabelField, type ReviewItem } from "../../eval/goals/agreement.js";
import {
  type ConversationSource,
  type ConversationTurn,
  conversationSchema,
} from "../../eval/goals/conversation.js";
import type { TurnLabel, TurnLabelFields } from "../../eval/goals/labels.js";
import type { Rate } from "../../eval/goals/metrics.js";
import {
  buildGoalReport,
  type GoalReport,
  groundTruthTurns,
  readRunConfig,
} from "../../eval/goals/report.js";
import {
  applyReviews,
  checkReviewValue,
  fieldValue,
  openItems,
  ReviewValueError,
  reviewsByPosition,
  type TurnReview,
} from "../../eval/goals/review.js";
import {
  type QueueItem as QueuedItem,
  queuedTurnsOf,
  queueItems,
} from "../../eval/goals/review-queue.js";
import { segmentGoals } from "../../eval/goals/segment.js";
import type { Taxonomy } from "../../eval/goals/taxonomy.js";
import type { SqliteDatabase } from "../../store/database.js";
import {
  type ConversationStatus,
  type GoalRunCounts,
  type GoalRunRow,
  type GoalRunStatus,
  GoalStore,
  type StoredConversation,
  type StoredJudgement,
  type StoredReview,
} from "../../store/goal-log.js";
import type { JsonValue } from "../../store/search-log.js";
import { apiPath } from "../api-path.js";
import { type CursorKey, decodeCursor, page } from "../cursor.js";
import { FingerprintCache } from "../fingerprint-cache.js";
import type { ApiModule, Chosen } from "../server.js";
import type { StoreView } from "../store-view.js";
import { pageQuery, valid } from "../validate.js";

/**
 * A value as it arrives in JSON: an undefined figure (NaN: no goals, κ over one class) is sent
 * as null, which is what JSON.stringify makes of it.
 */
export type AsJson<T> = T extends number
  ? number | null
  : T extends readonly (infer U)[]
    ? AsJson<U>[]
    : T extends object
      ? { [K in keyof T]: AsJson<T[K]> }
      : T;

/** A rate in percent with its 95 % bootstrap interval (null figures: nothing to count). */
export type GsrFigure = AsJson<Rate>;

/** Which labels a figure comes from: the judges' vote (reviews applied), or the data's own. */
export type LabelBasis = "judges" | "ground truth";

/** One goal evaluation in the list. */
export interface GoalRunItem {
  id: string;
  status: GoalRunStatus;
  stopReason: string | null;
  /** The judges' model specs, in order (empty: ground truth only). */
  judges: string[];
  taxonomy: string | null;
  counts: GoalRunCounts;
  /** GSR of the judges' labels with reviews applied, else of the ground truth; null: neither. */
  gsr: GsrFigure | null;
  basis: LabelBasis | null;
  /** Queued fields no reviewer has settled yet. */
  openReview: number;
  createdAt: string;
  updatedAt: string;
}

export interface GoalListResponse {
  items: GoalRunItem[];
  nextCursor: string | null;
}

/** A taxonomy code, for the review form and the cause tables. */
export interface CauseCode {
  code: string;
  name: string;
  definition: string;
}

export interface GoalRunResponse {
  run: GoalRunItem;
  config: Record<string, JsonValue>;
  codes: CauseCode[];
  /** `clade goals report --json`'s report, with the reviewers' labels applied. */
  report: AsJson<GoalReport>;
}

export interface ConversationItem {
  position: number;
  conversationId: string;
  source: ConversationSource | null;
  turns: number;
  /** Goals and successful goals of its labels in force (vote with reviews, or ground truth). */
  goals: number | null;
  succeeded: number | null;
  status: ConversationStatus;
  error: string | null;
  /** Fields queued for review, and of them those no reviewer has settled. */
  queued: number;
  open: number;
}

export interface ConversationListResponse {
  items: ConversationItem[];
  nextCursor: string | null;
}

/** One judge of the evaluation, and what it did with this conversation. */
export interface JudgeColumn {
  judge: number;
  model: string;
  /** labelled or errored; null: not asked yet. */
  status: "labelled" | "errored" | null;
  error: string | null;
  reasoning: string | null;
  answers: number | null;
}

/** A queued field of a turn: why the vote could not settle it, and whether a reviewer has. */
export interface QueuedField extends ReviewItem {
  open: boolean;
}

export interface TurnView {
  turn: ConversationTurn;
  /** Each judge's label of this turn, by judge (null: no label from that judge). */
  judges: (TurnLabel | null)[];
  /** The fields on which the judges' labels differ. */
  disagreements: LabelField[];
  /** The ensemble's vote as cast; null before the verdict. */
  vote: TurnLabel | null;
  /** The label in force: the vote with the reviews applied (or the ground truth). */
  label: TurnLabelFields | null;
  /** The data's own label of the turn, when it came with one. */
  truth: TurnLabelFields | null;
  queued: QueuedField[];
  /** Every review of the turn, oldest first (the latest per field is in force). */
  reviews: TurnReview[];
}

export interface GoalView {
  goalNumber: number;
  firstTurn: number;
  lastTurn: number;
  /** null when the turns carry no labels yet. */
  success: boolean | null;
  multiTurn: boolean;
  firstFailedTurn: number | null;
  rootCause: string | null;
  turns: TurnView[];
}

export interface ConversationResponse {
  runId: string;
  position: number;
  conversationId: string;
  status: ConversationStatus;
  error: string | null;
  judgedAt: string | null;
  source: ConversationSource | null;
  system: string | null;
  opening: string | null;
  closing: string | null;
  judges: JudgeColumn[];
  codes: CauseCode[];
  /** What the goals are cut by; null: no labels yet (one unlabelled group). */
  segmentedBy: LabelBasis | null;
  goals: GoalView[];
  /** The neighbours' positions, for paging through. */
  previous: number | null;
  next: number | null;
}

/** One field left to a reviewer: `clade review --json`'s item. */
export interface QueueItem extends QueuedItem {
  /** The fields of the turn that the judges' labels differ on (the viewer's addition). */
  disagreements: LabelField[];
}

export interface QueueResponse {
  schema: "clade.review-queue/1";
  runId: string;
  /** Every queued field (reviewed ones included) or only the open ones. */
  all: boolean;
  codes: CauseCode[];
  items: QueueItem[];
  nextCursor: string | null;
}

/** POST /goals/:id/reviews: what was stored, and the figures it moved. */
export interface ReviewResponse {
  review: StoredReview;
  gsr: { before: GsrFigure | null; after: GsrFigure | null };
  multiTurnGsr: { before: GsrFigure | null; after: GsrFigure | null };
  /** The queue's counts after it: queued, open, reviewed. */
  queue: GoalReport["review"];
}

const STATUSES = ["pending", "judged", "errored"] as const;

const runParam = z.object({ id: z.string().min(1) });
const conversationParam = runParam.extend({ position: z.coerce.number().int().min(0) });
const conversationsQuery = pageQuery.extend({
  status: z.enum([...STATUSES, "queued", "open"]).optional(),
});
const queueQuery = pageQuery.extend({ all: z.enum(["true", "false"]).optional() });

/**
 * A review's body. The value's rules (its type per field, the taxonomy's codes, turn 1 always
 * starting a goal) are checkReviewValue's, as `clade review` applies them: one line each.
 */
export const reviewBody = z
  .object({
    position: z.number().int().min(0),
    turnNumber: z.number().int().min(1),
    field: z.enum(LABEL_FIELDS),
    value: z.union([z.boolean(), z.string(), z.null()], {
      error: "expected true, false, a string or null",
    }),
    reviewer: z.string().trim().min(1).max(100),
    note: z.string().trim().max(2000).optional(),
  })
  .strict();
export type ReviewBody = z.input<typeof reviewBody>;

const codesOf = (taxonomy: Taxonomy): CauseCode[] =>
  taxonomy.codes.map(({ code, name, definition }) => ({ code, name, definition }));

/** The fields of a turn that its judges' labels do not agree on (a success counts as no cause). */
function disagreementsOf(labels: readonly (TurnLabel | null)[]): LabelField[] {
  const given = labels.filter((l): l is TurnLabel => l !== null);
  if (given.length < 2) return [];
  return LABEL_FIELDS.filter((f) => new Set(given.map((l) => fieldValue(l, f))).size > 1);
}

const asLabels = (value: JsonValue | null) => (value ?? []) as unknown as TurnLabel[];
const asQueue = (value: JsonValue | null) => (value ?? []) as unknown as ReviewItem[];

/** Reports kept: a list page shows 50 evaluations at most by default. */
const REPORTS_KEPT = 200;

/**
 * An evaluation's report, rebuilt only when its rows changed: its status, verdicts and reviews
 * (one short query says whether they did).
 */
function reportOf(
  cache: FingerprintCache<GoalReport>,
  store: GoalStore,
  runId: string,
): GoalReport {
  const stamp = JSON.stringify(
    store.db
      .prepare(
        `SELECT r.updated_at,
           (SELECT json_array(COUNT(*), SUM(status = 'judged'), SUM(status = 'errored'),
              MAX(judged_at)) FROM goal_conversations c WHERE c.run_id = r.id),
           (SELECT MAX(id) FROM goal_reviews v WHERE v.run_id = r.id)
         FROM goal_runs r WHERE r.id = ?`,
      )
      .raw()
      .get(runId),
  );
  return cache.get(runId, stamp, () => buildGoalReport(store, runId)).value;
}

/** The figure a list shows for an evaluation: the judges' GSR, else the ground truth's. */
function headlineOf(report: GoalReport): { gsr: Rate | null; basis: LabelBasis | null } {
  if (report.judged) return { gsr: report.judged.gsr, basis: "judges" };
  if (report.groundTruth) return { gsr: report.groundTruth.gsr, basis: "ground truth" };
  return { gsr: null, basis: null };
}

/** An evaluation as the list shows it, from its row and its report. */
function runItem(run: GoalRunRow, report: GoalReport): GoalRunItem {
  const { gsr, basis } = headlineOf(report);
  return {
    id: run.id,
    status: run.status,
    stopReason: run.stopReason,
    judges: report.judges,
    taxonomy: report.taxonomy,
    counts: report.counts,
    gsr: gsr as GsrFigure | null,
    basis,
    openReview: report.review.open,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
  };
}

/** Newest first; the cursor is the last row's (created_at, id). */
function listRuns(
  store: GoalStore,
  cache: FingerprintCache<GoalReport>,
  limit: number,
  after: CursorKey | undefined,
): GoalListResponse {
  const where = after ? "WHERE (created_at, id) < (?, ?)" : "";
  const rows = store.db
    .prepare(
      `SELECT id, created_at FROM goal_runs ${where} ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .all(...(after ?? []), limit + 1) as { id: string; created_at: string }[];
  const { items, nextCursor } = page(rows, limit, (row) => [row.created_at, row.id]);
  return {
    items: items.flatMap((row) => {
      const run = store.getRun(row.id);
      return run ? [runItem(run, reportOf(cache, store, row.id))] : [];
    }),
    nextCursor,
  };
}

/** A judged conversation's vote with the reviews applied; undefined before its verdict. */
function judgedLabels(
  status: ConversationStatus,
  labels: JsonValue | null,
  reviews: readonly TurnReview[],
): TurnLabelFields[] | undefined {
  return status === "judged" ? applyReviews(asLabels(labels), reviews) : undefined;
}

/** The labels that came with a stored conversation, if any. */
function truthLabels(conversation: JsonValue): TurnLabelFields[] | undefined {
  const parsed = conversationSchema.safeParse(conversation);
  return parsed.success ? groundTruthTurns(parsed.data) : undefined;
}

/**
 * The labels in force of a conversation, as the report counts them: with judges, the vote with
 * the reviews applied (none before the verdict); without, the data's own.
 */
function labelsInForce(
  row: StoredConversation,
  hasJudges: boolean,
  reviews: readonly TurnReview[],
): { labels: TurnLabelFields[]; basis: LabelBasis } | undefined {
  const labels = hasJudges
    ? judgedLabels(row.status, row.labels, reviews)
    : truthLabels(row.conversation);
  return labels && { labels, basis: hasJudges ? "judges" : "ground truth" };
}

interface ConversationRowRaw {
  position: number;
  conversation_id: string;
  source: string | null;
  turns: number | null;
  status: ConversationStatus;
  labels: string | null;
  queue: string | null;
  error: string | null;
}

function listConversations(
  store: GoalStore,
  run: GoalRunRow,
  status: z.infer<typeof conversationsQuery>["status"],
  limit: number,
  after: CursorKey | undefined,
): ConversationListResponse {
  const runId = run.id;
  const { judges } = readRunConfig(run.config, runId);
  const reviewsBy = reviewsByPosition(store.reviews(runId));
  const filter =
    status === undefined
      ? ""
      : status === "queued" || status === "open"
        ? " AND status = 'judged' AND json_array_length(queue) > 0"
        : " AND status = ?";
  const rows = store.db
    .prepare(
      `SELECT position, conversation_id, json_extract(conversation, '$.source') AS source,
         json_array_length(conversation, '$.turns') AS turns, status, labels, queue, error
       FROM goal_conversations
       WHERE run_id = ?${filter}${after ? " AND position > ?" : ""}
       ORDER BY position LIMIT ?`,
    )
    .all(
      runId,
      ...(status && (STATUSES as readonly string[]).includes(status) ? [status] : []),
      ...(after ?? []),
      // "open" drops rows whose queue is all reviewed: read on until the page is full.
      status === "open" ? -1 : limit + 1,
    ) as ConversationRowRaw[];
  const items: ConversationItem[] = [];
  for (const row of rows) {
    const reviews = reviewsBy.get(row.position) ?? [];
    const queue = row.queue === null ? [] : (JSON.parse(row.queue) as ReviewItem[]);
    const open = openItems(queue, reviews).length;
    if (status === "open" && open === 0) continue;
    // Ground truth lives in the conversation's JSON: read it only without judges.
    const labels =
      judges.length > 0
        ? judgedLabels(row.status, row.labels === null ? null : JSON.parse(row.labels), reviews)
        : truthLabels(store.conversation(runId, row.position)?.conversation ?? null);
    const goals = labels ? segmentGoals(labels) : undefined;
    items.push({
      position: row.position,
      conversationId: row.conversation_id,
      source: row.source === null ? null : (JSON.parse(row.source) as ConversationSource),
      turns: row.turns ?? 0,
      goals: goals?.length ?? null,
      succeeded: goals ? goals.filter((g) => g.success).length : null,
      status: row.status,
      error: row.error,
      queued: queue.length,
      open,
    });
    if (items.length > limit) break;
  }
  return page(items, limit, (item) => [item.position]);
}

function judgeColumns(
  judges: readonly string[],
  stored: readonly StoredJudgement[],
): JudgeColumn[] {
  return judges.map((model, judge) => {
    const j = stored.find((s) => s.judge === judge);
    return {
      judge,
      model: j?.model ?? model,
      status: j?.status ?? null,
      error: j?.error ?? null,
      reasoning: j?.reasoning ?? null,
      answers: j?.answers ?? null,
    };
  });
}

function conversationView(
  store: GoalStore,
  run: GoalRunRow,
  position: number,
): ConversationResponse | undefined {
  const runId = run.id;
  const row = store.conversation(runId, position);
  if (!row) return undefined;
  const { judges, taxonomy } = readRunConfig(run.config, runId);
  const parsed = conversationSchema.safeParse(row.conversation);
  const conversation = parsed.success ? parsed.data : undefined;
  const turns: ConversationTurn[] = conversation?.turns ?? [];
  const stored = store.judgements(runId, position);
  const columns = judgeColumns(judges, stored);
  const judgeLabels = columns.map((c) => {
    const j = stored.find((s) => s.judge === c.judge);
    return j?.status === "labelled" ? asLabels(j.labels) : undefined;
  });
  const reviews = reviewsByPosition(store.reviews(runId)).get(position) ?? [];
  const truth = conversation ? groundTruthTurns(conversation) : undefined;
  const vote = row.status === "judged" ? asLabels(row.labels) : undefined;
  const queue = row.status === "judged" ? asQueue(row.queue) : [];
  const open = new Set(openItems(queue, reviews).map((i) => `${i.turn_number}:${i.field}`));
  const inForce = labelsInForce(row, judges.length > 0, reviews);

  const turnView = (turn: ConversationTurn, i: number): TurnView => {
    const labels = judgeLabels.map((l) => l?.[i] ?? null);
    return {
      turn,
      judges: labels,
      disagreements: disagreementsOf(labels),
      vote: vote?.[i] ?? null,
      label: inForce?.labels[i] ?? null,
      truth: truth?.[i] ?? null,
      queued: queue
        .filter((q) => q.turn_number === turn.turn_number)
        .map((q) => ({ ...q, open: open.has(`${q.turn_number}:${q.field}`) })),
      reviews: reviews.filter((r) => r.turn_number === turn.turn_number),
    };
  };
  const views = turns.map(turnView);
  const goals: GoalView[] =
    inForce && inForce.labels.length === turns.length
      ? segmentGoals(inForce.labels).map((goal) => ({
          goalNumber: goal.goalNumber,
          firstTurn: goal.firstTurn,
          lastTurn: goal.lastTurn,
          success: goal.success,
          multiTurn: goal.multiTurn,
          firstFailedTurn: goal.firstFailedTurn,
          rootCause: goal.rootCause,
          turns: views.slice(goal.firstTurn - 1, goal.lastTurn),
        }))
      : [
          {
            goalNumber: 1,
            firstTurn: 1,
            lastTurn: turns.length,
            success: null,
            multiTurn: turns.length > 1,
            firstFailedTurn: null,
            rootCause: null,
            turns: views,
          },
        ];
  const neighbour = (sql: string) =>
    (store.db.prepare(sql).pluck().get(runId, position) as number | undefined) ?? null;
  return {
    runId,
    position,
    conversationId: row.conversationId,
    status: row.status,
    error: row.error,
    judgedAt: row.judgedAt,
    source: conversation?.source ?? null,
    system: conversation?.system ?? null,
    opening: conversation?.opening ?? null,
    closing: conversation?.closing ?? null,
    judges: columns,
    codes: codesOf(taxonomy),
    segmentedBy: inForce && goals[0]?.success !== null ? inForce.basis : null,
    goals,
    previous: neighbour(
      "SELECT MAX(position) FROM goal_conversations WHERE run_id = ? AND position < ?",
    ),
    next: neighbour(
      "SELECT MIN(position) FROM goal_conversations WHERE run_id = ? AND position > ?",
    ),
  };
}

/**
 * The review queue as `clade review --json` exports it: per queued turn, in conversation
 * order, its open fields (every queued field with `all`), the turn, the vote and each judge's
 * label. Paged by (position, turn, field); conversations are read a batch at a time.
 */
function queueOf(
  store: GoalStore,
  run: GoalRunRow,
  all: boolean,
  limit: number,
  after: CursorKey | undefined,
): QueueResponse {
  const runId = run.id;
  const { judges, taxonomy } = readRunConfig(run.config, runId);
  const reviewsBy = reviewsByPosition(store.reviews(runId));
  const key = (item: QueueItem): CursorKey => [
    item.position,
    item.turn_number,
    LABEL_FIELDS.indexOf(item.field),
  ];
  const isAfter = (item: QueueItem) => {
    if (!after) return true;
    const mine = key(item);
    for (let i = 0; i < mine.length; i++) {
      const diff = Number(mine[i]) - Number(after[i]);
      if (diff !== 0) return diff > 0;
    }
    return false;
  };
  const items: QueueItem[] = [];
  const batch = store.db.prepare(
    `SELECT position FROM goal_conversations
     WHERE run_id = ? AND status = 'judged' AND json_array_length(queue) > 0 AND position >= ?
     ORDER BY position LIMIT 100`,
  );
  let from = after ? Number(after[0]) : 0;
  while (items.length <= limit && judges.length > 0) {
    const positions = batch.pluck().all(runId, from) as number[];
    if (positions.length === 0) break;
    for (const position of positions) {
      const row = store.conversation(runId, position) as StoredConversation;
      const turns = queuedTurnsOf(store, runId, row, reviewsBy.get(position) ?? [], all);
      for (const item of queueItems(turns)) {
        const entry: QueueItem = {
          ...item,
          disagreements: disagreementsOf(item.judges.map((j) => j.label)),
        };
        if (isAfter(entry)) items.push(entry);
      }
      if (items.length > limit) break;
    }
    from = (positions.at(-1) as number) + 1;
  }
  const paged = page(items, limit, key);
  return {
    schema: "clade.review-queue/1",
    runId,
    all,
    codes: codesOf(taxonomy),
    items: paged.items,
    nextCursor: paged.nextCursor,
  };
}

/**
 * A body that is not JSON gets 400 and one line here: hono's own error for it would reach the
 * server's catch-all as a 500. Hono keeps the parsed body, so the validator reads it again free.
 */
const jsonBody: MiddlewareHandler = async (c, next) => {
  try {
    await c.req.json();
  } catch {
    return c.json({ error: "json: the body is not JSON" }, 400);
  }
  await next();
};

const notFound = (id: string) => ({ error: `no goal evaluation "${id}"` });
const badCursor = { error: "query.cursor: not a cursor this server gave" };

function routes(view: StoreView): Hono {
  const cache = new FingerprintCache<GoalReport>(REPORTS_KEPT);
  // One GoalStore per connection: it prepares each statement once.
  const stores = new WeakMap<SqliteDatabase, GoalStore>();
  /** The store's goal tables, or undefined while there is no store. */
  const goalStore = (): GoalStore | undefined => {
    const db = view.db;
    if (db === undefined) return undefined;
    let store = stores.get(db);
    if (!store) {
      store = new GoalStore(db);
      stores.set(db, store);
    }
    return store;
  };

  return new Hono()
    .get("/goals", valid("query", pageQuery), (c) => {
      const { limit, cursor } = c.req.valid("query");
      const after = cursor === undefined ? undefined : decodeCursor(cursor, 2);
      if (cursor !== undefined && after === undefined) return c.json(badCursor, 400);
      const store = goalStore();
      const body: GoalListResponse = store
        ? listRuns(store, cache, limit, after)
        : { items: [], nextCursor: null };
      return c.json(body);
    })
    .get("/goals/:id", valid("param", runParam), (c) => {
      const { id } = c.req.valid("param");
      const store = goalStore();
      const run = store?.getRun(id);
      if (!store || !run) return c.json(notFound(id), 404);
      const report = reportOf(cache, store, id);
      const body: GoalRunResponse = {
        run: runItem(run, report),
        config: run.config,
        codes: codesOf(readRunConfig(run.config, id).taxonomy),
        report: report as AsJson<GoalReport>,
      };
      return c.json(body);
    })
    .get(
      "/goals/:id/conversations",
      valid("param", runParam),
      valid("query", conversationsQuery),
      (c) => {
        const { id } = c.req.valid("param");
        const { limit, cursor, status } = c.req.valid("query");
        const after = cursor === undefined ? undefined : decodeCursor(cursor, 1);
        if (cursor !== undefined && after === undefined) return c.json(badCursor, 400);
        const store = goalStore();
        const run = store?.getRun(id);
        if (!store || !run) return c.json(notFound(id), 404);
        const body: ConversationListResponse = listConversations(store, run, status, limit, after);
        return c.json(body);
      },
    )
    .get("/goals/:id/conversations/:position", valid("param", conversationParam), (c) => {
      const { id, position } = c.req.valid("param");
      const store = goalStore();
      const run = store?.getRun(id);
      if (!store || !run) return c.json(notFound(id), 404);
      const body = conversationView(store, run, position);
      if (!body) {
        return c.json({ error: `goal evaluation "${id}" has no conversation ${position}` }, 404);
      }
      return c.json(body satisfies ConversationResponse);
    })
    .get("/goals/:id/queue", valid("param", runParam), valid("query", queueQuery), (c) => {
      const { id } = c.req.valid("param");
      const { limit, cursor, all } = c.req.valid("query");
      const after = cursor === undefined ? undefined : decodeCursor(cursor, 3);
      if (
        cursor !== undefined &&
        (after === undefined || after.some((k) => typeof k !== "number"))
      ) {
        return c.json(badCursor, 400);
      }
      const store = goalStore();
      const run = store?.getRun(id);
      if (!store || !run) return c.json(notFound(id), 404);
      const body: QueueResponse = queueOf(store, run, all === "true", limit, after);
      return c.json(body);
    })
    .post(
      "/goals/:id/reviews",
      valid("param", runParam),
      jsonBody,
      valid("json", reviewBody),
      (c) => {
        const { id } = c.req.valid("param");
        const input = c.req.valid("json");
        const store = goalStore();
        const run = store?.getRun(id);
        if (!store || !run) return c.json(notFound(id), 404);
        const { judges, taxonomy } = readRunConfig(run.config, id);
        if (judges.length === 0) {
          return c.json({ error: `goal evaluation "${id}" has no judges: nothing to review` }, 400);
        }
        const row = store.conversation(id, input.position);
        if (!row) {
          return c.json(
            { error: `goal evaluation "${id}" has no conversation ${input.position}` },
            404,
          );
        }
        if (row.status !== "judged") {
          return c.json(
            {
              error: `conversation ${input.position} is ${row.status}: only judged turns are reviewed`,
            },
            400,
          );
        }
        const turns = asLabels(row.labels).length;
        if (input.turnNumber > turns) {
          return c.json(
            { error: `json.turnNumber: conversation ${input.position} has ${turns} turns` },
            400,
          );
        }
        let value: boolean | string | null;
        try {
          value = checkReviewValue(input.field, input.value, taxonomy, input.turnNumber);
        } catch (error) {
          if (error instanceof ReviewValueError)
            return c.json({ error: `json.value: ${error.message}` }, 400);
          throw error;
        }
        const before = reportOf(cache, store, id);
        const reviewId = view.write((db) =>
          (stores.get(db) ?? new GoalStore(db)).addReview(id, {
            position: input.position,
            turnNumber: input.turnNumber,
            field: input.field,
            value,
            reviewer: input.reviewer,
            ...(input.note ? { note: input.note } : {}),
          }),
        );
        const after = reportOf(cache, store, id);
        const review = store.reviews(id).find((r) => r.id === reviewId) as StoredReview;
        const figure = (rate: Rate | undefined) => (rate ?? null) as GsrFigure | null;
        const body: ReviewResponse = {
          review,
          gsr: { before: figure(before.judged?.gsr), after: figure(after.judged?.gsr) },
          multiTurnGsr: {
            before: figure(before.judged?.multiTurnGsr),
            after: figure(after.judged?.multiTurnGsr),
          },
          queue: after.review,
        };
        return c.json(body);
      },
    );
}

/**
 * For a static bundle: the list, and of every chosen evaluation its page, its conversation
 * lists (each filter's first page; the writer follows the cursors), every conversation, and
 * its queue (open and all).
 */
function bundle(db: SqliteDatabase, chosen: Chosen): string[] {
  const ids = db.prepare("SELECT id FROM goal_runs ORDER BY id").pluck().all() as string[];
  const picked = chosen === "all" ? ids : ids.filter((id) => chosen.has(id));
  if (picked.length === 0) return [];
  const positions = db.prepare(
    "SELECT position FROM goal_conversations WHERE run_id = ? ORDER BY position",
  );
  const addresses = [apiPath("/goals")];
  for (const id of picked) {
    const base = `/goals/${encodeURIComponent(id)}`;
    addresses.push(apiPath(base), apiPath(`${base}/conversations`));
    for (const status of [...STATUSES, "queued", "open"]) {
      addresses.push(apiPath(`${base}/conversations`, { status }));
    }
    for (const position of positions.pluck().all(id) as number[]) {
      addresses.push(apiPath(`${base}/conversations/${position}`));
    }
    addresses.push(apiPath(`${base}/queue`), apiPath(`${base}/queue`, { all: "true" }));
  }
  return addresses;
}

export const goalsApi: ApiModule = { routes, bundle };
