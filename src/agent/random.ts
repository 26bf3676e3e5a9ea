/** The random baseline: draws from the environment's action sampler with a per-episode seed. */
import { createRng } from "../env/rng.js";
import type { ActionSampler } from "../env/types.js";
import type { Agent, EpisodeContext } from "./types.js";

export function createRandomAgent(sampleAction: ActionSampler, context: EpisodeContext): Agent {
  // Seeded per (seed, task, sample) so that samples differ yet every run repeats exactly.
  const rng = createRng(context.seed, context.taskIndex, context.sampleIndex, 0x7a4d);
  return {
    act: async (state) => ({ action: sampleAction(rng.next, state.observation) }),
  };
}
