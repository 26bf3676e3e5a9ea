/** Agent folders: an agent as a folder of untrusted TypeScript (docs/design.md). */
export * from "./checks.js";
export * from "./files.js";
export * from "./template.js";
