/** The todo environment's registration: metadata, constructor and random action sampler. */
import type { SamplingEnvDefinition } from "../types.js";
import { TodoEnv } from "./env.js";
import { sampleTodoAction } from "./sample.js";
import { TODO_INFO } from "./text.js";

export const todoEnv: SamplingEnvDefinition = {
  info: TODO_INFO,
  create: () => new TodoEnv(),
  sampleAction: sampleTodoAction,
};

export { ACTION_FORMAT, formatAction, parseAction, type ToolCall } from "./action.js";
export { TodoEnv } from "./env.js";
export { generateScenario, MAX_GOLD_CALLS, type TodoScenario } from "./generate.js";
export {
  type AnswerCandidates,
  type AnswerVerdict,
  checkAnswer,
  MAX_OTHER_NAMES,
  MAX_OTHER_NUMBERS,
  mentions,
  missingAnswers,
} from "./grading.js";
export { REQUEST_TEMPLATES } from "./requests.js";
export { sampleTodoAction } from "./sample.js";
export { INSTRUCTION, MAX_STEPS, TODO_INFO } from "./text.js";
export { filterTasks, runTool, TOOL_NAMES, TOOLS } from "./tools.js";
export { canonicalState, cloneState, type TodoState, type TodoTask } from "./world.js";
