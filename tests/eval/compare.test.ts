import { describe, expect, it } from "vitest";
import { compareRuns } from "../../src/eval/compare.js";
import { computeMetrics, passAtK, type TaskOutcomes } from "../../src/eval/metrics.js";

/** A task from its per-sample success flags (reward 1 on success, 0 otherwise). */
function task(taskIndex: number, successes: readonly boolean[], errors = 0): TaskOutcomes {
  return {
    taskIndex,
    rewards: successes.map((s) => (s ? 1 : 0)),
    successes: successes.filter(Boolean).length,
    errors,
  };
}

describe("compareRuns", () => {
  const a = [
    task(0, [true, true]),
    task(1, [false, false]),
    task(2, [true, false]),
    task(3, [true, true]),
    task(9, [true, true]), // only in A
  ];
  const b = [
    task(0, [false, false]), // lost, flipped
    task(1, [true, true]), // gained, flipped
    task(2, [true, true]), // gained, not a full flip
    task(3, [true, true]), // unchanged
    task(7, [false], 1), // only in B
  ];

  it("reports each run's own metrics beside the other's", () => {
    const comparison = compareRuns(a, b, { seed: 1 });
    const reportA = computeMetrics(a, { seed: 1 });
    const rate = comparison.metrics.find((m) => m.metric === "success rate");
    expect(rate?.a).toBe(reportA.successRate);
    expect(rate?.aInterval).toEqual(reportA.successRateInterval);
    expect(rate?.b).toBe(computeMetrics(b, { seed: 1 }).successRate);
    expect(comparison.a).toEqual(reportA);
  });

  it("takes B − A over the shared tasks only, with a paired interval around it", () => {
    const comparison = compareRuns(a, b, { seed: 1 });
    expect(comparison.sharedTasks).toEqual([0, 1, 2, 3]);
    expect(comparison).toMatchObject({ onlyA: 1, onlyB: 1 });
    const rate = comparison.metrics.find((m) => m.metric === "success rate");
    // Shared tasks: A 5/8, B 6/8.
    expect(rate?.difference).toBeCloseTo(6 / 8 - 5 / 8, 12);
    expect(rate?.tasks).toBe(4);
    expect(rate?.differenceInterval.low).toBeLessThanOrEqual(rate?.difference ?? Number.NaN);
    expect(rate?.differenceInterval.high).toBeGreaterThanOrEqual(rate?.difference ?? Number.NaN);
    expect(rate?.differenceInterval.low).toBeGreaterThanOrEqual(-1);
    expect(rate?.differenceInterval.high).toBeLessThanOrEqual(1);
  });

  it("compares pass@k for the ks both runs report, over tasks with k samples on both sides", () => {
    const comparison = compareRuns(a, b);
    expect(comparison.metrics.map((m) => m.metric)).toEqual([
      "success rate",
      "mean reward",
      "pass@1",
      "pass@2",
    ]);
    const pass2 = comparison.metrics.find((m) => m.metric === "pass@2");
    expect(pass2?.tasks).toBe(4);
    const meanPass = (tasks: TaskOutcomes[]) =>
      tasks.reduce((s, t) => s + passAtK(t.rewards.length, t.successes, 2), 0) / tasks.length;
    expect(pass2?.difference).toBeCloseTo(meanPass(b.slice(0, 4)) - meanPass(a.slice(0, 4)), 12);
    // A run with one sample per task has no pass@2 to compare.
    const single = compareRuns(a, [task(0, [true])]);
    expect(single.metrics.map((m) => m.metric)).toEqual(["success rate", "mean reward", "pass@1"]);
  });

  it("lists the shared tasks whose success rate moved, marking full flips", () => {
    const { moved } = compareRuns(a, b);
    expect(moved).toEqual([
      {
        taskIndex: 0,
        a: { successes: 2, finished: 2 },
        b: { successes: 0, finished: 2 },
        change: "lost",
        flipped: true,
      },
      {
        taskIndex: 1,
        a: { successes: 0, finished: 2 },
        b: { successes: 2, finished: 2 },
        change: "gained",
        flipped: true,
      },
      {
        taskIndex: 2,
        a: { successes: 1, finished: 2 },
        b: { successes: 2, finished: 2 },
        change: "gained",
        flipped: false,
      },
    ]);
  });

  it("is deterministic for a seed, and identical runs differ by exactly zero", () => {
    expect(compareRuns(a, b, { seed: 3 })).toEqual(compareRuns(a, b, { seed: 3 }));
    const same = compareRuns(a, a);
    for (const m of same.metrics) {
      expect(m.difference).toBe(0);
      expect(m.differenceInterval).toEqual({ low: 0, high: 0 });
    }
    expect(same.moved).toEqual([]);
  });

  it("leaves tasks without a finished episode out of the shared tasks", () => {
    const comparison = compareRuns(
      [task(0, [], 2), task(1, [true])],
      [task(0, [true]), task(1, [])],
    );
    expect(comparison.sharedTasks).toEqual([]);
    expect(comparison.metrics[0]?.difference).toBeNaN();
  });
});
