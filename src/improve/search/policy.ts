/**
 * What a search method decides, and the final choice all methods share.
 *
 * A policy is asked, each time a worker is free, what to dispatch: expand a node (start an
 * improvement of it) or evaluate a node on one task. The engine (engine.ts) has already done what
 * every method does alike: the root is evaluated on every task first, and nothing is dispatched
 * once the budget is spent. Policies read the tree; only the engine changes it.
 */
import type { Rng } from "../../env/rng.js";
import type { JsonValue, SearchEvent } from "../../store/search-log.js";
import { type BetaSampler, betaQuantile } from "./beta.js";
import type { NodeId, SearchNode, SearchTree } from "./tree.js";

export type Decision =
  | { kind: "expand"; parent: NodeId }
  /** `position`: the task's position in the search's task list. */
  | { kind: "evaluate"; node: NodeId; position: number }
  /** Nothing to dispatch until work in flight finishes (with none in flight: exhausted). */
  | { kind: "wait" };

export interface DecisionContext {
  tree: SearchTree;
  /** T: the budget, in task evaluations of non-root nodes. */
  T: number;
  /** W: the number of workers. */
  W: number;
  /** Fixed by (seed, work number): a resumed search draws what the first attempt drew. */
  rng: Rng;
  sampler: BetaSampler;
}

export interface SearchPolicy {
  /** "hgm", "dgm", "greedy", "random". */
  readonly method: string;
  /** Its hyperparameters under their papers' names, stored with the search's configuration. */
  readonly hyperparameters: Record<string, JsonValue>;
  decide(context: DecisionContext): Decision;
  /** Sees every event once the tree has applied it, live and when a stored log is replayed. */
  observe(event: SearchEvent, tree: SearchTree): void;
  /** The method's estimate of a node's clade metaproductivity (the paper's Table 1). */
  cmpEstimate(node: SearchNode): number;
  /** The agent the search returns at the end, or null when no node has a finished evaluation. */
  finalChoice(tree: SearchTree): NodeId | null;
}

/**
 * The HGM paper's final choice, used by every method here so that they differ only in how they
 * search: the node with the largest ε-percent quantile of Beta(1 + s, 1 + f) on its own counts,
 * among nodes with at least one finished evaluation (the root included). A lower quantile rather
 * than the mean: a node with 3 passes out of 3 does not beat one with 50 out of 60. Ties go to
 * the lower id.
 */
export function quantileChoice(tree: SearchTree, epsilon: number): NodeId | null {
  const level = epsilon / 100;
  const cache = new Map<number, number>();
  let best: NodeId | null = null;
  let bestValue = Number.NEGATIVE_INFINITY;
  for (const node of tree.nodes) {
    if (node.s + node.f === 0) continue;
    const key = node.s * 1_000_003 + node.f;
    let value = cache.get(key);
    if (value === undefined) {
      value = betaQuantile(level, 1 + node.s, 1 + node.f);
      cache.set(key, value);
    }
    if (value > bestValue) {
      bestValue = value;
      best = node.id;
    }
  }
  return best;
}

/** The ε-percent quantile of Beta(1 + s, 1 + f) of a node (its final-choice score). */
export function lowerQuantile(node: SearchNode, epsilon: number): number {
  return betaQuantile(epsilon / 100, 1 + node.s, 1 + node.f);
}
