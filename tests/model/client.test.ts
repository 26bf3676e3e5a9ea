import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CacheMode } from "../../src/model/cache.js";
import { CallRecorder } from "../../src/model/call-record.js";
import { createModelClient } from "../../src/model/client.js";
import type { ResolvedModel } from "../../src/model/resolve.js";
import { ModelError, type ModelRequest } from "../../src/model/types.js";
import { createResponseCache } from "../../src/store/response-cache.js";
import { RunStore } from "../../src/store/run-store.js";
import { ScriptedModel } from "../../src/testing/scripted-model.js";

const resolved: ResolvedModel = {
  name: "test",
  spec: { provider: "openai", model: "m" },
  params: { temperature: 0.5 },
  price: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 },
  stream: false,
};

const request = (text: string, sampleIndex = 0): ModelRequest => ({
  messages: [{ role: "user", content: text }],
  sampleIndex,
});

const fastRetry = { baseDelayMs: 1, maxDelayMs: 2 };

function cache() {
  const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-cache-")), "c.db"));
  return createResponseCache(store.db);
}

describe("model client", () => {
  it("prices usage and reports every call's cost", async () => {
    const provider = new ScriptedModel([
      { content: "a", usage: { inputTokens: 3, outputTokens: 2 } },
    ]);
    let spent = 0;
    const client = createModelClient(resolved, { onSpend: (c) => (spent += c) }, provider);
    const { response, meta } = await client.completeWithMeta(request("hi"));
    expect(response.content).toBe("a");
    // 3 × $1 + 2 × $2 per token at these test prices.
    expect(meta.costUsd).toBe(7);
    expect(spent).toBe(7);
    expect(meta.attempts).toBe(1);
    expect(meta.cacheHit).toBe(false);
    expect(provider.requests[0]?.params).toEqual({ temperature: 0.5 });
    provider.assertDone();
  });

  it("retries retryable errors and counts the attempts", async () => {
    const provider = new ScriptedModel([
      new ModelError("429", { status: 429, retryable: true }),
      new ModelError("503", { status: 503, retryable: true }),
      "ok",
    ]);
    const client = createModelClient(resolved, { retry: fastRetry }, provider);
    const { meta } = await client.completeWithMeta(request("hi"));
    expect(meta.attempts).toBe(3);
    provider.assertDone();
  });

  it("does not retry a bad request", async () => {
    const provider = new ScriptedModel([
      new ModelError("400 bad", { status: 400, retryable: false }),
    ]);
    const client = createModelClient(resolved, { retry: fastRetry }, provider);
    await expect(client.complete(request("hi"))).rejects.toThrow("400 bad");
    provider.assertDone();
  });

  it("keeps samples independent in the cache and serves repeats from it", async () => {
    const provider = new ScriptedModel(["first", "second"]);
    const client = createModelClient(resolved, { cache: cache(), cacheMode: "rw" }, provider);
    const a = await client.completeWithMeta(request("same", 0));
    const b = await client.completeWithMeta(request("same", 1));
    const again = await client.completeWithMeta(request("same", 0));
    expect([a.response.content, b.response.content]).toEqual(["first", "second"]);
    expect(again.response.content).toBe("first");
    expect(again.meta).toMatchObject({ cacheHit: true, latencyMs: null, costUsd: 0, attempts: 0 });
    provider.assertDone();
  });

  it.each<[CacheMode, boolean, boolean]>([
    ["off", false, false],
    ["read", true, false],
    ["write", false, true],
    ["rw", true, true],
  ])("cache mode %s: reads %s, writes %s", async (mode, reads, writes) => {
    const shared = cache();
    const seed = createModelClient(
      resolved,
      { cache: shared, cacheMode: "rw" },
      new ScriptedModel(["seeded"]),
    );
    await seed.complete(request("seeded"));
    const provider = new ScriptedModel(["fresh", "fresh2", "fresh3"]);
    const client = createModelClient(resolved, { cache: shared, cacheMode: mode }, provider);
    const seeded = await client.completeWithMeta(request("seeded"));
    expect(seeded.meta.cacheHit).toBe(reads);
    await client.complete(request("new"));
    const newAgain = await client.completeWithMeta(request("new"));
    expect(newAgain.meta.cacheHit).toBe(reads && writes);
  });

  it("records failed calls with their attempts for the episode's accounting", async () => {
    const provider = new ScriptedModel([
      new ModelError("500", { status: 500, retryable: true }),
      new ModelError("500", { status: 500, retryable: true }),
    ]);
    const client = createModelClient(
      resolved,
      { retry: { ...fastRetry, maxRetries: 1 } },
      provider,
    );
    const recorder = new CallRecorder(client);
    await expect(recorder.complete(request("x"))).rejects.toThrow(/500/);
    const [record] = recorder.take();
    expect(record?.error).toMatch(/500/);
    expect(record?.attempts).toBe(2);
    expect(record?.response).toBeUndefined();
    expect(recorder.take()).toEqual([]);
  });
});
