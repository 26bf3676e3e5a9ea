/**
 * Turns → goals. A goal is a run of turns that starts at a turn labelled `is_new_goal` and lasts
 * until the next one; it succeeds only if every turn in it succeeds, and a failed goal's root
 * cause is the rcof of its earliest failed turn (later failures often follow from the first).
 */
import type { TurnLabel, TurnLabelFields } from "./labels.js";

export interface Goal<T extends TurnLabelFields = TurnLabel> {
  /** 1-based position of the goal in its conversation. */
  goalNumber: number;
  /** turn_number of the goal's first and last turn. */
  firstTurn: number;
  lastTurn: number;
  turns: T[];
  /** Every turn of the goal succeeded. */
  success: boolean;
  /** More than one turn. */
  multiTurn: boolean;
  /** turn_number of the earliest failed turn, null when the goal succeeded. */
  firstFailedTurn: number | null;
  /** That turn's rcof; null when the goal succeeded, or when the failure carries no cause. */
  rootCause: string | null;
}

function goalOf<T extends TurnLabelFields>(goalNumber: number, turns: T[]): Goal<T> {
  const firstFailed = turns.find((t) => t.quality === "failure");
  return {
    goalNumber,
    firstTurn: (turns[0] as T).turn_number,
    lastTurn: (turns[turns.length - 1] as T).turn_number,
    turns,
    success: firstFailed === undefined,
    multiTurn: turns.length > 1,
    firstFailedTurn: firstFailed?.turn_number ?? null,
    rootCause: firstFailed?.rcof ?? null,
  };
}

/**
 * The goals of one conversation's labels, in order. The labels are taken in the order given
 * (checkTurnLabels has made them 1..n); a first turn that does not say `is_new_goal` still opens
 * the first goal, as the first turn always starts one.
 */
export function segmentGoals<T extends TurnLabelFields>(turns: readonly T[]): Goal<T>[] {
  const goals: Goal<T>[] = [];
  let current: T[] = [];
  for (const turn of turns) {
    if (turn.is_new_goal && current.length > 0) {
      goals.push(goalOf(goals.length + 1, current));
      current = [];
    }
    current.push(turn);
  }
  if (current.length > 0) goals.push(goalOf(goals.length + 1, current));
  return goals;
}
