/**
 * Mutation of agent configurations: one operator per child, drawn with probability proportional
 * to its rate among the operators that apply to that child (a rate of 0 turns one off):
 *
 *   jitter       every numeric parameter += N(0, (JITTER_SCALE · its range)²), clamped, rounded
 *   dropExample  one few-shot example removed
 *   addExample   one pool example the child lacks appended (up to MAX_FEW_SHOT)
 *   swapExample  one few-shot example replaced, in place, by a pool example the child lacks
 *   toggleTool   one pool tool added to or removed from the tool set (tools kind only; an
 *                unrestricted set, null, is taken as the whole pool first)
 *   switchKind   react ↔ tools
 *   rewrite      one prompt part rewritten by the mutator model toward the quality task
 *                (rewrite.ts; only with a mutator model and at least one part)
 *
 * Every draw comes from the given Rng, the choice first, then the operator's own, and all of them
 * before the rewrite's model call, so a seed fixes the child up to what the mutator answers.
 */
import type { Rng } from "../../../env/rng.js";
import type { Model } from "../../../model/types.js";
import { standardNormal } from "../operators/normal.js";
import type { AgentConfig, AgentConfigPool, AgentParams, FewShotExample } from "./config.js";
import { MAX_FEW_SHOT } from "./config.js";
import { PARAM_BOUNDS, type ParamName, settleParam } from "./params.js";
import {
  REWRITE_ATTEMPTS,
  type RewriteOutcome,
  rewritePart,
  type TaskDescription,
} from "./rewrite.js";

// ---------------------------------------------------------------------------------------------
// Hyperparameters
// ---------------------------------------------------------------------------------------------

export type MutationName =
  | "jitter"
  | "dropExample"
  | "addExample"
  | "swapExample"
  | "toggleTool"
  | "switchKind"
  | "rewrite";

export type MutationRates = Readonly<Record<MutationName, number>>;

/**
 * Relative rates of the operators. The rewrite, the one that changes what the agent is told in
 * words, gets the largest share.
 */
export const MUTATION_RATES: MutationRates = {
  jitter: 0.25,
  dropExample: 0.1,
  addExample: 0.1,
  swapExample: 0.1,
  toggleTool: 0.1,
  switchKind: 0.05,
  rewrite: 0.3,
};
/** σ of the jitter as a fraction of each parameter's range (temperature: 0.2 on [0, 2]). */
export const JITTER_SCALE = 0.1;

/** In the order applicability is listed (and the cumulative draw walks). */
export const MUTATION_NAMES: readonly MutationName[] = [
  "jitter",
  "dropExample",
  "addExample",
  "swapExample",
  "toggleTool",
  "switchKind",
  "rewrite",
];

/** Rates over the defaults; throws one line on a negative or non-finite rate. */
export function mutationRates(overrides: Partial<MutationRates> = {}): MutationRates {
  const rates = { ...MUTATION_RATES, ...overrides };
  for (const name of MUTATION_NAMES) {
    const rate = rates[name];
    if (!Number.isFinite(rate) || rate < 0) {
      throw new RangeError(`mutation rate ${name} must be a finite number ≥ 0, got ${rate}`);
    }
  }
  for (const name of Object.keys(overrides)) {
    if (!MUTATION_NAMES.includes(name as MutationName)) {
      throw new RangeError(`unknown mutation "${name}" (known: ${MUTATION_NAMES.join(", ")})`);
    }
  }
  return rates;
}

// ---------------------------------------------------------------------------------------------
// The operators (pure)
// ---------------------------------------------------------------------------------------------

export function jitterParams(params: AgentParams, rng: Rng, scale = JITTER_SCALE): AgentParams {
  const jitter = (name: ParamName): number => {
    const { min, max } = PARAM_BOUNDS[name];
    return settleParam(name, params[name] + standardNormal(rng) * scale * (max - min));
  };
  // Property order is evaluation order: temperature, topP, maxTokens.
  return {
    temperature: jitter("temperature"),
    topP: jitter("topP"),
    maxTokens: jitter("maxTokens"),
  };
}

function missingExamples(config: AgentConfig, pool: AgentConfigPool): FewShotExample[] {
  return pool.fewShot.filter((e) => !config.fewShot.some((own) => own.id === e.id));
}

export function dropExample(config: AgentConfig, rng: Rng): AgentConfig {
  const i = rng.int(config.fewShot.length);
  return { ...config, fewShot: config.fewShot.filter((_, j) => j !== i) };
}

export function addExample(config: AgentConfig, pool: AgentConfigPool, rng: Rng): AgentConfig {
  const added = rng.pick(missingExamples(config, pool));
  return { ...config, fewShot: [...config.fewShot, added] };
}

export function swapExample(config: AgentConfig, pool: AgentConfigPool, rng: Rng): AgentConfig {
  const i = rng.int(config.fewShot.length);
  const added = rng.pick(missingExamples(config, pool));
  return { ...config, fewShot: config.fewShot.map((e, j) => (j === i ? added : e)) };
}

export function toggleTool(config: AgentConfig, pool: AgentConfigPool, rng: Rng): AgentConfig {
  const tool = rng.pick(pool.tools);
  const current = config.tools ?? pool.tools;
  const tools = current.includes(tool) ? current.filter((t) => t !== tool) : [...current, tool];
  return { ...config, tools: tools.sort() };
}

export function switchKind(config: AgentConfig): AgentConfig {
  return { ...config, kind: config.kind === "react" ? "tools" : "react" };
}

// ---------------------------------------------------------------------------------------------
// Choosing and applying one
// ---------------------------------------------------------------------------------------------

export interface MutationContext {
  readonly pool: AgentConfigPool;
  readonly rates: MutationRates;
  /** The mutator role's model; without it the rewrite never applies. */
  readonly mutator?: Model;
  /** Task k as the mutator is told about it, in task order. */
  readonly tasks: readonly TaskDescription[];
  readonly rewriteAttempts?: number;
}

/** The operators that can change this child, in MUTATION_NAMES order. */
export function applicableMutations(config: AgentConfig, context: MutationContext): MutationName[] {
  const examples = config.fewShot.length;
  const missing = missingExamples(config, context.pool).length;
  const applies: Record<MutationName, boolean> = {
    jitter: true,
    dropExample: examples > 0,
    addExample: missing > 0 && examples < MAX_FEW_SHOT,
    swapExample: examples > 0 && missing > 0,
    toggleTool: config.kind === "tools" && context.pool.tools.length > 0,
    switchKind: true,
    rewrite: context.mutator !== undefined && config.parts.length > 0,
  };
  return MUTATION_NAMES.filter((name) => applies[name] && context.rates[name] > 0);
}

/** One of `names` with probability ∝ its rate (one draw); "none" when no rate is positive. */
export function chooseMutation(
  names: readonly MutationName[],
  rates: MutationRates,
  rng: Rng,
): MutationName | "none" {
  const total = names.reduce((sum, name) => sum + rates[name], 0);
  if (total <= 0) return "none";
  let u = rng.next() * total;
  for (const name of names) {
    u -= rates[name];
    if (u < 0) return name;
  }
  return names.at(-1) as MutationName;
}

/** What one mutation did: the operator, and the rewrite's outcome when it was the rewrite. */
export interface MutationEvent {
  readonly qualityTask: number;
  readonly mutation: MutationName | "none";
  /** The rewrite's outcome; when it failed, the child was left as the crossover made it. */
  readonly rewrite?: RewriteOutcome;
}

/** The child after one mutation, and what was done (see the module comment). */
export async function mutateConfig(
  config: AgentConfig,
  qualityTask: number,
  rng: Rng,
  context: MutationContext,
  signal?: AbortSignal,
): Promise<{ config: AgentConfig; event: MutationEvent }> {
  const mutation = chooseMutation(applicableMutations(config, context), context.rates, rng);
  const done = (child: AgentConfig) => ({ config: child, event: { qualityTask, mutation } });
  switch (mutation) {
    case "none":
      return done(config);
    case "jitter":
      return done({ ...config, params: jitterParams(config.params, rng) });
    case "dropExample":
      return done(dropExample(config, rng));
    case "addExample":
      return done(addExample(config, context.pool, rng));
    case "swapExample":
      return done(swapExample(config, context.pool, rng));
    case "toggleTool":
      return done(toggleTool(config, context.pool, rng));
    case "switchKind":
      return done(switchKind(config));
    case "rewrite": {
      const partIndex = rng.int(config.parts.length);
      const seed = rng.int(2 ** 31);
      const rewrite = await rewritePart({
        model: context.mutator as Model,
        config,
        partIndex,
        qualityTask,
        tasks: context.tasks,
        seed,
        maxAttempts: context.rewriteAttempts ?? REWRITE_ATTEMPTS,
        ...(signal ? { signal } : {}),
      });
      const child = rewrite.ok
        ? {
            ...config,
            parts: config.parts.map((p, i) => (i === partIndex ? { ...p, text: rewrite.text } : p)),
          }
        : config;
      return { config: child, event: { qualityTask, mutation, rewrite } };
    }
  }
}
