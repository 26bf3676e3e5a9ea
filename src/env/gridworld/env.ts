/**
 * The gridworld environment: a BabyAI-like world of rooms, doors, keys, balls and boxes, played
 * through text. Each step applies one action, checks the goal and describes the new view.
 */
import {
  activeEpisode,
  checkTaskIndex,
  type Env,
  type EnvInfo,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { echo, parseAction } from "./actions.js";
import { generateTask, TEST_SPLIT, TRAIN_SPLIT } from "./generate.js";
import { applyAction } from "./rules.js";
import {
  availableActions,
  INSTRUCTION,
  introText,
  invalidActionText,
  MAX_STEPS,
  OUT_OF_STEPS,
  sightings,
  viewText,
} from "./text.js";
import { createWorld, goalReached, goalText, type World, walkDistances } from "./world.js";

export const GRIDWORLD_INFO: EnvInfo = {
  name: "gridworld",
  version: "1.0.0",
  description:
    "BabyAI-like rooms with doors, keys, balls and boxes: go to, pick up, open a door or put one " +
    "object next to another; from one room up to four rooms with a locked door.",
  instruction: INSTRUCTION,
  splits: { train: TRAIN_SPLIT, test: TEST_SPLIT },
  successThreshold: 1,
  maxSteps: MAX_STEPS,
};

interface Episode {
  world: World;
  steps: number;
  done: boolean;
}

/** The view of the current state and the actions that make sense in it. */
function observe(world: World, lead: string): Observation {
  const seen = sightings(world);
  const actions = availableActions(world, seen, walkDistances(world));
  return { text: `${lead}\n${viewText(world, seen)}`, availableActions: actions };
}

export class GridworldEnv implements Env {
  readonly info = GRIDWORLD_INFO;
  private episode: Episode | undefined;

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    const world = createWorld(generateTask(taskIndex, options.seed ?? 0));
    this.episode = { world, steps: 0, done: false };
    return observe(world, introText(world));
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(this.info.name, this.episode);
    const { world } = episode;
    episode.steps++;
    const outcome = applyAction(world, parseAction(String(action)));
    const info: Record<string, unknown> = { ...outcome.info };
    let lead = outcome.text;
    if (outcome.invalid) {
      info.invalid = true;
      info.error = outcome.text;
      lead = invalidActionText(echo(String(action)), outcome.text);
    } else if (goalReached(world)) {
      episode.done = true;
      return {
        observation: {
          text: `${lead}\nYou reached the goal: ${goalText(world)}. Well done!`,
          availableActions: [],
        },
        reward: 1,
        done: true,
        info: { ...info, success: true, steps: episode.steps },
      };
    }
    const observation = observe(world, lead);
    if (episode.steps >= MAX_STEPS) {
      episode.done = true;
      observation.text += `\n${OUT_OF_STEPS}`;
      observation.availableActions = [];
      return {
        observation,
        reward: 0,
        done: true,
        info: { ...info, success: false, steps: episode.steps },
      };
    }
    return { observation, reward: 0, done: false, info };
  }

  async close(): Promise<void> {
    this.episode = undefined;
  }
}
