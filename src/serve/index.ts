/** Serving clade environments over HTTP (AgentGym's "id" dialect and clade's /v1 API). */
export { agentgymRoutes } from "./agentgym-api.js";
export { ServeError, type ServeErrorCode, STATUS_OF_CODE } from "./errors.js";
export {
  type EpisodeState,
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
