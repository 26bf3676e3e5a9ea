/** The helpdesk environment's registration: metadata, constructor and random action sampler. */
import type { SamplingEnvDefinition } from "../types.js";
import { HelpdeskEnv } from "./env.js";
import { sampleHelpdeskAction } from "./sample.js";
import { HELPDESK_INFO } from "./text.js";

export const helpdeskEnv: SamplingEnvDefinition = {
  info: HELPDESK_INFO,
  create: () => new HelpdeskEnv(),
  sampleAction: sampleHelpdeskAction,
};

export { formatAction, parseAction, type ToolCall } from "../todo/action.js";
export { runTool, TOOL_AGENT, TOOL_NAMES } from "./backend.js";
export {
  type Employee,
  type HelpdeskData,
  helpdeskData,
  type ItCategory,
  type LeaveType,
  type Passage,
} from "./data.js";
export { HelpdeskEnv, type HelpdeskEnvOptions, sessionHeader, sessionId } from "./env.js";
export {
  type AssistantFault,
  BACKEND_FAULTS,
  type BackendFault,
  FAULT_CAUSE,
  FAULT_RATES,
  type FaultName,
  plannedFault,
} from "./faults.js";
export { addWorkingDays, generateSession, type Session } from "./generate.js";
export {
  askedSlots,
  type CallLog,
  gradeTurn,
  isDecline,
  mentionsFact,
  mentionsNumber,
  type TurnLog,
} from "./grading.js";
export {
  queryFinds,
  type SearchHit,
  scorePassages,
  searchHandbook,
  tokenize,
} from "./retrieval.js";
export { sampleHelpdeskAction } from "./sample.js";
export { HELPDESK_INFO, INSTRUCTION, MAX_CALLS_PER_TURN, MAX_STEPS } from "./text.js";
export * from "./types.js";
export {
  type FormSlot,
  formOpening,
  goalOpening,
  MAX_FAILURES,
  MAX_GOAL_TURNS,
  type MessageKind,
  slotStatement,
  type UserMessage,
  UserSimulator,
} from "./user.js";
export {
  type ConversationMessage,
  describeGoal,
  type FactKind,
  keptFact,
  type MustKeepFact,
  mentionsForm,
  mustKeepFacts,
  USER_MODEL_VERSION_SUFFIX,
  type UserSituation,
  type UserVoice,
  type UserVoiceRequest,
  userModelInfo,
} from "./voice.js";
