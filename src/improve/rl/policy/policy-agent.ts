/**
 * The embedded policy as an Agent: each turn it scores every action the observation lists and
 * takes the best one (greedy) or draws one from π (sample) with a generator seeded per episode,
 * so every run repeats exactly. It only chooses among listed actions; an environment that lists
 * none cannot be played by it.
 */
import type { Agent, AgentState, EpisodeContext } from "../../../agent/types.js";
import { createRng } from "../../../env/rng.js";
import { Featurizer, type TurnFeatures } from "./features.js";
import type { PolicyModel } from "./model.js";
import { type PolicyForward, policyForward } from "./network.js";

export type PolicyMode = "greedy" | "sample";

/** Mixed into the episode's keys for the sampling stream. */
export const POLICY_SAMPLE_STREAM = 0x9017;

export class PolicyNeedsActionsError extends Error {
  override name = "PolicyNeedsActionsError";
  constructor(readonly env: string) {
    super(
      `the embedded policy chooses among the actions an environment lists, and ${env} listed ` +
        "none in this observation (observation.availableActions is missing or empty); use it " +
        "with environments that list their actions",
    );
  }
}

export interface ScoredTurn {
  actions: readonly string[];
  features: TurnFeatures;
  forward: PolicyForward;
}

/** Features and π over the observation's listed actions (throws when it lists none). */
export function scoreActions(
  model: PolicyModel,
  featurizer: Featurizer,
  state: AgentState,
  envName = "the environment",
): ScoredTurn {
  const actions = state.observation.availableActions;
  if (!actions || actions.length === 0) throw new PolicyNeedsActionsError(envName);
  const features = featurizer.turn(state, actions);
  return { actions, features, forward: policyForward(model.params, features) };
}

/** The index of the largest score (the first on ties). */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) {
    if ((values[i] as number) > (values[best] as number)) best = i;
  }
  return best;
}

/** The index a uniform draw u ∈ [0, 1) selects from the cumulative probabilities. */
export function sampleIndex(probs: ArrayLike<number>, u: number): number {
  let cumulative = 0;
  for (let i = 0; i < probs.length; i++) {
    cumulative += probs[i] as number;
    if (u < cumulative) return i;
  }
  return probs.length - 1;
}

export interface PolicyAgentOptions {
  /** "greedy" (default) takes the highest-scoring action; "sample" draws from π. */
  mode?: PolicyMode;
  /** Share one across episodes to keep its caches; built from the model's settings if absent. */
  featurizer?: Featurizer;
}

/** An agent for one episode. */
export function createPolicyAgent(
  model: PolicyModel,
  context: EpisodeContext,
  options: PolicyAgentOptions = {},
): Agent {
  const mode = options.mode ?? "greedy";
  const featurizer = options.featurizer ?? new Featurizer(model.features);
  const rng = createRng(context.seed, context.taskIndex, context.sampleIndex, POLICY_SAMPLE_STREAM);
  return {
    act: async (state, signal) => {
      signal.throwIfAborted();
      const { actions, forward } = scoreActions(model, featurizer, state, context.env.name);
      const index =
        mode === "greedy" ? argmax(forward.logits) : sampleIndex(forward.probs, rng.next());
      return { action: actions[index] as string };
    },
  };
}
