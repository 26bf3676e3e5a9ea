/**
 * The reply-size limit: the transport stops reading an oversized body (declared or counted, JSON
 * or event stream), the providers and the client fail the call without retrying it or caching
 * it, and the client never replays a cache entry that is too large or malformed.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cacheKey } from "../../src/model/cache.js";
import { CallRecorder } from "../../src/model/call-record.js";
import { createModelClient, createProviderModel } from "../../src/model/client.js";
import { parseConfig } from "../../src/model/config.js";
import { createNodeFetch } from "../../src/model/http-transport.js";
import {
  checkReplySize,
  DEFAULT_MAX_REPLY_BYTES,
  isUsableReply,
  ReplyTooLargeError,
} from "../../src/model/reply-limit.js";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.js";
import type { ModelRequest, ModelResponse } from "../../src/model/types.js";
import { createResponseCache } from "../../src/store/response-cache.js";
import { RunStore } from "../../src/store/run-store.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { ScriptedModel } from "../../src/testing/scripted-model.js";

const LIMIT = 64 * 1024;
const HUGE = 8 * 1024 * 1024;

let server: FakeModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request: ModelRequest = { messages: [{ role: "user", content: "hi" }] };

function model(
  fake: FakeModelServer,
  over: Partial<ResolvedModel> & { provider?: "anthropic" } = {},
): ResolvedModel {
  const { provider, ...rest } = over;
  return {
    name: "m",
    spec:
      provider === "anthropic"
        ? { provider: "anthropic", model: "claude-test", baseUrl: fake.anthropicBaseUrl }
        : { provider: "openai-compatible", model: "m", baseUrl: fake.openaiBaseUrl },
    params: {},
    stream: false,
    maxReplyBytes: LIMIT,
    ...rest,
  };
}

function store() {
  return RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-limit-")), "c.db"));
}

describe("the transport", () => {
  it("refuses a declared length over the limit before reading the body", async () => {
    server = await startFakeModelServer({
      replies: [{ fault: "huge_reply", bytes: HUGE, declareLength: true }],
    });
    const fetch = createNodeFetch({ maxBodyBytes: LIMIT });
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] });
    const error = await fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyTooLargeError);
    expect((error as ReplyTooLargeError).retryable).toBe(false);
    expect((error as Error).message).toMatch(/declared \d+-byte body .* 65536-byte limit/);
    expect(server.requests[0]?.sentBytes).toBeLessThan(HUGE / 2);
  });

  it("stops reading a chunked body once it passes the limit", async () => {
    server = await startFakeModelServer({ replies: [{ fault: "huge_reply", bytes: HUGE }] });
    const fetch = createNodeFetch({ maxBodyBytes: LIMIT });
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] });
    const error = await fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      body,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyTooLargeError);
    expect((error as Error).message).toMatch(/over 65536 bytes/);
    // Socket buffers hold a few hundred kilobytes at most; the server stopped well short.
    expect(server.requests[0]?.sentBytes).toBeLessThan(HUGE / 2);
  });

  it("reads bodies under the limit as before", async () => {
    server = await startFakeModelServer({ replies: [{ fault: "huge_reply", bytes: LIMIT / 2 }] });
    const fetch = createNodeFetch({ maxBodyBytes: LIMIT });
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] });
    const response = await fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      body,
    });
    const json = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(json.choices[0]?.message.content).toHaveLength(LIMIT / 2);
  });

  it("fails an event stream whose single event passes the limit", async () => {
    // One event bigger than the limit: a stream of one huge piece.
    server = await startFakeModelServer({
      replies: [{ fault: "huge_reply", bytes: 200 * 1024 }],
    });
    const fetch = createNodeFetch({ maxBodyBytes: 16 * 1024 });
    const body = JSON.stringify({
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "x" }],
    });
    const response = await fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      body,
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const error = await response.text().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyTooLargeError);
    expect((error as Error).message).toMatch(/stream event of more than 16384 bytes/);
  });
});

describe("providers and the client", () => {
  it.each([
    ["openai-compatible, whole body", {}, {}],
    ["openai-compatible, declared length", {}, { declareLength: true }],
    ["openai-compatible, streamed", { stream: true }, {}],
    ["anthropic", { provider: "anthropic" as const }, {}],
  ])("%s: an oversized reply fails its call once, unretried, uncached", async (_, over, fault) => {
    server = await startFakeModelServer({
      rule: () => ({ fault: "huge_reply", bytes: HUGE, ...fault }),
    });
    const resolved = model(server, over);
    const runStore = store();
    const cache = createResponseCache(runStore.db);
    const recorder = new CallRecorder(
      createModelClient(resolved, { cache, retry: { baseDelayMs: 1 } }),
    );
    const error = await recorder.complete(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyTooLargeError);
    expect((error as Error).message).toMatch(
      /^reply too large: .*65536-byte limit \(maxReplyBytes\)/,
    );
    // Not retried: one request although the policy allows four retries.
    expect(server.requests).toHaveLength(1);
    const [call] = recorder.take();
    expect(call).toMatchObject({ attempts: 1, cacheHit: false, costUsd: 0 });
    expect(call?.response).toBeUndefined();
    expect(call?.error).toMatch(/reply too large/);
    expect(call?.attemptErrors).toEqual([call?.error]);
    expect(runStore.db.prepare("SELECT COUNT(*) AS n FROM model_cache").get()).toEqual({ n: 0 });
    runStore.close();
  });

  it("checks the parsed reply too, whatever the Model behind the client", async () => {
    const resolved: ResolvedModel = {
      name: "s",
      spec: { provider: "openai", model: "s" },
      params: {},
      stream: false,
      maxReplyBytes: 1024,
    };
    const provider = new ScriptedModel(["x".repeat(2000)]);
    const runStore = store();
    const cache = createResponseCache(runStore.db);
    const client = createModelClient(resolved, { cache }, provider);
    await expect(client.complete(request)).rejects.toBeInstanceOf(ReplyTooLargeError);
    expect(provider.requests).toHaveLength(1);
    expect(runStore.db.prepare("SELECT COUNT(*) AS n FROM model_cache").get()).toEqual({ n: 0 });
    runStore.close();
  });

  it("drops cache entries that are too large, over the limit or malformed, and asks again", async () => {
    const resolved: ResolvedModel = {
      name: "s",
      spec: { provider: "openai", model: "s" },
      params: {},
      stream: false,
      maxReplyBytes: 1024,
    };
    const runStore = store();
    const cache = createResponseCache(runStore.db);
    const good: ModelResponse = {
      content: "fine",
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1 },
      finishReason: "stop",
      model: "s",
    };
    const poison = [
      JSON.stringify({ ...good, content: "z".repeat(7 * 1024 + 65 * 1024) }), // unread: > 6× + 64 KiB
      JSON.stringify({ ...good, content: "z".repeat(2000) }), // read, over the reply limit
      JSON.stringify({ ...good, usage: { inputTokens: "many" } }),
      JSON.stringify({ ...good, toolCalls: [{ id: 1 }] }),
      "[1, 2",
    ];
    const stored = (key: string) =>
      (
        runStore.db.prepare("SELECT response FROM model_cache WHERE key = ?").get(key) as
          | { response: string }
          | undefined
      )?.response;
    for (const [i, text] of poison.entries()) {
      const provider = new ScriptedModel(["fresh"]);
      const key = cacheKey(provider.id, "openai", { ...request, sampleIndex: i, params: {} });
      runStore.db
        .prepare("INSERT INTO model_cache (key, model, response, created_at) VALUES (?, ?, ?, ?)")
        .run(key, provider.id, text, "2026-01-01");
      const client = createModelClient(resolved, { cache }, provider);
      const { response, meta } = await client.completeWithMeta({ ...request, sampleIndex: i });
      expect(response.content, `entry ${i}`).toBe("fresh");
      expect(meta.cacheHit).toBe(false);
      // The bad entry under that very key was replaced by the good reply, which now replays.
      expect(JSON.parse(stored(key) ?? "{}").content).toBe("fresh");
      const again = await client.completeWithMeta({ ...request, sampleIndex: i });
      expect(again.meta.cacheHit).toBe(true);
      expect(again.response.content).toBe("fresh");
    }
    // Through a store opened for reading, a bad entry is skipped all the same.
    const provider = new ScriptedModel(["fresh"]);
    const key = cacheKey(provider.id, "openai", { ...request, sampleIndex: 99, params: {} });
    runStore.db
      .prepare("INSERT INTO model_cache (key, model, response, created_at) VALUES (?, ?, ?, ?)")
      .run(key, provider.id, "{broken", "2026-01-01");
    const path = runStore.db.name;
    runStore.close();
    const readonly = RunStore.open(path, { readonly: true });
    const client = createModelClient(
      resolved,
      { cache: createResponseCache(readonly.db), cacheMode: "read" },
      provider,
    );
    const { meta } = await client.completeWithMeta({ ...request, sampleIndex: 99 });
    expect(meta.cacheHit).toBe(false);
    readonly.close();
  });

  it("validates replies and sizes them in bytes", () => {
    const reply: ModelResponse = {
      content: "é".repeat(10), // 20 bytes
      toolCalls: [{ id: "c", name: "act", arguments: "{}" }],
      usage: { inputTokens: 0, outputTokens: 0 },
      finishReason: "stop",
      model: "m",
    };
    expect(isUsableReply(reply, 1024)).toBe(true);
    expect(() => checkReplySize(reply, 20)).toThrow(ReplyTooLargeError);
    expect(isUsableReply({ ...reply, content: null }, 1024)).toBe(false);
    expect(isUsableReply(null, 1024)).toBe(false);
  });

  it("takes maxReplyBytes from clade.config, validated, with a 4 MiB default", () => {
    const config = parseConfig({
      models: { big: { model: "openai:gpt-4o", maxReplyBytes: 16 * 1024 * 1024 } },
    });
    expect(resolveModel("big", config, {}).maxReplyBytes).toBe(16 * 1024 * 1024);
    expect(resolveModel("openai:gpt-4o", config, {}).maxReplyBytes).toBeUndefined();
    expect(DEFAULT_MAX_REPLY_BYTES).toBe(4 * 1024 * 1024);
    expect(() =>
      parseConfig({ models: { x: { model: "openai:m", maxReplyBytes: 2 ** 30 } } }),
    ).toThrow(/models\.x\.maxReplyBytes: must be at most/);
    expect(() => parseConfig({ models: { x: { model: "openai:m", maxReplyBytes: 10 } } })).toThrow(
      /at least 1024/,
    );
    // A provider built from the entry carries the limit to its transport.
    expect(createProviderModel(resolveModel("big", config, {})).id).toBe("openai:gpt-4o");
  });
});
