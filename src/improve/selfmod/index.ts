/** Self-modification of agents that are folders of TypeScript (HGM's improvement step). */

export * from "./evaluator.js";
export * from "./evolution.js";
export * from "./implementer.js";
export * from "./improver.js";
export * from "./lineage.js";
export * from "./patch.js";
export * from "./plan.js";
export * from "./target.js";
export * from "./usage.js";
