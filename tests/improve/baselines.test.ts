/**
 * The baselines on the same engine: DGM's staged evaluation and parent selection (all four
 * methods selectable, `best` taking the best: the public code's two defects not copied), greedy
 * expanding the best own mean, random expanding uniformly; every method stops at the same budget.
 */
import { describe, expect, it } from "vitest";
import { memoryLog, runSearch } from "../../src/improve/search/engine.js";
import {
  createDgmPolicy,
  DGM_DEFAULTS,
  DGM_SELECTIONS,
  type DgmSelection,
  dgmParentWeights,
} from "../../src/improve/search/policies/dgm.js";
import { createPolicy, METHODS } from "../../src/improve/search/policies/index.js";
import type { SearchPolicy } from "../../src/improve/search/policy.js";
import { runSimulatedSearch } from "../../src/improve/search/simulation/experiment.js";
import { builtinScenario } from "../../src/improve/search/simulation/index.js";
import type { Scenario } from "../../src/improve/search/simulation/scenario.js";
import { ownMean, type SearchNode, SearchTree } from "../../src/improve/search/tree.js";
import type { SearchEvent } from "../../src/store/search-log.js";
import { scripted } from "./fixtures.js";

/** A search over scripted agents of fixed quality (fixtures.ts), on 100 tasks. */
async function scriptedSearch(policy: SearchPolicy, children: number[], T: number) {
  const events: SearchEvent[] = [];
  const { improver, evaluator } = scripted(children);
  const result = await runSearch({
    policy,
    improver,
    evaluator,
    tasks: Array.from({ length: 100 }, (_, i) => i),
    T,
    W: 1,
    seed: 3,
    rootData: { q: 0.3 },
    log: memoryLog(events),
  });
  return { tree: result.tree, events };
}

const evaluated = (node: SearchNode) => node.s + node.f;

describe("DGM", () => {
  it("has DGM's defaults", () => {
    expect(DGM_DEFAULTS).toEqual({
      selection: "score_child_prop",
      smallStage: 10,
      mediumStage: 50,
      stageThreshold: 0.4,
      epsilon: 1,
    });
  });

  it("evaluates in stages: 10 tasks; 50 more at ≥ 40 %; all at ≥ max(0.4, second best)", async () => {
    // Children, in order: 1.0, 0.0, 0.5, 0.4, then 0.0 for ever. The root is at 0.3.
    const { tree } = await scriptedSearch(createDgmPolicy(), [1, 0, 0.5, 0.4, 0], 600);
    const [, a, b, c, d] = tree.nodes as SearchNode[];
    expect(evaluated(a as SearchNode)).toBe(100); // 1.0 ≥ max(0.4, 0.3): all
    expect(evaluated(b as SearchNode)).toBe(10); // 0 < 0.4: stops after 10
    expect(evaluated(c as SearchNode)).toBe(100); // 0.5 ≥ max(0.4, second best 0.3)
    expect(evaluated(d as SearchNode)).toBe(60); // 0.4 < max(0.4, second best 0.5)
    // Stages run on the same fixed tasks for every node, in the task list's order.
    expect(tree.evaluated(b?.id as number, 9)).toBe(true);
    expect(tree.evaluated(b?.id as number, 10)).toBe(false);
    // A child owed an evaluation is evaluated before anything else is expanded: improvements
    // only start once no stage is unfinished.
    expect(tree.improvementsStarted).toBeGreaterThan(10);
  });

  it("weights parents: score_child_prop, score_prop, random, and best takes the best", () => {
    const node = (s: number, f: number, children: number) =>
      ({
        s,
        f,
        children: Array.from({ length: children }, (_, i) => i),
        pendingImprovements: 0,
      }) as unknown as SearchNode;
    const nodes = [node(3, 7, 0), node(9, 1, 3), node(5, 5, 1)];
    const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
    const scores = nodes.map((n) => sigmoid(10 * (ownMean(n) - 0.5)));
    expect(dgmParentWeights(nodes, "score_child_prop")).toEqual([
      scores[0],
      (scores[1] as number) / 4,
      (scores[2] as number) / 2,
    ]);
    expect(dgmParentWeights(nodes, "score_prop")).toEqual(scores);
    expect(dgmParentWeights(nodes, "random")).toEqual([1, 1, 1]);
    // The public code sorts ascending and takes the first: the worst. Here: the best.
    expect(dgmParentWeights(nodes, "best")).toEqual([0, 1, 0]);
  });

  it.each(DGM_SELECTIONS)(
    "selection %s can be chosen and runs",
    async (selection: DgmSelection) => {
      const policy = createDgmPolicy({ selection });
      expect(policy.hyperparameters.selection).toBe(selection);
      const { tree, events } = await scriptedSearch(policy, [0.5, 1, 0.2, 0.6, 0.7, 0.4], 500);
      expect(tree.t).toBe(500);
      if (selection === "best") {
        // Once the 1.0 agent (node 2) is complete, it is the only parent.
        const replay = new SearchTree(tree.tasks);
        for (const event of events) {
          if (
            event.type === "improvement_started" &&
            replay.size > 2 &&
            evaluated(replay.node(2)) === 100
          ) {
            expect(event.parent).toBe(2);
          }
          replay.apply(event);
        }
      }
    },
  );
});

describe("greedy and random", () => {
  it("greedy evaluates each child on every task, then expands the best own mean", async () => {
    const { tree, events } = await scriptedSearch(
      createPolicy("greedy"),
      [0.5, 0.8, 0.2, 0.6],
      700,
    );
    const replay = new SearchTree(tree.tasks);
    let expansions = 0;
    for (const event of events) {
      if (event.type === "improvement_started") {
        expansions += 1;
        const complete = replay.nodes.filter((n) => n.openTasks === 0 && n.pending === 0);
        expect(complete.length).toBe(replay.size); // no child is left half evaluated
        const best = Math.max(...complete.map(ownMean));
        expect(ownMean(replay.node(event.parent))).toBe(best);
      }
      replay.apply(event);
    }
    expect(expansions).toBeGreaterThan(5);
  });

  it("random draws parents uniformly from the complete nodes", async () => {
    const parents = new Map<number, number>();
    for (let seed = 0; seed < 30; seed++) {
      const { result } = await runSimulatedSearch({
        scenario: builtinScenario("steady") as Scenario,
        method: "random",
        seed,
        T: 180,
        W: 1,
      });
      // Three children, each evaluated on all 60 tasks: the 2nd chose between 2 nodes, the 3rd between 3.
      const third = result.tree.nodes[3];
      if (third?.parent !== undefined && third.parent !== null) {
        parents.set(third.parent, (parents.get(third.parent) ?? 0) + 1);
      }
    }
    expect(parents.size).toBe(3);
  });
});

describe("the same budget", () => {
  it.each(METHODS)("%s stops at t = T", async (method) => {
    const { result } = await runSimulatedSearch({
      scenario: builtinScenario("trap") as Scenario,
      method,
      seed: 0,
      T: 250,
      W: 1,
    });
    expect(result.tree.t).toBe(250);
    expect(result.stopReason).toBe("budget");
    expect(result.chosen).not.toBeNull();
  });
});
