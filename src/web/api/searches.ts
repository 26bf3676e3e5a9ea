/**
 * The Search page's API: stored self-improvement searches (HGM and its baselines DGM, greedy and
 * random; docs/search.md). A search is its row in `searches` and its event log; the tree is the
 * engine's own fold of that log (SearchTree.fold) and the final choice is the search's own
 * method's (policy.finalChoice), exactly as `clade tree` and `clade best` show them.
 *
 *   GET /searches?limit=&cursor=      newest first: method, kind, status, counts, final choice, cost
 *   GET /searches/:id                 configuration, totals, every node, failed improvements, choice
 *   GET /searches/:id/nodes/:node     a node's patch, diagnosis, failed improvements, evaluations
 *
 * A folded search is kept while its log and row are unchanged, so a live page refetching, and a
 * static bundle asking for every node, fold it once.
 */
import { basename } from "node:path";
import { Hono } from "hono";
import { z } from "zod";
import { firstIssue } from "../../eval/goals/import/common.js";
import { recipeOf, recipeText } from "../../improve/rl/branches.js";
import { lowerQuantile, type SearchPolicy } from "../../improve/search/policy.js";
import type { Scenario } from "../../improve/search/simulation/scenario.js";
import {
  costFields,
  type FoldedSearch,
  foldStoredSearch,
  type NodeCost,
  nodeSpending,
  pathTo,
  storedSearchKind,
} from "../../improve/search/stored.js";
import { cladeMean, type NodeId, ownMean, type SearchTree } from "../../improve/search/tree.js";
import { nodeRunId } from "../../improve/selfmod/evaluator.js";
import { readConfiguredRow } from "../../store/configured-rows.js";
import { type SqliteDatabase, StoreError } from "../../store/database.js";
import {
  type JsonValue,
  type SearchEvent,
  type SearchRow,
  SearchStore,
} from "../../store/search-log.js";
import { apiPath } from "../api-path.js";
import { decodeCursor, page } from "../cursor.js";
import { FingerprintCache } from "../fingerprint-cache.js";
import type { ApiModule, Chosen } from "../server.js";
import type { StoreView } from "../store-view.js";
import { pageQuery, valid } from "../validate.js";

// ---------------------------------------------------------------------------------------------
// Response types (the page imports them with `import type`).

/** What the search's nodes are: simulated agents, agent folders, or training branches. */
export type SearchKind = "simulation" | "agent" | "policy" | "unknown";

/** A cost as reports count it: the priced part (null when nothing had a price), `unpriced`. */
export interface Cost {
  costUsd: number | null;
  unpriced?: true;
}

export interface SearchSummary extends Cost {
  id: string;
  /** hgm, dgm, greedy, random (or what the configuration says, when unknown). */
  method: string;
  kind: SearchKind;
  /** What is searched, in words: "trap (simulated)", "demo on gridworld". */
  subject: string;
  status: string;
  stopReason: string | null;
  createdAt: string;
  updatedAt: string;
  seed: number | null;
  /** T: the evaluation budget (non-root evaluations), and t: how many were dispatched. */
  budget: number | null;
  t: number;
  workers: number | null;
  /** Agents made (the root not counted). */
  nodes: number;
  evaluations: { passes: number; fails: number; errors: number; pending: number };
  /** The final choice's node and own mean (passes / evaluations). */
  finalChoice: NodeId | null;
  bestMean: number | null;
  /** Why the log could not be read (a damaged event): the rest of the list still shows. */
  error?: string;
}

export interface SearchesResponse {
  items: SearchSummary[];
  nextCursor: string | null;
}

/**
 * evaluating: evaluations in flight; expanding: an improvement of it in flight; evaluated: has
 * a finished evaluation; unevaluated: none yet.
 */
export type NodeStatus = "evaluating" | "expanding" | "evaluated" | "unevaluated";

export interface TreeNode extends Cost {
  id: NodeId;
  parent: NodeId | null;
  depth: number;
  children: NodeId[];
  /** Own finished evaluations: passes and fails (errors are neither). */
  s: number;
  f: number;
  /** s / (s + f); null before the first. */
  mean: number | null;
  /** Passes and fails of the node and all its descendants. */
  cladeS: number;
  cladeF: number;
  /** The CMP estimate sC / (sC + fC) (hgm.md); null before any evaluation in the clade. */
  cmp: number | null;
  status: NodeStatus;
  pending: number;
  pendingImprovements: number;
  /** Evaluations that errored (every attempt), and tasks given up after too many. */
  errors: number;
  abandoned: number;
  /** Improvements of this node that gave no child. */
  failedImprovements: number;
  /** t when it was made, and the work number of the improvement that made it (null: root). */
  createdAtT: number;
  improvement: number | null;
  /** A simulated agent's hidden pass probability (null for real agents). */
  quality: number | null;
  /** A short word on what it is: the task or theme it fixes, its recipe, its simulated type. */
  label: string | null;
  chosen: boolean;
}

/** An improvement that gave no child: its parent, and why (a failed typecheck, no plan...). */
export interface FailedImprovement extends Cost {
  work: number;
  parent: NodeId;
  reason: string;
  durationMs: number | null;
}

export interface FinalChoice {
  node: NodeId;
  /** The rule in words (every method's final choice is the HGM paper's). */
  rule: string;
  epsilon: number;
  /** The ε-percent quantile of Beta(1 + s, 1 + f): what it won on. */
  lowerQuantile: number;
  mean: number | null;
  path: NodeId[];
}

export interface SearchTotals extends Cost {
  improvements: { started: number; finished: number; failed: number; pending: number };
  inputTokens: number;
  outputTokens: number;
  /** Summed durations of finished work, ms. */
  workMs: number;
}

export interface SearchResponse {
  summary: SearchSummary;
  /** The stored configuration (an agent folder's file contents replaced by their names). */
  config: Record<string, JsonValue>;
  totals: SearchTotals;
  /** Every node, by id (the root is 0). */
  nodes: TreeNode[];
  failed: FailedImprovement[];
  finalChoice: FinalChoice | null;
  /** Why there is no final choice, when there is none. */
  noChoice: string | null;
}

export interface NodeEvaluation extends Cost {
  work: number;
  task: number;
  attempt: number;
  /** pending: dispatched, not finished. */
  outcome: "pass" | "fail" | "error" | "pending";
  reason: string | null;
  durationMs: number | null;
  /** The stored episode of this task in the node's eval run (searches over agent folders). */
  episodeId: number | null;
}

/** How the node was made: the improvement's work, what it cost and how long it took. */
export interface NodeMaking extends Cost {
  work: number;
  parent: NodeId;
  durationMs: number | null;
  inputTokens: number;
  outputTokens: number;
}

export interface NodeResponse {
  search: string;
  kind: SearchKind;
  node: TreeNode;
  path: NodeId[];
  made: NodeMaking | null;
  /** Unified diff from the parent's files (agent folders). */
  patch: string | null;
  /** The diagnosis: the JSON plan the improvement implemented (agent folders). */
  diagnosis: Record<string, JsonValue> | null;
  /** What the improvement set out to fix: `{kind: "task", task}` or `{kind: "theme", theme}`. */
  target: JsonValue;
  /** The coding agent's summary of its change, why it stopped, and its model calls. */
  summary: string | null;
  stopReason: string | null;
  steps: number | null;
  /** The rest of the improver's record (a simulated agent's hidden state, a branch's recipe). */
  record: JsonValue;
  failedImprovements: FailedImprovement[];
  evaluations: NodeEvaluation[];
  /** The eval run holding the node's episodes, when one is stored (`<search id>.n<node>`). */
  evalRun: string | null;
}

// ---------------------------------------------------------------------------------------------
// A stored search, folded.

const isRecord = (value: unknown): value is Record<string, JsonValue> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const round = (value: number, digits = 4) => Number(value.toFixed(digits));
const orNull = (value: number) => (Number.isNaN(value) ? null : round(value));
const numberOrNull = (value: JsonValue | undefined) => (typeof value === "number" ? value : null);

interface LoadedSearch {
  row: SearchRow;
  kind: SearchKind;
  method: string;
  policy: SearchPolicy | null;
  epsilon: number;
  scenario: Scenario | null;
  events: readonly SearchEvent[];
  tree: SearchTree;
  chosen: NodeId | null;
  nodes: TreeNode[];
  failed: FailedImprovement[];
}

function kindOf(config: Record<string, JsonValue>): SearchKind {
  return storedSearchKind(config) ?? "unknown";
}

function subjectOf(row: SearchRow, kind: SearchKind, scenario: Scenario | null): string {
  const { config } = row;
  const env = typeof config.env === "string" ? ` on ${config.env}` : "";
  if (kind === "simulation") return `${scenario?.name ?? "a scenario"} (simulated)`;
  if (kind === "policy") {
    const policy = isRecord(config.policy) ? config.policy : {};
    const path = typeof policy.path === "string" ? basename(policy.path) : "a policy";
    return `training branches of ${path}${env}`;
  }
  if (kind === "agent") {
    const agent = isRecord(config.agent) ? config.agent : {};
    return `${typeof agent.name === "string" ? agent.name : "an agent"}${env}`;
  }
  return "unknown";
}

function labelOf(kind: SearchKind, data: JsonValue): string | null {
  if (kind === "policy") return recipeText(recipeOf(data));
  if (!isRecord(data)) return null;
  if (kind === "simulation") return typeof data.type === "string" ? data.type : null;
  const target = data.target;
  if (isRecord(target)) {
    if (target.kind === "task") return `task ${String(target.task)}`;
    if (target.kind === "theme") return String(target.theme);
  }
  return null;
}

const durationOf = (ms: number) => (Number.isFinite(ms) ? ms : null);

/** Every node as the page draws it, and the improvements that gave no child. */
function treeNodes(
  kind: SearchKind,
  tree: SearchTree,
  events: readonly SearchEvent[],
  chosen: NodeId | null,
): { nodes: TreeNode[]; failed: FailedImprovement[] } {
  const { spent, failed: failedBy } = nodeSpending(tree, events);
  const failed: FailedImprovement[] = [];
  for (const event of events) {
    if (event.type === "improvement_failed") {
      failed.push({
        work: event.work,
        parent: event.parent,
        reason: event.reason,
        durationMs: durationOf(event.durationMs),
        ...costFields(event.usage),
      });
    }
  }
  const nodes = tree.nodes.map((node): TreeNode => {
    const data = node.data;
    const p = kind === "simulation" && isRecord(data) ? data.p : undefined;
    return {
      id: node.id,
      parent: node.parent,
      depth: node.depth,
      children: [...node.children],
      s: node.s,
      f: node.f,
      mean: orNull(ownMean(node)),
      cladeS: node.sC,
      cladeF: node.fC,
      cmp: orNull(cladeMean(node)),
      status:
        node.pending > 0
          ? "evaluating"
          : node.pendingImprovements > 0
            ? "expanding"
            : node.s + node.f > 0
              ? "evaluated"
              : "unevaluated",
      pending: node.pending,
      pendingImprovements: node.pendingImprovements,
      errors: node.errors,
      abandoned: node.abandoned,
      failedImprovements: failedBy[node.id] as number,
      createdAtT: node.createdAtT,
      improvement: node.improvement,
      quality: typeof p === "number" ? round(p) : null,
      label: labelOf(kind, data),
      chosen: node.id === chosen,
      ...costFields(spent[node.id] as NodeCost),
    };
  });
  return { nodes, failed };
}

/** Folds a stored search, or undefined when there is none with this id. */
function loadSearch(db: SqliteDatabase, id: string): LoadedSearch | undefined {
  const row = readConfiguredRow<SearchRow["status"]>(db, "searches", id);
  if (!row) return undefined;
  const events = new SearchStore(db).events(id);
  const kind = kindOf(row.config);
  const method = String(row.config.method ?? "unknown");
  let folded: FoldedSearch;
  try {
    folded = foldStoredSearch(row.config, events);
  } catch (error) {
    const why =
      error instanceof z.ZodError
        ? `its configuration: ${firstIssue(error)}`
        : (error as Error).message.split("\n")[0];
    throw new StoreError(`search "${id}": ${why}`);
  }
  const { tree, scenario, policy, chosen } = folded;
  const { nodes, failed } = treeNodes(kind, tree, events, chosen);
  const epsilon = Number(policy?.hyperparameters.epsilon ?? Number.NaN);
  return { row, kind, method, policy, epsilon, scenario, events, tree, chosen, nodes, failed };
}

/**
 * Folded searches kept while unchanged: the stamp is the row's update time and the log's last
 * sequence number, both read through the primary keys (a running search's stamp moves, the
 * others stay cached).
 */
function cachedSearch(
  cache: FingerprintCache<LoadedSearch | undefined>,
  db: SqliteDatabase,
  id: string,
): LoadedSearch | undefined {
  const stamp = db
    .prepare(
      `SELECT updated_at || '|' || status || '|' ||
         coalesce((SELECT MAX(seq) FROM search_events WHERE search_id = searches.id), -1)
       FROM searches WHERE id = ?`,
    )
    .pluck()
    .get(id) as string | undefined;
  if (stamp === undefined) return undefined;
  return cache.get(id, stamp, () => loadSearch(db, id)).value;
}

/** How many folded searches are kept. */
const SEARCHES_KEPT = 32;

function summaryOf(search: LoadedSearch): SearchSummary {
  const { row, tree, chosen } = search;
  const chosenMean = chosen === null ? null : (search.nodes[chosen]?.mean ?? null);
  return {
    id: row.id,
    method: search.method,
    kind: search.kind,
    subject: subjectOf(row, search.kind, search.scenario),
    ...rowFieldsOf(row),
    t: tree.t,
    nodes: tree.size - 1,
    evaluations: {
      passes: tree.passes,
      fails: tree.fails,
      errors: tree.errors,
      pending: tree.pendingEvaluations,
    },
    finalChoice: chosen,
    bestMean: chosenMean,
    ...costFields(tree.usage),
  };
}

/** What a summary shows of the search's row alone, whether or not its log folds. */
function rowFieldsOf(row: SearchRow) {
  return {
    status: row.status,
    stopReason: row.stopReason,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    seed: numberOrNull(row.config.seed),
    budget: numberOrNull(row.config.budget),
    workers: numberOrNull(row.config.workers),
  };
}

/** A search whose log does not fold: its row, no counts, and why. */
function unreadable(db: SqliteDatabase, id: string, error: string): SearchSummary {
  const row = readConfiguredRow<SearchRow["status"]>(db, "searches", id) as SearchRow;
  const kind = kindOf(row.config);
  return {
    id,
    method: String(row.config.method ?? "unknown"),
    kind,
    subject: kind === "simulation" ? "(simulated)" : subjectOf(row, kind, null),
    ...rowFieldsOf(row),
    t: 0,
    nodes: 0,
    evaluations: { passes: 0, fails: 0, errors: 0, pending: 0 },
    finalChoice: null,
    bestMean: null,
    costUsd: null,
    error: error.split("\n")[0] as string,
  };
}

/** The configuration as shown: an agent folder's files by name only (they can be large). */
function shownConfig(config: Record<string, JsonValue>): Record<string, JsonValue> {
  const agent = config.agent;
  if (!isRecord(agent) || !isRecord(agent.files)) return config;
  return { ...config, agent: { ...agent, files: Object.keys(agent.files) } };
}

function finalChoiceOf(search: LoadedSearch): FinalChoice | null {
  const { chosen, tree, epsilon } = search;
  if (chosen === null) return null;
  const node = tree.node(chosen);
  return {
    node: chosen,
    rule:
      `largest ${epsilon} % quantile of Beta(1 + s, 1 + f) over own counts, among nodes with a ` +
      "finished evaluation (the HGM paper's final choice, the same for every method)",
    epsilon,
    lowerQuantile: round(lowerQuantile(node, epsilon)),
    mean: search.nodes[chosen]?.mean ?? null,
    path: pathTo(tree, chosen),
  };
}

function searchResponse(search: LoadedSearch): SearchResponse {
  const { tree } = search;
  return {
    summary: summaryOf(search),
    config: shownConfig(search.row.config),
    totals: {
      improvements: {
        started: tree.improvementsStarted,
        finished: tree.improvementsFinished,
        failed: tree.improvementsFailed,
        pending: tree.pendingImprovements,
      },
      inputTokens: tree.usage.inputTokens,
      outputTokens: tree.usage.outputTokens,
      workMs: Math.round(tree.workMs),
      ...costFields(tree.usage),
    },
    nodes: search.nodes,
    failed: search.failed,
    finalChoice: finalChoiceOf(search),
    noChoice:
      search.chosen !== null
        ? null
        : search.policy
          ? "no node has a finished evaluation yet"
          : `unknown method "${search.method}"`,
  };
}

/** A node's evaluations from the log (in dispatch order), with the stored episode of each task. */
function nodeEvaluations(
  db: SqliteDatabase,
  search: LoadedSearch,
  id: NodeId,
  evalRun: string | null,
): NodeEvaluation[] {
  const episodes = new Map<number, number>();
  if (evalRun !== null) {
    const rows = db
      .prepare("SELECT task_index, id FROM episodes WHERE run_id = ? ORDER BY sample_index")
      .all(evalRun) as { task_index: number; id: number }[];
    for (const row of rows) if (!episodes.has(row.task_index)) episodes.set(row.task_index, row.id);
  }
  const byWork = new Map<number, NodeEvaluation>();
  for (const event of search.events) {
    if (event.type === "evaluation_dispatched" && event.node === id) {
      byWork.set(event.work, {
        work: event.work,
        task: event.task,
        attempt: event.attempt,
        outcome: "pending",
        reason: null,
        durationMs: null,
        episodeId: episodes.get(event.task) ?? null,
        costUsd: null,
      });
    } else if (event.type === "evaluation_finished" && event.node === id) {
      const dispatched = byWork.get(event.work);
      byWork.set(event.work, {
        work: event.work,
        task: event.task,
        attempt: dispatched?.attempt ?? 1,
        outcome: event.outcome,
        reason: event.reason,
        durationMs: durationOf(event.durationMs),
        episodeId: episodes.get(event.task) ?? null,
        ...costFields(event.usage),
      });
    }
  }
  return [...byWork.values()];
}

function nodeResponse(db: SqliteDatabase, search: LoadedSearch, id: NodeId): NodeResponse {
  const node = search.nodes[id] as TreeNode;
  const data = search.tree.node(id).data;
  const made = search.events.find(
    (e): e is Extract<SearchEvent, { type: "improvement_finished" }> =>
      e.type === "improvement_finished" && e.node === id,
  );
  const { patch, plan, target, summary, stopReason, steps, ...rest } = isRecord(data)
    ? data
    : ({} as Record<string, JsonValue>);
  const runId = nodeRunId(search.row.id, id);
  const evalRun = db.prepare("SELECT 1 FROM runs WHERE id = ?").get(runId) ? runId : null;
  return {
    search: search.row.id,
    kind: search.kind,
    node,
    path: pathTo(search.tree, id),
    made: made
      ? {
          work: made.work,
          parent: made.parent,
          durationMs: durationOf(made.durationMs),
          inputTokens: made.usage.inputTokens,
          outputTokens: made.usage.outputTokens,
          ...costFields(made.usage),
        }
      : null,
    patch: typeof patch === "string" ? patch : null,
    diagnosis: isRecord(plan) ? plan : null,
    target: target ?? null,
    summary: typeof summary === "string" ? summary : null,
    stopReason: typeof stopReason === "string" ? stopReason : null,
    steps: typeof steps === "number" ? steps : null,
    record: isRecord(data) ? rest : data,
    failedImprovements: search.failed.filter((f) => f.parent === id),
    evaluations: nodeEvaluations(db, search, id, evalRun),
    evalRun,
  };
}

// ---------------------------------------------------------------------------------------------
// Routes.

/** A search's address, as the page and the bundle spell it (ids may hold any character). */
export const searchAddress = (id: string) => `/searches/${encodeURIComponent(id)}`;
export const nodeAddress = (id: string, node: number) => `${searchAddress(id)}/nodes/${node}`;

const searchParam = z.object({ id: z.string().min(1) });
const nodeParam = z.object({
  id: z.string().min(1),
  node: z
    .string()
    .regex(/^\d{1,9}$/, "a node id is a whole number")
    .transform(Number),
});

interface ListRow {
  id: string;
  created_at: string;
}

function routes(view: StoreView): Hono {
  const cache = new FingerprintCache<LoadedSearch | undefined>(SEARCHES_KEPT);
  const notFound = (id: string) => ({ error: `no search "${id}" in this store` });
  return new Hono()
    .get("/searches", valid("query", pageQuery), (c) => {
      const { limit, cursor } = c.req.valid("query");
      const db = view.db;
      if (db === undefined) return c.json({ items: [], nextCursor: null } as SearchesResponse);
      let after: readonly (string | number | null)[] | undefined;
      if (cursor !== undefined) {
        after = decodeCursor(cursor, 2);
        if (after === undefined)
          return c.json({ error: "query.cursor: not a cursor of this list" }, 400);
      }
      // Newest first; the key is (created_at, id), both descending.
      const rows = (
        after === undefined
          ? db
              .prepare(
                "SELECT id, created_at FROM searches ORDER BY created_at DESC, id DESC LIMIT ?",
              )
              .all(limit + 1)
          : db
              .prepare(
                `SELECT id, created_at FROM searches WHERE (created_at, id) < (?, ?)
                 ORDER BY created_at DESC, id DESC LIMIT ?`,
              )
              .all(after[0], after[1], limit + 1)
      ) as ListRow[];
      const { items, nextCursor } = page(rows, limit, (row) => [row.created_at, row.id]);
      const body: SearchesResponse = {
        items: items.flatMap((row) => {
          try {
            const search = cachedSearch(cache, db, row.id);
            return search ? [summaryOf(search)] : [];
          } catch (error) {
            if (!(error instanceof StoreError)) throw error;
            return [unreadable(db, row.id, error.message)];
          }
        }),
        nextCursor,
      };
      return c.json(body);
    })
    .get("/searches/:id", valid("param", searchParam), (c) => {
      const { id } = c.req.valid("param");
      const db = view.db;
      const search = db === undefined ? undefined : cachedSearch(cache, db, id);
      if (search === undefined) return c.json(notFound(id), 404);
      return c.json(searchResponse(search));
    })
    .get("/searches/:id/nodes/:node", valid("param", nodeParam), (c) => {
      const { id, node } = c.req.valid("param");
      const db = view.db;
      const search = db === undefined ? undefined : cachedSearch(cache, db, id);
      if (db === undefined || search === undefined) return c.json(notFound(id), 404);
      if (node >= search.tree.size) {
        return c.json(
          { error: `search "${id}" has no node ${node} (it has ${search.tree.size})` },
          404,
        );
      }
      return c.json(nodeResponse(db, search, node));
    });
}

/** The list, each chosen search, and every node of it. */
function bundle(db: SqliteDatabase, chosen: Chosen): string[] {
  const rows = db
    .prepare(
      `SELECT id, (SELECT COUNT(*) FROM search_events e
                   WHERE e.search_id = searches.id AND e.type = 'improvement_finished') AS made
       FROM searches ORDER BY created_at DESC, id DESC`,
    )
    .all() as { id: string; made: number }[];
  const picked = rows.filter((row) => chosen === "all" || chosen.has(row.id));
  if (picked.length === 0) return [];
  const addresses = [apiPath("/searches")];
  for (const { id, made } of picked) {
    addresses.push(apiPath(searchAddress(id)));
    for (let node = 0; node <= made; node++) addresses.push(apiPath(nodeAddress(id, node)));
  }
  return addresses;
}

export const searchesApi: ApiModule = { routes, bundle };
