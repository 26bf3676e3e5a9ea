/**
 * What to fix: a failed task (never an errored one), varied across a parent's improvements; the
 * themes under DGM's rule (gated by the logs, then chosen with probability 1/4); nothing when
 * nothing failed.
 */
import { describe, expect, it } from "vitest";
import {
  chooseTarget,
  type NodeEvaluation,
  showsContextLength,
  type Target,
  THEME_PROBABILITY,
} from "../../../src/improve/selfmod/target.js";
import { evaluation } from "./fixtures.js";

const choose = (evaluations: NodeEvaluation[], ordinal = 0, seed = 1) =>
  chooseTarget(evaluations, { seed, ordinal });

/** How often each kind of target comes up over many ordinals. */
function tally(evaluations: NodeEvaluation[], ordinals = 2000): Map<string, number> {
  const counts = new Map<string, number>();
  for (let ordinal = 0; ordinal < ordinals; ordinal++) {
    const target = choose(evaluations, ordinal) as Target;
    const key = target.kind === "task" ? `task ${target.task}` : target.theme;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe("failed tasks", () => {
  it("gives nothing to fix without a finished evaluation", () => {
    expect(choose([])).toBeNull();
    expect(choose([evaluation(1, "error", { error: "sandbox died" })])).toBeNull();
  });

  it("takes a passed task, in turn, when no task failed and no theme shows", () => {
    const passed = [evaluation(0, "pass"), evaluation(1, "pass")];
    const tasks = new Set<number>();
    for (let ordinal = 0; ordinal < 2; ordinal++) {
      const target = choose(passed, ordinal);
      expect(target).toMatchObject({ kind: "task", evaluation: { outcome: "pass" } });
      tasks.add((target as { task: number }).task);
    }
    expect(tasks).toEqual(new Set([0, 1]));
  });

  it("never takes an errored evaluation for a failure", () => {
    const evaluations = [evaluation(0, "pass"), evaluation(1, "error", { error: "sandbox died" })];
    expect(choose(evaluations)).toMatchObject({ kind: "task", task: 0 });
    const mixed = [...evaluations, evaluation(2, "fail")];
    for (let ordinal = 0; ordinal < 50; ordinal++) {
      expect(choose(mixed, ordinal)).toMatchObject({ kind: "task", task: 2 });
    }
  });

  it("carries the failed episode for the diagnosis", () => {
    const failed = evaluation(4, "fail", { log: "the log of 4" });
    expect(choose([evaluation(1, "pass"), failed])).toEqual({
      kind: "task",
      task: 4,
      evaluation: failed,
    });
  });

  it("is fixed by (seed, ordinal), and siblings visit every failure before repeating", () => {
    const evaluations = [0, 1, 2, 3, 4, 5].map((task) =>
      evaluation(task, task % 3 === 0 ? "pass" : "fail"),
    );
    const failedTasks = [1, 2, 4, 5];
    const tasksOf = (seed: number) =>
      [0, 1, 2, 3, 4, 5, 6, 7].map(
        (ordinal) =>
          (
            choose(evaluations, ordinal, seed) as Target & {
              kind: "task";
            }
          ).task,
      );
    const first = tasksOf(1);
    expect(tasksOf(1)).toEqual(first);
    expect([...first.slice(0, 4)].sort()).toEqual(failedTasks);
    expect(first.slice(4)).toEqual(first.slice(0, 4));
    // The input's order does not matter; another seed gives another order.
    expect(tasksOf(1)).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7].map(
        (ordinal) => (choose([...evaluations].reverse(), ordinal, 1) as { task: number }).task,
      ),
    );
    const orders = new Set([1, 2, 3, 4, 5, 6].map((seed) => tasksOf(seed).join()));
    expect(orders.size).toBeGreaterThan(1);
  });
});

describe("themes", () => {
  const failures = (n: number) => Array.from({ length: n }, (_, task) => evaluation(task, "fail"));

  it("chooses unusable replies about 1/4 of the time once 10 % of episodes show them", () => {
    const evaluations = failures(10);
    evaluations[3] = evaluation(3, "fail", { parseErrors: 2 });
    const counts = tally(evaluations);
    const share = (counts.get("unparseable_replies") ?? 0) / 2000;
    expect(share).toBeGreaterThan(THEME_PROBABILITY - 0.04);
    expect(share).toBeLessThan(THEME_PROBABILITY + 0.04);
  });

  it("does not choose it below 10 %", () => {
    const evaluations = failures(11);
    evaluations[3] = evaluation(3, "fail", { parseErrors: 1 });
    expect(tally(evaluations).get("unparseable_replies")).toBeUndefined();
  });

  it("shows the episode with the most unusable replies", () => {
    const evaluations = [
      evaluation(0, "fail", { parseErrors: 1 }),
      evaluation(1, "pass", { parseErrors: 4, log: "many" }),
      evaluation(2, "fail", { parseErrors: 2 }),
    ];
    const target = [...Array(40).keys()]
      .map((ordinal) => choose(evaluations, ordinal))
      .find((t) => t?.kind === "theme");
    expect(target).toMatchObject({ kind: "theme", theme: "unparseable_replies" });
    expect(target?.evaluation?.log).toBe("many");
  });

  it("chooses context length about 1/4 of the time when any episode shows it", () => {
    const evaluations = failures(20);
    const errored = evaluation(20, "error", {
      error: "400: maximum context length is 8192 tokens",
    });
    evaluations.push(errored);
    const counts = tally(evaluations);
    const share = (counts.get("context_length") ?? 0) / 2000;
    expect(share).toBeGreaterThan(THEME_PROBABILITY - 0.04);
    expect(share).toBeLessThan(THEME_PROBABILITY + 0.04);
    const theme = [...Array(40).keys()]
      .map((ordinal) => choose(evaluations, ordinal))
      .find((t) => t?.kind === "theme");
    expect(theme?.evaluation).toBe(errored);
    // The errored task itself is never a failure to fix.
    expect(counts.get("task 20")).toBeUndefined();
  });

  it("recognises context length from the flag, the error or the log", () => {
    expect(showsContextLength(evaluation(0, "fail", { contextLength: true }))).toBe(true);
    expect(showsContextLength(evaluation(0, "error", { error: "context_length_exceeded" }))).toBe(
      true,
    );
    expect(
      showsContextLength(evaluation(0, "fail", { log: "model error: prompt is too long" })),
    ).toBe(true);
    expect(showsContextLength(evaluation(0, "fail", { log: "you are in a long corridor" }))).toBe(
      false,
    );
  });

  it("with both themes shown, each may come up, and failures the rest of the time", () => {
    const evaluations = failures(4);
    evaluations[0] = evaluation(0, "fail", { parseErrors: 1, contextLength: true });
    const counts = tally(evaluations);
    const unparseable = (counts.get("unparseable_replies") ?? 0) / 2000;
    const context = (counts.get("context_length") ?? 0) / 2000;
    // DGM's order: unusable replies first (1/4), then context length (1/4 of the rest).
    expect(unparseable).toBeCloseTo(0.25, 1);
    expect(context).toBeCloseTo(0.75 * 0.25, 1);
  });

  it("chooses a theme outright when no task failed", () => {
    const evaluations = [
      evaluation(0, "pass", { parseErrors: 3 }),
      evaluation(1, "error", { contextLength: true }),
    ];
    for (let ordinal = 0; ordinal < 20; ordinal++) {
      expect(choose(evaluations, ordinal)?.kind).toBe("theme");
    }
    expect(new Set(tally(evaluations, 100).keys())).toEqual(
      new Set(["unparseable_replies", "context_length"]),
    );
  });
});
