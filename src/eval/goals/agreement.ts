/**
 * Agreement between labellers of turns (judges, an ensemble, humans, ground truth), per field:
 * accuracy and Cohen's κ of one labeller against reference labels, Fleiss' κ among several,
 * and the ensemble's vote with its review queue. Pure functions over checked labels.
 *
 * Which turns a field is compared on:
 * - `is_new_goal`: every turn but the first, which starts a goal by definition (counting it
 *   would add an agreement no labeller could miss);
 * - `quality`: every turn;
 * - `rcof`: only turns that both (all) labellers call failures, each with a cause: a cause is
 *   only a claim about a failure, and disagreement about whether a turn failed is already
 *   counted under `quality`.
 *
 * κ is NaN (shown "n/a", never a crash) when no turn is compared or when chance agreement is 1,
 * i.e. every label on both sides (all sides, for Fleiss) is one and the same class: κ is then
 * 0/0 and says nothing, while the accuracy beside it still does.
 */
import type { TurnLabel, TurnLabelFields } from "./labels.js";

export const LABEL_FIELDS = ["is_new_goal", "quality", "rcof"] as const;
export type LabelField = (typeof LABEL_FIELDS)[number];

/** One labeller's labels of one conversation (a rationale, if any, plays no part). */
export interface SessionTurns {
  id: string;
  turns: readonly TurnLabelFields[];
}

/** κ for a report: three decimals, or "n/a" when it is undefined (NaN). */
export function formatKappa(kappa: number): string {
  return Number.isNaN(kappa) ? "n/a" : kappa.toFixed(3);
}

/**
 * Cohen's κ of two labellers over the same items: (p_o − p_e) / (1 − p_e), with p_o the share
 * of items they agree on and p_e = Σ_k p_A(k)·p_B(k) the agreement expected by chance from each
 * labeller's own class shares.
 */
export function cohensKappa(pairs: ReadonlyArray<readonly [string, string]>): number {
  const n = pairs.length;
  if (n === 0) return Number.NaN;
  const a = new Map<string, number>();
  const b = new Map<string, number>();
  let agreed = 0;
  for (const [x, y] of pairs) {
    if (x === y) agreed++;
    a.set(x, (a.get(x) ?? 0) + 1);
    b.set(y, (b.get(y) ?? 0) + 1);
  }
  let expected = 0;
  for (const [k, count] of a) expected += (count / n) * ((b.get(k) ?? 0) / n);
  if (expected === 1) return Number.NaN;
  return (agreed / n - expected) / (1 - expected);
}

/**
 * Fleiss' κ: each item rated by the same number m ≥ 2 of raters. With n_ij the raters putting
 * item i in class j: P_i = (Σ_j n_ij² − m) / (m(m − 1)), P̄ their mean, p_j the share of all
 * ratings in class j, P̄_e = Σ_j p_j², κ = (P̄ − P̄_e) / (1 − P̄_e).
 */
export function fleissKappa(ratings: ReadonlyArray<ReadonlyArray<string>>): number {
  const items = ratings.length;
  if (items === 0) return Number.NaN;
  const m = (ratings[0] as ReadonlyArray<string>).length;
  if (m < 2) throw new RangeError(`Fleiss' κ needs at least 2 ratings per item, got ${m}`);
  const totals = new Map<string, number>();
  let agreement = 0;
  ratings.forEach((item, i) => {
    if (item.length !== m) {
      throw new RangeError(`Fleiss' κ: item ${i} has ${item.length} ratings, item 0 has ${m}`);
    }
    const counts = new Map<string, number>();
    for (const r of item) counts.set(r, (counts.get(r) ?? 0) + 1);
    let squares = 0;
    for (const [k, c] of counts) {
      squares += c * c;
      totals.set(k, (totals.get(k) ?? 0) + c);
    }
    agreement += (squares - m) / (m * (m - 1));
  });
  const observed = agreement / items;
  let expected = 0;
  for (const c of totals.values()) expected += (c / (items * m)) ** 2;
  if (expected === 1) return Number.NaN;
  return (observed - expected) / (1 - expected);
}

/** The value a field is compared on for one turn, or undefined when the turn does not count. */
function valuesOf(field: LabelField, turns: readonly TurnLabelFields[]): string[] | undefined {
  const first = turns[0] as TurnLabelFields;
  if (field === "is_new_goal") {
    return first.turn_number === 1 ? undefined : turns.map((t) => String(t.is_new_goal));
  }
  if (field === "quality") return turns.map((t) => t.quality);
  const codes: string[] = [];
  for (const t of turns) {
    if (t.quality !== "failure" || t.rcof === null) return undefined;
    codes.push(t.rcof);
  }
  return codes;
}

/**
 * The turns that every labelling has, aligned: one array per turn with each labeller's label,
 * over the sessions all labellings share (matched by id, turns by turn_number).
 */
function alignTurns(labellings: ReadonlyArray<readonly SessionTurns[]>): {
  sessions: number;
  turns: TurnLabelFields[][];
} {
  const byId = labellings.map((labelling, l) => {
    const map = new Map<string, readonly TurnLabelFields[]>();
    for (const s of labelling) {
      if (map.has(s.id)) throw new RangeError(`labelling ${l + 1}: session ${s.id} appears twice`);
      map.set(s.id, s.turns);
    }
    return map;
  });
  const [first, ...rest] = byId;
  const aligned: TurnLabelFields[][] = [];
  let sessions = 0;
  for (const [id, turns] of first ?? new Map<string, readonly TurnLabelFields[]>()) {
    const others = rest.map((m) => m.get(id));
    if (others.some((o) => o === undefined)) continue;
    sessions++;
    const all = [turns, ...(others as (readonly TurnLabelFields[])[])];
    all.forEach((ts, l) => {
      if (ts.length !== turns.length) {
        throw new RangeError(
          `session ${id}: labelling ${l + 1} has ${ts.length} turns, labelling 1 has ${turns.length}`,
        );
      }
    });
    for (let i = 0; i < turns.length; i++) {
      const row = all.map((ts) => ts[i] as TurnLabelFields);
      const number = (row[0] as TurnLabelFields).turn_number;
      if (row.some((t) => t.turn_number !== number)) {
        throw new RangeError(`session ${id}: turn numbers differ at position ${i + 1}`);
      }
      aligned.push(row);
    }
  }
  return { sessions, turns: aligned };
}

export interface FieldAgreement {
  field: LabelField;
  /** Turns compared on this field (see the module's rules). */
  items: number;
  agreed: number;
  /** agreed / items (NaN when items is 0). */
  accuracy: number;
  /** Cohen's κ (NaN when undefined: report it as "n/a"). */
  kappa: number;
}

export interface ReferenceAgreement {
  /** Sessions present in both (the others are not compared). */
  sessions: number;
  turns: number;
  fields: Record<LabelField, FieldAgreement>;
}

/** A labeller (a judge, or the ensemble's vote) against reference labels (human or ground truth). */
export function agreementWithReference(
  labeller: readonly SessionTurns[],
  reference: readonly SessionTurns[],
): ReferenceAgreement {
  const { sessions, turns } = alignTurns([labeller, reference]);
  const field = (name: LabelField): FieldAgreement => {
    const pairs: [string, string][] = [];
    for (const row of turns) {
      const values = valuesOf(name, row);
      if (values) pairs.push([values[0] as string, values[1] as string]);
    }
    const agreed = pairs.filter(([x, y]) => x === y).length;
    return {
      field: name,
      items: pairs.length,
      agreed,
      accuracy: pairs.length === 0 ? Number.NaN : agreed / pairs.length,
      kappa: cohensKappa(pairs),
    };
  };
  return {
    sessions,
    turns: turns.length,
    fields: {
      is_new_goal: field("is_new_goal"),
      quality: field("quality"),
      rcof: field("rcof"),
    },
  };
}

export interface GroupFieldAgreement {
  field: LabelField;
  items: number;
  /** Items on which every labeller gave the same value. */
  unanimous: number;
  /** Fleiss' κ (NaN when undefined: report it as "n/a"). */
  kappa: number;
}

export interface GroupAgreement {
  labellers: number;
  sessions: number;
  turns: number;
  fields: Record<LabelField, GroupFieldAgreement>;
}

/** Agreement among two or more labellers (the ensemble's judges): Fleiss' κ per field. */
export function agreementAmong(labellings: ReadonlyArray<readonly SessionTurns[]>): GroupAgreement {
  if (labellings.length < 2) {
    throw new RangeError(`agreement among labellers needs at least 2, got ${labellings.length}`);
  }
  const { sessions, turns } = alignTurns(labellings);
  const field = (name: LabelField): GroupFieldAgreement => {
    const ratings: string[][] = [];
    for (const row of turns) {
      const values = valuesOf(name, row);
      if (values) ratings.push(values);
    }
    return {
      field: name,
      items: ratings.length,
      unanimous: ratings.filter((r) => r.every((v) => v === r[0])).length,
      kappa: fleissKappa(ratings),
    };
  };
  return {
    labellers: labellings.length,
    sessions,
    turns: turns.length,
    fields: {
      is_new_goal: field("is_new_goal"),
      quality: field("quality"),
      rcof: field("rcof"),
    },
  };
}

/** A turn's field that the vote could not settle, for a human reviewer. */
export interface ReviewItem {
  turn_number: number;
  field: LabelField;
  reason: string;
}

export interface VoteResult {
  /** One label per turn; a queued field holds a provisional value until it is reviewed. */
  labels: TurnLabel[];
  queue: ReviewItem[];
}

interface Tally {
  value: string;
  count: number;
  /** Held by more than half of the labellers. */
  majority: boolean;
}

/** The most frequent value; a tie goes to the value of the earliest labeller among the tied. */
function tally(values: readonly string[]): Tally {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best = values[0] as string;
  for (const v of values) if ((counts.get(v) ?? 0) > (counts.get(best) ?? 0)) best = v;
  const count = counts.get(best) ?? 0;
  return { value: best, count, majority: count * 2 > values.length };
}

/** "E3 (1, 2), success (3)": each value with the 1-based labellers who gave it. */
function describeVotes(values: readonly string[]): string {
  const who = new Map<string, number[]>();
  values.forEach((v, i) => {
    who.set(v, [...(who.get(v) ?? []), i + 1]);
  });
  return [...who].map(([v, ls]) => `${v} (${ls.join(", ")})`).join(", ");
}

const SUCCESS = "(success)";
const NO_CAUSE = "(no cause)";

/**
 * The ensemble's label of each turn from several labellings of one conversation (labeller
 * order matters only to break ties). Per turn and field, a value held by more than half of the
 * labellers (2 of 3) is accepted. Queued for review: any disagreement on `is_new_goal` (a
 * segmentation disagreement moves goal boundaries, so no majority settles it), and a `quality`
 * or `rcof` without a majority (with three labellers, a three-way split of the cause: e.g. E3,
 * E4 and a success). The rcof vote is over every labeller, a success counting as a vote of its
 * own, and happens only when the voted quality is a failure. A queued field keeps the most
 * frequent value (ties: the earliest labeller's) so that metrics can be computed before review.
 * The rationale is that of the first labeller whose quality and rcof match the voted label.
 */
export function voteTurns(labellings: ReadonlyArray<readonly TurnLabel[]>): VoteResult {
  if (labellings.length === 0) throw new RangeError("voting needs at least one labelling");
  const first = labellings[0] as readonly TurnLabel[];
  labellings.forEach((l, i) => {
    if (l.length !== first.length) {
      throw new RangeError(
        `labelling ${i + 1} has ${l.length} turns, labelling 1 has ${first.length}`,
      );
    }
  });
  const labels: TurnLabel[] = [];
  const queue: ReviewItem[] = [];
  for (let i = 0; i < first.length; i++) {
    const row = labellings.map((l) => l[i] as TurnLabel);
    const turn = (row[0] as TurnLabel).turn_number;
    if (row.some((t) => t.turn_number !== turn)) {
      throw new RangeError(`turn numbers differ at position ${i + 1}`);
    }

    let isNewGoal = true;
    if (i > 0) {
      const votes = row.map((t) => String(t.is_new_goal));
      isNewGoal = tally(votes).value === "true";
      if (votes.some((v) => v !== votes[0])) {
        queue.push({
          turn_number: turn,
          field: "is_new_goal",
          reason: `segmentation disagreement: is_new_goal ${describeVotes(votes)}`,
        });
      }
    }

    const qualities = row.map((t) => t.quality);
    const quality = tally(qualities);
    if (!quality.majority) {
      queue.push({
        turn_number: turn,
        field: "quality",
        reason: `no majority: quality ${describeVotes(qualities)}`,
      });
    }

    let rcof: string | null = null;
    if (quality.value === "failure") {
      const causes = row.map((t) => (t.quality === "success" ? SUCCESS : (t.rcof ?? NO_CAUSE)));
      const cause = tally(causes);
      if (cause.majority && cause.value !== SUCCESS) {
        rcof = cause.value === NO_CAUSE ? null : cause.value;
      } else {
        const failures = causes.filter((c) => c !== SUCCESS);
        const codes = failures.filter((c) => c !== NO_CAUSE);
        rcof = codes.length > 0 ? tally(codes).value : null;
        const kinds = new Set(causes).size;
        queue.push({
          turn_number: turn,
          field: "rcof",
          reason: `${kinds >= 3 ? `${kinds === 3 ? "three" : kinds}-way disagreement` : "no majority"}: rcof ${describeVotes(causes)}`,
        });
      }
    }

    const agreeing = row.find((t) => t.quality === quality.value && t.rcof === rcof) ?? row[0];
    labels.push({
      turn_number: turn,
      is_new_goal: isNewGoal,
      quality: quality.value as TurnLabel["quality"],
      rcof,
      rationale: (agreeing as TurnLabel).rationale,
    });
  }
  return { labels, queue };
}
