/**
 * What a self-modification's work cost: a model without a price (a local server, a plain Model)
 * makes the usage unpriced, never $0, and adding usages keeps it; an episode is unpriced when any
 * of its calls was.
 */
import { describe, expect, it } from "vitest";
import { episodeUsage } from "../../../src/improve/selfmod/evaluator.js";
import { addUsage, completeCounted, NO_USAGE } from "../../../src/improve/selfmod/usage.js";
import type { AccountedModel, CallMeta, ModelCallRecord } from "../../../src/model/call-record.js";
import { ScriptedModel } from "../../../src/testing/scripted-model.js";

const REQUEST = { messages: [{ role: "user" as const, content: "hi" }] };

/** An accounted model over a scripted one, its calls' meta as given. */
function accounted(meta: Partial<CallMeta>, unpriced?: boolean): AccountedModel {
  const inner = new ScriptedModel([{ content: "ok", usage: { inputTokens: 7, outputTokens: 2 } }]);
  return {
    id: "m",
    ...(unpriced !== undefined ? { unpriced } : {}),
    complete: (request, signal) => inner.complete(request, signal),
    async completeWithMeta(request, signal) {
      const response = await inner.complete(request, signal);
      return {
        response,
        meta: {
          usage: response.usage,
          costUsd: 0,
          latencyMs: 1,
          cacheHit: false,
          attempts: 1,
          ...meta,
        },
      };
    },
  };
}

describe("the improver's model usage", () => {
  it("a priced model's calls cost their price", async () => {
    const { usage } = await completeCounted(accounted({ costUsd: 0.25 }, false), REQUEST);
    expect(usage).toEqual({ inputTokens: 7, outputTokens: 2, costUsd: 0.25 });
  });

  it("a model without a price, or a plain Model, is unpriced", async () => {
    const local = await completeCounted(accounted({ unpriced: true }, true), REQUEST);
    expect(local.usage).toEqual({ inputTokens: 7, outputTokens: 2, costUsd: 0, unpriced: true });
    // The model's flag counts when its calls' meta says nothing.
    const flagged = await completeCounted(accounted({}, true), REQUEST);
    expect(flagged.usage.unpriced).toBe(true);
    const plain = new ScriptedModel([
      { content: "ok", usage: { inputTokens: 3, outputTokens: 1 } },
    ]);
    expect((await completeCounted(plain, REQUEST)).usage).toEqual({
      inputTokens: 3,
      outputTokens: 1,
      costUsd: 0,
      unpriced: true,
    });
  });

  it("a cache hit costs nothing, so it is priced", async () => {
    const { usage } = await completeCounted(accounted({ cacheHit: true }, true), REQUEST);
    expect(usage).not.toHaveProperty("unpriced");
  });

  it("adding usages keeps unpriced when either was", () => {
    const priced = { inputTokens: 1, outputTokens: 2, costUsd: 0.5 };
    const unpriced = { inputTokens: 3, outputTokens: 4, costUsd: 0, unpriced: true as const };
    expect(addUsage(priced, priced)).toEqual({ inputTokens: 2, outputTokens: 4, costUsd: 1 });
    expect(addUsage(priced, unpriced)).toEqual({
      inputTokens: 4,
      outputTokens: 6,
      costUsd: 0.5,
      unpriced: true,
    });
    expect(addUsage(unpriced, { ...NO_USAGE })).toMatchObject({ unpriced: true });
  });
});

describe("an episode's usage", () => {
  const call = (costUsd: number, unpriced?: true): ModelCallRecord => ({
    turn: 0,
    model: "m",
    request: REQUEST,
    usage: { inputTokens: 10, outputTokens: 5 },
    costUsd,
    ...(unpriced ? { unpriced } : {}),
    latencyMs: 1,
    cacheHit: false,
    attempts: 1,
    startedAt: "x",
  });

  it("sums its calls; unpriced when any call was", () => {
    expect(episodeUsage({ calls: [call(0.25), call(0.5)] })).toEqual({
      inputTokens: 20,
      outputTokens: 10,
      costUsd: 0.75,
    });
    expect(episodeUsage({ calls: [call(0.25), call(0, true)] })).toEqual({
      inputTokens: 20,
      outputTokens: 10,
      costUsd: 0.25,
      unpriced: true,
    });
    expect(episodeUsage({})).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });
});
