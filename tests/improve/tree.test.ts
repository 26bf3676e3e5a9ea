/**
 * The tree as a fold of the log: own counts are only ever a node's own passes and fails, clade
 * counts are the sums over the clade (kept incrementally, never written into own counts), errors
 * are never fails, and an event out of order is refused.
 */
import { describe, expect, it } from "vitest";
import { memoryLog, runSearch } from "../../src/improve/search/engine.js";
import { createPolicy, METHODS } from "../../src/improve/search/policies/index.js";
import { builtinScenario, createSimulatedWork } from "../../src/improve/search/simulation/index.js";
import { SearchTree } from "../../src/improve/search/tree.js";
import type { SearchEvent } from "../../src/store/search-log.js";

const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** A search over the trap scenario, its log kept. */
async function grownTree(method: (typeof METHODS)[number], seed: number) {
  const scenario = builtinScenario("trap");
  if (!scenario) throw new Error("no trap scenario");
  const work = createSimulatedWork(scenario, seed);
  const events: SearchEvent[] = [];
  const result = await runSearch({
    policy: createPolicy(method),
    improver: work.improver,
    evaluator: work.evaluator,
    tasks: Array.from({ length: scenario.tasks }, (_, i) => i),
    T: 400,
    W: 1,
    seed,
    rootData: { ...work.root },
    log: memoryLog(events),
  });
  return { tree: result.tree, events };
}

describe("own and clade counts", () => {
  it.each(METHODS)(
    "%s: own counts are the node's own results; clade counts sum the clade",
    async (method) => {
      const { tree, events } = await grownTree(method, 4);
      expect(tree.size).toBeGreaterThan(5);
      // Own counts straight from the log, node by node.
      const own = new Map<number, { s: number; f: number }>();
      for (const event of events) {
        if (event.type !== "evaluation_finished" || event.outcome === "error") continue;
        const counts = own.get(event.node) ?? { s: 0, f: 0 };
        if (event.outcome === "pass") counts.s += 1;
        else counts.f += 1;
        own.set(event.node, counts);
      }
      for (const node of tree.nodes) {
        expect({ s: node.s, f: node.f }).toEqual(own.get(node.id) ?? { s: 0, f: 0 });
      }
      // Clade counts recomputed from scratch: a node plus its descendants.
      const clade = (id: number): { s: number; f: number } =>
        tree.node(id).children.reduce(
          (sum, child) => {
            const below = clade(child);
            return { s: sum.s + below.s, f: sum.f + below.f };
          },
          { s: tree.node(id).s, f: tree.node(id).f },
        );
      for (const node of tree.nodes) expect({ s: node.sC, f: node.fC }).toEqual(clade(node.id));
      // The root's clade is the whole tree; an ancestor's own counts are not its clade's.
      expect(tree.node(0).sC).toBe(tree.passes);
      expect(tree.nodes.some((n) => n.children.length > 0 && n.sC + n.fC > n.s + n.f)).toBe(true);
    },
  );

  it("reading clade counts, or growing the tree under a node, leaves its own counts alone", () => {
    const tree = new SearchTree([0, 1, 2, 3]);
    let work = 0;
    const evaluate = (node: number, task: number, outcome: "pass" | "fail") => {
      tree.apply({ type: "evaluation_dispatched", work, node, task, attempt: 1 });
      tree.apply({
        type: "evaluation_finished",
        work: work++,
        node,
        task,
        outcome,
        reason: null,
        usage,
        durationMs: 1,
      });
    };
    const child = (parent: number) => {
      tree.apply({ type: "improvement_started", work, parent });
      tree.apply({
        type: "improvement_finished",
        work: work++,
        parent,
        node: tree.size,
        data: null,
        usage,
        durationMs: 1,
      });
      return tree.size - 1;
    };
    evaluate(0, 0, "pass");
    evaluate(0, 1, "fail");
    const a = child(0);
    evaluate(a, 0, "pass");
    const b = child(a);
    for (const task of [0, 1, 2, 3]) evaluate(b, task, "pass");
    for (let i = 0; i < 3; i++) {
      for (const node of tree.nodes) void [node.sC, node.fC];
    }
    expect([tree.node(0).s, tree.node(0).f, tree.node(0).sC, tree.node(0).fC]).toEqual([
      1, 1, 6, 1,
    ]);
    expect([tree.node(a).s, tree.node(a).f, tree.node(a).sC, tree.node(a).fC]).toEqual([
      1, 0, 5, 0,
    ]);
    expect([tree.node(b).s, tree.node(b).f, tree.node(b).sC]).toEqual([4, 0, 4]);
  });
});

describe("the fold", () => {
  it("folding the log gives the tree the search built", async () => {
    const { tree, events } = await grownTree("hgm", 9);
    const folded = SearchTree.fold(tree.tasks, events);
    expect(folded.size).toBe(tree.size);
    expect(folded.t).toBe(tree.t);
    for (const node of tree.nodes) {
      const other = folded.node(node.id);
      expect([other.parent, other.s, other.f, other.sC, other.fC, other.openTasks]).toEqual([
        node.parent,
        node.s,
        node.f,
        node.sC,
        node.fC,
        node.openTasks,
      ]);
    }
  });

  it("an error is no fail: the task reopens, and is given up after the last attempt", () => {
    const tree = new SearchTree([7, 8], 2);
    const error = (work: number, attempt: number) => {
      tree.apply({ type: "evaluation_dispatched", work, node: 0, task: 8, attempt });
      tree.apply({
        type: "evaluation_finished",
        work,
        node: 0,
        task: 8,
        outcome: "error",
        reason: "boom",
        usage,
        durationMs: 1,
      });
    };
    error(0, 1);
    expect([tree.node(0).s, tree.node(0).f, tree.node(0).errors, tree.node(0).openTasks]).toEqual([
      0, 0, 1, 2,
    ]);
    expect(tree.nextAttempt(0, 1)).toBe(2);
    error(1, 2);
    expect([
      tree.node(0).f,
      tree.node(0).errors,
      tree.node(0).abandoned,
      tree.node(0).openTasks,
    ]).toEqual([0, 2, 1, 1]);
    expect(tree.firstOpenTask(0)).toBe(0);
  });

  it("refuses events out of order", () => {
    const tree = new SearchTree([0, 1]);
    expect(() => tree.apply({ type: "improvement_started", work: 3, parent: 0 })).toThrow(
      /out of order/,
    );
    tree.apply({ type: "evaluation_dispatched", work: 0, node: 0, task: 1, attempt: 1 });
    expect(() =>
      tree.apply({ type: "evaluation_dispatched", work: 1, node: 0, task: 1, attempt: 1 }),
    ).toThrow(/not open/);
    expect(() =>
      tree.apply({
        type: "improvement_finished",
        work: 0,
        parent: 0,
        node: 1,
        data: null,
        usage,
        durationMs: 0,
      }),
    ).toThrow(/not a dispatched expand/);
    expect(() =>
      tree.apply({ type: "evaluation_dispatched", work: 1, node: 0, task: 5, attempt: 1 }),
    ).toThrow(/not one of/);
  });
});
