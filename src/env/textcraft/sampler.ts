/**
 * The random agent's action sampler. It draws from the observation's available actions when it
 * lists them (every TextcraftEnv observation does): inventory one time in ten, else a get or a
 * craft about equally often, uniform within the kind. Without a list (an observation from
 * elsewhere) it makes up well-formed actions about the items in view (the listed recipes on the
 * first observation, items named in later ones), weighted the same way.
 */
import type { ActionSampler } from "../types.js";
import { parseAction } from "./actions.js";
import {
  formatRecipe,
  ITEM_SPELLINGS,
  isBaseItem,
  RECIPES,
  type Recipe,
  recipeFor,
  resolveItem,
} from "./catalog.js";

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function listedRecipes(text: string): Recipe[] {
  const out: Recipe[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("craft ")) continue;
    const action = parseAction(line);
    const item = action.kind === "craft" ? resolveItem(action.name) : undefined;
    const recipe = item === undefined ? undefined : recipeFor(item);
    if (recipe) out.push(recipe);
  }
  return out;
}

function recipesMentioning(text: string): Recipe[] {
  const lower = text.toLowerCase();
  const named = new Set<string>();
  for (const [spelling, item] of ITEM_SPELLINGS) if (lower.includes(spelling)) named.add(item);
  return RECIPES.filter((r) => named.has(r.output) || r.ingredients.some((p) => named.has(p.item)));
}

function recipesInView(text: string): readonly Recipe[] {
  const listed = listedRecipes(text);
  if (listed.length > 0) return listed;
  const mentioned = recipesMentioning(text);
  return mentioned.length > 0 ? mentioned : RECIPES;
}

/** A base item somewhere below the recipe, reached by a random walk down its ingredients. */
function baseItemBelow(random: () => number, recipe: Recipe): string {
  let current = recipe;
  for (;;) {
    const part = pick(random, current.ingredients).item;
    const next = recipeFor(part);
    if (isBaseItem(part) || !next) return part;
    current = next;
  }
}

/** Chance of "inventory"; below GET_BELOW a get, else a craft. */
const INVENTORY_BELOW = 0.1;
const GET_BELOW = 0.55;

/** A weighted draw from the listed actions; undefined when the observation lists none. */
function sampleListed(random: () => number, actions: readonly string[]): string | undefined {
  if (actions.length === 0) return undefined;
  const gets = actions.filter((a) => a.startsWith("get "));
  const crafts = actions.filter((a) => a.startsWith("craft "));
  const roll = random();
  if (roll < INVENTORY_BELOW && actions.includes("inventory")) return "inventory";
  if (roll < GET_BELOW && gets.length > 0) return pick(random, gets);
  if (roll >= GET_BELOW && crafts.length > 0) return pick(random, crafts);
  return pick(random, actions);
}

export const sampleTextcraftAction: ActionSampler = (random, observation) => {
  const listed = sampleListed(random, observation.availableActions ?? []);
  if (listed !== undefined) return listed;
  const recipes = recipesInView(observation.text);
  const roll = random();
  if (roll < INVENTORY_BELOW) return "inventory";
  const recipe = pick(random, recipes);
  if (roll < GET_BELOW)
    return `get ${1 + Math.floor(random() * 4)} ${baseItemBelow(random, recipe)}`;
  return formatRecipe(recipe, random() < 0.8 ? 1 : 2);
};
