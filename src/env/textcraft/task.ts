/**
 * Task generation: the index fixes the goal (depth cycles 1..4 with the index) and its distractor
 * recipes; the seed only reshuffles the order in which the crafting commands are listed.
 * Test and train goals come from disjoint item pools, so no test goal is ever a train goal.
 */

import { createRng, type Rng } from "../rng.js";
import type { IndexRange } from "../types.js";
import {
  formatRecipe,
  ITEMS_BY_DEPTH,
  MAX_DEPTH,
  RECIPES,
  type Recipe,
  recipesNeededFor,
} from "./catalog.js";

export const TEST_SPLIT: IndexRange = { start: 0, end: 100 };
export const TRAIN_SPLIT: IndexRange = { start: 100, end: 500 };

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

// Purpose tags keep the random streams independent of each other and of other envs.
const DISTRACTOR_STREAM = 0x7c_0001;
const ORDER_STREAM = 0x7c_0002;
const POOL_STREAM = 0x7c_0003;
const GOAL_STREAM = 0x7c_0004;
/** One in this many items of each depth is reserved as a test goal (rounded up). */
const TEST_SHARE = 4;
const MIN_DISTRACTORS = 3;
const MAX_DISTRACTORS = 6;

/** Depth 1..4 in turn, so every split holds each depth equally often. */
export function depthForIndex(index: number): number {
  return 1 + (index % MAX_DEPTH);
}

interface GoalPools {
  /** Index d holds the goal items of depth d. */
  test: readonly (readonly string[])[];
  train: readonly (readonly string[])[];
}

/** A fixed, seeded quarter of every depth's items is kept for the test split. */
function splitGoalPools(): GoalPools {
  const test: string[][] = [];
  const train: string[][] = [];
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    const items = createRng(POOL_STREAM, depth).shuffle(ITEMS_BY_DEPTH[depth] ?? []);
    const reserved = Math.ceil(items.length / TEST_SHARE);
    test.push(items.slice(0, reserved));
    train.push(items.slice(reserved));
  }
  return { test, train };
}

export const GOAL_POOLS: GoalPools = splitGoalPools();

function inSplit(index: number, split: IndexRange): boolean {
  return index >= split.start && index < split.end;
}

/**
 * The goal of a task: its split's tasks of one depth walk through that depth's pool in
 * reshuffled rounds, so every pool item is a goal about equally often.
 */
export function goalForIndex(index: number): string {
  const depth = depthForIndex(index);
  const isTest = inSplit(index, TEST_SPLIT);
  const split = isTest ? TEST_SPLIT : TRAIN_SPLIT;
  const pool = (isTest ? GOAL_POOLS.test : GOAL_POOLS.train)[depth] ?? [];
  if (pool.length === 0) throw new Error(`textcraft: no depth-${depth} goals`);
  // Splits start at multiples of MAX_DEPTH, so this counts the split's tasks of this depth.
  const slot = Math.floor((index - split.start) / MAX_DEPTH);
  const round = Math.floor(slot / pool.length);
  const order = createRng(GOAL_STREAM, isTest ? 0 : 1, depth, round).shuffle(pool);
  return order[slot % pool.length] as string;
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
  const goal = goalForIndex(index);
  const needed = recipesNeededFor(goal);
  const distractors = pickDistractors(needed, createRng(DISTRACTOR_STREAM, index));
  const commands = createRng(ORDER_STREAM, index, seed).shuffle([...needed, ...distractors]);
  return { index, seed, goal, depth, needed, distractors, commands };
}

/** The first observation: the listed crafting commands, then the goal. */
export function formatTaskObservation(task: TextcraftTask): string {
  const lines = task.commands.map((recipe) => formatRecipe(recipe));
  return `Crafting commands:\n${lines.join("\n")}\n\nGoal: craft ${task.goal}.`;
}
