/**
 * The rules of get, craft and inventory, applied to an inventory map. Each returns the
 * observation text and, when the action had no effect, why (the env reports it in info).
 */

import { clipTrimmed as echo } from "../echo.js";
import type { CountedName, TextcraftAction } from "./actions.js";
import { isBaseItem, recipeFor, resolveItem } from "./catalog.js";

export type Inventory = Map<string, number>;

export type ActionError =
  | "unparseable"
  | "unknown-item"
  | "not-gettable"
  | "no-recipe"
  | "missing-items";

export interface Outcome {
  text: string;
  error?: ActionError;
}

const SYNTAX =
  'Valid actions: "get N item", "craft N item using N ingredient, N ingredient", "inventory".';

export function describeInventory(inventory: Inventory): string {
  if (inventory.size === 0) return "Inventory: You are not carrying anything.";
  const items = [...inventory].map(([item, n]) => `[${item}] (${n})`);
  return `Inventory: ${items.join(" ")}`;
}

function listCounted(parts: readonly CountedName[]): string {
  return parts.map((p) => `${p.count} ${p.name}`).join(", ");
}

function get(inventory: Inventory, count: number, name: string): Outcome {
  const item = resolveItem(name);
  if (item === undefined) return { text: `Could not find ${echo(name)}.`, error: "unknown-item" };
  if (!isBaseItem(item)) {
    return {
      text:
        `Could not execute get ${count} ${echo(name)}: ${item} is not a base item; ` +
        "craft it instead.",
      error: "not-gettable",
    };
  }
  inventory.set(item, (inventory.get(item) ?? 0) + count);
  return { text: `Got ${count} ${item}.` };
}

/** Sums the given ingredients by canonical item; undefined when a name is not an item. */
function resolveIngredients(parts: readonly CountedName[]): Map<string, number> | undefined {
  const out = new Map<string, number>();
  for (const part of parts) {
    const item = resolveItem(part.name);
    if (item === undefined) return undefined;
    out.set(item, (out.get(item) ?? 0) + part.count);
  }
  return out;
}

function craft(inventory: Inventory, action: Extract<TextcraftAction, { kind: "craft" }>): Outcome {
  const item = resolveItem(action.name);
  const recipe = item === undefined ? undefined : recipeFor(item);
  const asked = echo(`${action.count} ${action.name} using ${listCounted(action.ingredients)}`);
  if (!recipe) {
    const hint = item !== undefined && isBaseItem(item) ? ` ${item} is a base item; get it.` : "";
    const text = `Could not find a valid recipe for ${echo(action.name)}.${hint}`;
    return { text, error: "no-recipe" };
  }
  const given = resolveIngredients(action.ingredients);
  const sameItems =
    given !== undefined &&
    given.size === recipe.ingredients.length &&
    recipe.ingredients.every((p) => given.has(p.item));
  if (!given || !sameItems) {
    return {
      text: `Could not find a valid recipe for ${asked}: the ingredients match no recipe.`,
      error: "no-recipe",
    };
  }
  if (action.count % recipe.count !== 0) {
    return {
      text:
        `Could not find a valid recipe for ${asked}: one craft makes ${recipe.count} ` +
        `${recipe.output}, so the count must be a multiple of ${recipe.count}.`,
      error: "no-recipe",
    };
  }
  const times = action.count / recipe.count;
  if (recipe.ingredients.some((p) => given.get(p.item) !== p.count * times)) {
    return {
      text:
        `Could not find a valid recipe for ${asked}: the ingredient counts must be the ` +
        `recipe's counts times ${times}.`,
      error: "no-recipe",
    };
  }
  const missing = recipe.ingredients
    .map((p) => ({ name: p.item, count: p.count * times - (inventory.get(p.item) ?? 0) }))
    .filter((p) => p.count > 0);
  if (missing.length > 0) {
    return {
      text: `Could not find enough items to craft ${action.count} ${recipe.output}. Missing: ${listCounted(missing)}.`,
      error: "missing-items",
    };
  }
  for (const p of recipe.ingredients) {
    const left = (inventory.get(p.item) ?? 0) - p.count * times;
    if (left === 0) inventory.delete(p.item);
    else inventory.set(p.item, left);
  }
  inventory.set(recipe.output, (inventory.get(recipe.output) ?? 0) + action.count);
  return { text: `Crafted ${action.count} ${recipe.output}.` };
}

/** Applies one raw action string to the inventory (mutating it only on success). */
export function applyAction(inventory: Inventory, raw: string, parsed: TextcraftAction): Outcome {
  switch (parsed.kind) {
    case "inventory":
      return { text: describeInventory(inventory) };
    case "get":
      return get(inventory, parsed.count, parsed.name);
    case "craft":
      return craft(inventory, parsed);
    case "malformed":
      return { text: `Could not execute ${echo(raw)}: ${parsed.problem}.`, error: "unparseable" };
    case "unknown":
      return { text: `Could not execute ${echo(raw)}. ${SYNTAX}`, error: "unparseable" };
  }
}
