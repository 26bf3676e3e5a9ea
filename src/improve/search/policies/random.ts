/**
 * Random search, the floor every method should clear: every child is evaluated on all tasks
 * before the next expansion, and the next parent is drawn uniformly from the complete nodes.
 */
import type { JsonValue } from "../../../store/search-log.js";
import type { SearchPolicy } from "../policy.js";
import { quantileChoice } from "../policy.js";
import { ownMean } from "../tree.js";
import { StagedEvaluation } from "./staged.js";

export interface RandomHyperparameters {
  /** ε of the final choice, in percent (shared with HGM). */
  epsilon: number;
}

export const RANDOM_DEFAULTS: RandomHyperparameters = { epsilon: 1 };

export function createRandomPolicy(overrides: Partial<RandomHyperparameters> = {}): SearchPolicy {
  const h: RandomHyperparameters = { ...RANDOM_DEFAULTS, ...overrides };
  const stages = new StagedEvaluation(
    (tree) => tree.tasks.length,
    () => null,
  );
  return {
    method: "random",
    hyperparameters: { ...h } as Record<string, JsonValue>,

    decide({ tree, rng }) {
      const owed = stages.nextEvaluation(tree);
      if (owed) return { kind: "evaluate", ...owed };
      const candidates = stages.completeNodes(tree);
      if (candidates.length === 0) return { kind: "wait" };
      return { kind: "expand", parent: rng.pick(candidates).id };
    },

    observe: (event, tree) => stages.observe(event, tree),

    // Random search estimates nothing; its nodes' own means stand in, as for the other baselines.
    cmpEstimate: ownMean,

    finalChoice: (tree) => quantileChoice(tree, h.epsilon),
  };
}
