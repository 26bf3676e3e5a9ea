/** Self-improvement search: the engine, its policies (HGM, DGM, greedy, random), the tree. */

export type {
  EvaluationOutcome,
  JsonValue,
  SearchEvent,
  SearchLog,
  WorkUsage,
} from "../../store/search-log.js";
export * from "./beta.js";
export * from "./engine.js";
export { createFastRng } from "./fast-rng.js";
export * from "./policies/dgm.js";
export * from "./policies/greedy.js";
export * from "./policies/hgm.js";
export * from "./policies/index.js";
export * from "./policies/random.js";
export * from "./policy.js";
export * from "./simulation/index.js";
export * from "./tree.js";
