/**
 * Goal-oriented evaluation of conversations (docs/goals.md): conversations and their imports,
 * labels, goals, metrics, agreement, taxonomies, rubrics, teacher judges and their ensemble,
 * the resumable judging job, human review and the job's report.
 */
export * from "./agreement.js";
export * from "./conversation.js";
export * from "./ensemble.js";
export * from "./import/index.js";
export * from "./job.js";
export * from "./judge.js";
export * from "./labels.js";
export * from "./metrics.js";
export * from "./report.js";
export * from "./review.js";
export * from "./rubric.js";
export * from "./segment.js";
export * from "./taxonomy.js";
