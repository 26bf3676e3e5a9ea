/**
 * The actions a TextCraft observation lists (Observation.availableActions), so that agents
 * which choose among listed actions (the embedded policy, tool-calling's enum) can play.
 *
 * The list is a function of the listed crafting commands alone: it never looks at the goal or
 * at which commands are distractors, and treats every listed command alike. It holds:
 *
 * 1. `inventory`;
 * 2. every listed command exactly as shown (one craft of its recipe);
 * 3. `get N item` for every base ingredient of a listed command, N = the count that command uses;
 * 4. for every item a listed command makes, the batch that makes one craft of it from an empty
 *    inventory with the listed commands only: each crafted item in its tree once, scaled to the
 *    smallest multiple that covers what its consumers use (`craft 8 stick using 4 ashwood
 *    plank`), and each base item of the tree fetched once in the total amount the tree uses.
 *    Base items are the obtainable ones; an ingredient that is neither base nor made by a listed
 *    command (possible under a distractor) gets no `get`.
 *
 * Ordered `inventory`, then the gets (items in order of first mention in the listed commands,
 * counts ascending), then the crafts (listed commands in listed order, multiples ascending);
 * duplicates are dropped. The seed reorders the commands, so it reorders the list too.
 */
import { MAX_COUNT } from "./actions.js";
import { formatRecipe, isBaseItem, type Recipe } from "./catalog.js";

interface Batch {
  /** Crafts per recipe output: how many times its recipe runs. */
  crafts: Map<string, number>;
  /** Base items to fetch, with their total counts. */
  gets: Map<string, number>;
}

/** Items of `root`'s tree (over the listed recipes), every consumer before its producers. */
function consumersFirst(root: string, recipes: ReadonlyMap<string, Recipe>): string[] {
  const seen = new Set<string>();
  const postOrder: string[] = [];
  const visit = (item: string) => {
    if (seen.has(item)) return;
    seen.add(item);
    for (const part of recipes.get(item)?.ingredients ?? []) visit(part.item);
    postOrder.push(item);
  };
  visit(root);
  return postOrder.reverse();
}

/** What making one craft of `root` from nothing takes, with the listed recipes only. */
function batchFor(root: string, recipes: ReadonlyMap<string, Recipe>): Batch {
  const need = new Map<string, number>([[root, 1]]);
  const batch: Batch = { crafts: new Map(), gets: new Map() };
  for (const item of consumersFirst(root, recipes)) {
    const amount = need.get(item) ?? 0;
    const recipe = recipes.get(item);
    if (!recipe) {
      if (isBaseItem(item)) batch.gets.set(item, amount);
      continue;
    }
    const times = Math.ceil(amount / recipe.count);
    batch.crafts.set(item, times);
    for (const part of recipe.ingredients) {
      need.set(part.item, (need.get(part.item) ?? 0) + part.count * times);
    }
  }
  return batch;
}

function addCount(counts: Map<string, Set<number>>, item: string, count: number): void {
  let set = counts.get(item);
  if (!set) {
    set = new Set();
    counts.set(item, set);
  }
  set.add(count);
}

const ascending = (a: number, b: number) => a - b;

/** The available actions for a task whose observation lists `commands` (see the rule above). */
export function availableActionsFor(commands: readonly Recipe[]): string[] {
  const recipes = new Map(commands.map((recipe) => [recipe.output, recipe]));
  // Map insertion order is first mention, which fixes the order of items in the list.
  const getCounts = new Map<string, Set<number>>();
  const craftTimes = new Map<string, Set<number>>();
  for (const recipe of commands) {
    craftTimes.set(recipe.output, new Set([1]));
    for (const part of recipe.ingredients) {
      if (isBaseItem(part.item)) addCount(getCounts, part.item, part.count);
    }
  }
  for (const recipe of commands) {
    const batch = batchFor(recipe.output, recipes);
    for (const [item, count] of batch.gets) addCount(getCounts, item, count);
    for (const [item, times] of batch.crafts) addCount(craftTimes, item, times);
  }

  const actions = ["inventory"];
  for (const [item, counts] of getCounts) {
    for (const count of [...counts].sort(ascending)) {
      if (count <= MAX_COUNT) actions.push(`get ${count} ${item}`);
    }
  }
  for (const [item, timesSet] of craftTimes) {
    const recipe = recipes.get(item) as Recipe;
    for (const times of [...timesSet].sort(ascending)) {
      const largest = Math.max(recipe.count, ...recipe.ingredients.map((p) => p.count)) * times;
      if (largest <= MAX_COUNT) actions.push(formatRecipe(recipe, times));
    }
  }
  return [...new Set(actions)];
}
