/**
 * The Huxley-Gödel Machine's search policy (Wang, Piękos and Schmidhuber, 2025), as the paper
 * states it (shared/reference/hgm.md; docs/search.md):
 *
 *   widening:  expand while t^α ≥ (non-root nodes + improvements in flight), else evaluate
 *   expand:    Thompson sampling on Beta(τ·(1 + sC), τ·(1 + fC)) over the nodes with at least
 *              one finished evaluation and a mean above 0 (the root included)
 *   evaluate:  Thompson sampling on Beta(τ·(1 + s), τ·(1 + f + pending)) over the non-root nodes
 *              with tasks not yet dispatched to them; one of those tasks, uniformly
 *   cool-down: τ(t) = (T / (T − t))^β, and 1e4 once t ≥ T (on by default, as in the paper's
 *              runs; the public code ships it off)
 *   start:     the root evaluated on every task (the engine does it for every method) and
 *              min(5, ⌊W^α⌋) improvements of the root
 *   final:     the node with the largest ε-percent quantile of Beta(1 + s, 1 + f)
 *
 * t counts evaluations of non-root nodes, at dispatch. `pending` is the pending-work rule: an
 * evaluation in flight counts as a fail of its node until it finishes, so that parallel workers
 * do not all draw the same node (docs/search.md). Departures from the public code: cool-down on,
 * clade counts that never touch own counts (tree.ts), pending work counted, a final choice.
 */
import type { JsonValue } from "../../../store/search-log.js";
import type { Decision, DecisionContext, SearchPolicy } from "../policy.js";
import { quantileChoice } from "../policy.js";
import { cladeMean, type NodeId, ROOT, type SearchTree } from "../tree.js";

export interface HgmHyperparameters {
  /** α: the widening exponent. */
  alpha: number;
  /** β: the cool-down exponent. */
  beta: number;
  /** Whether τ follows the cool-down; off: τ = 1 throughout (the public code's default). */
  coolDown: boolean;
  /** ε: the final choice's quantile, in percent. */
  epsilon: number;
  /** Improvements of the root started first; null: min(5, ⌊W^α⌋). */
  initialExpansions: number | null;
  /** The pending-work rule: an evaluation in flight counts as a fail of its node. */
  pendingAsFail: boolean;
}

/** The paper's defaults (T = 800 and W = 16–20 are the engine's, as --budget and --workers). */
export const HGM_DEFAULTS: HgmHyperparameters = {
  alpha: 0.6,
  beta: 1,
  coolDown: true,
  epsilon: 1,
  initialExpansions: null,
  pendingAsFail: true,
};

/** τ once the budget is spent: the sampler then all but picks the posterior mean. */
export const SPENT_TAU = 1e4;

/** τ(t) = (T / (T − t))^β, 1e4 once t ≥ T. */
export function coolDownTau(t: number, T: number, beta: number): number {
  if (t >= T) return SPENT_TAU;
  return (T / (T - t)) ** beta;
}

/** min(5, ⌊W^α⌋), the paper's number of improvements of the root at the start. */
export function initialExpansionsFor(W: number, alpha: number): number {
  return Math.min(5, Math.floor(W ** alpha));
}

export function createHgmPolicy(overrides: Partial<HgmHyperparameters> = {}): SearchPolicy {
  const h: HgmHyperparameters = { ...HGM_DEFAULTS, ...overrides };
  const tauAt = (t: number, T: number) => (h.coolDown ? coolDownTau(t, T, h.beta) : 1);

  /** Thompson sampling over clade counts: the parent of the next improvement, or null. */
  const chooseParent = ({ tree, T, sampler }: DecisionContext): NodeId | null => {
    const tau = tauAt(tree.t, T);
    const { s, sC, fC } = tree.counts;
    let best: NodeId | null = null;
    let bestDraw = -1;
    for (let id = 0; id < tree.size; id++) {
      if (s[id] === 0) continue; // no finished evaluation, or a mean of 0
      const draw = sampler.beta(tau * (1 + (sC[id] as number)), tau * (1 + (fC[id] as number)));
      if (draw > bestDraw) {
        bestDraw = draw;
        best = id;
      }
    }
    return best;
  };

  /** Thompson sampling over own counts: the next node to evaluate, or null. */
  const chooseEvaluated = ({ tree, T, sampler }: DecisionContext): NodeId | null => {
    const tau = tauAt(tree.t, T);
    const { s, f, pending, open } = tree.counts;
    const pendingWeight = h.pendingAsFail ? 1 : 0;
    let best: NodeId | null = null;
    let bestDraw = -1;
    for (let id = 1; id < tree.size; id++) {
      if (open[id] === 0) continue;
      const fails = (f[id] as number) + pendingWeight * (pending[id] as number);
      const draw = sampler.beta(tau * (1 + (s[id] as number)), tau * (1 + fails));
      if (draw > bestDraw) {
        bestDraw = draw;
        best = id;
      }
    }
    return best;
  };

  const expand = (parent: NodeId): Decision => ({ kind: "expand", parent });
  const evaluate = (tree: SearchTree, node: NodeId, context: DecisionContext): Decision => ({
    kind: "evaluate",
    node,
    position: tree.randomOpenTask(node, context.rng),
  });

  return {
    method: "hgm",
    hyperparameters: { ...h } as Record<string, JsonValue>,

    decide(context) {
      const { tree, W } = context;
      const initial = h.initialExpansions ?? initialExpansionsFor(W, h.alpha);
      if (tree.improvementsStarted < initial) return expand(ROOT);

      const wantsExpansion = tree.t ** h.alpha >= tree.size - 1 + tree.pendingImprovements;
      if (wantsExpansion) {
        const parent = chooseParent(context);
        if (parent !== null) return expand(parent);
      }
      const node = chooseEvaluated(context);
      if (node !== null) return evaluate(tree, node, context);
      // Nothing to evaluate. A child on its way will give something; with none coming, the
      // search would stand still, so it expands whatever the widening rule said.
      if (!wantsExpansion && tree.pendingImprovements === 0) {
        const parent = chooseParent(context);
        if (parent !== null) return expand(parent);
      }
      return { kind: "wait" };
    },

    observe() {},

    cmpEstimate: cladeMean,

    finalChoice: (tree) => quantileChoice(tree, h.epsilon),
  };
}
