/**
 * What a self-modification sets out to fix (hgm.md, "How a self-modification is made", step 1):
 * a failed task of the parent, or a theme its logs show across tasks.
 *
 * The rule is the one of the public DGM code that HGM reuses (`choose_selfimproves`), on our two
 * themes:
 * - replies the agent could not use (empty or unparseable; DGM's "empty patches"): chosen with
 *   probability 1/4 when at least 10 % of the parent's evaluations show them;
 * - context length: chosen with probability 1/4 when any evaluation of the parent shows the
 *   model's context was exceeded;
 * - otherwise a failed task of the parent.
 * DGM's third theme, "stochasticity", is drawn with probability 1/4 for every parent whatever its
 * logs show; it is left out here, as nothing in the logs calls for it. Where DGM would then pick
 * nothing (no failed task), a theme the logs show is chosen outright: it is the one thing to fix.
 *
 * Draws are fixed by (seed, ordinal). Failed tasks are taken in an order shuffled once per seed
 * and visited by ordinal, so a parent's successive improvements target different failures until
 * every one has had a turn.
 */
import { createRng } from "../../env/rng.js";

export interface NodeEvaluation {
  task: number;
  outcome: "pass" | "fail" | "error";
  /** The episode's log, as the diagnosis sees it. */
  log: string;
  /** Model replies in the episode that had no usable action (empty ones included). */
  parseErrors: number;
  /** Why it errored, or an error the episode met. */
  error?: string | null;
  /** The episode hit the model's context length. */
  contextLength?: boolean;
}

export type Theme = "unparseable_replies" | "context_length";

/** A target, with the episode the diagnosis reads (for a theme: an example of it, if any). */
export type Target =
  | { kind: "task"; task: number; evaluation: NodeEvaluation }
  | { kind: "theme"; theme: Theme; evaluation: NodeEvaluation | null };

/** DGM's gate and probability for a theme. */
export const THEME_MIN_SHARE = 0.1;
export const THEME_PROBABILITY = 0.25;

/** Tags that keep these draws apart from others made with the same seed. */
const THEME_DRAWS = 0x7e4a;
const ORDER_DRAWS = 0x0bde;

/** What a provider says when the prompt was longer than the model's context. */
const CONTEXT_LENGTH_PATTERN =
  /context[ _-]?length[ _-]?exceeded|maximum context|context (?:length|window)|too many tokens|(?:prompt|input) is too long/i;

/** The themes' descriptions, as the diagnosis and the coding agent read them. */
export const THEME_DESCRIPTIONS: Readonly<Record<Theme, string>> = {
  unparseable_replies:
    "In some episodes the model's replies could not be used: they were empty, or the agent " +
    "could not find a valid action in them (see the parse errors). Each such reply wastes a " +
    "turn or ends the episode. Make the agent more robust to this: e.g. clearer instructions on " +
    "the reply format, more lenient and precise parsing of the action, a better correction " +
    "message, or asking the model again when a reply is empty.",
  context_length:
    "In some episodes the conversation grew beyond the model's context length, and the model " +
    "call failed. Make the agent keep its prompt within bounds: e.g. keep only the recent turns " +
    "in full and summarise or drop older ones, clip long observations, keep the system prompt " +
    "short.",
};

export function showsUnparseableReplies(evaluation: NodeEvaluation): boolean {
  return evaluation.parseErrors > 0;
}

export function showsContextLength(evaluation: NodeEvaluation): boolean {
  if (evaluation.contextLength) return true;
  return CONTEXT_LENGTH_PATTERN.test(`${evaluation.error ?? ""}\n${evaluation.log}`);
}

/** The episode that shows a theme best: the most parse errors, else the first; by task order. */
function example(evaluations: readonly NodeEvaluation[], theme: Theme): NodeEvaluation | null {
  const showing = evaluations.filter(
    theme === "unparseable_replies" ? showsUnparseableReplies : showsContextLength,
  );
  if (theme === "context_length") return showing[0] ?? null;
  return showing.reduce<NodeEvaluation | null>(
    (best, e) => (best === null || e.parseErrors > best.parseErrors ? e : best),
    null,
  );
}

export interface TargetOptions {
  /** Fixes the draws for one parent: mix the search's seed with the parent's id. */
  seed: number;
  /** How many improvements of this parent were started before this one. */
  ordinal: number;
}

/**
 * What to fix in a parent with these evaluations: a failed task or a theme, else a passed task;
 * null when it has no finished evaluation. Errored evaluations are never failures; they may show
 * a theme.
 */
export function chooseTarget(
  evaluations: readonly NodeEvaluation[],
  { seed, ordinal }: TargetOptions,
): Target | null {
  const sorted = [...evaluations].sort((a, b) => a.task - b.task);
  const unparseable = sorted.filter(showsUnparseableReplies).length;
  const shown: Theme[] = [];
  if (sorted.length > 0 && unparseable >= THEME_MIN_SHARE * sorted.length) {
    shown.push("unparseable_replies");
  }
  if (sorted.some(showsContextLength)) shown.push("context_length");

  // The last failed evaluation of each failed task, in task order.
  const failed = new Map<number, NodeEvaluation>();
  for (const evaluation of sorted) {
    if (evaluation.outcome === "fail") failed.set(evaluation.task, evaluation);
  }
  const failures = [...failed.values()];

  const theme = (chosen: Theme): Target => ({
    kind: "theme",
    theme: chosen,
    evaluation: example(sorted, chosen),
  });
  if (failures.length === 0) {
    if (shown.length > 0) return theme(createRng(seed, ordinal, THEME_DRAWS).pick(shown));
    const passed = sorted.filter((evaluation) => evaluation.outcome === "pass");
    if (passed.length === 0) return null;
    const order = createRng(seed, ORDER_DRAWS).shuffle(passed);
    const evaluation = order[ordinal % order.length] as NodeEvaluation;
    return { kind: "task", task: evaluation.task, evaluation };
  }
  const draws = createRng(seed, ordinal, THEME_DRAWS);
  for (const candidate of shown) {
    if (draws.next() < THEME_PROBABILITY) return theme(candidate);
  }
  const order = createRng(seed, ORDER_DRAWS).shuffle(failures);
  const evaluation = order[ordinal % order.length] as NodeEvaluation;
  return { kind: "task", task: evaluation.task, evaluation };
}
