/**
 * Goal-oriented evaluation jobs in the store (migration 10): the job's row, its conversations
 * (written once, when the job starts), each judge's judgement as soon as it is made, each
 * conversation's verdict (the vote and its review queue, or the error), and reviewers' labels.
 *
 * The store holds JSON values; their meaning (conversations, labels, review items) belongs to
 * src/eval/goals, which checks them on the way in and out. "No conversation judged twice": a
 * labelled judgement is durable when `saveJudgement` returns, and the job asks a judge only where
 * no labelled judgement of it is stored.
 */
import type { Statement } from "better-sqlite3";
import {
  beginConfiguredRow,
  type ConfiguredRow,
  ConfiguredStore,
  openStore,
} from "./configured-rows.js";
import { type SqliteDatabase, StoreError } from "./database.js";
import type { JsonValue } from "./search-log.js";

export type GoalRunStatus = "running" | "stopped" | "complete";
export type GoalRunRow = ConfiguredRow<GoalRunStatus>;
export type ConversationStatus = "pending" | "judged" | "errored";

export class GoalRunConflictError extends StoreError {
  override name = "GoalRunConflictError";
}

export interface StoredConversation {
  position: number;
  conversationId: string;
  conversation: JsonValue;
  status: ConversationStatus;
  /** The vote (judged only). */
  labels: JsonValue | null;
  /** The fields left to a reviewer (judged only). */
  queue: JsonValue | null;
  error: string | null;
  judgedAt: string | null;
}

export interface JudgementInput {
  position: number;
  judge: number;
  model: string;
  status: "labelled" | "errored";
  labels: JsonValue | null;
  reasoning: string | null;
  error: string | null;
  rejected: readonly string[];
  answers: number;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  unpriced: boolean;
  latencyMs: number | null;
  cacheHits: number;
  /** Requests that reached the provider: retries included, cache hits none. */
  providerAttempts: number;
}

export interface StoredJudgement extends JudgementInput {
  at: string;
}

export type ReviewField = "is_new_goal" | "quality" | "rcof";

export interface ReviewInput {
  position: number;
  turnNumber: number;
  field: ReviewField;
  value: JsonValue;
  reviewer: string;
  note?: string;
}

export interface StoredReview extends ReviewInput {
  id: number;
  at: string;
}

export interface GoalRunCounts {
  conversations: number;
  pending: number;
  judged: number;
  errored: number;
}

interface ConversationRaw {
  position: number;
  conversation_id: string;
  conversation: string;
  status: ConversationStatus;
  labels: string | null;
  queue: string | null;
  error: string | null;
  judged_at: string | null;
}

interface JudgementRaw {
  position: number;
  judge: number;
  model: string;
  status: "labelled" | "errored";
  labels: string | null;
  reasoning: string | null;
  error: string | null;
  rejected: string;
  answers: number;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  unpriced: number;
  latency_ms: number | null;
  cache_hits: number;
  provider_attempts: number;
  at: string;
}

interface ReviewRaw {
  id: number;
  position: number;
  turn_number: number;
  field: ReviewField;
  value: string;
  reviewer: string;
  note: string | null;
  at: string;
}

const parseJson = (text: string | null): JsonValue | null =>
  text === null ? null : (JSON.parse(text) as JsonValue);

function conversationOf(row: ConversationRaw): StoredConversation {
  return {
    position: row.position,
    conversationId: row.conversation_id,
    conversation: JSON.parse(row.conversation) as JsonValue,
    status: row.status,
    labels: parseJson(row.labels),
    queue: parseJson(row.queue),
    error: row.error,
    judgedAt: row.judged_at,
  };
}

function judgementOf(row: JudgementRaw): StoredJudgement {
  return {
    position: row.position,
    judge: row.judge,
    model: row.model,
    status: row.status,
    labels: parseJson(row.labels),
    reasoning: row.reasoning,
    error: row.error,
    rejected: JSON.parse(row.rejected) as string[],
    answers: row.answers,
    calls: row.calls,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    costUsd: row.cost_usd,
    unpriced: row.unpriced === 1,
    latencyMs: row.latency_ms,
    cacheHits: row.cache_hits,
    providerAttempts: row.provider_attempts,
    at: row.at,
  };
}

export class GoalStore extends ConfiguredStore<GoalRunStatus> {
  private readonly statements = new Map<string, Statement>();

  constructor(db: SqliteDatabase) {
    super(db, {
      table: "goal_runs",
      marker: "goal_runs",
      tables: "goal-evaluation",
      noun: "goal evaluation",
    });
  }

  /** A statement prepared once per SQL text: a judging job runs these thousands of times a second. */
  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  static open(path: string, options: { readonly?: boolean } = {}): GoalStore {
    return openStore(path, options, (db) => new GoalStore(db));
  }

  /**
   * Creates the job with its conversations, all in one transaction, or checks that the stored
   * job has the same configuration and the same conversations (by id, in order) and marks it
   * running again. Returns whether it existed.
   */
  beginRun(
    id: string,
    config: Record<string, JsonValue>,
    conversations: ReadonlyArray<{ id: string; conversation: JsonValue }>,
  ): { resumed: boolean } {
    return this.db.transaction(() => {
      const resumed = beginConfiguredRow(this.db, "goal_runs", id, config, {
        noun: "goal evaluation",
        error: GoalRunConflictError,
      });
      if (resumed) {
        const stored = this.sql(
          "SELECT conversation_id FROM goal_conversations WHERE run_id = ? ORDER BY position",
        )
          .pluck()
          .all(id) as string[];
        const same =
          stored.length === conversations.length &&
          stored.every((conversationId, i) => conversationId === conversations[i]?.id);
        if (!same) {
          throw new GoalRunConflictError(
            `goal evaluation "${id}" already exists with other conversations (${stored.length} stored, ${conversations.length} given); choose another --run-id`,
          );
        }
        return { resumed };
      }
      const insert = this.sql(
        `INSERT INTO goal_conversations (run_id, position, conversation_id, conversation, status)
         VALUES (?, ?, ?, ?, 'pending')`,
      );
      conversations.forEach((c, position) => {
        insert.run(id, position, c.id, JSON.stringify(c.conversation));
      });
      return { resumed };
    })();
  }

  /** The job's conversations in order, optionally of some statuses only. */
  conversations(id: string, statuses?: readonly ConversationStatus[]): StoredConversation[] {
    const filter = statuses ? ` AND status IN (${statuses.map(() => "?").join(", ")})` : "";
    const rows = this.sql(
      `SELECT position, conversation_id, conversation, status, labels, queue, error, judged_at
         FROM goal_conversations WHERE run_id = ?${filter} ORDER BY position`,
    ).all(id, ...(statuses ?? [])) as ConversationRaw[];
    return rows.map(conversationOf);
  }

  conversation(id: string, position: number): StoredConversation | undefined {
    const row = this.sql(
      `SELECT position, conversation_id, conversation, status, labels, queue, error, judged_at
         FROM goal_conversations WHERE run_id = ? AND position = ?`,
    ).get(id, position) as ConversationRaw | undefined;
    return row ? conversationOf(row) : undefined;
  }

  counts(id: string): GoalRunCounts {
    const rows = this.sql(
      "SELECT status, COUNT(*) AS n FROM goal_conversations WHERE run_id = ? GROUP BY status",
    ).all(id) as { status: ConversationStatus; n: number }[];
    const counts: GoalRunCounts = { conversations: 0, pending: 0, judged: 0, errored: 0 };
    for (const { status, n } of rows) {
      counts[status] = n;
      counts.conversations += n;
    }
    return counts;
  }

  /**
   * Stores one judge's judgement, replacing an errored one; a labelled judgement already stored
   * is never replaced (that would be judging twice): doing so is an error. The calls of an
   * errored judgement were made (and paid for), so the row replacing it carries their usage and
   * cost as well: the job's spend, and its budget, count every call of every session.
   */
  saveJudgement(id: string, input: JudgementInput): void {
    const now = new Date().toISOString();
    this.db.transaction(() => {
      const existing = this.sql(
        `SELECT status, calls, input_tokens, output_tokens, cost_usd, unpriced, latency_ms,
           cache_hits, provider_attempts
         FROM goal_judgements WHERE run_id = ? AND position = ? AND judge = ?`,
      ).get(id, input.position, input.judge) as
        | Omit<
            JudgementRaw,
            | "position"
            | "judge"
            | "model"
            | "labels"
            | "reasoning"
            | "error"
            | "rejected"
            | "answers"
            | "at"
          >
        | undefined;
      if (existing?.status === "labelled") {
        throw new StoreError(
          `goal evaluation "${id}": conversation ${input.position} already has judge ${input.judge + 1}'s labels`,
        );
      }
      const latencyMs =
        existing?.latency_ms == null
          ? input.latencyMs
          : existing.latency_ms + (input.latencyMs ?? 0);
      this.sql(
        `INSERT OR REPLACE INTO goal_judgements
             (run_id, position, judge, model, status, labels, reasoning, error, rejected, answers,
              calls, input_tokens, output_tokens, cost_usd, unpriced, latency_ms, cache_hits,
              provider_attempts, at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        input.position,
        input.judge,
        input.model,
        input.status,
        input.labels === null ? null : JSON.stringify(input.labels),
        input.reasoning,
        input.error,
        JSON.stringify(input.rejected),
        input.answers,
        input.calls + (existing?.calls ?? 0),
        input.inputTokens + (existing?.input_tokens ?? 0),
        input.outputTokens + (existing?.output_tokens ?? 0),
        input.costUsd + (existing?.cost_usd ?? 0),
        input.unpriced || existing?.unpriced === 1 ? 1 : 0,
        latencyMs,
        input.cacheHits + (existing?.cache_hits ?? 0),
        input.providerAttempts + (existing?.provider_attempts ?? 0),
        now,
      );
    })();
  }

  /** The judgements of one conversation (by judge), or of the whole job. */
  judgements(id: string, position?: number): StoredJudgement[] {
    const rows = (
      position === undefined
        ? this.sql("SELECT * FROM goal_judgements WHERE run_id = ? ORDER BY position, judge").all(
            id,
          )
        : this.sql(
            "SELECT * FROM goal_judgements WHERE run_id = ? AND position = ? ORDER BY judge",
          ).all(id, position)
    ) as JudgementRaw[];
    return rows.map(judgementOf);
  }

  /** Turn fields queued for review over the judged conversations (counted in SQL, not parsed). */
  queuedFields(id: string): number {
    return this.sql(
      `SELECT COALESCE(SUM(json_array_length(queue)), 0) FROM goal_conversations
       WHERE run_id = ? AND status = 'judged'`,
    )
      .pluck()
      .get(id) as number;
  }

  /** Summed cost over every judgement stored for the job (earlier sessions included). */
  spentUsd(id: string): number {
    return (
      (this.sql("SELECT SUM(cost_usd) FROM goal_judgements WHERE run_id = ?").pluck().get(id) as
        | number
        | null) ?? 0
    );
  }

  /** Records a conversation's verdict: judged (the vote and queue) or errored. */
  setVerdict(
    id: string,
    position: number,
    verdict:
      | { status: "judged"; labels: JsonValue; queue: JsonValue }
      | { status: "errored"; error: string },
  ): void {
    const now = new Date().toISOString();
    const changed =
      verdict.status === "judged"
        ? this.sql(
            `UPDATE goal_conversations SET status = 'judged', labels = ?, queue = ?, error = NULL,
                 judged_at = ? WHERE run_id = ? AND position = ?`,
          ).run(JSON.stringify(verdict.labels), JSON.stringify(verdict.queue), now, id, position)
            .changes
        : this.sql(
            `UPDATE goal_conversations SET status = 'errored', labels = NULL, queue = NULL,
                 error = ?, judged_at = ? WHERE run_id = ? AND position = ?`,
          ).run(verdict.error, now, id, position).changes;
    if (changed === 0) {
      throw new StoreError(`goal evaluation "${id}" has no conversation at position ${position}`);
    }
  }

  /** Stores a reviewer's label; the conversation must exist. Returns the review's id. */
  addReview(id: string, input: ReviewInput): number {
    const exists = this.sql(
      "SELECT 1 FROM goal_conversations WHERE run_id = ? AND position = ?",
    ).get(id, input.position);
    if (!exists) {
      throw new StoreError(
        `goal evaluation "${id}" has no conversation at position ${input.position}`,
      );
    }
    const result = this.sql(
      `INSERT INTO goal_reviews (run_id, position, turn_number, field, value, reviewer, note, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      input.position,
      input.turnNumber,
      input.field,
      JSON.stringify(input.value),
      input.reviewer,
      input.note ?? null,
      new Date().toISOString(),
    );
    return Number(result.lastInsertRowid);
  }

  /** Every review of the job, oldest first (the latest per field is the one in force). */
  reviews(id: string): StoredReview[] {
    const rows = this.sql("SELECT * FROM goal_reviews WHERE run_id = ? ORDER BY id").all(
      id,
    ) as ReviewRaw[];
    return rows.map((row) => ({
      id: row.id,
      position: row.position,
      turnNumber: row.turn_number,
      field: row.field,
      value: JSON.parse(row.value) as JsonValue,
      reviewer: row.reviewer,
      ...(row.note !== null ? { note: row.note } : {}),
      at: row.at,
    }));
  }
}
