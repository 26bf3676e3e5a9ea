/**
 * The simulated processes: scenarios parse, their true CMP is what their rules allow, the
 * mismatch family really has own score and metaproductivity negatively correlated, and the
 * comparison reports what the paper's claims are about (HGM spends more under the stepping stone
 * than DGM does).
 */
import { describe, expect, it } from "vitest";
import {
  BUILTIN_SCENARIOS,
  builtinScenario,
  createTrueCmp,
  runSimulation,
  type Scenario,
  VirtualClock,
  weightedCorrelation,
} from "../../src/improve/search/simulation/index.js";
import { createSimulatedWork } from "../../src/improve/search/simulation/process.js";
import type { SimulatedAgent } from "../../src/improve/search/simulation/scenario.js";
import { bestQuality, parseScenario } from "../../src/improve/search/simulation/scenario.js";
import type { SearchNode } from "../../src/improve/search/tree.js";

const scenario = (name: string) => builtinScenario(name) as Scenario;

describe("scenarios", () => {
  it("the built-in ones parse, with the best quality they can reach", () => {
    expect(BUILTIN_SCENARIOS.map((s) => s.name)).toEqual([
      "trap",
      "mismatch-mild",
      "mismatch",
      "mismatch-strong",
      "steady",
    ]);
    const best = BUILTIN_SCENARIOS.map((s) => bestQuality(parseScenario(s)));
    expect(best.map((b) => b.toFixed(9))).toEqual(["0.700000000", ...Array(4).fill("0.800000000")]);
  });

  it("true CMP: the trap's line stays at 0.5, the stepping stone's reaches 0.7", () => {
    const trueCmp = createTrueCmp(scenario("trap"));
    expect(trueCmp("trap", 0.5)).toBe(0.5);
    expect(trueCmp("stone", 0.3)).toBeCloseTo(0.7, 12);
    expect(trueCmp("dud", 0.1)).toBe(0.4);
    expect(trueCmp("root", 0.4)).toBeCloseTo(0.7, 12);
    // A polished agent's descendants never beat it; a rough one's reach 0.8.
    const mismatch = createTrueCmp(scenario("mismatch"));
    expect(mismatch("polished", 0.62)).toBe(0.62);
    expect(mismatch("rough", 0.3)).toBeCloseTo(0.8, 12);
  });

  it("refuses a scenario with an unknown type, one line per problem", () => {
    const bad = {
      name: "bad",
      description: "",
      root: { type: "a", p: 0.5 },
      types: { a: { children: [{ type: "b", p: [0, 1] }] } },
    };
    expect(() => parseScenario(bad)).toThrow(/unknown type \\"b\\"/);
    expect(() => parseScenario({ ...bad, name: "Bad Name" })).toThrow(/lower-case/);
  });

  it.each([
    ["mismatch-mild", -0.3],
    ["mismatch", -0.6],
    ["mismatch-strong", -0.8],
  ])(
    "%s: a rough agent's children, own score against true CMP: correlation below %s",
    async (name, bound) => {
      const s = scenario(name);
      const trueCmp = createTrueCmp(s);
      const work = createSimulatedWork(s, 0);
      const signal = new AbortController().signal;
      const correlations: number[] = [];
      for (const parentP of [0.3, 0.45]) {
        const parent = {
          id: 1,
          children: [],
          pendingImprovements: 1,
          data: { type: "rough", p: parentP, branch: "rough" },
        };
        const own: number[] = [];
        const cmp: number[] = [];
        for (let i = 0; i < 2000; i++) {
          const made = await work.improver.improve(parent as unknown as SearchNode, {
            work: i,
            signal,
            ordinal: i,
          });
          if (made.child === null) continue;
          const child = made.child.data as unknown as SimulatedAgent;
          own.push(child.p);
          cmp.push(trueCmp(child.type, child.p));
        }
        correlations.push(weightedCorrelation(own, cmp));
      }
      for (const correlation of correlations) expect(correlation).toBeLessThan(bound);
    },
  );
});

describe("the comparison", () => {
  it("reports every method, with intervals, and HGM expands under the stepping stone more than DGM", async () => {
    const report = await runSimulation({
      scenario: scenario("trap"),
      methods: ["hgm", "dgm"],
      seeds: 100,
      T: 800,
      W: 1,
    });
    const [hgm, dgm] = report.methods;
    expect(report.scenario).toMatchObject({ name: "trap", bestQuality: 0.7, tasks: 60 });
    for (const m of report.methods) {
      expect(m.runs).toHaveLength(100);
      expect(m.quality.low as number).toBeLessThanOrEqual(m.quality.mean as number);
      expect(m.quality.high as number).toBeGreaterThanOrEqual(m.quality.mean as number);
      expect((m.regret.mean as number) + (m.quality.mean as number)).toBeCloseTo(0.7, 10);
    }
    expect(hgm?.nodes.mean).toBe(56);
    expect(hgm?.qualityDifference).toBeNull();
    expect(dgm?.qualityDifference?.n).toBe(100);
    expect(hgm?.expansionShare.stone as number).toBeGreaterThan(
      1.5 * (dgm?.expansionShare.stone as number),
    );
  });

  it("weighted correlation", () => {
    expect(weightedCorrelation([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(weightedCorrelation([1, 2, 3, 4], [4, 3, 2, 1], [1, 1, 1, 5])).toBeCloseTo(-1, 12);
    // A zero weight leaves the point out: the rest are perfectly correlated.
    expect(weightedCorrelation([1, 2, 3, 10], [1, 2, 3, -50], [1, 1, 1, 0])).toBeCloseTo(1, 12);
    expect(weightedCorrelation([1, 2], [1, 2])).toBeNaN();
    expect(weightedCorrelation([1, 1, 1], [1, 2, 3])).toBeNaN();
  });
});

describe("simulated time", () => {
  it("sleeps end in order of simulated time, whatever order they began", async () => {
    const clock = new VirtualClock();
    const order: string[] = [];
    await Promise.all([
      clock.sleep(300).then(() => order.push(`a@${clock.now}`)),
      clock.sleep(100).then(() => clock.sleep(150).then(() => order.push(`b@${clock.now}`))),
      clock.sleep(200).then(() => order.push(`c@${clock.now}`)),
    ]);
    expect(order).toEqual(["c@200", "b@250", "a@300"]);
  });
});
