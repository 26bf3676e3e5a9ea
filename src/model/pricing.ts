/**
 * Token prices in US dollars per million tokens. The built-in table covers a few common models
 * as published by their providers in 2025; prices change, so clade.config `prices` overrides it.
 * Models without a price (local servers, unknown names) cost 0 and are reported as unpriced.
 */
import type { Usage } from "./types.js";

export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
}

export const BUILTIN_PRICES: Readonly<Record<string, Price>> = {
  "openai:gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  "openai:gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10 },
  "openai:gpt-4.1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  "openai:gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 },
  "anthropic:claude-sonnet-4-5": { inputPerMTok: 3, outputPerMTok: 15 },
  "anthropic:claude-haiku-4-5": { inputPerMTok: 1, outputPerMTok: 5 },
  "anthropic:claude-opus-4-1": { inputPerMTok: 15, outputPerMTok: 75 },
};

export function costUsd(usage: Usage, price: Price | undefined): number {
  if (!price) return 0;
  return (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1e6;
}
