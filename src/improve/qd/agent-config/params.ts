/**
 * The numeric generation parameters as genes: their bounds, and how a value is brought back into
 * them. Temperature and top_p are kept to PARAM_DECIMALS places, so that children read cleanly and
 * ids do not differ by float noise alone; max tokens is an integer.
 */
import type { GenerationParams } from "../../../model/types.js";
import { type AgentParams, MAX_TOKENS_BOUNDS, TEMPERATURE_BOUNDS, TOP_P_BOUNDS } from "./config.js";

export const PARAM_DECIMALS = 3;

export type ParamName = keyof AgentParams;

export const PARAM_BOUNDS: Readonly<Record<ParamName, { min: number; max: number }>> = {
  temperature: TEMPERATURE_BOUNDS,
  topP: TOP_P_BOUNDS,
  maxTokens: MAX_TOKENS_BOUNDS,
};

/** `value` clamped to the parameter's bounds and rounded to its precision. */
export function settleParam(name: ParamName, value: number): number {
  const { min, max } = PARAM_BOUNDS[name];
  const clamped = Math.min(Math.max(value, min), max);
  if (name === "maxTokens") return Math.round(clamped);
  const scale = 10 ** PARAM_DECIMALS;
  return Math.round(clamped * scale) / scale;
}

/** The parameters as the model layer takes them. */
export function generationParams(params: AgentParams, seed?: number): GenerationParams {
  return {
    temperature: params.temperature,
    topP: params.topP,
    maxTokens: params.maxTokens,
    ...(seed === undefined ? {} : { seed }),
  };
}
