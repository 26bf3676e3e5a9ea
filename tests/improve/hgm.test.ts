/**
 * HGM as the reference states it, with its exact checks: the widening rule's node counts, the
 * first expansion after the initial five at t = 15, the cool-down's τ, the initial expansions,
 * who may be expanded and evaluated, and the pending-work rule.
 */
import { describe, expect, it } from "vitest";
import { createBetaSampler } from "../../src/improve/search/beta.js";
import { memoryLog } from "../../src/improve/search/engine.js";
import { createFastRng } from "../../src/improve/search/fast-rng.js";
import {
  coolDownTau,
  createHgmPolicy,
  HGM_DEFAULTS,
  initialExpansionsFor,
} from "../../src/improve/search/policies/hgm.js";
import { runSimulatedSearch } from "../../src/improve/search/simulation/experiment.js";
import { SearchTree } from "../../src/improve/search/tree.js";
import type { SearchEvent } from "../../src/store/search-log.js";
import { EXACT } from "./fixtures.js";

async function hgmLog(T: number, W: number, overrides = {}): Promise<SearchEvent[]> {
  const events: SearchEvent[] = [];
  const { result } = await runSimulatedSearch({
    scenario: EXACT,
    method: "hgm",
    seed: 1,
    T,
    W,
    hyperparameters: { hgm: overrides },
    log: memoryLog(events),
  });
  expect(result.tree.t).toBe(T);
  return events;
}

/** t (non-root evaluations dispatched) at each improvement's start, in order. */
function expansionTimes(events: SearchEvent[]): number[] {
  let t = 0;
  const times: number[] = [];
  for (const event of events) {
    if (event.type === "evaluation_dispatched" && event.node !== 0) t += 1;
    if (event.type === "improvement_started") times.push(t);
  }
  return times;
}

describe("the paper's defaults", () => {
  it("α = 0.6, β = 1, ε = 1 %, cool-down on, pending work counted", () => {
    expect(HGM_DEFAULTS).toMatchObject({
      alpha: 0.6,
      beta: 1,
      epsilon: 1,
      coolDown: true,
      pendingAsFail: true,
    });
  });

  it("τ = 1, 2, 10 and 1e4 at t = 0, T/2, 0.9T and T", () => {
    expect(coolDownTau(0, 800, 1)).toBe(1);
    expect(coolDownTau(400, 800, 1)).toBe(2);
    expect(coolDownTau(720, 800, 1)).toBeCloseTo(10, 12);
    expect(coolDownTau(800, 800, 1)).toBe(1e4);
    expect(coolDownTau(900, 800, 1)).toBe(1e4);
    expect(coolDownTau(400, 800, 2)).toBe(4);
  });

  it("initial expansions: min(5, ⌊W^α⌋)", () => {
    expect([1, 2, 4, 8, 15, 16, 20, 64].map((W) => initialExpansionsFor(W, 0.6))).toEqual([
      1, 1, 2, 3, 5, 5, 5, 5,
    ]);
  });
});

describe("the widening rule, with one worker", () => {
  it.each([
    [800, 56],
    [8000, 220],
  ])("T = %i: ⌊t^0.6⌋ + 1 non-root nodes (%i)", async (T, nodes) => {
    const events = await hgmLog(T, 1);
    const tree = SearchTree.fold(
      Array.from({ length: 60 }, (_, i) => i),
      events,
    );
    expect(tree.size - 1).toBe(nodes);
    expect(nodes).toBe(Math.floor((T - 1) ** 0.6) + 1);
    // At every evaluation of a non-root node, dispatched at t ≥ 1: ⌊t^0.6⌋ + 1 nodes exist.
    const replay = new SearchTree(tree.tasks);
    for (const event of events) {
      if (event.type === "evaluation_dispatched" && event.node !== 0 && replay.t >= 1) {
        expect(replay.size - 1).toBe(Math.floor(replay.t ** 0.6) + 1);
      }
      replay.apply(event);
    }
  });

  it("after five initial expansions, the next starts at t = 15 (one worker, and W = 16)", async () => {
    const one = expansionTimes(await hgmLog(100, 1, { initialExpansions: 5 }));
    expect(one.slice(0, 6)).toEqual([0, 0, 0, 0, 0, 15]);
    const sixteen = expansionTimes(await hgmLog(100, 16));
    expect(sixteen.slice(0, 6)).toEqual([0, 0, 0, 0, 0, 15]);
  });

  it("the root is evaluated on every task first, and never after", async () => {
    const events = await hgmLog(800, 1);
    const root = events.filter((e) => e.type === "evaluation_dispatched" && e.node === 0);
    expect(root.map((e) => (e as { task: number }).task)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    const firstOther = events.findIndex((e) => e.type === "evaluation_dispatched" && e.node !== 0);
    const lastRoot = events.findLastIndex(
      (e) => e.type === "evaluation_dispatched" && e.node === 0,
    );
    expect(lastRoot).toBeLessThan(firstOther);
  });
});

/** A tree: the root evaluated (3 passes of 6), and children given as [s, f] own counts. */
function treeWith(children: [number, number][], rootCounts: [number, number] = [3, 3]): SearchTree {
  const tree = new SearchTree(Array.from({ length: 60 }, (_, i) => i));
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  let work = 0;
  const evaluate = (node: number, passes: number, fails: number) => {
    for (let i = 0; i < passes + fails; i++) {
      tree.apply({ type: "evaluation_dispatched", work, node, task: i, attempt: 1 });
      const outcome = i < passes ? "pass" : "fail";
      tree.apply({
        type: "evaluation_finished",
        work: work++,
        node,
        task: i,
        outcome,
        reason: null,
        usage,
        durationMs: 0,
      });
    }
  };
  evaluate(0, ...rootCounts);
  for (const [s, f] of children) {
    tree.apply({ type: "improvement_started", work, parent: 0 });
    tree.apply({
      type: "improvement_finished",
      work: work++,
      parent: 0,
      node: tree.size,
      data: null,
      usage,
      durationMs: 0,
    });
    evaluate(tree.size - 1, s, f);
  }
  return tree;
}

function decide(tree: SearchTree, seed: number, overrides = {}) {
  const policy = createHgmPolicy({ initialExpansions: 0, ...overrides });
  const rng = createFastRng(seed);
  return policy.decide({ tree, T: 800, W: 8, rng, sampler: createBetaSampler(rng) });
}

describe("who is expanded and who is evaluated", () => {
  it("expansion only from nodes with a pass (the root included); evaluation never the root", () => {
    // t = 4 non-root evaluations: 4^0.6 = 2.3 ≥ 2 nodes, so it expands.
    const tree = treeWith([
      [0, 2],
      [0, 2],
    ]);
    for (let seed = 0; seed < 50; seed++)
      expect(decide(tree, seed)).toEqual({ kind: "expand", parent: 0 });
    const notYet = treeWith([[1, 0]], [0, 60]); // the root failed everything: never a parent
    const parents = new Set<number>();
    for (let seed = 0; seed < 50; seed++) {
      const decision = decide(notYet, seed, { alpha: 5 });
      if (decision.kind === "expand") parents.add(decision.parent);
    }
    expect([...parents]).toEqual([1]);
    const evaluated = new Set<number>();
    for (let seed = 0; seed < 100; seed++) {
      const decision = decide(
        treeWith([
          [5, 5],
          [1, 1],
        ]),
        seed,
        { alpha: 0.1 },
      );
      if (decision.kind === "evaluate") evaluated.add(decision.node);
    }
    expect([...evaluated].sort()).toEqual([1, 2]);
  });
});

describe("the pending-work rule", () => {
  /**
   * Eight decisions in a row with nothing finishing, as eight workers freed at once make them:
   * how many land on the most drawn node.
   */
  function pileUp(children: [number, number][], pendingAsFail: boolean, seed: number): number {
    const tree = treeWith(children);
    const counts = new Map<number, number>();
    for (let i = 0; i < 8; i++) {
      const decision = decide(tree, seed * 100 + i, { alpha: 0.1, pendingAsFail });
      if (decision.kind !== "evaluate") throw new Error("expected an evaluation");
      const task = tree.taskAt(decision.position);
      tree.apply({
        type: "evaluation_dispatched",
        work: tree.nextWork,
        node: decision.node,
        task,
        attempt: 1,
      });
      counts.set(decision.node, (counts.get(decision.node) ?? 0) + 1);
    }
    return Math.max(...counts.values());
  }

  const mean = (children: [number, number][], rule: boolean) => {
    let sum = 0;
    for (let seed = 0; seed < 200; seed++) sum += pileUp(children, rule, seed);
    return sum / 200;
  };

  it("an evaluation in flight counts as a fail, so parallel workers spread out", () => {
    // Four fresh children: eight uniform draws put about 3.5 on the busiest; the rule, under 3.
    const fresh: [number, number][] = [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ];
    expect(mean(fresh, false)).toBeGreaterThan(3.3);
    expect(mean(fresh, true)).toBeLessThan(3);
    // A leader (8 of 10) among three at 5 of 10: without the rule nearly every worker takes it.
    const leader: [number, number][] = [
      [8, 2],
      [5, 5],
      [5, 5],
      [5, 5],
    ];
    expect(mean(leader, false)).toBeGreaterThan(5.5);
    expect(mean(leader, true)).toBeLessThan(mean(leader, false) - 1);
  });

  it("and it changes nothing with one worker (nothing is in flight at a decision)", async () => {
    const a = await hgmLog(300, 1);
    const b = await hgmLog(300, 1, { pendingAsFail: false });
    expect(b).toEqual(a);
  });
});
