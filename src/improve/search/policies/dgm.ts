/**
 * The Darwin Gödel Machine's search (Zhang et al., 2025) on clade's engine, as its paper and code
 * intend it:
 *
 *   parents:    the archive (the root, and every child whose staged evaluation is complete with at
 *               least one pass: the stand-in for DGM's "compiles and answers"); with
 *               `score_child_prop` (the default), p(a) ∝ sigmoid(10·(acc(a) − 0.5)) · 1/(1 + children(a))
 *   evaluation: in stages on fixed task subsets: the first 10 tasks; 50 more if ≥ 40 % of those
 *               passed; all tasks if the node's accuracy ≥ max(0.4, the archive's second best)
 *   final:      the shared ε-quantile rule (policy.ts)
 *
 * Two defects of the public code are not copied: its `--selfimprove_method` choices lack a comma
 * ('score_child_prop' 'best' is one string), so neither can be chosen, and its `best` method
 * sorts ascending and takes the worst nodes. Here all four methods can be chosen and `best`
 * takes the best. DGM runs in generations; here a free worker expands as soon as no child is owed
 * an evaluation, which is the same order with one worker. Children counts include improvements
 * of the node still in flight.
 */
import type { JsonValue } from "../../../store/search-log.js";
import type { Decision, DecisionContext, SearchPolicy } from "../policy.js";
import { quantileChoice } from "../policy.js";
import { type NodeId, ownMean, ROOT, type SearchNode, type SearchTree } from "../tree.js";
import { StagedEvaluation } from "./staged.js";

export const DGM_SELECTIONS = ["score_child_prop", "score_prop", "random", "best"] as const;
export type DgmSelection = (typeof DGM_SELECTIONS)[number];

export interface DgmHyperparameters {
  /** How parents are chosen from the archive. */
  selection: DgmSelection;
  /** Tasks of the first stage. */
  smallStage: number;
  /** Tasks added by the second stage. */
  mediumStage: number;
  /** Accuracy a stage must reach for the next one (and the floor of the last one). */
  stageThreshold: number;
  /** ε of the final choice, in percent (shared with HGM). */
  epsilon: number;
}

export const DGM_DEFAULTS: DgmHyperparameters = {
  selection: "score_child_prop",
  smallStage: 10,
  mediumStage: 50,
  stageThreshold: 0.4,
  epsilon: 1,
};

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * Each candidate parent's chance, up to a constant. score = sigmoid(10·(accuracy − 0.5));
 * children include improvements of the node in flight. `best`: the top score alone (ties share).
 */
export function dgmParentWeights(
  candidates: readonly SearchNode[],
  selection: DgmSelection,
): number[] {
  const scores = candidates.map((node) => sigmoid(10 * (ownMean(node) - 0.5)));
  switch (selection) {
    case "random":
      return candidates.map(() => 1);
    case "score_prop":
      return scores;
    case "score_child_prop":
      return candidates.map(
        (node, i) => (scores[i] as number) / (1 + node.children.length + node.pendingImprovements),
      );
    case "best": {
      const top = Math.max(...scores);
      return scores.map((score) => (score === top ? 1 : 0));
    }
  }
}

export function createDgmPolicy(overrides: Partial<DgmHyperparameters> = {}): SearchPolicy {
  const h: DgmHyperparameters = { ...DGM_DEFAULTS, ...overrides };

  /** The archive: complete nodes with a pass, and the root. */
  const archive = (tree: SearchTree): SearchNode[] =>
    stages.completeNodes(tree).filter((node) => node.id === ROOT || node.s > 0);

  /** The second-highest accuracy in the archive, other than the node's own; 0 with fewer. */
  const secondBest = (tree: SearchTree, except: NodeId): number => {
    const scores = archive(tree)
      .filter((node) => node.id !== except)
      .map(ownMean)
      .sort((a, b) => b - a);
    return scores[1] ?? 0;
  };

  const stages = new StagedEvaluation(
    () => h.smallStage,
    (node, quota, tree) => {
      const accuracy = ownMean(node);
      if (quota <= h.smallStage) return accuracy >= h.stageThreshold ? quota + h.mediumStage : null;
      if (quota <= h.smallStage + h.mediumStage) {
        const bar = Math.max(h.stageThreshold, secondBest(tree, node.id));
        return accuracy >= bar ? tree.tasks.length : null;
      }
      return null;
    },
  );

  const chooseParent = ({ tree, rng }: DecisionContext): NodeId | null => {
    const candidates = archive(tree);
    if (candidates.length === 0) return null;
    const weights = dgmParentWeights(candidates, h.selection);
    let draw = rng.next() * weights.reduce((sum, w) => sum + w, 0);
    for (let i = 0; i < candidates.length; i++) {
      draw -= weights[i] as number;
      if (draw < 0) return (candidates[i] as SearchNode).id;
    }
    return (candidates.findLast((_, i) => (weights[i] as number) > 0) as SearchNode).id;
  };

  return {
    method: "dgm",
    hyperparameters: { ...h } as Record<string, JsonValue>,

    decide(context): Decision {
      const owed = stages.nextEvaluation(context.tree);
      if (owed) return { kind: "evaluate", ...owed };
      const parent = chooseParent(context);
      return parent === null ? { kind: "wait" } : { kind: "expand", parent };
    },

    observe: (event, tree) => stages.observe(event, tree),

    cmpEstimate: ownMean,

    finalChoice: (tree) => quantileChoice(tree, h.epsilon),
  };
}
