/**
 * A judging job over a stored set of conversations: at most `concurrency` judge calls in flight,
 * that is concurrency ÷ judges conversations at once (at least one), each judged by the whole
 * ensemble at once, every judgement stored as soon as it is made and each verdict
 * as soon as the last judge answers. Resumable after a kill: pending and errored conversations
 * are taken up again, and a judge with a stored label for a conversation is never asked again,
 * so no conversation is judged twice (an errored one is asked again only of the judges that
 * failed). A budget stops new conversations from starting once the stored spend reaches it;
 * those in flight finish and are stored.
 */
import { setMaxListeners } from "node:events";
import type { GoalRunCounts, GoalStore, StoredJudgement } from "../../store/goal-log.js";
import type { JsonValue } from "../../store/search-log.js";
import { type Conversation, conversationSchema } from "./conversation.js";
import { type JudgeOutcome, judgeWithEnsemble } from "./ensemble.js";
import type { Judge, JudgeSettings } from "./judge.js";
import type { TurnLabel } from "./labels.js";

export interface GoalJobProgress {
  /** Conversations with a verdict (judged or errored), this session and earlier. */
  done: number;
  total: number;
  judged: number;
  errored: number;
  /** Turn fields queued for review so far, over judged conversations. */
  queued: number;
  spentUsd: number;
}

export interface GoalJobOptions {
  store: GoalStore;
  runId: string;
  judges: readonly Judge[];
  settings: JudgeSettings;
  /**
   * Judge calls in flight at most, as a provider's limits count them: a conversation asks all
   * its judges at once, so concurrency ÷ judges conversations run at once (at least one).
   */
  concurrency: number;
  /** Aborts calls in flight (a signal): what they had not finished is asked again on resume. */
  signal?: AbortSignal;
  /** Stop starting conversations once the job's stored spend reaches this (USD). */
  budgetUsd?: number;
  onProgress?: (progress: GoalJobProgress) => void;
}

export interface GoalJobResult {
  stopReason: "signal" | "budget" | null;
  counts: GoalRunCounts;
  spentUsd: number;
  /** Conversations given a verdict in this session. */
  verdicts: number;
}

/** A stored labelled judgement, as the ensemble takes an earlier one. */
function earlierOutcome(row: StoredJudgement): JudgeOutcome | undefined {
  if (row.status !== "labelled" || row.labels === null) return undefined;
  return {
    status: "labelled",
    judgement: {
      labels: row.labels as unknown as TurnLabel[],
      normalised: [],
      reasoning: row.reasoning ?? "",
      answers: row.answers,
      rejected: row.rejected,
      spend: {
        calls: row.calls,
        usage: { inputTokens: row.inputTokens, outputTokens: row.outputTokens },
        costUsd: row.costUsd,
        unpriced: row.unpriced,
        latencyMs: row.latencyMs,
        cacheHits: row.cacheHits,
        providerAttempts: row.providerAttempts,
      },
    },
  };
}

/**
 * The job's store writes, committed together at the end of the event-loop turn they were made
 * in: at hundreds of judgements a second, one transaction per write cost a fifth of the job's
 * CPU, and the three judges of a conversation usually answer within one turn. A write is durable
 * one turn after it is made (a kill in between loses it as it would lose a reply still on the
 * wire); the job flushes at its end, however it ends, and a failed commit stops it.
 */
const WRITE_BATCH_MAX = 256;

class WriteBatch {
  private writes: (() => void)[] = [];
  private committed: (() => void)[] = [];
  private scheduled = false;
  private failure: unknown;

  constructor(private readonly store: GoalStore) {}

  /** Queues a write; `then` runs once it is committed (progress reports what is stored). */
  add(write: () => void, then?: () => void): void {
    this.writes.push(write);
    if (then) this.committed.push(then);
    // Judges that answer without I/O (test doubles, cache hits) never let the turn end.
    if (this.writes.length >= WRITE_BATCH_MAX) {
      this.flush();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    const writes = this.writes;
    const committed = this.committed;
    this.writes = [];
    this.committed = [];
    if (writes.length === 0 || this.failure !== undefined) return;
    try {
      this.store.db.transaction(() => {
        for (const write of writes) write();
      })();
    } catch (error) {
      this.failure = error;
      return;
    }
    for (const then of committed) then();
  }

  /** Throws the first failed commit's error. */
  check(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Conversations judged at once when `concurrency` judge calls may be in flight. */
export function conversationsAtOnce(concurrency: number, judges: number): number {
  return Math.max(1, Math.floor(concurrency / judges));
}

export async function runGoalJob(options: GoalJobOptions): Promise<GoalJobResult> {
  const { store, runId, judges, settings } = options;
  if (judges.length === 0) throw new RangeError("a judging job needs at least one judge");
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
  }
  const todo = store.conversations(runId, ["pending", "errored"]);
  const initial = store.counts(runId);
  let judged = initial.judged;
  let errored = 0;
  let queued = store.queuedFields(runId);
  let spentUsd = store.spentUsd(runId);
  let verdicts = 0;
  let budgetReached = options.budgetUsd !== undefined && spentUsd >= options.budgetUsd;
  const progress = () =>
    options.onProgress?.({
      done: judged + errored,
      total: initial.conversations,
      judged,
      errored,
      queued,
      spentUsd,
    });

  const batch = new WriteBatch(store);
  // Every judge call in flight listens to the signal (hundreds at a high concurrency): not a
  // leak, so the job listens through a signal of its own without Node's listener warning.
  const job = new AbortController();
  setMaxListeners(0, job.signal);
  const forward = () => job.abort(options.signal?.reason);
  if (options.signal?.aborted) forward();
  else options.signal?.addEventListener("abort", forward, { once: true });
  const signal = job.signal;
  // The counts, and the progress they feed, follow what is committed.
  const recordError = (position: number, error: string) =>
    batch.add(
      () => store.setVerdict(runId, position, { status: "errored", error }),
      () => {
        errored++;
        verdicts++;
        progress();
      },
    );
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      batch.check();
      if (signal.aborted || budgetReached) return;
      const row = todo[next++] as (typeof todo)[number];
      const parsed = conversationSchema.safeParse(row.conversation);
      if (!parsed.success) {
        // Damaged in the store: said once, never judged, never scored.
        recordError(
          row.position,
          `stored conversation ${row.conversationId} does not parse: ${parsed.error.issues[0]?.message ?? "invalid"}`,
        );
        continue;
      }
      const conversation: Conversation = parsed.data;
      const earlier: (JudgeOutcome | undefined)[] = [];
      for (const stored of store.judgements(runId, row.position)) {
        earlier[stored.judge] = earlierOutcome(stored);
      }
      const outcome = await judgeWithEnsemble(judges, conversation, settings, {
        earlier,
        signal,
        onJudgement: (index, made) => {
          const judge = judges[index] as Judge;
          const spend = made.status === "labelled" ? made.judgement.spend : made.spend;
          const input = {
            position: row.position,
            judge: index,
            model: judge.model,
            status: made.status,
            labels:
              made.status === "labelled" ? (made.judgement.labels as unknown as JsonValue) : null,
            reasoning: made.status === "labelled" ? made.judgement.reasoning : null,
            error: made.status === "errored" ? made.error : null,
            rejected: made.status === "labelled" ? made.judgement.rejected : made.rejected,
            answers: made.status === "labelled" ? made.judgement.answers : made.rejected.length,
            calls: spend.calls,
            inputTokens: spend.usage.inputTokens,
            outputTokens: spend.usage.outputTokens,
            costUsd: spend.costUsd,
            unpriced: spend.unpriced,
            latencyMs: spend.latencyMs,
            cacheHits: spend.cacheHits,
            providerAttempts: spend.providerAttempts,
          } as const;
          batch.add(() => store.saveJudgement(runId, input));
          spentUsd += spend.costUsd;
          if (options.budgetUsd !== undefined && spentUsd >= options.budgetUsd) {
            budgetReached = true;
          }
        },
      });
      // A judgement cut short by the signal is not a verdict: the conversation stays as it was.
      if (signal.aborted) return;
      if (outcome.status === "judged") {
        batch.add(
          () =>
            store.setVerdict(runId, row.position, {
              status: "judged",
              labels: outcome.labels as unknown as JsonValue,
              queue: outcome.queue as unknown as JsonValue,
            }),
          () => {
            judged++;
            queued += outcome.queue.length;
            verdicts++;
            progress();
          },
        );
      } else {
        recordError(row.position, outcome.error);
      }
    }
  };
  try {
    await Promise.all(
      Array.from(
        {
          length: Math.min(
            conversationsAtOnce(options.concurrency, judges.length),
            Math.max(todo.length, 1),
          ),
        },
        worker,
      ),
    );
  } finally {
    options.signal?.removeEventListener("abort", forward);
    batch.flush();
  }
  batch.check();
  const counts = store.counts(runId);
  // Conversations left unstarted for the budget may be pending or errored (asked again on
  // resume): either way the job stopped short.
  const stopReason = signal.aborted
    ? "signal"
    : budgetReached && next < todo.length
      ? "budget"
      : null;
  return { stopReason, counts, spentUsd, verdicts };
}
