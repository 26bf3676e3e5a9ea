/** The embedded policy: generic hashed text features, a small scorer network, Adam, safetensors. */
export * from "./adam.js";
export * from "./features.js";
export * from "./model.js";
export * from "./network.js";
export * from "./policy-agent.js";
export * from "./safetensors.js";
export * from "./tensor.js";
