/**
 * A goal-evaluation job's report, from what the store holds: the judges' GSR (the vote with
 * reviewers' labels applied), the ground truth's GSR where the data carried labels, agreement
 * of each judge and of the ensemble with the ground truth (per field, or per conversation's
 * outcome when the data knows only that: τ-bench's reward), agreement among the judges, each
 * judge against the reviewers, the review queue, spend and errors. Pure over the store's rows.
 */
import type { GoalRunCounts, GoalStore, StoredJudgement } from "../../store/goal-log.js";
import {
  agreementAmong,
  agreementWithReference,
  cohensKappa,
  type GroupAgreement,
  LABEL_FIELDS,
  type LabelField,
  type ReferenceAgreement,
  type ReviewItem,
  type SessionTurns,
} from "./agreement.js";
import { type Conversation, conversationSchema } from "./conversation.js";
import type { TurnLabel, TurnLabelFields } from "./labels.js";
import { computeGoalMetrics, type GoalMetrics, type SessionLabels } from "./metrics.js";
import { applyReviews, fieldValue, openItems, reviewsByPosition } from "./review.js";
import { parseTaxonomy, type Taxonomy } from "./taxonomy.js";

export interface OutcomeAgreement {
  /** Conversations compared: the labeller's "every turn succeeded" against the data's outcome. */
  items: number;
  agreed: number;
  accuracy: number;
  kappa: number;
}

export interface FieldVsHuman {
  items: number;
  agreed: number;
  accuracy: number;
  kappa: number;
}

export interface GoalReport {
  runId: string;
  status: string;
  stopReason: string | null;
  taxonomy: string;
  judges: string[];
  counts: GoalRunCounts;
  /** The judges' labels (vote, reviews applied); null without judges. */
  judged: GoalMetrics | null;
  /** From the labels that came with the data; null when none did. */
  groundTruth: (GoalMetrics & { turnLevel: boolean }) | null;
  /** Judges and ensemble against the ground truth, over conversations that have both. */
  agreement: {
    turns: { judges: ReferenceAgreement[]; ensemble: ReferenceAgreement } | null;
    outcome: { judges: OutcomeAgreement[]; ensemble: OutcomeAgreement } | null;
  } | null;
  /** Fleiss' κ among the judges (two or more). */
  among: GroupAgreement | null;
  /** Each judge against the reviewers' labels in force, per field. */
  human: {
    reviews: number;
    judges: Record<LabelField, FieldVsHuman>[];
    /** The vote as the judges cast it, before the reviews. */
    ensemble: Record<LabelField, FieldVsHuman>;
  } | null;
  review: { queued: number; open: number; reviewed: number };
  spend: {
    costUsd: number;
    unpriced: boolean;
    calls: number;
    inputTokens: number;
    outputTokens: number;
    cacheHits: number;
    /** Requests that reached the providers (retries included). */
    providerAttempts: number;
  };
  /** Errored conversations (the first 20). */
  errors: { conversation: string; error: string }[];
}

/** The job's configuration as `clade goals` stores it (the parts the report reads). */
export interface GoalRunConfig {
  judges: string[];
  taxonomy: Taxonomy;
}

export function readRunConfig(config: Record<string, unknown>, runId: string): GoalRunConfig {
  const judges = Array.isArray(config.judges) ? (config.judges as unknown[]).map(String) : [];
  const taxonomy = parseTaxonomy(config.taxonomy, `goal evaluation ${runId}: stored taxonomy`);
  return { judges, taxonomy };
}

/**
 * The data's labels as turn labels: per-turn ground truth as it is; an outcome as one goal
 * over the whole conversation, succeeded or not, its failure unattributed and put on the last
 * turn (turn-level figures then mean nothing, and the report says so).
 */
export function groundTruthTurns(conversation: Conversation): TurnLabelFields[] | undefined {
  const truth = conversation.groundTruth;
  if (!truth) return undefined;
  if (truth.kind === "turns") return truth.labels;
  const n = conversation.turns.length;
  return conversation.turns.map((t, i) => ({
    turn_number: t.turn_number,
    is_new_goal: i === 0,
    quality: truth.success || i < n - 1 ? "success" : "failure",
    rcof: null,
  }));
}

/**
 * The taxonomy the ground truth's causes are counted in: the job's, with the codes the data
 * gives that it lacks added after its own (the data's labels need not follow the taxonomy the
 * judges were given: helpdesk's RCOF causes under `--taxonomy mast`), so they are shown as
 * they came instead of failing the report.
 */
function truthTaxonomy(taxonomy: Taxonomy, sessions: readonly SessionLabels[]): Taxonomy {
  const known = new Set(taxonomy.codes.map((c) => c.code));
  const extra: Taxonomy["codes"] = [];
  for (const session of sessions) {
    if (session.status !== "labelled") continue;
    for (const turn of session.turns) {
      if (turn.rcof === null || known.has(turn.rcof)) continue;
      known.add(turn.rcof);
      extra.push({ code: turn.rcof, name: turn.rcof, definition: "a cause the data gave" });
    }
  }
  return extra.length === 0 ? taxonomy : { ...taxonomy, codes: [...taxonomy.codes, ...extra] };
}

function outcomeAgreement(pairs: readonly (readonly [boolean, boolean])[]): OutcomeAgreement {
  const agreed = pairs.filter(([a, b]) => a === b).length;
  return {
    items: pairs.length,
    agreed,
    accuracy: pairs.length === 0 ? Number.NaN : agreed / pairs.length,
    kappa: cohensKappa(pairs.map(([a, b]) => [String(a), String(b)] as const)),
  };
}

const allSucceeded = (turns: readonly TurnLabelFields[]) =>
  turns.every((t) => t.quality === "success");

/** A field's value as compared against a reviewer's: a success's rcof is "(success)". */
function comparable(label: TurnLabelFields, field: LabelField): string {
  if (field === "rcof" && label.quality === "success") return "(success)";
  return String(fieldValue(label, field));
}

export function buildGoalReport(
  store: GoalStore,
  runId: string,
  options: { seed?: number; resamples?: number } = {},
): GoalReport {
  const run = store.getRun(runId);
  if (!run) throw new RangeError(`no goal evaluation "${runId}"`);
  const { judges, taxonomy } = readRunConfig(run.config, runId);
  const bootstrap = { seed: options.seed ?? 0, resamples: options.resamples ?? 1000 };
  const rows = store.conversations(runId);
  const allReviews = store.reviews(runId);
  const reviewsBy = reviewsByPosition(allReviews);
  const judgementsBy = new Map<number, StoredJudgement[]>();
  const judgements = store.judgements(runId);
  for (const j of judgements) {
    const list = judgementsBy.get(j.position) ?? [];
    list.push(j);
    judgementsBy.set(j.position, list);
  }

  const judgedSessions: SessionLabels[] = [];
  const truthSessions: SessionLabels[] = [];
  const truthTurns: SessionTurns[] = [];
  const outcomeTruth = new Map<string, boolean>();
  const ensembleTurns: SessionTurns[] = [];
  const perJudge: SessionTurns[][] = judges.map(() => []);
  const humanPairs: [string, string][][][] = judges.map(() => LABEL_FIELDS.map(() => []));
  const votePairs: [string, string][][] = LABEL_FIELDS.map(() => []);
  let turnLevel = true;
  let queued = 0;
  let open = 0;
  const errors: { conversation: string; error: string }[] = [];

  for (const row of rows) {
    const parsed = conversationSchema.safeParse(row.conversation);
    const conversation = parsed.success ? parsed.data : undefined;
    const truth = conversation ? groundTruthTurns(conversation) : undefined;
    if (conversation && truth) {
      truthSessions.push({ id: row.conversationId, status: "labelled", turns: truth });
      if (conversation.groundTruth?.kind === "turns") {
        truthTurns.push({ id: row.conversationId, turns: truth });
      } else {
        turnLevel = false;
        outcomeTruth.set(row.conversationId, allSucceeded(truth));
      }
    }
    if (judges.length === 0) continue;
    if (row.status === "errored") {
      judgedSessions.push({ id: row.conversationId, status: "errored", error: row.error ?? "" });
      if (errors.length < 20)
        errors.push({ conversation: row.conversationId, error: row.error ?? "" });
      continue;
    }
    if (row.status !== "judged") continue;
    const reviews = reviewsBy.get(row.position) ?? [];
    const labels = applyReviews(row.labels as unknown as TurnLabel[], reviews);
    const queue = (row.queue ?? []) as unknown as ReviewItem[];
    queued += queue.length;
    open += openItems(queue, reviews).length;
    judgedSessions.push({ id: row.conversationId, status: "labelled", turns: labels });
    ensembleTurns.push({ id: row.conversationId, turns: labels });
    const latest = new Map(reviews.map((r) => [`${r.turn_number}:${r.field}`, r] as const));
    const vote = row.labels as unknown as TurnLabel[];
    for (const review of latest.values()) {
      const cast = vote[review.turn_number - 1];
      const effective = labels[review.turn_number - 1];
      if (!cast || !effective) continue;
      votePairs[LABEL_FIELDS.indexOf(review.field)]?.push([
        comparable(cast, review.field),
        comparable(effective, review.field),
      ]);
    }
    for (const j of judgementsBy.get(row.position) ?? []) {
      if (j.status !== "labelled" || j.labels === null || !perJudge[j.judge]) continue;
      const turns = j.labels as unknown as TurnLabel[];
      perJudge[j.judge]?.push({ id: row.conversationId, turns });
      for (const review of latest.values()) {
        const label = turns[review.turn_number - 1];
        if (!label) continue;
        const f = LABEL_FIELDS.indexOf(review.field);
        // The reviewed label in force: the reviewer's value of this field (an rcof of a turn
        // the reviewer calls a success compares as "(success)").
        const effective = labels[review.turn_number - 1];
        if (!effective) continue;
        const humanValue = comparable(effective, review.field);
        humanPairs[j.judge]?.[f]?.push([comparable(label, review.field), humanValue]);
      }
    }
  }

  const metric = (sessions: SessionLabels[], codes = taxonomy) =>
    computeGoalMetrics(sessions, codes, bootstrap);
  const judged = judges.length > 0 ? metric(judgedSessions) : null;
  const groundTruth =
    truthSessions.length > 0
      ? { ...metric(truthSessions, truthTaxonomy(taxonomy, truthSessions)), turnLevel }
      : null;

  let agreement: GoalReport["agreement"] = null;
  if (
    judges.length > 0 &&
    ensembleTurns.length > 0 &&
    (truthTurns.length > 0 || outcomeTruth.size > 0)
  ) {
    const turns =
      truthTurns.length > 0
        ? {
            judges: perJudge.map((labelling) => agreementWithReference(labelling, truthTurns)),
            ensemble: agreementWithReference(ensembleTurns, truthTurns),
          }
        : null;
    const outcomeOf = (labelling: readonly SessionTurns[]) =>
      outcomeAgreement(
        labelling.flatMap((s) => {
          const truth = outcomeTruth.get(s.id);
          return truth === undefined ? [] : [[allSucceeded(s.turns), truth] as const];
        }),
      );
    const outcome =
      outcomeTruth.size > 0
        ? { judges: perJudge.map(outcomeOf), ensemble: outcomeOf(ensembleTurns) }
        : null;
    agreement = { turns, outcome };
  }

  const among = judges.length >= 2 && ensembleTurns.length > 0 ? agreementAmong(perJudge) : null;
  const latestCount = new Set(allReviews.map((r) => `${r.position}:${r.turnNumber}:${r.field}`))
    .size;
  const vsHuman = (fields: readonly (readonly [string, string][])[]) =>
    Object.fromEntries(
      LABEL_FIELDS.map((field, f) => {
        const pairs = fields[f] ?? [];
        const agreed = pairs.filter(([a, b]) => a === b).length;
        return [
          field,
          {
            items: pairs.length,
            agreed,
            accuracy: pairs.length === 0 ? Number.NaN : agreed / pairs.length,
            kappa: cohensKappa(pairs),
          },
        ];
      }),
    ) as Record<LabelField, FieldVsHuman>;
  const human =
    judges.length > 0 && latestCount > 0
      ? { reviews: latestCount, judges: humanPairs.map(vsHuman), ensemble: vsHuman(votePairs) }
      : null;

  const spend = {
    costUsd: judgements.reduce((s, j) => s + j.costUsd, 0),
    unpriced: judgements.some((j) => j.unpriced),
    calls: judgements.reduce((s, j) => s + j.calls, 0),
    inputTokens: judgements.reduce((s, j) => s + j.inputTokens, 0),
    outputTokens: judgements.reduce((s, j) => s + j.outputTokens, 0),
    cacheHits: judgements.reduce((s, j) => s + j.cacheHits, 0),
    providerAttempts: judgements.reduce((s, j) => s + j.providerAttempts, 0),
  };
  return {
    runId,
    status: run.status,
    stopReason: run.stopReason,
    taxonomy: taxonomy.name,
    judges,
    // Without judges nothing waits for a verdict: the conversations are scored from their labels.
    counts:
      judges.length > 0
        ? store.counts(runId)
        : { conversations: rows.length, pending: 0, judged: 0, errored: 0 },
    judged,
    groundTruth,
    agreement,
    among,
    human,
    review: { queued, open, reviewed: queued - open },
    spend,
    errors,
  };
}
