/**
 * The sandbox: the one way clade runs untrusted code (agent folders, the implementer's
 * commands, the coding environment's tests). See docs/sandbox.md.
 */
export {
  type ChannelLimits,
  type ChannelStats,
  DEFAULT_CHANNEL_LIMITS,
  type MessageHandler,
  secretValues,
} from "./channel.js";
export { SandboxError, SandboxUnavailableError } from "./errors.js";
export {
  defaultSandboxMode,
  isSandboxMode,
  parseSandboxMode,
  SANDBOX_MODE_VARIABLE,
  SANDBOX_MODES,
  type SandboxMode,
  setDefaultSandboxMode,
  UNSANDBOXED_VERSION_SUFFIX,
} from "./mode.js";
export { packageBinds, SANDBOX_NODE_MODULES } from "./packages.js";
export {
  type CappedText,
  checkSandbox,
  DEFAULT_SANDBOX_LIMITS,
  INSTALL_HINT,
  resetSandboxCheck,
  runSandboxed,
  SANDBOX_UID,
  SANDBOX_WORKDIR,
  type SandboxBind,
  type SandboxHost,
  type SandboxKill,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxResult,
} from "./run.js";
export {
  cleanupStaleWorkspaces,
  createWorkspace,
  removeWorkspace,
  type SyncReport,
  workspacesBase,
} from "./workspaces.js";
