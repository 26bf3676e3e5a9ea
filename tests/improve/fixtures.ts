/** Small deterministic processes for the search tests. */
import type { Evaluator, Improver } from "../../src/improve/search/engine.js";
import { parseScenario, type Scenario } from "../../src/improve/search/simulation/scenario.js";

/** One type, no failed improvements, no errors: the node counts are exact. */
export const EXACT: Scenario = parseScenario({
  name: "exact",
  description: "every improvement gives a child; no evaluation errors",
  tasks: 60,
  root: { type: "agent", p: 0.5 },
  types: {
    agent: { children: [{ type: "agent", p: [-0.1, 0.1], relative: true, min: 0.05, max: 0.95 }] },
  },
});

/**
 * Agents with fixed pass fractions: an agent of quality q passes task i iff (i mod 10) < 10·q,
 * so any ten consecutive tasks give exactly q. The improver hands out `children` in order (then
 * the last one again), whatever the parent.
 */
export function scripted(children: number[]): { improver: Improver; evaluator: Evaluator } {
  let next = 0;
  return {
    improver: {
      improve: async () => {
        const q = children[Math.min(next, children.length - 1)] as number;
        next += 1;
        return { child: { data: { q } } };
      },
    },
    evaluator: {
      evaluate: async (node, task) => {
        const q = (node.data as { q: number }).q;
        return { outcome: task % 10 < Math.round(10 * q) ? "pass" : "fail" };
      },
    },
  };
}
