/**
 * CycleQD over LLM agent configurations (issue 12): system-prompt parts, few-shot examples,
 * generation parameters, the agent kind and its tool set; crossover and mutation by operators,
 * one of them a rewrite by a mutator model; scored by the configured agent's success rates.
 */

export * from "./config.js";
export * from "./crossover.js";
export * from "./evaluate.js";
export * from "./genome.js";
export * from "./mutate.js";
export * from "./params.js";
export * from "./prompt.js";
export * from "./rewrite.js";
export * from "./store.js";
export * from "./tool-set.js";
