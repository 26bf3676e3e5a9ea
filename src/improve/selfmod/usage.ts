/**
 * Tokens and dollars of the modify-model's calls, so that an improvement reports what it cost.
 *
 * The cost of a call is known to the model client, not to the response: clade's production
 * client (src/model/client.ts) is an AccountedModel whose `completeWithMeta` prices each call
 * (0 for a cache hit). When the model is one, its price is used; any other Model (a test double,
 * a wrapper), and an AccountedModel that has no price (`unpriced`: a local server, an unknown
 * name), is unpriced: its calls count tokens, cost 0, and mark the usage `unpriced` so that
 * reports say so instead of $0.
 */
import { FailedCallError, isAccounted } from "../../model/call-record.js";
import type { Model, ModelRequest, ModelResponse } from "../../model/types.js";
import type { WorkUsage } from "../../store/search-log.js";

export type { WorkUsage };

export const NO_USAGE: Readonly<WorkUsage> = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** Both usages together: unpriced when either is. */
export function addUsage(a: WorkUsage, b: WorkUsage): WorkUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
    ...(a.unpriced || b.unpriced ? { unpriced: true } : {}),
  };
}

/** One model call, with its usage and cost. */
export async function completeCounted(
  model: Model,
  request: ModelRequest,
  signal?: AbortSignal,
): Promise<{ response: ModelResponse; usage: WorkUsage }> {
  if (!isAccounted(model)) {
    const response = await model.complete(request, signal);
    const { inputTokens, outputTokens } = response.usage;
    return { response, usage: { inputTokens, outputTokens, costUsd: 0, unpriced: true } };
  }
  try {
    const { response, meta } = await model.completeWithMeta(request, signal);
    // As call records count it: a cache hit costs nothing, so it is priced.
    const unpriced = meta.unpriced === true || (model.unpriced === true && !meta.cacheHit);
    const { inputTokens, outputTokens } = meta.usage;
    return {
      response,
      usage: {
        inputTokens,
        outputTokens,
        costUsd: meta.costUsd,
        ...(unpriced ? { unpriced: true } : {}),
      },
    };
  } catch (error) {
    throw error instanceof FailedCallError ? error.original : error;
  }
}
