/**
 * TextCraft reference solver. It plans from the first observation alone: parses the listed
 * crafting commands and the goal, totals what every item in the goal's tree requires (consumers
 * before producers), then fetches each base item once and crafts each item once, producers first.
 */
import { parseAction } from "../../env/textcraft/actions.js";
import { normalizeName } from "../../env/textcraft/catalog.js";
import type { Agent, AgentReply, ReferenceSolver } from "../types.js";

interface ListedRecipe {
  output: string;
  count: number;
  ingredients: { name: string; count: number }[];
}

interface PlannedAction {
  action: string;
  thought: string;
}

function parseObservation(text: string): { goal: string; recipes: Map<string, ListedRecipe> } {
  const recipes = new Map<string, ListedRecipe>();
  for (const line of text.split("\n")) {
    const parsed = parseAction(line);
    if (parsed.kind !== "craft") continue;
    const ingredients = parsed.ingredients.map((p) => ({ ...p, name: normalizeName(p.name) }));
    recipes.set(normalizeName(parsed.name), {
      output: normalizeName(parsed.name),
      count: parsed.count,
      ingredients,
    });
  }
  const goal = /Goal: craft (.+?)\.?\s*$/m.exec(text)?.[1];
  if (goal === undefined) throw new Error("textcraft solver: no goal in the first observation");
  return { goal: normalizeName(goal), recipes };
}

/** Items of the goal's tree with producers after their consumers (reverse post-order). */
function consumersFirst(goal: string, recipes: ReadonlyMap<string, ListedRecipe>): string[] {
  const seen = new Set<string>();
  const postOrder: string[] = [];
  const visit = (item: string) => {
    if (seen.has(item)) return;
    seen.add(item);
    for (const part of recipes.get(item)?.ingredients ?? []) visit(part.name);
    postOrder.push(item);
  };
  visit(goal);
  return postOrder.reverse();
}

export function planTextcraft(observationText: string): PlannedAction[] {
  const { goal, recipes } = parseObservation(observationText);
  const order = consumersFirst(goal, recipes);
  const need = new Map<string, number>([[goal, 1]]);
  const crafts: PlannedAction[] = [];
  const gets: PlannedAction[] = [];
  for (const item of order) {
    const amount = need.get(item) ?? 0;
    const recipe = recipes.get(item);
    if (!recipe) {
      // No listed recipe makes it, so it is a base item.
      gets.push({ action: `get ${amount} ${item}`, thought: `I need ${amount} ${item}.` });
      continue;
    }
    const times = Math.ceil(amount / recipe.count);
    for (const part of recipe.ingredients) {
      need.set(part.name, (need.get(part.name) ?? 0) + part.count * times);
    }
    const parts = recipe.ingredients.map((p) => `${p.count * times} ${p.name}`).join(", ");
    crafts.push({
      action: `craft ${recipe.count * times} ${item} using ${parts}`,
      thought: `I have the ingredients for ${item}${item === goal ? ", the goal" : ""}.`,
    });
  }
  // Crafts were collected consumers first; run them producers first.
  return [...gets, ...crafts.reverse()];
}

export const solveTextcraft: ReferenceSolver = () => {
  let plan: PlannedAction[] | undefined;
  let next = 0;
  const agent: Agent = {
    async act(state): Promise<AgentReply> {
      plan ??= planTextcraft(state.observation.text);
      const step = plan[next++] ?? { action: "inventory", thought: "Let me check my inventory." };
      return { action: step.action, message: `Thought: ${step.thought}\n\nAction: ${step.action}` };
    },
  };
  return agent;
};
