/**
 * Greedy search, the simplest baseline: every child is evaluated on all tasks before the next
 * expansion, and the next parent is the complete node with the best own mean (ties drawn at
 * random). It trusts an agent's own score to predict its descendants', the assumption HGM's
 * clade estimate drops.
 */
import type { JsonValue } from "../../../store/search-log.js";
import type { SearchPolicy } from "../policy.js";
import { quantileChoice } from "../policy.js";
import { ownMean } from "../tree.js";
import { StagedEvaluation } from "./staged.js";

export interface GreedyHyperparameters {
  /** ε of the final choice, in percent (shared with HGM). */
  epsilon: number;
}

export const GREEDY_DEFAULTS: GreedyHyperparameters = { epsilon: 1 };

export function createGreedyPolicy(overrides: Partial<GreedyHyperparameters> = {}): SearchPolicy {
  const h: GreedyHyperparameters = { ...GREEDY_DEFAULTS, ...overrides };
  const stages = new StagedEvaluation(
    (tree) => tree.tasks.length,
    () => null,
  );
  return {
    method: "greedy",
    hyperparameters: { ...h } as Record<string, JsonValue>,

    decide({ tree, rng }) {
      const owed = stages.nextEvaluation(tree);
      if (owed) return { kind: "evaluate", ...owed };
      const candidates = stages.completeNodes(tree).filter((node) => node.s + node.f > 0);
      if (candidates.length === 0) return { kind: "wait" };
      const top = Math.max(...candidates.map(ownMean));
      const parent = rng.pick(candidates.filter((node) => ownMean(node) === top));
      return { kind: "expand", parent: parent.id };
    },

    observe: (event, tree) => stages.observe(event, tree),

    cmpEstimate: ownMean,

    finalChoice: (tree) => quantileChoice(tree, h.epsilon),
  };
}
