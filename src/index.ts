/**
 * clade's library API: environments, agents, rollouts, evaluation (goal-oriented evaluation of
 * conversations and BLADE's matching of data analyses included) and the stores.
 */

export * from "./agent/folder/index.js";
export * from "./agent/llm.js";
export { type LlmAgentOptions, SEND_MODES, type SendMode } from "./agent/prompting.js";
export { createRandomAgent } from "./agent/random.js";
export { createReactAgent, DEFAULT_REACT_SYSTEM_PROMPT } from "./agent/react.js";
export * from "./agent/registry.js";
export {
  createToolCallingAgent,
  DEFAULT_TOOL_CALLING_SYSTEM_PROMPT,
} from "./agent/tool-calling.js";
export type * from "./agent/types.js";
export { createTaskMixture, type MixtureTask, type TaskMixture } from "./env/mixture.js";
export { BUILTIN_ENVS, findEnv, UnknownEnvError } from "./env/registry.js";
export * from "./env/remote/index.js";
export { createRng, mixSeeds, type Rng } from "./env/rng.js";
export * from "./env/types.js";
export * from "./eval/blade/index.js";
export * from "./eval/evaluation.js";
export * from "./eval/goals/index.js";
export * from "./eval/metrics.js";
export { runMetrics, taskOutcomes } from "./eval/report.js";
export { parseTaskRange, TaskRangeError } from "./eval/task-range.js";
export * from "./improve/qd/index.js";
export * from "./improve/search/index.js";
export * from "./improve/selfmod/index.js";
export * from "./model/cache.js";
export * from "./model/call-record.js";
export * from "./model/client.js";
export * from "./model/config.js";
export * from "./model/http-errors.js";
export * from "./model/pricing.js";
export * from "./model/rate-limit.js";
export * from "./model/resolve.js";
export * from "./model/retry.js";
export * from "./model/spec.js";
export * from "./model/types.js";
export * from "./rollout/episode.js";
export * from "./rollout/runner.js";
export * from "./sandbox/index.js";
export * from "./serve/index.js";
export { StoreError } from "./store/database.js";
export { EpisodeWriter } from "./store/episode-writer.js";
export * from "./store/export.js";
export * from "./store/goal-log.js";
export { createResponseCache } from "./store/response-cache.js";
export * from "./store/run-store.js";
