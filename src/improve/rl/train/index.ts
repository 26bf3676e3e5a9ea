/** RL training of the embedded policy: the trainer, its checkpoints and evaluation. */
export {
  CHECKPOINT_FORMAT,
  type CheckpointState,
  checkpointsDir,
  type LoadedCheckpoint,
  latestCheckpoint,
  loadCheckpoint,
  restoreAdam,
  saveCheckpoint,
} from "./checkpoint.js";
export { type EvaluateOptions, type EvaluationResult, evaluatePolicy } from "./evaluate.js";
export {
  type AdvantageSettings,
  type Algorithm,
  ESTIMATOR_OF,
  type NoveltyKey,
  noveltyKeyOf,
  type RolloutAdvantages,
  rolloutAdvantages,
  type StepMetrics,
  TRAIN_DEFAULTS,
  type TrainHyperparameters,
  type TrainOptions,
  type TrainResult,
  tasksForStep,
  train,
  withNoveltyBonus,
} from "./train.js";
