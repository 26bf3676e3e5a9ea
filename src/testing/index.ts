/** Test doubles for code that calls models: `import { ScriptedModel } from "clade/testing"`. */
export * from "./fake-model-server.js";
export * from "./fake-reply.js";
export * from "./scripted-model.js";
