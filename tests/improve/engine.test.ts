/**
 * The engine: the same seed gives the same search; a search resumed from any prefix of its log
 * (work in flight included) ends exactly as the uninterrupted one; errors are retried, bounded,
 * and never fails; an improvement that throws is a failed improvement with its reason; the dollar
 * budget and an abort stop it; work whose models have no price stays unpriced in the log and the
 * tree's total.
 */
import { describe, expect, it } from "vitest";
import { memoryLog, runSearch } from "../../src/improve/search/engine.js";
import { createPolicy, METHODS, type Method } from "../../src/improve/search/policies/index.js";
import { runSimulatedSearch } from "../../src/improve/search/simulation/experiment.js";
import { builtinScenario } from "../../src/improve/search/simulation/index.js";
import { parseScenario, type Scenario } from "../../src/improve/search/simulation/scenario.js";
import { SearchTree } from "../../src/improve/search/tree.js";
import type { SearchEvent } from "../../src/store/search-log.js";
import { scripted } from "./fixtures.js";

const TRAP = builtinScenario("trap") as Scenario;

async function search(options: {
  method?: Method;
  seed?: number;
  T?: number;
  W?: number;
  events?: SearchEvent[];
  scenario?: Scenario;
  budgetUsd?: number;
  signal?: AbortSignal;
  onEvent?: (event: SearchEvent) => void;
}) {
  const events = options.events ?? [];
  const { result } = await runSimulatedSearch({
    scenario: options.scenario ?? TRAP,
    method: options.method ?? "hgm",
    seed: options.seed ?? 1,
    T: options.T ?? 300,
    W: options.W ?? 1,
    log: memoryLog(events),
    ...(options.budgetUsd !== undefined ? { budgetUsd: options.budgetUsd } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onEvent ? { onEvent: (event) => options.onEvent?.(event) } : {}),
  });
  return { result, events };
}

describe("determinism and resuming", () => {
  it.each(METHODS)("%s: the same seed gives the same log; another seed another", async (method) => {
    const a = await search({ method });
    const b = await search({ method });
    expect(b.events).toEqual(a.events);
    expect(a.result.stopReason).toBe("budget");
    const c = await search({ method, seed: 2 });
    expect(c.events).not.toEqual(a.events);
  });

  it("with W = 4 on simulated time too", async () => {
    const a = await search({ W: 4 });
    const b = await search({ W: 4 });
    expect(b.events).toEqual(a.events);
    // Four workers do overlap: some evaluation is dispatched while another is in flight.
    let inFlight = 0;
    let most = 0;
    for (const event of a.events) {
      if (event.type === "evaluation_dispatched") most = Math.max(most, ++inFlight);
      if (event.type === "evaluation_finished") inFlight -= 1;
    }
    expect(most).toBe(4);
  });

  it.each(METHODS)(
    "%s: resumed from any prefix of the log, it ends as the uninterrupted one",
    async (method) => {
      const whole = (await search({ method })).events;
      const cuts = [1, 59, 60, 61, 62, 100, 333, whole.length - 1];
      // Cuts right after a dispatch: work in flight, dispatched again on resume.
      cuts.push(whole.findIndex((e, i) => i > 200 && e.type === "improvement_started") + 1);
      cuts.push(whole.findIndex((e, i) => i > 300 && e.type === "evaluation_dispatched") + 1);
      for (const cut of cuts) {
        const prefix = whole.slice(0, cut);
        const { result, events } = await search({ method, events: prefix });
        expect(result.resumed).toBe(true);
        expect(events).toEqual(whole);
      }
    },
  );
});

describe("errors and failures", () => {
  it("an errored evaluation is retried up to 3 attempts, never counted as a fail", async () => {
    const flaky = parseScenario({ ...TRAP, name: "flaky", errorRate: 0.4 });
    const { result, events } = await search({ scenario: flaky, T: 400 });
    const { tree } = result;
    expect(tree.errors).toBeGreaterThan(100);
    const attempts = new Map<string, number>();
    for (const event of events) {
      if (event.type !== "evaluation_dispatched") continue;
      const key = `${event.node}/${event.task}`;
      expect(event.attempt).toBe((attempts.get(key) ?? 0) + 1);
      attempts.set(key, event.attempt);
    }
    expect(Math.max(...attempts.values())).toBe(3);
    expect(tree.nodes.reduce((sum, n) => sum + n.abandoned, 0)).toBeGreaterThan(0);
    const finished = events.filter((e) => e.type === "evaluation_finished");
    const passesAndFails = finished.filter((e) => e.outcome !== "error").length;
    expect(tree.passes + tree.fails).toBe(passesAndFails);
    for (const e of finished) if (e.outcome === "error") expect(e.reason).toMatch(/simulated/);
    // Errored dispatches spent budget: t counts them.
    expect(tree.t).toBe(400);
  });

  it("an improver that throws or gives nothing: a failed improvement with its reason", async () => {
    const events: SearchEvent[] = [];
    let calls = 0;
    const evaluator = scripted([0.5]).evaluator;
    const result = await runSearch({
      policy: createPolicy("hgm"),
      improver: {
        improve: async () => {
          calls += 1;
          if (calls % 3 === 1) throw new Error("patch did not apply\nstack...");
          if (calls % 3 === 2)
            return { child: null, reason: "empty patch", usage: { costUsd: 0.25 } };
          return {
            child: { data: { q: 0.5 } },
            usage: { inputTokens: 10, outputTokens: 5, costUsd: 1 },
          };
        },
      },
      evaluator,
      tasks: Array.from({ length: 20 }, (_, i) => i),
      T: 50,
      W: 1,
      seed: 0,
      rootData: { q: 0.3 },
      log: memoryLog(events),
    });
    const failed = events.filter((e) => e.type === "improvement_failed");
    expect(failed.map((e) => e.reason).slice(0, 2)).toEqual([
      "error: patch did not apply",
      "empty patch",
    ]);
    expect(result.tree.improvementsFailed).toBe(failed.length);
    expect(result.tree.size - 1).toBe(result.tree.improvementsFinished);
    expect(result.tree.usage.inputTokens).toBe(10 * result.tree.improvementsFinished);
  });
});

describe("stopping", () => {
  it("improvements that keep failing wait for work in flight, then stop the search", async () => {
    const events: SearchEvent[] = [];
    let slowEvaluations = 0;
    const result = await runSearch({
      policy: createPolicy("hgm"),
      // Nothing can ever be made: the parent has nothing to fix.
      improver: { improve: async () => ({ child: null, reason: "nothing to fix" }) },
      evaluator: {
        // The root's evaluations take a while: the failing improvements must not end the search
        // while one is in flight.
        evaluate: async () => {
          slowEvaluations++;
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { outcome: "pass" };
        },
      },
      tasks: [0, 1, 2],
      T: 10,
      W: 2,
      seed: 0,
      maxFailedImprovementsInARow: 4,
      log: memoryLog(events),
    });
    expect(result.stopReason).toBe("improvements-failing");
    expect(slowEvaluations).toBe(3);
    expect(events.filter((e) => e.type === "evaluation_finished")).toHaveLength(3);
    const failed = events.filter((e) => e.type === "improvement_failed");
    expect(failed.length).toBeGreaterThanOrEqual(4);
    // Each failure spent nothing of T, and the search ended instead of spinning: at most 4 in a
    // row, the count starting again after each of the 3 evaluations.
    expect(result.tree.t).toBe(0);
    expect(failed.length).toBeLessThanOrEqual(4 * (3 + 1));
  });

  it("the dollar budget stops dispatching; a larger one resumes", async () => {
    const { result, events } = await search({ budgetUsd: 10 });
    expect(result.stopReason).toBe("budget-usd");
    expect(result.tree.usage.costUsd).toBeGreaterThanOrEqual(10);
    expect(result.tree.usage.costUsd).toBeLessThan(10.6);
    expect(result.tree.t).toBeLessThan(300);
    const more = await search({ budgetUsd: 1000, events });
    expect(more.result.stopReason).toBe("budget");
    expect(more.events).toEqual((await search({})).events);
  });

  it("an abort records nothing for the work in flight; resuming dispatches it again", async () => {
    const controller = new AbortController();
    let dispatched = 0;
    const { result, events } = await search({
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "evaluation_dispatched" && ++dispatched === 150) controller.abort();
      },
    });
    expect(result.stopReason).toBe("signal");
    expect(events.at(-1)?.type).toBe("evaluation_dispatched");
    expect(result.tree.inFlightWork()).toHaveLength(1);
    const resumed = await search({ events: [...events] });
    expect(resumed.result.redispatched).toBe(1);
    expect(resumed.events).toEqual((await search({})).events);
  });

  it("T = 0: only the root is evaluated, and chosen", async () => {
    const { result } = await search({ T: 0 });
    expect(result.tree.t).toBe(0);
    expect(result.chosen).toBe(0);
    expect(
      result.tree.node(0).s + result.tree.node(0).f + result.tree.node(0).errors,
    ).toBeGreaterThanOrEqual(60);
  });
});

describe("unpriced work", () => {
  it("keeps `unpriced` in the log and the tree's total, from the first unpriced work on", async () => {
    const events: SearchEvent[] = [];
    const { improver, evaluator } = scripted([0.6]);
    const totals: { costUsd: number; unpriced?: true }[] = [];
    const result = await runSearch({
      policy: createPolicy("hgm"),
      // Improvements use a priced model; evaluations of agents other than the root an unpriced
      // one (a local server): tokens counted, cost unknown.
      improver: {
        improve: async (parent, context) => ({
          ...(await improver.improve(parent, context)),
          usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.5 },
        }),
      },
      evaluator: {
        evaluate: async (node, task, context) => ({
          ...(await evaluator.evaluate(node, task, context)),
          usage:
            node.id === 0
              ? { costUsd: 0.25 }
              : { inputTokens: 100, outputTokens: 20, costUsd: 0, unpriced: true },
        }),
      },
      tasks: Array.from({ length: 10 }, (_, i) => i),
      T: 6,
      W: 1,
      seed: 0,
      rootData: { q: 0.3 },
      log: memoryLog(events),
      onEvent: (_event, tree) => totals.push({ ...tree.usage }),
    });
    const finished = events.filter((e) => e.type === "evaluation_finished");
    for (const event of finished) {
      expect(event.usage.unpriced).toBe(event.node === 0 ? undefined : true);
    }
    for (const event of events) {
      if (event.type === "improvement_finished") expect(event.usage).not.toHaveProperty("unpriced");
    }
    const { usage } = result.tree;
    expect(usage.unpriced).toBe(true);
    // The priced part: the root's 10 evaluations and every improvement.
    expect(usage.costUsd).toBeCloseTo(10 * 0.25 + 0.5 * result.tree.improvementsStarted);
    // Priced until the first unpriced evaluation finished, unpriced ever after.
    const first = totals.findIndex((total) => total.unpriced);
    expect(first).toBeGreaterThan(0);
    expect(totals.slice(0, first).every((total) => total.unpriced === undefined)).toBe(true);
    expect(totals.slice(first).every((total) => total.unpriced)).toBe(true);
    // The fold of the log gives the same total.
    const tasks = Array.from({ length: 10 }, (_, i) => i);
    expect(SearchTree.fold(tasks, events, undefined, { q: 0.3 }).usage).toEqual(usage);
  });

  it("a simulated search is never unpriced", async () => {
    const { result, events } = await search({ T: 60 });
    expect(result.tree.usage.costUsd).toBeGreaterThan(0);
    expect(result.tree.usage).not.toHaveProperty("unpriced");
    expect(events.some((e) => "usage" in e && e.usage.unpriced)).toBe(false);
  });
});
