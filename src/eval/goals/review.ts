/**
 * Human review of the ensemble's labels: a reviewer's label of one field of one turn overrides
 * the vote (the latest review of a field is the one in force), and a queued field with a review
 * leaves the queue. Pure functions over the vote, its queue and the reviews.
 */
import type { StoredReview } from "../../store/goal-log.js";
import type { LabelField, ReviewItem } from "./agreement.js";
import type { TurnLabel, TurnLabelFields } from "./labels.js";
import { findCode, type Taxonomy } from "./taxonomy.js";

export interface TurnReview {
  turn_number: number;
  field: LabelField;
  /** is_new_goal: boolean; quality: "success" | "failure"; rcof: a code or null. */
  value: boolean | string | null;
  reviewer: string;
  at: string;
  note?: string;
}

export class ReviewValueError extends Error {
  override name = "ReviewValueError";
}

/** Checks a reviewer's value for a field (one line naming what is wrong). */
export function checkReviewValue(
  field: LabelField,
  value: unknown,
  taxonomy: Taxonomy,
  turnNumber: number,
): boolean | string | null {
  if (field === "is_new_goal") {
    if (typeof value !== "boolean") throw new ReviewValueError("is_new_goal takes true or false");
    if (turnNumber === 1 && !value) {
      throw new ReviewValueError("turn 1 always starts a goal: is_new_goal must be true");
    }
    return value;
  }
  if (field === "quality") {
    if (value !== "success" && value !== "failure") {
      throw new ReviewValueError('quality takes "success" or "failure"');
    }
    return value;
  }
  if (value === null) return null;
  if (typeof value !== "string" || !findCode(taxonomy, value)) {
    throw new ReviewValueError(
      `rcof takes a code of taxonomy ${taxonomy.name} (${taxonomy.codes.map((c) => c.code).join(", ")}) or null`,
    );
  }
  return value;
}

/** The store's review rows by conversation position, oldest first, as the functions here take them. */
export function reviewsByPosition(stored: readonly StoredReview[]): Map<number, TurnReview[]> {
  const by = new Map<number, TurnReview[]>();
  for (const r of stored) {
    const list = by.get(r.position) ?? [];
    list.push({
      turn_number: r.turnNumber,
      field: r.field,
      value: r.value as boolean | string | null,
      reviewer: r.reviewer,
      at: r.at,
      ...(r.note !== undefined ? { note: r.note } : {}),
    });
    by.set(r.position, list);
  }
  return by;
}

/** The latest review of each (turn, field). */
export function latestReviews(reviews: readonly TurnReview[]): Map<string, TurnReview> {
  const latest = new Map<string, TurnReview>();
  for (const review of reviews) latest.set(`${review.turn_number}:${review.field}`, review);
  return latest;
}

/**
 * The vote with the reviews applied. A turn reviewed as a success has no cause; one reviewed
 * as a failure keeps the cause the reviewer gave, or the vote's, or none (unattributed).
 */
export function applyReviews(
  labels: readonly TurnLabel[],
  reviews: readonly TurnReview[],
): TurnLabel[] {
  const latest = latestReviews(reviews);
  return labels.map((label) => {
    const out: TurnLabel = { ...label };
    const get = (field: LabelField) => latest.get(`${label.turn_number}:${field}`);
    const goal = get("is_new_goal");
    if (goal && typeof goal.value === "boolean") out.is_new_goal = goal.value;
    const quality = get("quality");
    if (quality && (quality.value === "success" || quality.value === "failure")) {
      out.quality = quality.value;
    }
    const rcof = get("rcof");
    if (out.quality === "success") out.rcof = null;
    else if (rcof && (rcof.value === null || typeof rcof.value === "string")) out.rcof = rcof.value;
    if (label.turn_number === 1) out.is_new_goal = true;
    return out;
  });
}

/** The queued fields that no review has settled yet. */
export function openItems(
  queue: readonly ReviewItem[],
  reviews: readonly TurnReview[],
): ReviewItem[] {
  const latest = latestReviews(reviews);
  return queue.filter((item) => {
    if (latest.has(`${item.turn_number}:${item.field}`)) return false;
    // A turn reviewed as a success has no cause left to decide (applyReviews drops it).
    return !(
      item.field === "rcof" && latest.get(`${item.turn_number}:quality`)?.value === "success"
    );
  });
}

/** A field's value of a label, as reviews store it. */
export function fieldValue(label: TurnLabelFields, field: LabelField): boolean | string | null {
  return field === "is_new_goal"
    ? label.is_new_goal
    : field === "quality"
      ? label.quality
      : label.rcof;
}
