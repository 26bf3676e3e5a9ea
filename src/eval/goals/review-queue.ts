/**
 * The review queue as a reviewer sees it: each queued turn of a judged conversation with its open
 * (or every) queued field, the vote, every judge's label and the reviews so far; and the same as
 * the items `clade review --json` lists. One reading for `clade review` and clade view.
 */
import type { GoalStore, StoredConversation } from "../../store/goal-log.js";
import { LABEL_FIELDS, type LabelField, type ReviewItem } from "./agreement.js";
import { type Conversation, type ConversationTurn, conversationSchema } from "./conversation.js";
import type { TurnLabel } from "./labels.js";
import { latestReviews, openItems, type TurnReview } from "./review.js";

export interface JudgeLabel {
  judge: number;
  model: string;
  /** The judge's label of the turn; null when the judge gave none (errored, unreadable). */
  label: TurnLabel | null;
}

export interface QueuedTurn {
  row: StoredConversation;
  conversation: Conversation;
  turnNumber: number;
  /** Its queued fields, in LABEL_FIELDS order. */
  items: ReviewItem[];
  vote: TurnLabel;
  judges: JudgeLabel[];
  /** The conversation's reviews, oldest first. */
  reviews: TurnReview[];
}

/** One queued field as `clade review --json` lists it. */
export interface QueueItem {
  conversation: string;
  position: number;
  turn_number: number;
  field: LabelField;
  reason: string;
  turn: ConversationTurn | null;
  vote: TurnLabel;
  judges: JudgeLabel[];
  /** The review in force (only with `all`: open items have none). */
  review: { value: boolean | string | null; reviewer: string; at: string; note?: string } | null;
}

/** A judged conversation's queued turns in order; none when its stored conversation is unreadable. */
export function queuedTurnsOf(
  store: GoalStore,
  runId: string,
  row: StoredConversation,
  reviews: TurnReview[],
  all: boolean,
): QueuedTurn[] {
  const queue = (row.queue ?? []) as unknown as ReviewItem[];
  if (queue.length === 0) return [];
  const items = all ? queue : openItems(queue, reviews);
  if (items.length === 0) return [];
  const parsed = conversationSchema.safeParse(row.conversation);
  if (!parsed.success) return [];
  const votes = row.labels as unknown as TurnLabel[];
  const judgements = store.judgements(runId, row.position);
  const byTurn = new Map<number, ReviewItem[]>();
  for (const item of items) {
    byTurn.set(item.turn_number, [...(byTurn.get(item.turn_number) ?? []), item]);
  }
  return [...byTurn]
    .sort((a, b) => a[0] - b[0])
    .map(([turnNumber, turnItems]) => ({
      row,
      conversation: parsed.data,
      turnNumber,
      items: [...turnItems].sort(
        (a, b) => LABEL_FIELDS.indexOf(a.field) - LABEL_FIELDS.indexOf(b.field),
      ),
      reviews,
      vote: votes[turnNumber - 1] as TurnLabel,
      judges: judgements.map((j) => ({
        judge: j.judge,
        model: j.model,
        label:
          j.status === "labelled" && j.labels !== null
            ? ((j.labels as unknown as TurnLabel[])[turnNumber - 1] ?? null)
            : null,
      })),
    }));
}

/** The queued turns' fields, one item each, with the review in force. */
export function queueItems(turns: readonly QueuedTurn[]): QueueItem[] {
  return turns.flatMap((t) => {
    const latest = latestReviews(t.reviews);
    return t.items.map((item) => {
      const done = latest.get(`${item.turn_number}:${item.field}`);
      return {
        conversation: t.row.conversationId,
        position: t.row.position,
        turn_number: item.turn_number,
        field: item.field,
        reason: item.reason,
        turn: t.conversation.turns[t.turnNumber - 1] ?? null,
        vote: t.vote,
        judges: t.judges,
        review: done
          ? {
              value: done.value,
              reviewer: done.reviewer,
              at: done.at,
              ...(done.note !== undefined ? { note: done.note } : {}),
            }
          : null,
      };
    });
  });
}
