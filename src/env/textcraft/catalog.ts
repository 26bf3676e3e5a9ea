/**
 * The recipe catalog built once from data.ts: lookups by item, crafting depths and forgiving
 * name resolution. Built and validated at module load so that step() only does map lookups.
 */
import { BASE_ITEMS, RECIPE_ROWS } from "./data.js";

export interface Ingredient {
  item: string;
  count: number;
}

export interface Recipe {
  output: string;
  /** How many items one craft makes. */
  count: number;
  ingredients: readonly Ingredient[];
}

export const RECIPES: readonly Recipe[] = RECIPE_ROWS.map(([count, output, ingredients]) => ({
  output,
  count,
  ingredients: Object.entries(ingredients).map(([item, n]) => ({ item, count: n })),
}));

const baseItems = new Set(BASE_ITEMS);
const recipeByOutput = new Map<string, Recipe>();
for (const recipe of RECIPES) {
  if (recipeByOutput.has(recipe.output) || baseItems.has(recipe.output)) {
    throw new Error(`textcraft data: ${recipe.output} has more than one source`);
  }
  recipeByOutput.set(recipe.output, recipe);
}

export function isBaseItem(item: string): boolean {
  return baseItems.has(item);
}

export function recipeFor(item: string): Recipe | undefined {
  return recipeByOutput.get(item);
}

/** Lower case, single spaces, underscores as spaces: the form names are compared in. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/_/g, " ").replace(/\s+/g, " ").trim();
}

function pluralOf(name: string): string {
  if (/(s|x|z|ch|sh)$/.test(name)) return `${name}es`;
  if (/[^aeiou]y$/.test(name)) return `${name.slice(0, -1)}ies`;
  return `${name}s`;
}

/** Every accepted spelling (singular and plural) → canonical item name. */
const itemBySpelling = new Map<string, string>();
for (const item of [...BASE_ITEMS, ...recipeByOutput.keys()]) {
  for (const spelling of [item, pluralOf(item)]) {
    const taken = itemBySpelling.get(spelling);
    if (taken !== undefined && taken !== item) {
      throw new Error(`textcraft data: "${spelling}" names both ${taken} and ${item}`);
    }
    itemBySpelling.set(spelling, item);
  }
}

/** The canonical item a (possibly plural, oddly cased) name refers to, if any. */
export function resolveItem(name: string): string | undefined {
  return itemBySpelling.get(normalizeName(name));
}

/** All accepted spellings, longest first (the sampler scans text for them). */
export const ITEM_SPELLINGS: readonly (readonly [string, string])[] = [
  ...itemBySpelling.entries(),
].sort((a, b) => b[0].length - a[0].length);

/** Crafting depth: 0 for base items, else 1 + the deepest ingredient. */
const depthByItem = new Map<string, number>();
function computeDepth(item: string, visiting: Set<string>): number {
  const known = depthByItem.get(item);
  if (known !== undefined) return known;
  if (baseItems.has(item)) return 0;
  const recipe = recipeByOutput.get(item);
  if (!recipe) throw new Error(`textcraft data: no source for ${item}`);
  if (visiting.has(item)) throw new Error(`textcraft data: recipe cycle through ${item}`);
  visiting.add(item);
  let deepest = 0;
  for (const { item: part } of recipe.ingredients) {
    deepest = Math.max(deepest, computeDepth(part, visiting));
  }
  visiting.delete(item);
  depthByItem.set(item, deepest + 1);
  return deepest + 1;
}
for (const recipe of RECIPES) computeDepth(recipe.output, new Set());

export function depthOf(item: string): number {
  return depthByItem.get(item) ?? 0;
}

export const MAX_DEPTH = 4;

/** Craftable items grouped by depth: index d holds the items of depth d (1..MAX_DEPTH). */
export const ITEMS_BY_DEPTH: readonly (readonly string[])[] = Array.from(
  { length: MAX_DEPTH + 1 },
  (_, depth) => RECIPES.map((r) => r.output).filter((item) => depthOf(item) === depth),
);

/** The recipes of every crafted item in the goal's crafting tree, goal first. */
export function recipesNeededFor(goal: string): Recipe[] {
  const seen = new Set<string>();
  const out: Recipe[] = [];
  const visit = (item: string) => {
    const recipe = recipeByOutput.get(item);
    if (!recipe || seen.has(item)) return;
    seen.add(item);
    out.push(recipe);
    for (const part of recipe.ingredients) visit(part.item);
  };
  visit(goal);
  return out;
}

/** "craft 4 ashwood plank using 1 ashwood log", with counts multiplied by `times`. */
export function formatRecipe(recipe: Recipe, times = 1): string {
  const parts = recipe.ingredients.map((p) => `${p.count * times} ${p.item}`).join(", ");
  return `craft ${recipe.count * times} ${recipe.output} using ${parts}`;
}
