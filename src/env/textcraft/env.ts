/**
 * The TextCraft environment: craft a goal item from base materials using listed recipes.
 * Modelled on AgentGym's TextCraft, with its own item universe (data.ts).
 */
import {
  checkTaskIndex,
  type Env,
  type EnvInfo,
  EpisodeDoneError,
  NotResetError,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { parseAction } from "./actions.js";
import { availableActionsFor } from "./available.js";
import { applyAction, type Inventory } from "./crafting.js";
import {
  formatTaskObservation,
  generateTask,
  TEST_SPLIT,
  type TextcraftTask,
  TRAIN_SPLIT,
} from "./task.js";

const NAME = "textcraft";
const MAX_STEPS = 40;

const INSTRUCTION = `You are in a crafting world. Each task lists some crafting commands and a goal \
item; put the goal item into your inventory. Your inventory starts empty.

Actions (exactly one per turn):
- get N item: fetch N of a base item. Only base items (ones no recipe makes) can be fetched; \
every other item must be crafted.
- craft N item using N ingredient, N ingredient: craft with a recipe. The item and ingredients must \
match a recipe exactly. Each recipe makes a fixed count per craft, e.g. \
"craft 4 ashwood plank using 1 ashwood log". To craft more at once, ask for a multiple of that \
count and multiply every ingredient count by the same factor, e.g. \
"craft 8 ashwood plank using 2 ashwood log". The ingredients must be in your inventory and are \
used up.
- inventory: show what you are carrying.

Not every listed command is needed for the goal. Item names are case-insensitive, singular or \
plural. You succeed (reward 1) as soon as the goal item is in your inventory. You have at most \
${MAX_STEPS} actions; invalid actions count too.`;

export const TEXTCRAFT_INFO: EnvInfo = {
  name: NAME,
  // 1.2.0: observations list availableActions (see available.ts), and the random agent draws
  // from that list, so random baselines and agents that read the list (tool-calling's enum, the
  // embedded policy) differ from 1.1.0 runs. Tasks, rules and observation texts are unchanged.
  version: "1.2.0",
  description:
    "Craft a goal item (crafting trees of depth 1-4) from listed recipes and distractors; " +
    "test goals are never train goals.",
  instruction: INSTRUCTION,
  splits: { train: TRAIN_SPLIT, test: TEST_SPLIT },
  successThreshold: 1,
  maxSteps: MAX_STEPS,
};

export class TextcraftEnv implements Env {
  readonly info = TEXTCRAFT_INFO;
  private task: TextcraftTask | undefined;
  /** The task's available actions: the same at every observation until the episode ends. */
  private actions: readonly string[] = [];
  private inventory: Inventory = new Map();
  private steps = 0;
  private done = false;

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    this.task = generateTask(taskIndex, options.seed ?? 0);
    this.inventory = new Map();
    this.steps = 0;
    this.done = false;
    this.actions = availableActionsFor(this.task.commands);
    return { text: formatTaskObservation(this.task), availableActions: this.actions.slice() };
  }

  async step(action: string): Promise<StepResult> {
    const task = this.task;
    if (!task) throw new NotResetError(NAME);
    if (this.done) throw new EpisodeDoneError(NAME);
    this.steps++;
    const outcome = applyAction(this.inventory, action, parseAction(action));
    const info: Record<string, unknown> = { steps: this.steps };
    if (outcome.error) {
      info.invalid = true;
      info.error = outcome.error;
    }
    let text = outcome.text;
    const success = this.inventory.has(task.goal);
    if (success) {
      text += `\nTask completed: you have ${task.goal}.`;
    } else if (this.steps >= MAX_STEPS) {
      text += `\nStep limit reached (${MAX_STEPS} actions); the task failed.`;
      info.truncated = true;
    }
    this.done = success || this.steps >= MAX_STEPS;
    if (this.done) info.success = success;
    // A finished episode takes no more actions, so it lists none.
    const availableActions = this.done ? [] : this.actions.slice();
    return {
      observation: { text, availableActions },
      reward: success ? 1 : 0,
      done: this.done,
      info,
    };
  }
}
