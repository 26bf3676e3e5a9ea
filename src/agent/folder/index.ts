/** Agent folders: an agent as a folder of untrusted TypeScript (docs/design.md). */
export * from "./checks.js";
export * from "./files.js";
export { HARNESS_FILE } from "./harness.js";
export * from "./packages.js";
export * from "./sandboxed-agent.js";
export * from "./template.js";
