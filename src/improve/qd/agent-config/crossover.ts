/**
 * Crossover of agent configurations, gene by gene, drawing only from the given Rng, in this order:
 *
 *   1. parts: uniform per part. Parts are aligned by name (the first parent's order, then names
 *      only later parents have, in their order); for each name one parent is drawn, and the child
 *      takes that parent's text, or no such part when that parent has none.
 *   2. few-shot examples: the union of the parents' examples (by id, first-seen order), of which
 *      n are kept, n drawn uniformly between the parents' smallest and largest counts; the kept
 *      ones are a uniform sample, in union order.
 *   3. parameters: per parameter, a convex blend with weights uniform on the simplex (for two
 *      parents, α ~ U(0, 1)), then clamped and rounded (params.ts).
 *   4. the agent kind, from one parent drawn uniformly;
 *   5. the tool set, from one parent drawn uniformly (independently of the kind).
 */
import type { Rng } from "../../../env/rng.js";
import type { AgentConfig, AgentParams, FewShotExample, PromptPart } from "./config.js";
import { MAX_FEW_SHOT } from "./config.js";
import { type ParamName, settleParam } from "./params.js";

function pickParent(parents: readonly AgentConfig[], rng: Rng): AgentConfig {
  return parents[rng.int(parents.length)] as AgentConfig;
}

export function crossoverParts(parents: readonly AgentConfig[], rng: Rng): PromptPart[] {
  const names: string[] = [];
  for (const parent of parents) {
    for (const part of parent.parts) if (!names.includes(part.name)) names.push(part.name);
  }
  const child: PromptPart[] = [];
  for (const name of names) {
    const donor = pickParent(parents, rng);
    const part = donor.parts.find((p) => p.name === name);
    if (part) child.push({ name: part.name, text: part.text });
  }
  return child;
}

export function crossoverFewShot(parents: readonly AgentConfig[], rng: Rng): FewShotExample[] {
  const union: FewShotExample[] = [];
  for (const parent of parents) {
    for (const example of parent.fewShot) {
      if (!union.some((e) => e.id === example.id)) union.push(example);
    }
  }
  const counts = parents.map((p) => p.fewShot.length);
  const lo = Math.min(...counts);
  const hi = Math.min(Math.max(...counts), MAX_FEW_SHOT);
  const n = lo + rng.int(hi - lo + 1);
  const kept = new Set(rng.shuffle(union.map((_, i) => i)).slice(0, n));
  return union.filter((_, i) => kept.has(i)).map((e) => ({ id: e.id, text: e.text }));
}

/** Weights uniform on the simplex: normalised Exp(1) draws, one per parent. */
function simplexWeights(count: number, rng: Rng): number[] {
  const draws = Array.from({ length: count }, () => -Math.log(1 - rng.next()));
  const total = draws.reduce((a, b) => a + b, 0);
  // All draws 0 has probability 0; equal weights keep the blend defined anyway.
  return total > 0 ? draws.map((d) => d / total) : draws.map(() => 1 / count);
}

export function crossoverParams(parents: readonly AgentConfig[], rng: Rng): AgentParams {
  const blend = (name: ParamName): number => {
    const weights = simplexWeights(parents.length, rng);
    return settleParam(
      name,
      parents.reduce((sum, p, i) => sum + (weights[i] as number) * p.params[name], 0),
    );
  };
  // Property order is evaluation order: temperature, topP, maxTokens.
  return { temperature: blend("temperature"), topP: blend("topP"), maxTokens: blend("maxTokens") };
}

/** The child of ≥ 1 parents (see the module comment for the order of draws). */
export function crossoverConfigs(parents: readonly AgentConfig[], rng: Rng): AgentConfig {
  if (parents.length === 0) throw new RangeError("agent config crossover needs ≥ 1 parent");
  const parts = crossoverParts(parents, rng);
  const fewShot = crossoverFewShot(parents, rng);
  const params = crossoverParams(parents, rng);
  const kind = pickParent(parents, rng).kind;
  const tools = pickParent(parents, rng).tools;
  return { kind, parts, fewShot, params, tools: tools === null ? null : [...tools] };
}
