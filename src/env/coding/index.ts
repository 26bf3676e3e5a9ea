/** The coding environment's registration: metadata, constructor and random action sampler. */
import type { SamplingEnvDefinition } from "../types.js";
import { CodingEnv, currentCodingInfo } from "./env.js";
import { sampleCodingAction } from "./sample.js";

export const codingEnv: SamplingEnvDefinition = {
  /** Version 1.0.0, or 1.0.0+sandbox-none when CLADE_SANDBOX=none (stored with every run). */
  get info() {
    return currentCodingInfo();
  },
  create: () => new CodingEnv(),
  sampleAction: sampleCodingAction,
};

export { type CodingAction, parseAction, unfence } from "./actions.js";
export { EXERCISES, TEST_ONLY_IDS, TRAIN_EXERCISES } from "./catalog.js";
export {
  CODING_INFO,
  CodingEnv,
  type CodingEnvOptions,
  codingInfo,
  UNSANDBOXED_VERSION_SUFFIX,
} from "./env.js";
export {
  type Difficulty,
  type Exercise,
  type Json,
  renameIdentifier,
  type TestCase,
} from "./exercise.js";
export { type CaseVerdict, canonicalJson, judgeCase } from "./grading.js";
export {
  CODING_DATA_BYTES,
  codingLimits,
  DEFAULT_QUEUE_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  FILE_BYTES,
  MEMORY_KILL_BYTES,
  runInSandbox,
  SANDBOX_MEMORY_SHARE,
  SANDBOX_RUN_MEMORY_BYTES,
  SandboxBusyError,
  type SandboxConcurrency,
  type SandboxOptions,
  type SandboxRun,
  type SuiteRequest,
  sandboxConcurrency,
  sandboxSlotsFor,
  setSandboxConcurrency,
  WORKSPACE_BYTES,
} from "./runner.js";
export { sampleCodingAction } from "./sample.js";
export { type CodingTask, exerciseSlot, generateTask } from "./task.js";
export { INSTRUCTION, MAX_STEPS } from "./text.js";
