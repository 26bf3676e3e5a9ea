/**
 * CycleQD (docs/qd.md): the score bins, the per-task archives and the quality cycle, the
 * generation loop generic over the genome, the operators on embedded-policy weights, embedded
 * policies and LLM agent configurations as genomes, the base and experts, the final selection,
 * the held-out comparison and the replay of stored records.
 */

export * from "./agent-config/index.js";
export * from "./archive.js";
export * from "./archives.js";
export * from "./bins.js";
export * from "./compare.js";
export * from "./cycle.js";
export * from "./experts.js";
export * from "./final.js";
export * from "./operators/index.js";
export * from "./policy-genome.js";
export * from "./replay.js";
