/**
 * A scenario as an Improver and an Evaluator. Every draw is keyed by the seed and the work it
 * belongs to: an improvement by its work number, an evaluation by (node, task, attempt). So the
 * same log gives the same outcomes: a resumed simulated search equals an uninterrupted one.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Evaluator, Improver } from "../engine.js";
import { createFastRng } from "../fast-rng.js";
import { ROOT, type SearchNode } from "../tree.js";
import { childP, type Scenario, type SimulatedAgent } from "./scenario.js";
import type { VirtualClock } from "./virtual-clock.js";

/** Tags that keep the improver's and the evaluator's draws apart. */
const IMPROVEMENT_DRAWS = 0x1a9e;
const EVALUATION_DRAWS = 0xe7a1;

export interface SimulatedWork {
  improver: Improver;
  evaluator: Evaluator;
  root: SimulatedAgent;
}

export interface SimulationPace {
  /** Simulated time, for several workers: each piece of work sleeps its simulated duration. */
  clock?: VirtualClock;
  /** Real milliseconds each piece of work takes (a demo, or a run to interrupt). */
  latencyMs?: number;
}

export function agentOf(node: SearchNode): SimulatedAgent {
  return node.data as unknown as SimulatedAgent;
}

export function createSimulatedWork(
  scenario: Scenario,
  seed: number,
  pace: SimulationPace = {},
): SimulatedWork {
  const { costs, durations } = scenario;
  const between = ([low, high]: readonly [number, number], u: number) => low + (high - low) * u;
  const paced = Boolean(pace.clock || pace.latencyMs);
  const wait = async (ms: number, signal: AbortSignal) => {
    if (pace.clock) await pace.clock.sleep(ms);
    if (pace.latencyMs) await sleep(pace.latencyMs, undefined, { signal });
  };

  const improver: Improver = {
    async improve(parent, { work, signal, ordinal }) {
      const rng = createFastRng(seed, work, IMPROVEMENT_DRAWS);
      const durationMs = 1000 * between(durations.improvement, rng.next());
      if (paced) await wait(durationMs, signal);
      const usage = { inputTokens: costs.improvementTokens, costUsd: costs.improvementUsd };
      const from = agentOf(parent);
      const spec = scenario.types[from.type];
      if (!spec) throw new Error(`no type "${from.type}" in scenario ${scenario.name}`);
      // The parent's first improvements give its planted children, and never fail.
      let rule = spec.planted[ordinal];
      const failed = rng.next() < spec.noChild;
      if (!rule && failed) {
        return { child: null, reason: "no usable patch (simulated)", usage, durationMs };
      }
      if (!rule) {
        const total = spec.children.reduce((sum, r) => sum + r.weight, 0);
        let draw = rng.next() * total;
        rule = spec.children.at(-1);
        for (const candidate of spec.children) {
          draw -= candidate.weight;
          if (draw < 0) {
            rule = candidate;
            break;
          }
        }
      }
      if (!rule) throw new Error(`type "${from.type}" has no rules`);
      const p = childP(rule, from.p, rng.next());
      const branch = parent.id === ROOT ? rule.type : from.branch;
      const child: SimulatedAgent = { type: rule.type, p, branch };
      return { child: { data: { ...child } }, usage, durationMs };
    },
  };

  const evaluator: Evaluator = {
    async evaluate(node, task, { attempt, signal }) {
      const rng = createFastRng(seed, node.id, task, attempt, EVALUATION_DRAWS);
      const durationMs = 1000 * between(durations.evaluation, rng.next());
      if (paced) await wait(durationMs, signal);
      const usage = { inputTokens: costs.evaluationTokens, costUsd: costs.evaluationUsd };
      if (rng.next() < scenario.errorRate) {
        return { outcome: "error", reason: "simulated infrastructure error", usage, durationMs };
      }
      const outcome = rng.next() < agentOf(node).p ? "pass" : "fail";
      return { outcome, usage, durationMs };
    },
  };

  return {
    improver,
    evaluator,
    root: { type: scenario.root.type, p: scenario.root.p, branch: "root" },
  };
}
