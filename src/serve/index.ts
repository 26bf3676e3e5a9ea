/** Serving clade environments over HTTP (AgentGym's "id" and "env_idx" dialects, clade's /v1). */
export { agentgymRoutes } from "./agentgym-api.js";
export {
  type AgentgymMountExtras,
  agentgymTask,
  agentgymTasksServedBy,
  type MountedAgentgymTask,
  sqlgymAction,
  wordleGuess,
} from "./agentgym-tasks.js";
export { ServeError, type ServeErrorCode, STATUS_OF_CODE } from "./errors.js";
export {
  type EpisodeState,
  FINISHED_EVICTION_GRACE_MS,
  type Instance,
  InstancePool,
  type InstancePoolOptions,
  MAX_INSTANCE_ID,
  MIN_INSTANCE_ID,
  randomInstanceId,
} from "./instances.js";
export { clientOf } from "./request.js";
export {
  createEnvServer,
  DEFAULT_EVICT_IDLE_AFTER_MS,
  DEFAULT_HOST,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_INSTANCES,
  DEFAULT_PER_CLIENT_SHARE,
  defaultMaxInstancesPerClient,
  type EnvServer,
  type EnvServerOptions,
  type ResolvedEnvServerOptions,
  type RunningEnvServer,
  resolveEnvServerOptions,
  type StartEnvServerOptions,
  startEnvServer,
} from "./server.js";
export { SERVER_NAME, V1_API_VERSION } from "./v1-api.js";
