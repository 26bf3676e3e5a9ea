/**
 * The embedded policy (src/improve/rl/policy) as a rollout policy, in-process: per turn it
 * featurises the state and every listed action, scores them, and samples (or takes the argmax)
 * at a temperature; it reports the features, the action's index and log-probability, the
 * entropy, and when asked V(s) and the reference policy's log-probability.
 *
 * Temperature T divides the scores before the softmax: π_T(c) = softmax(z / T)_c. The trainer
 * uses the same T when it recomputes log-probabilities, so the PPO ratio compares like with like
 * (as verl divides the logits by the rollout temperature in the actor).
 */
import type { AgentState } from "../../../agent/types.js";
import type { Rng } from "../../../env/rng.js";
import {
  argmax,
  entropyOf,
  Featurizer,
  logSoftmax,
  type PolicyForward,
  type PolicyModel,
  PolicyNeedsActionsError,
  policyForward,
  sampleIndex,
  valueForward,
} from "../policy/index.js";
import type { ActionMode, PolicyDecision, RolloutPolicy } from "./types.js";

export interface EmbeddedPolicyOptions {
  /** Sampling temperature (> 0); 1 samples from π itself. */
  temperature?: number;
  /** Compute V(s) with the value head (PPO's GAE needs it). */
  values?: boolean;
  /** A frozen reference policy whose log-probability of each chosen action is reported. */
  reference?: PolicyModel;
  /** Share one to keep its caches (it never changes results). */
  featurizer?: Featurizer;
  /** Named in the error when an observation lists no actions. */
  envName?: string;
}

/** The forward pass seen at temperature T: scores z / T and their distribution. */
export function temperForward(forward: PolicyForward, temperature: number): PolicyForward {
  if (temperature === 1) return forward;
  const logits = forward.logits.map((z) => z / temperature);
  const logProbs = logSoftmax(logits);
  return {
    logits,
    logProbs,
    probs: logProbs.map(Math.exp),
    entropy: entropyOf(logProbs),
    hidden: forward.hidden,
  };
}

export function checkTemperature(temperature: number): void {
  if (!(temperature > 0) || !Number.isFinite(temperature)) {
    throw new RangeError(`temperature must be a positive number, got ${temperature}`);
  }
}

/** A rollout policy over the embedded model; the model's parameters are read, never written. */
export function embeddedPolicy(
  model: PolicyModel,
  options: EmbeddedPolicyOptions = {},
): RolloutPolicy {
  const temperature = options.temperature ?? 1;
  checkTemperature(temperature);
  const featurizer = options.featurizer ?? new Featurizer(model.features);
  const reference = options.reference;
  if (reference && JSON.stringify(reference.features) !== JSON.stringify(model.features)) {
    throw new Error(
      "embeddedPolicy: the reference policy's feature settings differ from the model's",
    );
  }
  const envName = options.envName ?? "the environment";
  return {
    decide(state: AgentState, rng: Rng, mode: ActionMode): PolicyDecision {
      const actions = state.observation.availableActions;
      if (!actions || actions.length === 0) throw new PolicyNeedsActionsError(envName);
      const features = featurizer.turn(state, actions);
      const forward = temperForward(policyForward(model.params, features), temperature);
      const actionIndex =
        mode === "greedy" ? argmax(forward.logits) : sampleIndex(forward.probs, rng.next());
      const decision: PolicyDecision = {
        action: actions[actionIndex] as string,
        actionIndex,
        logprob: forward.logProbs[actionIndex] as number,
        entropy: forward.entropy,
        features,
      };
      if (options.values) decision.value = valueForward(model.params, features.state).value;
      if (reference) {
        const ref = temperForward(policyForward(reference.params, features), temperature);
        decision.refLogprob = ref.logProbs[actionIndex] as number;
      }
      return decision;
    },
  };
}
