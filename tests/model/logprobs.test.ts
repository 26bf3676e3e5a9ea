/**
 * Log-probabilities through the model layer: asked for on the wire (`logprobs`, `top_logprobs`,
 * vLLM's `return_tokens_as_token_ids`), read back from the fake OpenAI server's replies
 * (streaming and not), a malformed block as one clear, unretried error, a server that ignores
 * the request, Anthropic's refusal before any request, and the cache keeping the two apart.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cacheKey, type ResponseCache } from "../../src/model/cache.js";
import { createModelClient } from "../../src/model/client.js";
import { openAIRequestBody } from "../../src/model/providers/openai.js";
import { isUsableReply } from "../../src/model/reply-limit.js";
import type { ResolvedModel } from "../../src/model/resolve.js";
import { parseModelSpec } from "../../src/model/spec.js";
import { ModelError, type ModelRequest, type ModelResponse } from "../../src/model/types.js";
import { createResponseCache } from "../../src/store/response-cache.js";
import { RunStore } from "../../src/store/run-store.js";
import {
  type FakeModelServer,
  type FakeModelServerOptions,
  fakeTokenId,
  fakeTokenLogprobs,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, attemptTimeoutMs: 2_000 };
const REPLY = "Thought: go on.\n\nAction: move up";

let server: FakeModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  server = await startFakeModelServer(options);
  return server;
}

function openaiModel(fake: FakeModelServer, stream: boolean): ResolvedModel {
  return {
    name: "vllm",
    spec: parseModelSpec(`openai-compatible:${fake.openaiBaseUrl}#qwen`),
    params: {},
    stream,
  };
}

function ask(params: ModelRequest["params"]): ModelRequest {
  return { messages: [{ role: "user", content: "Where now?" }], params };
}

/** What the client should read back from the fake server's default log-probabilities. */
function expectedLogprobs(content: string, options: { tokenIds?: boolean; top?: number } = {}) {
  return fakeTokenLogprobs(content).map((t) => ({
    token: options.tokenIds ? `token_id:${fakeTokenId(t.token)}` : t.token,
    logprob: t.logprob,
    ...(options.tokenIds ? { tokenId: fakeTokenId(t.token) } : {}),
    ...(options.top === undefined
      ? {}
      : {
          topLogprobs: Array.from({ length: options.top }, (_, k) => {
            const token = k === 0 ? t.token : `alt${k}`;
            const id = fakeTokenId(token);
            return {
              token: options.tokenIds ? `token_id:${id}` : token,
              logprob: t.logprob - k,
              ...(options.tokenIds ? { tokenId: id } : {}),
            };
          }),
        }),
  }));
}

async function modelError(call: Promise<unknown>): Promise<ModelError> {
  const thrown = await call.then(
    () => expect.unreachable("the call should have failed"),
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(ModelError);
  return thrown as ModelError;
}

describe("the request", () => {
  const spec = parseModelSpec("openai-compatible:http://127.0.0.1:1/v1#qwen");

  it("asks for logprobs, top alternatives and vLLM token ids only when told to", () => {
    expect(openAIRequestBody(spec, ask({}))).not.toHaveProperty("logprobs");
    expect(openAIRequestBody(spec, ask({ logprobs: true }))).toMatchObject({ logprobs: true });
    const body = openAIRequestBody(spec, ask({ logprobs: true, topLogprobs: 3, tokenIds: true }));
    expect(body).toMatchObject({
      logprobs: true,
      top_logprobs: 3,
      return_tokens_as_token_ids: true,
    });
    expect(openAIRequestBody(spec, ask({ logprobs: false }))).not.toHaveProperty("logprobs");
  });

  it("refuses alternatives or token ids without logprobs, in one line", () => {
    expect(() => openAIRequestBody(spec, ask({ topLogprobs: 2 }))).toThrow(
      /^topLogprobs needs logprobs: true$/,
    );
    expect(() => openAIRequestBody(spec, ask({ tokenIds: true }))).toThrow(
      /^tokenIds needs logprobs: true$/,
    );
    expect(() => openAIRequestBody(spec, ask({ logprobs: true, topLogprobs: 1.5 }))).toThrow(
      ModelError,
    );
  });
});

describe("OpenAI-compatible replies with log-probabilities", () => {
  for (const stream of [false, true]) {
    describe(stream ? "streaming" : "non-streaming", () => {
      it("reads each token's log-probability in order", async () => {
        const fake = await start({ rule: () => ({ content: REPLY }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const response = await client.complete(ask({ logprobs: true }));
        expect(response.content).toBe(REPLY);
        expect(response.logprobs).toEqual(expectedLogprobs(REPLY));
        expect(response.logprobs?.map((t) => t.token).join("")).toBe(REPLY);
        expect(fake.requests[0]?.body).toMatchObject({ logprobs: true });
        expect(fake.requests[0]?.body).not.toHaveProperty("return_tokens_as_token_ids");
      });

      it("parses vLLM's token_id:N tokens and the top alternatives", async () => {
        const fake = await start({ rule: () => ({ content: REPLY }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const response = await client.complete(
          ask({ logprobs: true, topLogprobs: 2, tokenIds: true }),
        );
        expect(response.logprobs).toEqual(expectedLogprobs(REPLY, { tokenIds: true, top: 2 }));
        expect(fake.requests[0]?.body).toMatchObject({
          logprobs: true,
          top_logprobs: 2,
          return_tokens_as_token_ids: true,
        });
      });

      it("keeps scripted log-probabilities and their token ids", async () => {
        const tokens = [
          { token: "Action:", logprob: -0.25, tokenId: 7 },
          { token: " stay", logprob: -1.5, tokenId: 8 },
        ];
        const fake = await start({ rule: () => ({ content: "Action: stay", logprobs: tokens }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const response = await client.complete(ask({ logprobs: true, tokenIds: true }));
        expect(response.logprobs).toEqual([
          { token: "token_id:7", logprob: -0.25, tokenId: 7 },
          { token: "token_id:8", logprob: -1.5, tokenId: 8 },
        ]);
      });

      it("has none when none were asked for", async () => {
        const fake = await start({ rule: () => ({ content: REPLY }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const response = await client.complete(ask({}));
        expect(response).not.toHaveProperty("logprobs");
        expect(fake.requests[0]?.body).not.toHaveProperty("logprobs");
      });

      it("has none, without an error, when the server ignores the request", async () => {
        const fake = await start({ rule: () => ({ content: REPLY, logprobs: null }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const response = await client.complete(ask({ logprobs: true }));
        expect(response.content).toBe(REPLY);
        expect(response).not.toHaveProperty("logprobs");
      });

      it("gives an empty list for an empty reply", async () => {
        const fake = await start({ rule: () => ({ content: "" }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const response = await client.complete(ask({ logprobs: true }));
        expect(response.logprobs).toEqual([]);
      });

      it.each([
        ["a log-probability that is not a number", { content: [{ token: "a", logprob: "low" }] }],
        ["a positive log-probability", { content: [{ token: "a", logprob: 0.5 }] }],
        ["a token that is not text", { content: [{ token: 3, logprob: -1 }] }],
        ["content that is not a list", { content: "a b c" }],
        ["a block that is not an object", "logprobs"],
      ])("makes %s one clear error, not retried", async (_what, raw) => {
        const fake = await start({ rule: () => ({ content: "a", rawLogprobs: raw }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const error = await modelError(client.complete(ask({ logprobs: true })));
        expect(error.message).toMatch(
          /^malformed logprobs in the reply from http:\/\/127\.0\.0\.1/,
        );
        expect(error.message).not.toContain("\n");
        expect(error.retryable).toBe(false);
        expect(fake.requests).toHaveLength(1);
      });

      it("names the server without the credentials its URL carries", async () => {
        const fake = await start({ rule: () => ({ content: "a", rawLogprobs: "garbage" }) });
        const base = fake.openaiBaseUrl.replace("http://", "http://user:pw-SECRET-1@");
        const model = {
          ...openaiModel(fake, stream),
          spec: parseModelSpec(`openai-compatible:${base}#qwen`),
        };
        const client = createModelClient(model, { retry: FAST_RETRY });
        const error = await modelError(client.complete(ask({ logprobs: true })));
        expect(error.message).toContain(`from ${fake.openaiBaseUrl}:`);
        expect(error.message).not.toContain("pw-SECRET-1");
      });

      it("names vLLM when token ids were asked for and the tokens are plain text", async () => {
        const raw = { content: [{ token: "Action", logprob: -0.1, bytes: null }] };
        const fake = await start({ rule: () => ({ content: "Action", rawLogprobs: raw }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const error = await modelError(client.complete(ask({ logprobs: true, tokenIds: true })));
        expect(error.message).toMatch(
          /logprobs\.content\[0\]\.token is "Action", not "token_id:N"/,
        );
        expect(error.message).toMatch(/vLLM/);
      });

      it("ignores whatever the server sends when none were asked for", async () => {
        const fake = await start({ rule: () => ({ content: "a", rawLogprobs: "garbage" }) });
        const client = createModelClient(openaiModel(fake, stream), { retry: FAST_RETRY });
        const response = await client.complete(ask({}));
        expect(response.content).toBe("a");
        expect(response).not.toHaveProperty("logprobs");
      });
    });
  }
});

describe("Anthropic", () => {
  it.each([{ logprobs: true }, { logprobs: true, topLogprobs: 1 }, { tokenIds: true }])(
    "refuses %j before sending anything",
    async (params) => {
      const fake = await start({ rule: () => ({ content: "hi" }) });
      const client = createModelClient(
        {
          name: "claude",
          spec: { provider: "anthropic", model: "claude-x", baseUrl: fake.anthropicBaseUrl },
          apiKey: "test-key",
          params: {},
          stream: false,
        },
        { retry: FAST_RETRY },
      );
      const error = await modelError(client.complete(ask(params)));
      expect(error.message).toMatch(/^anthropic:claude-x cannot return log-probabilities/);
      expect(error.message).not.toContain("\n");
      expect(error.retryable).toBe(false);
      expect(fake.requests).toHaveLength(0);
    },
  );
});

describe("the response cache", () => {
  function sqliteCache(): ResponseCache {
    const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-logprobs-")), "c.db"));
    return createResponseCache(store.db);
  }

  it("keys on the logprob settings", () => {
    const keyOf = (params: ModelRequest["params"]) => cacheKey("m", "e", ask(params));
    const keys = new Set([
      keyOf({}),
      keyOf({ logprobs: true }),
      keyOf({ logprobs: true, topLogprobs: 2 }),
      keyOf({ logprobs: true, tokenIds: true }),
    ]);
    expect(keys.size).toBe(4);
  });

  it("never serves a reply cached without logprobs to a request for them", async () => {
    const fake = await start({ rule: () => ({ content: REPLY }) });
    const client = createModelClient(openaiModel(fake, false), {
      cache: sqliteCache(),
      cacheMode: "rw",
      retry: FAST_RETRY,
    });
    const plain = await client.completeWithMeta(ask({ temperature: 1 }));
    expect(plain.response).not.toHaveProperty("logprobs");
    const first = await client.completeWithMeta(ask({ temperature: 1, logprobs: true }));
    expect(first.meta.cacheHit).toBe(false);
    expect(first.response.logprobs).toEqual(expectedLogprobs(REPLY));
    // Repeats of each are served from the cache, each with what it was cached with.
    const again = await client.completeWithMeta(ask({ temperature: 1, logprobs: true }));
    expect(again.meta.cacheHit).toBe(true);
    expect(again.response.logprobs).toEqual(expectedLogprobs(REPLY));
    const plainAgain = await client.completeWithMeta(ask({ temperature: 1 }));
    expect(plainAgain.meta.cacheHit).toBe(true);
    expect(plainAgain.response).not.toHaveProperty("logprobs");
    expect(fake.requests).toHaveLength(2);
  });

  it("does not replay a cached reply whose logprobs are malformed", () => {
    const reply: ModelResponse = {
      content: "a",
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1 },
      finishReason: "stop",
      model: "m",
    };
    expect(isUsableReply({ ...reply, logprobs: [{ token: "a", logprob: -1 }] }, 1e6)).toBe(true);
    expect(isUsableReply({ ...reply, logprobs: [{ token: "a", logprob: "x" }] }, 1e6)).toBe(false);
    expect(isUsableReply({ ...reply, logprobs: [{ token: "a", logprob: 2 }] }, 1e6)).toBe(false);
    expect(isUsableReply({ ...reply, logprobs: "a" }, 1e6)).toBe(false);
  });
});
