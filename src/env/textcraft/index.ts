import type { SamplingEnvDefinition } from "../types.js";
import { TEXTCRAFT_INFO, TextcraftEnv } from "./env.js";
import { sampleTextcraftAction } from "./sampler.js";

export { TEXTCRAFT_INFO, TextcraftEnv } from "./env.js";
export { generateTask, type TextcraftTask } from "./task.js";

export const textcraftEnv: SamplingEnvDefinition = {
  info: TEXTCRAFT_INFO,
  create: () => new TextcraftEnv(),
  sampleAction: sampleTextcraftAction,
};
