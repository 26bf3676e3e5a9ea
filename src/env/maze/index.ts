/** The maze environment's registration: metadata, constructor and random action sampler. */
import type { Observation, SamplingEnvDefinition } from "../types.js";
import { MAZE_INFO, MazeEnv } from "./env.js";
import { MOVE_ACTIONS } from "./text.js";

/** Uniform over the four moves, like a discrete action space's sample(). */
function sampleMazeAction(random: () => number, observation: Observation): string {
  const actions = observation.availableActions?.length
    ? observation.availableActions
    : MOVE_ACTIONS;
  return actions[Math.floor(random() * actions.length)] ?? "move up";
}

export const mazeEnv: SamplingEnvDefinition = {
  info: MAZE_INFO,
  create: () => new MazeEnv(),
  sampleAction: sampleMazeAction,
};

export { MAZE_INFO, MazeEnv, parseMove } from "./env.js";
export {
  DIRECTIONS,
  type Direction,
  distancesFrom,
  generateMaze,
  MAX_PATH,
  type Maze,
  neighbour,
} from "./generate.js";
export { SMALL_MAZE_CELLS, smallMazes } from "./small.js";
export { formatPosition, INSTRUCTION, MAX_STEPS, MOVE_ACTIONS } from "./text.js";
