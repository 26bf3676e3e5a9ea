/**
 * Prices: the built-in table covers the models the README names at their published prices,
 * clade.config beats it, a model without a price is recorded as unpriced (never as $0), and a
 * budget refuses such a model up front.
 */
import { describe, expect, it } from "vitest";
import { CallRecorder } from "../../src/model/call-record.js";
import { createModelClient } from "../../src/model/client.js";
import { ConfigError, parseConfig } from "../../src/model/config.js";
import {
  assertPricedForBudget,
  BUILTIN_PRICES,
  costUsd,
  UnpricedModelError,
} from "../../src/model/pricing.js";
import { resolveModel } from "../../src/model/resolve.js";
import { createResponseCache } from "../../src/store/response-cache.js";
import { RunStore } from "../../src/store/run-store.js";
import { ScriptedModel } from "../../src/testing/scripted-model.js";

const env = { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k" };
const resolve = (model: string, config: unknown = {}) =>
  resolveModel(model, parseConfig(config), env);

describe("the built-in price table", () => {
  it.each([
    ["openai:gpt-4o-mini", 0.15, 0.6],
    ["openai:gpt-4o", 2.5, 10],
    ["openai:gpt-4.1", 2, 8],
    ["openai:gpt-4.1-mini", 0.4, 1.6],
    ["openai:gpt-4.1-nano", 0.1, 0.4],
    ["anthropic:claude-sonnet-4-5", 3, 15],
    ["anthropic:claude-haiku-4-5", 1, 5],
    ["anthropic:claude-opus-4-1", 15, 75],
    ["anthropic:claude-opus-4-5", 5, 25],
  ])("prices %s at $%s/$%s per million tokens", (id, input, output) => {
    expect(BUILTIN_PRICES[id]).toEqual({ inputPerMTok: input, outputPerMTok: output });
    expect(resolve(id).price).toEqual({ inputPerMTok: input, outputPerMTok: output });
  });

  it("covers every model the README names in its examples", async () => {
    const { readFileSync } = await import("node:fs");
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const named = [...readme.matchAll(/--model ((?:openai|anthropic):[\w.-]+)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    for (const id of named) expect(BUILTIN_PRICES[id as string], id).toBeDefined();
  });

  it("loses to clade.config: prices beat the table, and models.NAME.price beats both", () => {
    const override = { inputPerMTok: 1, outputPerMTok: 2 };
    expect(
      resolve("openai:gpt-4o-mini", { prices: { "openai:gpt-4o-mini": override } }).price,
    ).toEqual(override);
    const entry = { inputPerMTok: 7, outputPerMTok: 9 };
    const config = {
      models: { mini: { model: "openai:gpt-4o-mini", price: entry } },
      prices: { "openai:gpt-4o-mini": override },
    };
    expect(resolve("mini", config).price).toEqual(entry);
    // An explicit 0 is a price (a free local model), not "unpriced".
    const free = resolve("openai-compatible:http://127.0.0.1:9/v1#qwen", {
      prices: { "openai-compatible:qwen": { inputPerMTok: 0, outputPerMTok: 0 } },
    });
    expect(free.price).toEqual({ inputPerMTok: 0, outputPerMTok: 0 });
  });

  it("has no price for local servers and unknown names", () => {
    expect(resolve("openai-compatible:http://127.0.0.1:9/v1#qwen").price).toBeUndefined();
    expect(resolve("openai:gpt-unknown").price).toBeUndefined();
    expect(costUsd({ inputTokens: 10, outputTokens: 10 }, undefined)).toBe(0);
  });
});

describe("assertPricedForBudget", () => {
  it("refuses a model without a price with one line saying how to price it", () => {
    const model = resolve("openai-compatible:http://127.0.0.1:9/v1#qwen");
    let thrown: unknown;
    try {
      assertPricedForBudget(model);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UnpricedModelError);
    // A ConfigError: the CLI reports it as bad input (one line, exit code 2).
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as Error).message;
    expect(message).not.toContain("\n");
    expect(message).toContain('"openai-compatible:http://127.0.0.1:9/v1#qwen"');
    expect(message).toContain('"prices": {"openai-compatible:qwen": {"inputPerMTok"');
    expect(message).toContain("clade.config");
  });

  it("names models.NAME.price for a model named in clade.config", () => {
    const model = resolve("local", {
      models: { local: { model: "openai-compatible:http://127.0.0.1:9/v1#qwen" } },
    });
    expect(() => assertPricedForBudget(model)).toThrow(/models\.local/);
    expect(() => assertPricedForBudget(model)).toThrow(/model "local"/);
  });

  it("accepts a priced model, a free one included", () => {
    expect(() => assertPricedForBudget(resolve("anthropic:claude-sonnet-4-5"))).not.toThrow();
    const free = resolve("local", {
      models: {
        local: {
          model: "openai-compatible:http://127.0.0.1:9/v1#qwen",
          price: { inputPerMTok: 0, outputPerMTok: 0 },
        },
      },
    });
    expect(() => assertPricedForBudget(free)).not.toThrow();
  });
});

describe("unpriced calls", () => {
  const local = () => resolve("openai-compatible:http://127.0.0.1:9/v1#qwen");

  it("are recorded as unpriced, not as costing 0; a priced model's are not", async () => {
    const unpriced = createModelClient(local(), {}, new ScriptedModel(["a"]));
    const { meta } = await unpriced.completeWithMeta({ messages: [] });
    expect(meta).toMatchObject({ costUsd: 0, unpriced: true });
    const priced = createModelClient(
      { ...local(), price: { inputPerMTok: 0, outputPerMTok: 0 } },
      {},
      new ScriptedModel(["a"]),
    );
    expect((await priced.completeWithMeta({ messages: [] })).meta.unpriced).toBeUndefined();
  });

  it("except cache hits, which cost nothing whatever the price", async () => {
    const store = RunStore.open(":memory:");
    const cache = createResponseCache(store.db);
    const client = createModelClient(local(), { cache }, new ScriptedModel(["a"]));
    const request = { messages: [{ role: "user" as const, content: "hi" }] };
    expect((await client.completeWithMeta(request)).meta.unpriced).toBe(true);
    const hit = (await client.completeWithMeta(request)).meta;
    expect(hit).toMatchObject({ cacheHit: true, costUsd: 0 });
    expect(hit.unpriced).toBeUndefined();
    store.close();
  });

  it("are recorded so, failed, abandoned or from a plain Model", async () => {
    const failing = new CallRecorder(
      createModelClient(local(), { retry: { maxRetries: 0 } }, new ScriptedModel([new Error("x")])),
    );
    await expect(failing.complete({ messages: [] })).rejects.toThrow();
    expect(failing.take()[0]).toMatchObject({ error: expect.any(String), unpriced: true });

    const slow = new CallRecorder(
      createModelClient(local(), {}, new ScriptedModel(["late"], { delayMs: 5_000 })),
    );
    const controller = new AbortController();
    const call = slow.complete({ messages: [] }, controller.signal);
    controller.abort(new Error("deadline"));
    await expect(call).rejects.toThrow();
    expect(slow.take()[0]).toMatchObject({
      error: expect.stringMatching(/abandoned/),
      unpriced: true,
    });

    const plain = new CallRecorder(new ScriptedModel(["a"]));
    await plain.complete({ messages: [] });
    expect(plain.take()[0]).toMatchObject({ costUsd: 0, unpriced: true });
  });
});
