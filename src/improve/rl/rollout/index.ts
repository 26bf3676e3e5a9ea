/** RL rollouts: groups of multi-turn samples with per-turn masks, log-probabilities and values. */
export {
  type CollectOptions,
  collectGroup,
  collectGroups,
  layoutSample,
  ROLLOUT_STREAM,
} from "./collect.js";
export {
  checkTemperature,
  type EmbeddedPolicyOptions,
  embeddedPolicy,
  temperForward,
} from "./embedded.js";
export {
  createModelRolloutPolicy,
  MissingLogprobsError,
  type ModelRolloutPolicyOptions,
} from "./model-policy.js";
export type {
  ActionMode,
  AgentTurnRecord,
  CollectResult,
  CollectTiming,
  PolicyDecision,
  RolloutMode,
  RolloutPolicy,
  SampleEnd,
  Trajectory,
  TrajectoryGroup,
} from "./types.js";
