/**
 * A simulated self-improvement process: agents with hidden pass probabilities, and rules that
 * say what an improvement of an agent gives. Every agent has a type. The first improvements of an
 * agent of type A give A's `planted` children, in order, and never fail; any later one fails with
 * probability `noChild`, else gives a child by one of A's `children` rules, drawn by weight. A
 * rule says the child's type and its pass probability p: drawn uniformly from `p`, or, when
 * `relative`, the parent's p plus a uniform draw from `p`; then clamped to [min, max].
 *
 * Since the rules are known, so is each agent's true clade metaproductivity: the best p any of
 * its descendants can reach (`trueCmp`). Scenarios are data: the built-in ones in scenarios.ts,
 * or a JSON file of the same shape (`clade evolve --simulate ./my-scenario.json`).
 */
import { z } from "zod";

const probability = z.number().min(0).max(1);

const range = z
  .tuple([z.number().min(-1).max(1), z.number().min(-1).max(1)])
  .refine(([low, high]) => low <= high, "a range is [low, high] with low ≤ high");

const childRuleSchema = z.strictObject({
  type: z.string().min(1),
  weight: z.number().positive().default(1),
  p: range,
  relative: z.boolean().default(false),
  min: probability.default(0),
  max: probability.default(1),
});

const typeSchema = z.strictObject({
  description: z.string().optional(),
  noChild: probability.default(0),
  planted: z.array(childRuleSchema).default([]),
  children: z.array(childRuleSchema).min(1),
});

const seconds = z
  .tuple([z.number().positive(), z.number().positive()])
  .refine(([low, high]) => low <= high, "a range is [low, high] with low ≤ high");

export const scenarioSchema = z
  .strictObject({
    schema: z.literal("clade.search-scenario/1").optional(),
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "use lower-case letters, digits and '-'"),
    description: z.string(),
    /** How many tasks the simulated benchmark has. */
    tasks: z.number().int().min(1).max(10_000).default(60),
    root: z.strictObject({ type: z.string().min(1), p: probability }),
    types: z.record(z.string(), typeSchema),
    /** Probability that an evaluation errors (an infrastructure failure, not a fail). */
    errorRate: probability.default(0),
    costs: z
      .strictObject({
        improvementUsd: z.number().min(0).default(0),
        evaluationUsd: z.number().min(0).default(0),
        improvementTokens: z.number().int().min(0).default(0),
        evaluationTokens: z.number().int().min(0).default(0),
      })
      .default({ improvementUsd: 0, evaluationUsd: 0, improvementTokens: 0, evaluationTokens: 0 }),
    /** Simulated durations, uniform in [low, high] seconds: the work-hours figure. */
    durations: z
      .strictObject({ improvement: seconds, evaluation: seconds })
      .default({ improvement: [1800, 3600], evaluation: [120, 600] }),
  })
  .superRefine((scenario, context) => {
    const known = new Set(Object.keys(scenario.types));
    const check = (type: string, path: (string | number)[]) => {
      if (!known.has(type)) {
        context.addIssue({ code: "custom", message: `unknown type "${type}"`, path });
      }
    };
    check(scenario.root.type, ["root", "type"]);
    for (const [name, spec] of Object.entries(scenario.types)) {
      for (const list of ["planted", "children"] as const) {
        spec[list].forEach((rule, i) => {
          check(rule.type, ["types", name, list, i, "type"]);
          if (rule.min > rule.max) {
            context.addIssue({
              code: "custom",
              message: "min > max",
              path: ["types", name, list, i],
            });
          }
        });
      }
    }
  });

export type Scenario = z.output<typeof scenarioSchema>;
export type ScenarioInput = z.input<typeof scenarioSchema>;
export type ChildRule = Scenario["types"][string]["children"][number];
export type TypeInput = ScenarioInput["types"][string];
export type ChildRuleInput = TypeInput["children"][number];

/** What a simulated agent is: the improver's record of it (stored in the log). */
export interface SimulatedAgent {
  type: string;
  /** Hidden pass probability on every task: its true quality. */
  p: number;
  /** The type of its ancestor among the root's children ("root" for the root). */
  branch: string;
}

/** A scenario checked against the schema, defaults filled in; throws a ZodError otherwise. */
export function parseScenario(input: unknown): Scenario {
  return scenarioSchema.parse(input);
}

/** The child's p under a rule, given the parent's p and a uniform draw u in [0, 1). */
export function childP(rule: ChildRule, parentP: number, u: number): number {
  const [low, high] = rule.p;
  const drawn = low + (high - low) * u;
  const p = rule.relative ? parentP + drawn : drawn;
  return Math.min(rule.max, Math.max(rule.min, p));
}

/**
 * The true CMP of agents: the best p any strict descendant can reach. A child's p never falls
 * when its parent's p or its draw rises, so the best descendants come of the top draw (u → 1) at
 * every step: the answer is the largest p among the (type, p) states those draws reach, found by
 * a walk that visits each state once. Answers are cached by (type, p).
 */
export function createTrueCmp(scenario: Scenario): (type: string, p: number) => number {
  const cache = new Map<string, number>();
  const key = (type: string, p: number) => `${type}|${p.toFixed(12)}`;
  return (type, p) => {
    const start = key(type, p);
    const cached = cache.get(start);
    if (cached !== undefined) return cached;
    const seen = new Set<string>();
    const stack: [string, number][] = [[type, p]];
    let best = Number.NEGATIVE_INFINITY;
    while (stack.length > 0) {
      const [at, atP] = stack.pop() as [string, number];
      const spec = scenario.types[at];
      for (const rule of [...(spec?.planted ?? []), ...(spec?.children ?? [])]) {
        const top = childP(rule, atP, 1);
        best = Math.max(best, top);
        const next = key(rule.type, top);
        if (seen.has(next)) continue;
        seen.add(next);
        stack.push([rule.type, top]);
      }
    }
    cache.set(start, best);
    return best;
  };
}

/** The best quality the scenario can reach: the root's or its best descendant's. */
export function bestQuality(scenario: Scenario): number {
  return Math.max(scenario.root.p, createTrueCmp(scenario)(scenario.root.type, scenario.root.p));
}
