/**
 * Goal-oriented evaluation of conversations (issue 13, in progress): conversations and their
 * imports, labels, goals, metrics, agreement, taxonomies.
 */
export * from "./agreement.js";
export * from "./conversation.js";
export * from "./import/index.js";
export * from "./labels.js";
export * from "./metrics.js";
export * from "./segment.js";
export * from "./taxonomy.js";
