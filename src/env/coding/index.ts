/** The coding environment's registration: metadata, constructor and random action sampler. */
import type { SamplingEnvDefinition } from "../types.js";
import { CODING_INFO, CodingEnv } from "./env.js";
import { sampleCodingAction } from "./sample.js";

export const codingEnv: SamplingEnvDefinition = {
  info: CODING_INFO,
  create: () => new CodingEnv(),
  sampleAction: sampleCodingAction,
};

export { type CodingAction, parseAction, unfence } from "./actions.js";
export { EXERCISES, TEST_ONLY_IDS, TRAIN_EXERCISES } from "./catalog.js";
export { CODING_INFO, CodingEnv, type CodingEnvOptions } from "./env.js";
export {
  type Difficulty,
  type Exercise,
  type Json,
  renameIdentifier,
  type TestCase,
} from "./exercise.js";
export { type CaseVerdict, canonicalJson, judgeCase } from "./grading.js";
export {
  DEFAULT_QUEUE_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
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
} from "./runner.js";
export { sampleCodingAction } from "./sample.js";
export { type CodingTask, exerciseSlot, generateTask } from "./task.js";
export { INSTRUCTION, MAX_STEPS } from "./text.js";
