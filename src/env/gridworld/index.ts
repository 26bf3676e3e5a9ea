/** The gridworld environment's registration: metadata, constructor and random action sampler. */
import type { ActionSampler, SamplingEnvDefinition } from "../types.js";
import { GRIDWORLD_INFO, GridworldEnv } from "./env.js";

const FALLBACK_ACTIONS = ["turn left", "turn right", "move forward"];

/** Uniform over the actions the observation offers, like a discrete action space's sample(). */
export const sampleGridworldAction: ActionSampler = (random, observation) => {
  const actions = observation.availableActions?.length
    ? observation.availableActions
    : FALLBACK_ACTIONS;
  return actions[Math.floor(random() * actions.length)] ?? "turn left";
};

export const gridworldEnv: SamplingEnvDefinition = {
  info: GRIDWORLD_INFO,
  create: () => new GridworldEnv(),
  sampleAction: sampleGridworldAction,
};

export { type GridAction, parseAction } from "./actions.js";
export {
  COLOURS,
  type Colour,
  DIRECTION_NAMES,
  type DoorState,
  OBJECT_KINDS,
  type ObjectKind,
} from "./data.js";
export { GRIDWORLD_INFO, GridworldEnv } from "./env.js";
export {
  DOOR,
  FLOOR,
  type Goal,
  type GoalKind,
  type GridTask,
  generateTask,
  LEVEL_COUNT,
  levelForIndex,
  WALL,
} from "./generate.js";
export { applyAction, type Outcome } from "./rules.js";
export { INSTRUCTION, MAX_STEPS, relativePosition } from "./text.js";
export {
  chebyshev,
  createWorld,
  frontCell,
  goalReached,
  isEmptyFloor,
  isPassable,
  visibleRooms,
  type World,
  walkDistances,
} from "./world.js";
