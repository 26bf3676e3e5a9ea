/** clade's library API: environments, agents, rollouts, evaluation and the run store. */

export { createRandomAgent } from "./agent/random.js";
export * from "./agent/registry.js";
export type * from "./agent/types.js";
export { BUILTIN_ENVS, findEnv, UnknownEnvError } from "./env/registry.js";
export { createRng, mixSeeds, type Rng } from "./env/rng.js";
export * from "./env/types.js";
export * from "./eval/evaluation.js";
export * from "./eval/metrics.js";
export { runMetrics, taskOutcomes } from "./eval/report.js";
export { parseTaskRange, TaskRangeError } from "./eval/task-range.js";
export * from "./rollout/episode.js";
export * from "./rollout/runner.js";
export { StoreError } from "./store/database.js";
export { EpisodeWriter } from "./store/episode-writer.js";
export * from "./store/export.js";
export * from "./store/run-store.js";
