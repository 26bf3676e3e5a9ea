/**
 * The ensemble of teacher judges on one conversation: every judge labels it (in parallel), the
 * labels are put to the vote (agreement.ts `voteTurns`: 2 of 3 accepted; a three-way split or
 * any segmentation disagreement queued for review). One judge failing makes the conversation
 * an error: a vote of the remaining judges would be a label no one agreed to ask for.
 *
 * Judgements already made (a resumed job) are passed in and not asked again; each new one is
 * handed to `onJudgement` as soon as it is made, so the caller can store it before the others
 * finish and a kill loses at most the judgements in flight.
 */
import { type ReviewItem, voteTurns } from "./agreement.js";
import type { Conversation } from "./conversation.js";
import {
  type Judge,
  type JudgeCallOptions,
  JudgeError,
  type Judgement,
  type JudgeSettings,
  type JudgeUsage,
  judgeConversation,
} from "./judge.js";
import type { TurnLabel } from "./labels.js";

export type JudgeOutcome =
  | { status: "labelled"; judgement: Judgement }
  | { status: "errored"; error: string; spend: JudgeUsage; rejected: readonly string[] };

export type EnsembleOutcome =
  | { status: "judged"; labels: TurnLabel[]; queue: ReviewItem[]; outcomes: JudgeOutcome[] }
  | { status: "errored"; error: string; outcomes: JudgeOutcome[] };

export interface EnsembleOptions {
  signal?: AbortSignal;
  /** Judgements stored earlier, by judge index: labelled ones are kept, the rest asked again. */
  earlier?: ReadonlyArray<JudgeOutcome | undefined>;
  /** Called with each judgement made now (not the earlier ones), as soon as it is made. */
  onJudgement?: (index: number, outcome: JudgeOutcome) => void;
}

async function judgeOnce(
  judge: Judge,
  conversation: Conversation,
  settings: JudgeSettings,
  call: JudgeCallOptions,
): Promise<JudgeOutcome> {
  try {
    return {
      status: "labelled",
      judgement: await judgeConversation(judge, conversation, settings, call),
    };
  } catch (error) {
    if (error instanceof JudgeError) {
      return {
        status: "errored",
        error: error.message,
        spend: error.spend,
        rejected: error.rejected,
      };
    }
    throw error;
  }
}

export async function judgeWithEnsemble(
  judges: readonly Judge[],
  conversation: Conversation,
  settings: JudgeSettings,
  options: EnsembleOptions = {},
): Promise<EnsembleOutcome> {
  if (judges.length === 0) throw new RangeError("an ensemble needs at least one judge");
  const outcomes = await Promise.all(
    judges.map(async (judge, index) => {
      const earlier = options.earlier?.[index];
      if (earlier?.status === "labelled") return earlier;
      const outcome = await judgeOnce(judge, conversation, settings, {
        index,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      // Every judgement is handed on: one made (labelled) even if the signal came meanwhile,
      // since asking it again would judge the conversation twice; one the signal cut short as
      // an error, so that what its calls cost is counted; it is asked again on resume.
      options.onJudgement?.(index, outcome);
      return outcome;
    }),
  );
  const failed = outcomes.flatMap((o) => (o.status === "errored" ? [o.error] : []));
  if (failed.length > 0) return { status: "errored", error: failed.join("; "), outcomes };
  const labellings = outcomes.map((o) => (o as { judgement: Judgement }).judgement.labels);
  const { labels, queue } = voteTurns(labellings);
  return { status: "judged", labels, queue, outcomes };
}
