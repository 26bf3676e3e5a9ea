/**
 * Export of collected RL rollouts for outside trainers (AgentGym-RL on verl): AgentTraj items
 * with loss flags and per-turn advantages, chat JSONL with per-message masks and advantages, and
 * parsers that read both back. Formats: docs/formats.md.
 */
export {
  type AgentTrajExportOptions,
  formatAgentTrajFile,
  type RolloutAgentTrajItem,
  type RolloutAgentTrajTurn,
  toRolloutAgentTraj,
} from "./agenttraj.js";
export {
  type ChatExportOptions,
  formatChatFile,
  type RolloutChatLine,
  type RolloutChatMessage,
  toRolloutChatLine,
} from "./chat.js";
export {
  exportRollouts,
  ROLLOUT_FORMATS,
  type RolloutExport,
  type RolloutExportOptions,
  type RolloutFormat,
} from "./file.js";
export {
  parseRolloutAgentTraj,
  parseRolloutAgentTrajItem,
  parseRolloutChat,
  parseRolloutChatLine,
  RolloutFormatError,
  rolloutAgentTrajItemSchema,
  rolloutChatLineSchema,
} from "./parse.js";
export { type ExportableTrajectory, type RolloutSelection, selectExportable } from "./select.js";
export { assistantText, exportSourceOf, type RolloutEnvironment } from "./source.js";
