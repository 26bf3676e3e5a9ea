/**
 * The built-in simulated processes, as data (the shape of scenario.ts; a JSON file of the same
 * shape works too). 60 tasks, as the paper's SWE-bench-Verified-60 runs; a starting agent near
 * the paper's 40 %; about one improvement in ten gives no usable child; one evaluation in a
 * hundred errors (an infrastructure failure, never a fail). Durations are the work-hours figure's:
 * an improvement takes 30–60 min, an evaluation 2–10 min.
 */
import type { ChildRuleInput, ScenarioInput, TypeInput } from "./scenario.js";

const COMMON: Omit<ScenarioInput, "name" | "description" | "root" | "types"> = {
  tasks: 60,
  errorRate: 0.01,
  costs: {
    improvementUsd: 0.5,
    evaluationUsd: 0.05,
    improvementTokens: 100_000,
    evaluationTokens: 20_000,
  },
  durations: { improvement: [1800, 3600], evaluation: [120, 600] },
};

/** Agents of no promise: below the starting agent, and so are all their descendants. */
const DUD: TypeInput = {
  description: "no better than the start, nor its descendants",
  noChild: 0.1,
  children: [{ type: "dud", p: [0.05, 0.4] }],
};

/**
 * The reference's check: under a root at 0.4, a planted trap (p = 0.5, whose descendants stay at
 * or below 0.5) and a planted stepping stone (p = 0.3, whose descendants climb to 0.7); every
 * other child of the root is a dud.
 */
const TRAP: ScenarioInput = {
  name: "trap",
  description:
    "root 0.4; a planted trap child (0.5, descendants ≤ 0.5) and stepping stone (0.3, descendants climb to 0.7); other children duds",
  ...COMMON,
  root: { type: "root", p: 0.4 },
  types: {
    root: {
      noChild: 0.1,
      planted: [
        { type: "trap", p: [0.5, 0.5] },
        { type: "stone", p: [0.3, 0.3] },
      ],
      children: [{ type: "dud", p: [0.05, 0.35] }],
    },
    trap: {
      description: "scores best at first; no descendant beats 0.5",
      noChild: 0.1,
      children: [{ type: "trap", p: [0.3, 0.5] }],
    },
    stone: {
      description: "scores worst at first; each generation gains 0.1–0.2 up to 0.7",
      noChild: 0.1,
      children: [
        { type: "stone", p: [0.1, 0.2], relative: true, max: 0.7, weight: 3 },
        { type: "dud", p: [0.05, 0.35], weight: 1 },
      ],
    },
    dud: DUD,
  },
};

/**
 * The Metaproductivity–Performance Mismatch, at a given strength. "Rough" agents score low: each
 * generation of them gains 0–0.1 (up to `0.8 − jump`), and their work shows only in a "polished"
 * child, which scores `jump` above its rough parent at once, and whose own descendants only
 * decline. So the best agents are polished children of deep rough lines, while polished agents,
 * the best scorers at any time, are dead ends: own score and metaproductivity are negatively
 * correlated, more so as `jump` grows. Every other improvement of a rough agent is polished.
 */
function mismatch(name: string, jump: [number, number], strength: string): ScenarioInput {
  const roughCap = Number((0.8 - jump[1]).toFixed(2));
  const polished: ChildRuleInput = { type: "polished", p: jump, relative: true, max: 0.8 };
  const rough: ChildRuleInput = { type: "rough", p: [0, 0.1], relative: true, max: roughCap };
  return {
    name,
    description: `${strength} mismatch: "rough" agents gain 0–0.1 a generation (to ${roughCap}); their "polished" children gain ${jump[0]}–${jump[1]} at once, then only decline`,
    ...COMMON,
    root: { type: "rough", p: 0.3 },
    types: {
      rough: {
        description: "scores low; its line climbs, and shows it in polished children",
        noChild: 0.1,
        children: [
          { ...rough, weight: 1 },
          { ...polished, weight: 1 },
        ],
      },
      polished: {
        description: "scores well now; every descendant scores lower",
        noChild: 0.1,
        children: [{ type: "polished", p: [-0.04, 0], relative: true, min: 0.05 }],
      },
    },
  };
}

/**
 * A control with no mismatch: one type, each child its parent's p plus a draw from [−0.1, 0.12],
 * up to 0.8. Own score predicts descendants' scores here, so greedy has every advantage.
 */
const STEADY: ScenarioInput = {
  name: "steady",
  description: "no mismatch: every child is its parent's p plus [-0.1, 0.12], up to 0.8",
  ...COMMON,
  root: { type: "agent", p: 0.35 },
  types: {
    agent: {
      noChild: 0.1,
      children: [{ type: "agent", p: [-0.1, 0.12], relative: true, max: 0.8, min: 0.05 }],
    },
  },
};

export const BUILTIN_SCENARIOS: readonly ScenarioInput[] = [
  TRAP,
  mismatch("mismatch-mild", [0.05, 0.1], "mild"),
  mismatch("mismatch", [0.1, 0.2], "clear"),
  mismatch("mismatch-strong", [0.2, 0.3], "strong"),
  STEADY,
];
