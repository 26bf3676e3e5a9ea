/**
 * The real provider clients (OpenAI SDK, streaming and not; Anthropic SDK) driven through the
 * fake model server over HTTP on 127.0.0.1, with clade's retry policy in front: each injected
 * fault must be retried, or not, exactly as the model layer promises.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { FailedCallError } from "../../src/model/call-record.js";
import { createModelClient } from "../../src/model/client.js";
import { openAIRequestBody } from "../../src/model/providers/openai.js";
import type { ResolvedModel } from "../../src/model/resolve.js";
import type { RetryPolicy } from "../../src/model/retry.js";
import { type ModelSpec, parseModelSpec } from "../../src/model/spec.js";
import { type ChatMessage, ModelError, type ModelRequest } from "../../src/model/types.js";
import {
  type FakeModelServer,
  type FakeModelServerOptions,
  type FakeReply,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";

const SECRET_KEY = "sk-test-SECRET-abc123";
const FAKE_MODEL = "fake";
const CLAUDE = "claude-x";
/** Short delays so that every retry path runs in milliseconds. */
const FAST_RETRY: Partial<RetryPolicy> = { baseDelayMs: 5, maxDelayMs: 20, attemptTimeoutMs: 300 };
/** For the hang tests: each hung attempt costs this much. */
const HANG_TIMEOUT_MS = 150;
const RETRY_AFTER_SECONDS = 0.3;
/** setTimeout may fire a millisecond early on some platforms. */
const TIMER_SLACK_MS = 5;

type Flavour = "openai" | "openai-stream" | "anthropic";
const FLAVOURS: readonly Flavour[] = ["openai", "openai-stream", "anthropic"];

let server: FakeModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  server = await startFakeModelServer(options);
  return server;
}

function specFor(flavour: Flavour, baseUrl: string): ModelSpec {
  return flavour === "anthropic"
    ? { provider: "anthropic", model: CLAUDE, baseUrl }
    : parseModelSpec(`openai-compatible:${baseUrl}#${FAKE_MODEL}`);
}

function modelFor(
  flavour: Flavour,
  fake: FakeModelServer,
  extra: Partial<ResolvedModel> = {},
): ResolvedModel {
  const baseUrl = flavour === "anthropic" ? fake.anthropicBaseUrl : fake.openaiBaseUrl;
  return {
    name: flavour,
    spec: specFor(flavour, baseUrl),
    params: {},
    stream: flavour === "openai-stream",
    apiKey: flavour === "anthropic" ? "test-key" : SECRET_KEY,
    ...extra,
  };
}

function clientFor(
  flavour: Flavour,
  fake: FakeModelServer,
  extra: Partial<ResolvedModel> = {},
  retry: Partial<RetryPolicy> = {},
) {
  return createModelClient(modelFor(flavour, fake, extra), { retry: { ...FAST_RETRY, ...retry } });
}

const hello: ModelRequest = { messages: [{ role: "user", content: "Say hello" }] };

/** The failure of a call: the classified error and the call's accounting. */
async function failureOf(
  call: Promise<unknown>,
): Promise<{ error: ModelError; meta: FailedCallError["meta"] }> {
  const thrown = await call.then(
    () => expect.unreachable("the call should have failed"),
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(FailedCallError);
  const failed = thrown as FailedCallError;
  expect(failed.original).toBeInstanceOf(ModelError);
  return { error: failed.original as ModelError, meta: failed.meta };
}

/** A rule that serves `replies` in order and notes when each request arrived. */
function timedReplies(fake: FakeModelServer, replies: FakeReply[]): number[] {
  const arrivals: number[] = [];
  const queue = [...replies];
  fake.setRule(() => {
    arrivals.push(performance.now());
    return queue.shift();
  });
  return arrivals;
}

/** A loopback port that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const conversation: ChatMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "What is the weather in Paris?" },
  {
    role: "assistant",
    content: "Let me look.",
    toolCalls: [{ id: "call_prev", name: "weather", arguments: '{"city":"Paris"}' }],
  },
  { role: "tool", toolCallId: "call_prev", content: "sunny, 21 C" },
  { role: "user", content: "And tomorrow?" },
];

const weatherTool = {
  name: "weather",
  description: "Current weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("OpenAI-compatible client over HTTP", () => {
  for (const flavour of ["openai", "openai-stream"] as const) {
    describe(flavour, () => {
      it("round-trips a text reply with usage, finish reason and cost", async () => {
        const fake = await start({
          replies: [
            { content: "Hello there, friend", usage: { inputTokens: 11, outputTokens: 7 } },
          ],
        });
        const client = clientFor(flavour, fake, {
          price: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 },
        });
        const { response, meta } = await client.completeWithMeta(hello);
        expect(response).toEqual({
          content: "Hello there, friend",
          toolCalls: [],
          usage: { inputTokens: 11, outputTokens: 7 },
          finishReason: "stop",
          model: FAKE_MODEL,
        });
        expect(meta).toMatchObject({ attempts: 1, cacheHit: false, costUsd: 11 + 14 });
        expect(meta.usage).toEqual({ inputTokens: 11, outputTokens: 7 });
        expect(meta.latencyMs).toBeGreaterThan(0);
        expect(fake.requests).toHaveLength(1);
        expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
        expect(fake.requests[0]?.stream).toBe(flavour === "openai-stream");
        if (flavour === "openai-stream") {
          // Usage only arrives in a stream when asked for.
          expect(fake.requests[0]?.body).toMatchObject({
            stream: true,
            stream_options: { include_usage: true },
          });
        }
      });

      it("round-trips tool calls with ids, names and arguments, in order", async () => {
        const fake = await start({
          replies: [
            {
              toolCalls: [
                { name: "weather", arguments: { city: "Paris", days: [1, 2] } },
                { name: "clock", arguments: '{"zone":"Europe/Paris"}' },
              ],
            },
          ],
        });
        const response = await clientFor(flavour, fake).complete(hello);
        expect(response.content).toBe("");
        expect(response.finishReason).toBe("tool_calls");
        expect(response.toolCalls).toEqual([
          {
            id: expect.stringMatching(/^call_\d+$/),
            name: "weather",
            arguments: '{"city":"Paris","days":[1,2]}',
          },
          {
            id: expect.stringMatching(/^call_\d+$/),
            name: "clock",
            arguments: '{"zone":"Europe/Paris"}',
          },
        ]);
        expect(response.toolCalls[0]?.id).not.toBe(response.toolCalls[1]?.id);
        // Word-count estimate: "weather {...}" and "clock {...}" are two words each.
        expect(response.usage.outputTokens).toBe(4);
        expect(response.usage.inputTokens).toBe(2);
      });

      it("sends messages, tools and generation parameters as the wire expects", async () => {
        const fake = await start({ replies: [{ content: "Rain." }] });
        const client = clientFor(flavour, fake, { params: { temperature: 0.2, seed: 7 } });
        await client.complete({
          messages: conversation,
          tools: [weatherTool],
          params: { maxTokens: 64, stop: ["\n\n", "END"], topP: 0.9, seed: 42 },
        });
        const body = fake.requests[0]?.body as Record<string, unknown>;
        expect(body).toMatchObject({
          model: FAKE_MODEL,
          temperature: 0.2,
          seed: 42,
          top_p: 0.9,
          stop: ["\n\n", "END"],
          max_tokens: 64,
        });
        expect(body).not.toHaveProperty("max_completion_tokens");
        expect(body.messages).toEqual([
          { role: "system", content: "You are terse." },
          { role: "user", content: "What is the weather in Paris?" },
          {
            role: "assistant",
            content: "Let me look.",
            tool_calls: [
              {
                id: "call_prev",
                type: "function",
                function: { name: "weather", arguments: '{"city":"Paris"}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_prev", content: "sunny, 21 C" },
          { role: "user", content: "And tomorrow?" },
        ]);
        expect(body.tools).toEqual([
          {
            type: "function",
            function: {
              name: "weather",
              description: weatherTool.description,
              parameters: weatherTool.parameters,
            },
          },
        ]);
      });
    });
  }

  it("asks OpenAI proper for max_completion_tokens, compatible servers for max_tokens", () => {
    const request: ModelRequest = {
      messages: [{ role: "user", content: "hi" }],
      params: { maxTokens: 9 },
    };
    const openai = openAIRequestBody({ provider: "openai", model: "gpt-4o-mini" }, request);
    expect(openai).toMatchObject({ model: "gpt-4o-mini", max_completion_tokens: 9 });
    expect(openai).not.toHaveProperty("max_tokens");
    const compatible = openAIRequestBody(
      { provider: "openai-compatible", model: "q", baseUrl: "http://127.0.0.1:1/v1" },
      request,
    );
    expect(compatible).toMatchObject({ max_tokens: 9 });
    expect(compatible).not.toHaveProperty("max_completion_tokens");
    // Absent parameters are left out, not sent as null.
    expect(Object.keys(openAIRequestBody({ provider: "openai", model: "m" }, hello))).toEqual([
      "model",
      "messages",
    ]);
  });
});

describe("Anthropic client over HTTP", () => {
  it("round-trips a text reply and a tool call", async () => {
    const fake = await start({
      replies: [
        { content: "Bonjour", usage: { inputTokens: 5, outputTokens: 3 } },
        { content: "Checking.", toolCalls: [{ name: "weather", arguments: { city: "Lyon" } }] },
      ],
    });
    const client = clientFor("anthropic", fake);
    const { response, meta } = await client.completeWithMeta(hello);
    expect(response).toEqual({
      content: "Bonjour",
      toolCalls: [],
      usage: { inputTokens: 5, outputTokens: 3 },
      finishReason: "end_turn",
      model: CLAUDE,
    });
    expect(meta.attempts).toBe(1);

    const withTool = await client.complete(hello);
    expect(withTool.content).toBe("Checking.");
    expect(withTool.finishReason).toBe("tool_use");
    expect(withTool.toolCalls).toEqual([
      { id: expect.stringMatching(/^toolu_\d+$/), name: "weather", arguments: '{"city":"Lyon"}' },
    ]);
    // This SDK version sends the key as a bearer token; older ones used x-api-key.
    const { authorization, "x-api-key": apiKeyHeader } = fake.requests[0]?.headers ?? {};
    expect(apiKeyHeader ?? authorization).toMatch(/^(Bearer )?test-key$/);
    expect(fake.requests[0]?.path).toBe("/v1/messages");
  });

  it("sends the system prompt on top, tool turns as blocks, and maps parameters", async () => {
    const fake = await start({ replies: [{ content: "Rain." }, { content: "ok" }] });
    const client = clientFor("anthropic", fake, { params: { temperature: 0.3 } });
    await client.complete({
      messages: conversation,
      tools: [weatherTool],
      params: { maxTokens: 64, stop: ["END"], topP: 0.8, seed: 1 },
    });
    const body = fake.requests[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      model: CLAUDE,
      system: "You are terse.",
      max_tokens: 64,
      temperature: 0.3,
      top_p: 0.8,
      stop_sequences: ["END"],
    });
    // Anthropic has no seed parameter; sending one would be rejected.
    expect(body).not.toHaveProperty("seed");
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "call_prev", name: "weather", input: { city: "Paris" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_prev", content: "sunny, 21 C" },
          { type: "text", text: "And tomorrow?" },
        ],
      },
    ]);
    expect(body.tools).toEqual([
      {
        name: "weather",
        description: weatherTool.description,
        input_schema: weatherTool.parameters,
      },
    ]);

    // max_tokens is required by the API, so a default is always sent.
    await client.complete(hello);
    expect(fake.requests[1]?.body).toMatchObject({ max_tokens: expect.any(Number) });
  });
});

describe.each(FLAVOURS)("faults through the %s client", (flavour) => {
  it("waits out Retry-After on a 429, then succeeds on the second attempt", async () => {
    const fake = await start();
    const arrivals = timedReplies(fake, [
      { fault: "rate_limit", retryAfterSeconds: RETRY_AFTER_SECONDS },
      { content: "after the wait" },
    ]);
    const { response, meta } = await clientFor(flavour, fake).completeWithMeta(hello);
    expect(response.content).toBe("after the wait");
    expect(meta.attempts).toBe(2);
    expect(arrivals).toHaveLength(2);
    const gap = (arrivals[1] ?? 0) - (arrivals[0] ?? 0);
    // Backoff alone would wait at most maxDelayMs (20 ms): the gap shows Retry-After was obeyed.
    expect(gap).toBeGreaterThanOrEqual(RETRY_AFTER_SECONDS * 1000 - TIMER_SLACK_MS);
    expect(gap).toBeLessThan(RETRY_AFTER_SECONDS * 1000 + 700);
  });

  it("retries 500, 502, 503 and 529 and counts every attempt", async () => {
    const fake = await start({
      replies: [
        { fault: "server_error", status: 500 },
        { fault: "server_error", status: 502 },
        { fault: "server_error", status: 503 },
        { fault: "server_error", status: 529 },
        { content: "finally" },
      ],
    });
    const { response, meta } = await clientFor(flavour, fake, { maxRetries: 4 }).completeWithMeta(
      hello,
    );
    expect(response.content).toBe("finally");
    expect(meta.attempts).toBe(5);
    expect(fake.requests).toHaveLength(5);
    expect(fake.pendingReplies).toBe(0);
  });

  it("gives up once the retries are spent: maxRetries + 1 requests", async () => {
    const maxRetries = 2;
    const fake = await start({ rule: () => ({ fault: "server_error", status: 503 }) });
    const client = clientFor(flavour, fake, { maxRetries });
    const { error, meta } = await failureOf(client.completeWithMeta(hello));
    expect(fake.requests).toHaveLength(maxRetries + 1);
    expect(meta.attempts).toBe(maxRetries + 1);
    expect(error.options.status).toBe(503);
    expect(error.message).toMatch(/^HTTP 503 service unavailable/);
    expect(error.message).toContain(`gave up after ${maxRetries + 1} attempts`);
  });

  for (const status of [400, 401, 404] as const) {
    it(`does not retry a ${status}; the error is one clean line without the key`, async () => {
      const fake = await start({
        replies: [
          {
            fault: "bad_request",
            status,
            // Servers do echo keys ("Incorrect API key provided: ...") and multi-line detail.
            message: `Incorrect API key provided: ${SECRET_KEY}.\nSee the docs\tfor details.`,
          },
        ],
      });
      const client = clientFor(flavour, fake, { apiKey: SECRET_KEY });
      const { error, meta } = await failureOf(client.completeWithMeta(hello));
      expect(fake.requests).toHaveLength(1);
      expect(meta.attempts).toBe(1);
      expect(error.retryable).toBe(false);
      expect(error.options.status).toBe(status);
      expect(error.message).toMatch(new RegExp(`^HTTP ${status} `));
      expect(error.message).toContain("See the docs for details.");
      expect(error.message).not.toMatch(/[\n\r\t]/);
      for (const text of [error.message, String(error)]) {
        expect(text).not.toContain(SECRET_KEY);
        expect(text).not.toContain("SECRET");
      }
      // The plain complete() rethrows the same classified error.
      fake.push({ fault: "bad_request", status });
      await expect(client.complete(hello)).rejects.toBeInstanceOf(ModelError);
      expect(fake.requests).toHaveLength(2);
    });
  }

  it("refuses a wrong key with 401 and does not retry or echo the key", async () => {
    const fake = await start({ apiKey: "the-right-key-0000", replies: [{ content: "never" }] });
    const client = clientFor(flavour, fake, { apiKey: SECRET_KEY });
    const { error, meta } = await failureOf(client.completeWithMeta(hello));
    expect(meta.attempts).toBe(1);
    expect(fake.requests).toHaveLength(1);
    expect(error.options.status).toBe(401);
    expect(error.message).toContain("authentication failed");
    expect(String(error)).not.toContain(SECRET_KEY);
  });

  it("times out a hung attempt and succeeds on the retry", async () => {
    const fake = await start({ replies: [{ fault: "hang" }, { content: "awake" }] });
    const client = clientFor(flavour, fake, {}, { attemptTimeoutMs: HANG_TIMEOUT_MS });
    const started = performance.now();
    const { response, meta } = await client.completeWithMeta(hello);
    expect(response.content).toBe("awake");
    expect(meta.attempts).toBe(2);
    expect(fake.requests).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(HANG_TIMEOUT_MS - TIMER_SLACK_MS);
  });

  it("gives up on a server that always hangs, naming the timeout and the attempts", async () => {
    const fake = await start({ rule: () => ({ fault: "hang" }) });
    const client = clientFor(
      flavour,
      fake,
      { maxRetries: 1 },
      { attemptTimeoutMs: HANG_TIMEOUT_MS },
    );
    const { error, meta } = await failureOf(client.completeWithMeta(hello));
    expect(meta.attempts).toBe(2);
    expect(fake.requests).toHaveLength(2);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      `model call timed out after ${HANG_TIMEOUT_MS} ms (gave up after 2 attempts)`,
    );
  });

  it("treats malformed JSON in a 200 as a transient server fault and retries it", async () => {
    // The OpenAI SDK logs an unparseable stream event before throwing; keep test output clean.
    vi.stubEnv("OPENAI_LOG", "off");
    onTestFinished(() => {
      vi.unstubAllEnvs();
    });
    const fake = await start({ replies: [{ fault: "malformed_json" }, { content: "whole" }] });
    const { response, meta } = await clientFor(flavour, fake).completeWithMeta(hello);
    expect(response.content).toBe("whole");
    expect(meta.attempts).toBe(2);

    fake.setRule(() => ({ fault: "malformed_json" }));
    const client = clientFor(flavour, fake, { maxRetries: 1 });
    const { error } = await failureOf(client.completeWithMeta(hello));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^malformed response/);
    expect(error.message).toContain("gave up after 2 attempts");
    expect(error.message).not.toMatch(/\n/);
  });

  it("retries a response cut off halfway (truncated stream or body)", async () => {
    const fake = await start({
      replies: [{ fault: "truncated_stream" }, { content: "complete at last" }],
    });
    const { response, meta } = await clientFor(flavour, fake).completeWithMeta(hello);
    // Never the partial text of the cut-off attempt.
    expect(response.content).toBe("complete at last");
    expect(meta.attempts).toBe(2);
    expect(fake.requests).toHaveLength(2);
  });

  it("retries a dropped connection", async () => {
    const fake = await start({ replies: [{ fault: "disconnect" }, { content: "reconnected" }] });
    const { response, meta } = await clientFor(flavour, fake).completeWithMeta(hello);
    expect(response.content).toBe("reconnected");
    expect(meta.attempts).toBe(2);
  });

  it("names the dropped connection when it never recovers", async () => {
    const fake = await start({ rule: () => ({ fault: "disconnect" }) });
    const { error } = await failureOf(
      clientFor(flavour, fake, { maxRetries: 1 }).completeWithMeta(hello),
    );
    expect(fake.requests).toHaveLength(2);
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^connection dropped/);
    expect(error.message).toContain("gave up after 2 attempts");
  });

  it("returns an empty reply as empty content, without an error or a retry", async () => {
    const fake = await start({ replies: [{ fault: "empty" }] });
    const { response, meta } = await clientFor(flavour, fake).completeWithMeta(hello);
    expect(response.content).toBe("");
    expect(response.toolCalls).toEqual([]);
    expect(meta.attempts).toBe(1);
  });

  it("says no server is running when the port is closed", async () => {
    const port = await closedPort();
    const address = `http://127.0.0.1:${port}`;
    const baseUrl = flavour === "anthropic" ? address : `${address}/v1`;
    const model: ResolvedModel = {
      name: "closed",
      spec: specFor(flavour, baseUrl),
      params: {},
      stream: flavour === "openai-stream",
      apiKey: SECRET_KEY,
      maxRetries: 1,
    };
    const { error, meta } = await failureOf(
      createModelClient(model, { retry: FAST_RETRY }).completeWithMeta(hello),
    );
    // Refused connections are retried: a local server may be starting up.
    expect(meta.attempts).toBe(2);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(`no server is running at ${baseUrl}`);
    expect(error.message).not.toContain(SECRET_KEY);
  });
});
