/** Environments served over HTTP (AgentGym's dialects and clade's /v1 API) as clade Envs. */
export {
  AGENTGYM_TASKS,
  type AgentgymActionInput,
  type AgentgymDialect,
  type AgentgymTask,
  findAgentgymServer,
  guessAgentgymServer,
} from "./agentgym.js";
export {
  connectRemoteEnv,
  createRemoteEnv,
  DEFAULT_REQUEST_TIMEOUT_MS,
  fetchCladeEnvInfo,
  RemoteEnv,
  type RemoteEnvOptions,
  type RemoteRetryPolicy,
  remoteEnvInfo,
  retryAfterMs,
} from "./client.js";
export type { RemoteDialect } from "./dialects.js";
export {
  EnvServerUnavailableError,
  RemoteEnvError,
  type RemoteErrorDetails,
  RemoteInstanceLostError,
  RemoteProtocolError,
} from "./errors.js";
