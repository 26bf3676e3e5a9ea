/**
 * Self-improvement searches in the store: one row per search (its configuration and status) and
 * its append-only event log (docs/search.md). The tree is a fold of the log, so the log is all
 * that is kept: an event is committed before the work it announces starts, and never changed.
 */
import {
  beginConfiguredRow,
  type ConfiguredRow,
  listConfiguredRows,
  openStore,
  readConfiguredRow,
  setConfiguredStatus,
} from "./configured-rows.js";
import { type SqliteDatabase, StoreError } from "./database.js";
import type { CostFields } from "./run-store.js";

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** What a piece of work cost: model tokens and dollars (0 when it used no model). */
export interface WorkUsage {
  inputTokens: number;
  outputTokens: number;
  /** Dollars of the calls whose model had a price: with `unpriced`, only a partial sum. */
  costUsd: number;
  /**
   * Some of the work's model calls had no price (a local server, an unknown name): its cost is
   * not known, and reports say "unpriced", never $0. Absent when every call was priced (and
   * always in a simulation, whose prices are set).
   */
  unpriced?: true;
}

/**
 * A usage's cost as reports count it (CostFields, see report.ts's formatCost): the priced part,
 * null when nothing had a price (the priced part is then 0), and `unpriced` when some had none.
 */
export function workCost(usage: Pick<WorkUsage, "costUsd" | "unpriced">): CostFields {
  if (!usage.unpriced) return { costUsd: usage.costUsd };
  return { costUsd: usage.costUsd === 0 ? null : usage.costUsd, unpriced: true };
}

export type EvaluationOutcome = "pass" | "fail" | "error";

/**
 * One event of a search. `work` numbers improvements and evaluations together, in the order they
 * were dispatched (0, 1, 2, ...). `task` is a task index of the search's task list.
 */
export type SearchEvent =
  | { type: "improvement_started"; work: number; parent: number }
  | {
      type: "improvement_finished";
      work: number;
      parent: number;
      /** The child's node id: the number of nodes before it (the root is 0). */
      node: number;
      /** The improver's record of the child (in a simulation, its hidden state). */
      data: JsonValue;
      usage: WorkUsage;
      durationMs: number;
    }
  | {
      type: "improvement_failed";
      work: number;
      parent: number;
      /** Why no child came of it: an empty patch, a failed check, an error. */
      reason: string;
      usage: WorkUsage;
      durationMs: number;
    }
  | { type: "evaluation_dispatched"; work: number; node: number; task: number; attempt: number }
  | {
      type: "evaluation_finished";
      work: number;
      node: number;
      task: number;
      outcome: EvaluationOutcome;
      /** Why it errored; null for a pass or a fail. */
      reason: string | null;
      usage: WorkUsage;
      durationMs: number;
    };

export type SearchEventType = SearchEvent["type"];

/** Where a search's events go: SQLite (SearchStore.log) or memory (simulations). */
export interface SearchLog {
  /** Every event so far, in order. */
  read(): readonly SearchEvent[];
  /** Appends one event; it is durable when this returns. */
  append(event: SearchEvent): void;
}

export type SearchStatus = "running" | "stopped" | "complete";

/** A search's row: its configuration, status and times. */
export type SearchRow = ConfiguredRow<SearchStatus>;

/** A search id is reused with a configuration that differs from the stored one. */
export class SearchConflictError extends StoreError {
  override name = "SearchConflictError";
}

interface EventRowRaw {
  seq: number;
  type: string;
  work: number;
  node: number | null;
  parent: number | null;
  task: number | null;
  attempt: number | null;
  outcome: string | null;
  reason: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  duration_ms: number | null;
  data: string | null;
  /** 1: some of the work's calls had no price; 0: priced; NULL: no usage, or written before. */
  unpriced: number | null;
}

export class SearchStore {
  private readonly insertEvent;

  /** On an open store (RunStore's `db` too: searches and runs can share one file). */
  constructor(readonly db: SqliteDatabase) {
    const hasTable = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'search_events'")
      .get();
    if (!hasTable) throw new StoreError("this store has no searches table: open it to write once");
    this.insertEvent = db.prepare(
      `INSERT INTO search_events (search_id, seq, type, work, node, parent, task, attempt, outcome,
         reason, input_tokens, output_tokens, cost_usd, duration_ms, data, unpriced, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  static open(path: string, options: { readonly?: boolean } = {}): SearchStore {
    return openStore(path, options, (db) => new SearchStore(db));
  }

  close(): void {
    this.db.close();
  }

  getSearch(id: string): SearchRow | undefined {
    return readConfiguredRow<SearchStatus>(this.db, "searches", id);
  }

  listSearches(): SearchRow[] {
    return listConfiguredRows<SearchStatus>(this.db, "searches");
  }

  /**
   * Creates the search, or checks that the stored one with this id has the same configuration
   * and marks it running again. Returns whether it existed (a resume) and its log.
   */
  beginSearch(id: string, config: Record<string, JsonValue>): { resumed: boolean; log: SearchLog } {
    const resumed = beginConfiguredRow(this.db, "searches", id, config, {
      noun: "search",
      error: SearchConflictError,
    });
    return { resumed, log: this.log(id) };
  }

  setStatus(id: string, status: SearchStatus, stopReason: string | null = null): void {
    setConfiguredStatus(this.db, "searches", id, status, stopReason);
  }

  /** The search's log: reads what is stored, appends with one commit per event. */
  log(id: string): SearchLog {
    const events = this.events(id);
    let seq = events.length;
    return {
      read: () => events,
      append: (event) => {
        this.insertEvent.run(id, seq, ...eventColumns(event), new Date().toISOString());
        seq += 1;
        events.push(event);
      },
    };
  }

  /** A search's events, in order. A row that does not parse stops the read with its position. */
  events(id: string): SearchEvent[] {
    const rows = this.db
      .prepare("SELECT * FROM search_events WHERE search_id = ? ORDER BY seq")
      .all(id) as EventRowRaw[];
    // Rows written before migration 7 do not say whether their work was priced (see parseEvent).
    const agents = this.getSearch(id)?.config.kind === "agent";
    return rows.map((row, index) => {
      const event = row.seq === index ? parseEvent(row, agents) : undefined;
      if (!event) throw new StoreError(`search "${id}": event ${index} is damaged`);
      return event;
    });
  }
}

/**
 * node, parent, task, attempt, outcome, reason, tokens in and out, cost, duration, data, and
 * whether some of the work's calls had no price (1, else 0; NULL for an event without usage).
 */
function eventColumns(event: SearchEvent): (string | number | null)[] {
  const usage = "usage" in event ? event.usage : undefined;
  return [
    event.type,
    event.work,
    "node" in event ? event.node : null,
    "parent" in event ? event.parent : null,
    "task" in event ? event.task : null,
    "attempt" in event ? event.attempt : null,
    "outcome" in event ? event.outcome : null,
    "reason" in event ? event.reason : null,
    usage?.inputTokens ?? null,
    usage?.outputTokens ?? null,
    usage?.costUsd ?? null,
    "durationMs" in event ? event.durationMs : null,
    event.type === "improvement_finished" ? JSON.stringify(event.data) : null,
    usage ? (usage.unpriced ? 1 : 0) : null,
  ];
}

const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= 0;

/**
 * An event from its row. `agents`: the search is over real agents. Its rows written before
 * migration 7 (unpriced NULL) are taken as unpriced when their work used tokens and cost 0, as
 * run-store.ts's UNPRICED_CALL takes old calls: a search has no response cache, so only a model
 * without a price made such work. A simulation's prices are always set (a scenario may give
 * tokens at $0), so its rows are priced.
 */
function parseEvent(row: EventRowRaw, agents: boolean): SearchEvent | undefined {
  const usage = (): WorkUsage | undefined => {
    const { input_tokens: input, output_tokens: output, cost_usd: cost, unpriced } = row;
    if (!(isCount(input) && isCount(output) && typeof cost === "number")) return undefined;
    if (unpriced !== null && unpriced !== 0 && unpriced !== 1) return undefined;
    const spent: WorkUsage = { inputTokens: input, outputTokens: output, costUsd: cost };
    const noPrice = unpriced === null ? agents && cost === 0 && input + output > 0 : unpriced === 1;
    if (noPrice) spent.unpriced = true;
    return spent;
  };
  const { work } = row;
  if (!isCount(work)) return undefined;
  const duration = row.duration_ms ?? Number.NaN;
  switch (row.type) {
    case "improvement_started":
      return isCount(row.parent) ? { type: row.type, work, parent: row.parent } : undefined;
    case "improvement_finished": {
      const spent = usage();
      if (!(isCount(row.parent) && isCount(row.node) && spent && row.data !== null))
        return undefined;
      let data: JsonValue;
      try {
        data = JSON.parse(row.data) as JsonValue;
      } catch {
        return undefined;
      }
      const { parent, node } = row;
      return { type: row.type, work, parent, node, data, usage: spent, durationMs: duration };
    }
    case "improvement_failed": {
      const spent = usage();
      if (!(isCount(row.parent) && spent && typeof row.reason === "string")) return undefined;
      const { parent, reason } = row;
      return { type: row.type, work, parent, reason, usage: spent, durationMs: duration };
    }
    case "evaluation_dispatched":
      return isCount(row.node) && isCount(row.task) && isCount(row.attempt)
        ? { type: row.type, work, node: row.node, task: row.task, attempt: row.attempt }
        : undefined;
    case "evaluation_finished": {
      const spent = usage();
      const outcome = row.outcome;
      if (!(isCount(row.node) && isCount(row.task) && spent)) return undefined;
      if (outcome !== "pass" && outcome !== "fail" && outcome !== "error") return undefined;
      return {
        type: row.type,
        work,
        node: row.node,
        task: row.task,
        outcome,
        reason: row.reason,
        usage: spent,
        durationMs: duration,
      };
    }
    default:
      return undefined;
  }
}
