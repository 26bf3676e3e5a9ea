/**
 * Tokens and dollars of the modify-model's calls, so that an improvement reports what it cost.
 *
 * The cost of a call is known to the model client, not to the response: clade's production
 * client (src/model/client.ts) is an AccountedModel whose `completeWithMeta` prices each call
 * (0 for a cache hit). When the model is one, its price is used; any other Model (a test double,
 * a wrapper) is unpriced here and counts tokens only, at $0.
 */
import type { AccountedModel } from "../../model/call-record.js";
import { FailedCallError } from "../../model/call-record.js";
import type { Model, ModelRequest, ModelResponse } from "../../model/types.js";
import type { WorkUsage } from "../../store/search-log.js";

export type { WorkUsage };

export const NO_USAGE: Readonly<WorkUsage> = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

export function addUsage(a: WorkUsage, b: WorkUsage): WorkUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
  };
}

function isAccounted(model: Model): model is AccountedModel {
  return typeof (model as Partial<AccountedModel>).completeWithMeta === "function";
}

/** One model call, with its usage and cost. */
export async function completeCounted(
  model: Model,
  request: ModelRequest,
  signal?: AbortSignal,
): Promise<{ response: ModelResponse; usage: WorkUsage }> {
  if (!isAccounted(model)) {
    const response = await model.complete(request, signal);
    return { response, usage: { ...response.usage, costUsd: 0 } };
  }
  try {
    const { response, meta } = await model.completeWithMeta(request, signal);
    return { response, usage: { ...meta.usage, costUsd: meta.costUsd } };
  } catch (error) {
    throw error instanceof FailedCallError ? error.original : error;
  }
}
