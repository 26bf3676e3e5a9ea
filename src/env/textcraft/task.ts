/**
 * Task generation: the index fixes the goal (depth cycles 1..4 with the index) and its distractor
 * recipes; the seed only reshuffles the order in which the crafting commands are listed.
 */
import { createRng, type Rng } from "../rng.js";
import {
  formatRecipe,
  ITEMS_BY_DEPTH,
  MAX_DEPTH,
  RECIPES,
  type Recipe,
  recipesNeededFor,
} from "./catalog.js";

export interface TextcraftTask {
  index: number;
  seed: number;
  goal: string;
  /** Crafting depth of the goal (1..4). */
  depth: number;
  /** Recipes of every crafted item in the goal's tree. */
  needed: readonly Recipe[];
  /** Listed recipes the goal does not need. */
  distractors: readonly Recipe[];
  /** needed + distractors in the order the first observation lists them. */
  commands: readonly Recipe[];
}

// Purpose tags keep the goal and ordering streams independent of each other and of other envs.
const GOAL_STREAM = 0x7c_0001;
const ORDER_STREAM = 0x7c_0002;
const MIN_DISTRACTORS = 3;
const MAX_DISTRACTORS = 6;

/** Depth 1..4 in turn, so every split holds each depth equally often. */
export function depthForIndex(index: number): number {
  return 1 + (index % MAX_DEPTH);
}

function touchesTree(recipe: Recipe, treeItems: ReadonlySet<string>): boolean {
  return recipe.ingredients.some((p) => treeItems.has(p.item));
}

/**
 * Distractors: about half share an ingredient with the goal's tree (plausible confusions),
 * the rest come from anywhere in the catalog.
 */
function pickDistractors(needed: readonly Recipe[], random: Rng): Recipe[] {
  const neededOutputs = new Set(needed.map((r) => r.output));
  const treeItems = new Set<string>(neededOutputs);
  for (const recipe of needed) for (const p of recipe.ingredients) treeItems.add(p.item);
  const others = RECIPES.filter((r) => !neededOutputs.has(r.output));
  const related = random.shuffle(others.filter((r) => touchesTree(r, treeItems)));
  const unrelated = random.shuffle(others.filter((r) => !touchesTree(r, treeItems)));
  const total = MIN_DISTRACTORS + random.int(MAX_DISTRACTORS - MIN_DISTRACTORS + 1);
  const fromRelated = Math.min(related.length, Math.ceil(total / 2));
  const picked = related.slice(0, fromRelated);
  picked.push(...unrelated.slice(0, total - fromRelated));
  return picked;
}

export function generateTask(index: number, seed = 0): TextcraftTask {
  const depth = depthForIndex(index);
  const random = createRng(GOAL_STREAM, index);
  const goal = random.pick(ITEMS_BY_DEPTH[depth] ?? []);
  const needed = recipesNeededFor(goal);
  const distractors = pickDistractors(needed, random);
  const commands = createRng(ORDER_STREAM, index, seed).shuffle([...needed, ...distractors]);
  return { index, seed, goal, depth, needed, distractors, commands };
}

/** The first observation: the listed crafting commands, then the goal. */
export function formatTaskObservation(task: TextcraftTask): string {
  const lines = task.commands.map((recipe) => formatRecipe(recipe));
  return `Crafting commands:\n${lines.join("\n")}\n\nGoal: craft ${task.goal}.`;
}
