/**
 * What an RL rollout produces: per task a group of samples, each a multi-turn trajectory whose
 * positions alternate observation (mask 0) and agent turn (mask 1), in the estimators' Sample
 * shape, with what the update needs kept per agent turn (the policy's features, the chosen
 * action, its log-probability under the behaviour policy, the value).
 */
import type { AgentState } from "../../../agent/types.js";
import type { Rng } from "../../../env/rng.js";
import type { Observation } from "../../../env/types.js";
import type { Sample } from "../estimators/index.js";
import type { TurnFeatures } from "../policy/index.js";

/** "sample" draws from π (training); "greedy" takes the most likely action (ReMax, evaluation). */
export type ActionMode = "sample" | "greedy";

/**
 * "independent": every sample steps on its own, as soon as its environment answers.
 * "lockstep": the reference's rounds: all unfinished samples choose, then all step, and the next
 * round waits for the slowest environment. Same trajectories, different timing.
 */
export type RolloutMode = "independent" | "lockstep";

/** What a policy decided on one turn, and what it can tell the trainer about it. */
export interface PolicyDecision {
  /** The action passed to env.step(). */
  action: string;
  /**
   * The policy's whole reply when it is more than the action (an LLM's "Thought: … Action: …"):
   * what an exported trajectory shows as the assistant's turn. The action itself otherwise.
   */
  reply?: string;
  /** Index of the action among the observation's listed actions (policies that choose from them). */
  actionIndex?: number;
  /** log π(action | state) under the behaviour policy (at its sampling temperature). */
  logprob?: number;
  /** Entropy of the distribution the action was drawn from. */
  entropy?: number;
  /** The critic's V(s), for PPO. */
  value?: number;
  /** log π_ref(action | state) under a reference policy, for a KL loss. */
  refLogprob?: number;
  /** The embedded policy's features of the turn, kept so the update need not recompute them. */
  features?: TurnFeatures;
  /** Token ids of the reply (LLM policies), for a token-level layout later. */
  tokenIds?: readonly number[];
  /** Per-token log-probabilities of the reply (LLM policies). */
  tokenLogprobs?: readonly number[];
}

/**
 * A policy as the rollout sees it. `rng` is the sample's own stream (createRng(seed, step, task,
 * sample)); a policy must draw from it only, so a sample's trajectory does not depend on how
 * samples interleave. A throw ends the sample as an error (a model error).
 */
export interface RolloutPolicy {
  decide(state: AgentState, rng: Rng, mode: ActionMode): PolicyDecision | Promise<PolicyDecision>;
}

/** One agent turn of a trajectory. */
export interface AgentTurnRecord extends PolicyDecision {
  /** 0-based agent turn. */
  turn: number;
  /** The reward env.step() returned for it (kept for reporting; see collect.ts on rewards). */
  envReward: number;
  /** The observation the step produced. */
  observation: Observation;
}

export type SampleEnd =
  /** The environment said done (success, failure or its own step limit). */
  | "done"
  /** The horizon (max agent turns of this training step) was reached first. */
  | "horizon"
  /** The environment or the policy threw: the sample is excluded from its group's statistics. */
  | "error";

export interface Trajectory {
  taskIndex: number;
  /** 0..n−1 for the group's samples; n for the greedy baseline rollout (ReMax). */
  sampleIndex: number;
  /** The group id in `sample.group`: the task's position in the batch. */
  group: number;
  /** The greedy rollout of the group (ReMax's baseline): never trained on. */
  greedy: boolean;
  /** The seed passed to env.reset(); the same for every sample of a group (one task instance). */
  resetSeed: number;
  /** What reset() returned (absent when it failed). */
  initialObservation?: Observation;
  turns: AgentTurnRecord[];
  /** The last step's reward (AgentGym's outcome), 0 when no step was taken. */
  reward: number;
  /** reward ≥ the environment's successThreshold (false for error samples). */
  success: boolean;
  end: SampleEnd;
  /** The error's message, when end is "error". */
  error?: string;
  /**
   * The estimators' view: positions obs₀, act₀, obs₁, act₁, …, act_{T−1}, obs_T with masks
   * 0, 1, 0, 1, …, 1, 0; the outcome reward on the last agent position; values, logprobs (and
   * refLogprobs) at agent positions, 0 elsewhere. Agent turn t is position 2t + 1.
   */
  sample: Sample;
  /** env.step() calls made (successful ones). */
  envSteps: number;
  /**
   * Milliseconds spent awaiting the environment (create, reset, steps) and the policy; with other
   * samples in flight these include their turns (see CollectTiming).
   */
  envMs: number;
  policyMs: number;
}

/** A task's samples (and its greedy baseline when asked for). */
export interface TrajectoryGroup {
  taskIndex: number;
  group: number;
  samples: Trajectory[];
  /** The greedy rollout (ReMax); absent unless `greedyBaseline` was set. */
  baseline?: Trajectory;
}

export interface CollectTiming {
  /** Wall clock of the whole collection. */
  wallMs: number;
  /**
   * Summed over samples. Each span runs from the call to when its sample resumes, so with more
   * than one sample in flight (independent mode with concurrency > 1, lockstep's steps) it also
   * holds other samples' turns, even with in-process environments: the sums overlap and may
   * exceed wallMs. With one sample in flight (concurrency 1) they are disjoint, and envMs +
   * policyMs ≤ wallMs: measure shares of time that way (bench/rl-throughput.ts does).
   */
  envMs: number;
  policyMs: number;
}

export interface CollectResult {
  groups: TrajectoryGroup[];
  /** Every training sample (not the greedy baselines), group by group, sample order. */
  trajectories: Trajectory[];
  /** env.step() calls, baselines included. */
  envSteps: number;
  /** Samples (baselines included) that ended in an error, with their messages. */
  errors: { taskIndex: number; sampleIndex: number; greedy: boolean; message: string }[];
  timing: CollectTiming;
}
