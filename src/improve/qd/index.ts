/**
 * CycleQD (issue 12, in progress): the score bins, the per-task archives and the quality cycle,
 * and the operators on embedded-policy weights (task vectors, merging, SVD and Gaussian mutation).
 */

export * from "./archive.js";
export * from "./archives.js";
export * from "./bins.js";
export * from "./cycle.js";
export * from "./final.js";
export * from "./operators/index.js";
export * from "./policy-genome.js";
