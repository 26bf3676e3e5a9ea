/**
 * Token prices in US dollars per million tokens, and what a model without one means.
 *
 * A model's price comes from its clade.config entry (`models.<name>.price`), else the config's
 * `prices` table, else BUILTIN_PRICES (resolve.ts); the config always beats the built-in table.
 * A model with none (a local server, an unknown name) is **unpriced**: its calls are recorded
 * with cost 0 and `unpriced: true`, reported as "unpriced" (never as $0), and a --budget-usd run
 * refuses it up front (assertPricedForBudget), since a budget it cannot count would never stop.
 */
import { ConfigError } from "./errors.js";
import type { ResolvedModel } from "./resolve.js";
import type { Usage } from "./types.js";

export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
}

/**
 * Standard (non-batch, no prompt caching) prices as published by the providers, checked
 * 2026-11-22 against OpenAI's API pricing page and Anthropic's pricing documentation. Dated
 * snapshot ids are priced as their alias. Prices change: clade.config `prices` overrides these.
 */
export const BUILTIN_PRICES: Readonly<Record<string, Price>> = {
  "openai:gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  "openai:gpt-4o-mini-2024-07-18": { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  "openai:gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10 },
  "openai:gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 },
  "openai:gpt-4.1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  "openai:gpt-4.1-nano": { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  "anthropic:claude-sonnet-4-5": { inputPerMTok: 3, outputPerMTok: 15 },
  "anthropic:claude-sonnet-4-5-20250929": { inputPerMTok: 3, outputPerMTok: 15 },
  "anthropic:claude-sonnet-4-6": { inputPerMTok: 3, outputPerMTok: 15 },
  "anthropic:claude-haiku-4-5": { inputPerMTok: 1, outputPerMTok: 5 },
  "anthropic:claude-haiku-4-5-20251001": { inputPerMTok: 1, outputPerMTok: 5 },
  "anthropic:claude-opus-4-1": { inputPerMTok: 15, outputPerMTok: 75 },
  "anthropic:claude-opus-4-5": { inputPerMTok: 5, outputPerMTok: 25 },
  "anthropic:claude-opus-4-5-20251101": { inputPerMTok: 5, outputPerMTok: 25 },
  "anthropic:claude-opus-4-6": { inputPerMTok: 5, outputPerMTok: 25 },
};

/** The cost of a call's tokens; 0 without a price (the call is then recorded as unpriced). */
export function costUsd(usage: Usage, price: Price | undefined): number {
  if (!price) return 0;
  return (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1e6;
}

/** A run with a budget names a model clade cannot price. */
export class UnpricedModelError extends ConfigError {
  override name = "UnpricedModelError";
}

/** The id a model's price is looked up under in clade.config `prices`. */
export function priceId(model: ResolvedModel): string {
  const { spec } = model;
  return spec.provider === "openai-compatible"
    ? `openai-compatible:${spec.model}`
    : `${spec.provider}:${spec.model}`;
}

/**
 * Refuses a budget for a model without a price: its calls would count as nothing, so the
 * budget would never stop the run. One line naming the model and the two ways to price it.
 */
export function assertPricedForBudget(model: ResolvedModel): void {
  if (model.price) return;
  const id = priceId(model);
  // A spec always has a colon; a name from clade.config never does.
  const entry = !model.name.includes(":");
  throw new UnpricedModelError(
    `--budget-usd needs a price for model "${model.name}", which has none: add ` +
      `"prices": {"${id}": {"inputPerMTok": ..., "outputPerMTok": ...}} to clade.config.json` +
      (entry
        ? ` or "price": {"inputPerMTok": ..., "outputPerMTok": ...} to models.${model.name}`
        : ` (or name it in "models" with a "price")`) +
      " (US dollars per million tokens; 0 for a free local model)",
  );
}
