import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import {
  API_KEY_PLACEHOLDER,
  countWords,
  type FakeModelServer,
  type FakeModelServerOptions,
  lastMessageText,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";

const MODEL = "gpt-test";
const CLAUDE = "claude-test";
const SYSTEM = "You are terse.";
const PROMPT = "Say hello to the whole world";

let server: FakeModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  server = await startFakeModelServer(options);
  return server;
}

function openai(fake: FakeModelServer, options: { timeout?: number; apiKey?: string } = {}) {
  return new OpenAI({
    baseURL: fake.openaiBaseUrl,
    apiKey: options.apiKey ?? "test-key",
    maxRetries: 0,
    logLevel: "off",
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
}

function anthropic(fake: FakeModelServer, options: { timeout?: number } = {}) {
  return new Anthropic({
    baseURL: fake.anthropicBaseUrl,
    apiKey: "test-key",
    maxRetries: 0,
    logLevel: "off",
    ...options,
  });
}

const chat = (client: OpenAI) =>
  client.chat.completions.create({
    model: MODEL,
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: PROMPT },
    ],
  });

const chatStream = (client: OpenAI) =>
  client.chat.completions.create({
    model: MODEL,
    messages: [{ role: "user", content: PROMPT }],
    stream: true,
    stream_options: { include_usage: true },
  });

const message = (client: Anthropic) =>
  client.messages.create({
    model: CLAUDE,
    max_tokens: 64,
    system: SYSTEM,
    messages: [{ role: "user", content: PROMPT }],
  });

/** What `run` rejects with, checked to be a `type` (failing the test if it resolves). */
async function rejection<T>(
  type: abstract new (...args: never[]) => T,
  run: () => Promise<unknown>,
): Promise<T> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as T;
  }
  throw new Error("expected a rejection");
}

describe("fake model server: OpenAI chat completions", () => {
  it("answers a scripted text reply with word-count usage and records the request", async () => {
    const fake = await start({ replies: [{ content: "Hello, world!" }] });
    const completion = await chat(openai(fake));

    expect(completion.choices[0]?.message.content).toBe("Hello, world!");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.model).toBe(MODEL);
    expect(completion.id).toBe("chatcmpl-1");
    const promptWords = countWords(`${SYSTEM} ${PROMPT}`);
    expect(promptWords).toBe(9);
    expect(completion.usage).toEqual({
      prompt_tokens: promptWords,
      completion_tokens: 2,
      total_tokens: promptWords + 2,
    });

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.api).toBe("openai");
    expect(request?.headers.authorization).toBe("Bearer test-key");
    expect(request?.body).toMatchObject({ model: MODEL, messages: [{ role: "system" }, {}] });
    expect(request?.reply).toEqual({ content: "Hello, world!" });
    expect(fake.unexpectedRequests).toEqual([]);
    expect(fake.pendingReplies).toBe(0);
  });

  it("returns tool calls with ids call_N, null content and finish_reason tool_calls", async () => {
    const fake = await start({
      replies: [
        {
          toolCalls: [
            { name: "move", arguments: { direction: "north" } },
            { name: "look", arguments: "{not json" },
          ],
        },
      ],
    });
    const completion = await chat(openai(fake));
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([
      {
        id: "call_1",
        type: "function",
        function: { name: "move", arguments: '{"direction":"north"}' },
      },
      { id: "call_2", type: "function", function: { name: "look", arguments: "{not json" } },
    ]);
    // "move" + one JSON word, "look" + two words of malformed JSON.
    expect(completion.usage?.completion_tokens).toBe(5);
  });

  it("streams content, tool calls, finish_reason and a usage chunk", async () => {
    const fake = await start({
      replies: [
        {
          content: "Going north now",
          toolCalls: [{ name: "move", arguments: { direction: "north", steps: 12 } }],
        },
      ],
    });
    const stream = await chatStream(openai(fake));

    let content = "";
    const calls: { id?: string; name?: string; arguments: string }[] = [];
    const finishReasons: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined | null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      usage = chunk.usage ?? usage;
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      content += choice.delta.content ?? "";
      if (choice.finish_reason) finishReasons.push(choice.finish_reason);
      for (const delta of choice.delta.tool_calls ?? []) {
        const call = calls[delta.index] ?? { arguments: "" };
        calls[delta.index] = call;
        call.id ??= delta.id;
        call.name ??= delta.function?.name;
        call.arguments += delta.function?.arguments ?? "";
      }
    }
    expect(content).toBe("Going north now");
    expect(calls).toEqual([
      { id: "call_1", name: "move", arguments: '{"direction":"north","steps":12}' },
    ]);
    expect(finishReasons).toEqual(["tool_calls"]);
    expect(usage).toEqual({ prompt_tokens: 6, completion_tokens: 5, total_tokens: 11 });
    expect(chunks).toBeGreaterThan(5); // really streamed in pieces
    expect(fake.requests[0]?.stream).toBe(true);
  });

  it("omits the usage chunk unless stream_options.include_usage is set", async () => {
    const fake = await start({ replies: [{ content: "hi" }] });
    const stream = await openai(fake).chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: PROMPT }],
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.usage === undefined)).toBe(true);
    expect(chunks.every((chunk) => chunk.choices.length === 1)).toBe(true);
  });

  it("honours usage, model and finish-reason overrides", async () => {
    const fake = await start({
      replies: [
        {
          content: "cut",
          usage: { outputTokens: 99 },
          model: "gpt-test-2024",
          finishReason: "length",
        },
      ],
    });
    const completion = await chat(openai(fake));
    expect(completion.usage?.completion_tokens).toBe(99);
    expect(completion.usage?.prompt_tokens).toBe(9);
    expect(completion.model).toBe("gpt-test-2024");
    expect(completion.choices[0]?.finish_reason).toBe("length");
  });

  it("answers a rate limit with 429, Retry-After and an OpenAI error body", async () => {
    const fake = await start({ replies: [{ fault: "rate_limit", retryAfterSeconds: 7 }] });
    const apiError = await rejection(OpenAI.RateLimitError, () => chat(openai(fake)));
    expect(apiError.status).toBe(429);
    expect(apiError.headers.get("retry-after")).toBe("7");
    expect(apiError.code).toBe("rate_limit_exceeded");
    expect(apiError.requestID).toMatch(/^req_\d+$/);
  });

  it("sends no Retry-After when the fault names none", async () => {
    const fake = await start({ replies: [{ fault: "rate_limit" }] });
    const error = await rejection(OpenAI.RateLimitError, () => chat(openai(fake)));
    expect(error.status).toBe(429);
    expect(error.headers.get("retry-after")).toBeNull();
  });

  it("answers server errors with the requested 5xx status", async () => {
    const fake = await start({
      replies: [{ fault: "server_error" }, { fault: "server_error", status: 503 }],
    });
    const client = openai(fake);
    const first = await rejection(OpenAI.InternalServerError, () => chat(client));
    const second = await rejection(OpenAI.InternalServerError, () => chat(client));
    expect(first.status).toBe(500);
    expect(second.status).toBe(503);
    expect(second.type).toBe("server_error");
  });

  it("answers bad_request with a 4xx error body", async () => {
    const fake = await start({
      replies: [
        { fault: "bad_request", message: "context too long" },
        { fault: "bad_request", status: 422 },
      ],
    });
    const client = openai(fake);
    const first = await rejection(OpenAI.BadRequestError, () => chat(client));
    expect(first.status).toBe(400);
    expect(first.message).toContain("context too long");
    expect(first.type).toBe("invalid_request_error");
    const second = await rejection(OpenAI.APIError, () => chat(client));
    expect(second.status).toBe(422);
  });

  it("hangs until the SDK times out, and close() ends the hanging connection", async () => {
    const fake = await start({ replies: [{ fault: "hang" }] });
    const started = performance.now();
    await rejection(OpenAI.APIConnectionTimeoutError, () => chat(openai(fake, { timeout: 200 })));
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(fake.requests).toHaveLength(1);

    // A raw request that hangs with no client timeout: close() must end it.
    fake.push({ fault: "hang" });
    const pending = fetch(`${fake.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
    });
    await waitFor(() => fake.requests.length === 2);
    const closing = performance.now();
    await fake.close();
    expect(performance.now() - closing).toBeLessThan(500);
    await expect(pending).rejects.toThrow();
  });

  it("makes malformed JSON an SDK error, streaming or not", async () => {
    const fake = await start({
      replies: [{ fault: "malformed_json" }, { fault: "malformed_json" }],
    });
    const client = openai(fake);
    await rejection(Error, () => chat(client));

    const stream = await chatStream(client);
    await rejection(SyntaxError, async () => {
      for await (const _chunk of stream) {
        // draining
      }
    });
  });

  it("truncates a stream: some chunks arrive, then iteration fails", async () => {
    const fake = await start({
      replies: [{ fault: "truncated_stream", content: "one two three four five six seven eight" }],
    });
    const stream = await chatStream(openai(fake));
    let received = "";
    await rejection(Error, async () => {
      for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? "";
    });
    expect(received.length).toBeGreaterThan(0);
    expect("one two three four five six seven eight".startsWith(received)).toBe(true);
    expect(received).not.toBe("one two three four five six seven eight");
  });

  it("truncates a non-streaming body mid-way, which the SDK reports", async () => {
    const fake = await start({ replies: [{ fault: "truncated_stream" }] });
    await rejection(Error, () => chat(openai(fake)));
  });

  it("drops the connection on disconnect", async () => {
    const fake = await start({ replies: [{ fault: "disconnect" }] });
    await rejection(OpenAI.APIConnectionError, () => chat(openai(fake)));
  });

  it("returns an empty completion, streaming or not", async () => {
    const fake = await start({ replies: [{ fault: "empty" }, { fault: "empty" }] });
    const client = openai(fake);
    const completion = await chat(client);
    expect(completion.choices[0]?.message.content).toBe("");
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(completion.usage?.completion_tokens).toBe(0);

    let content = "";
    let finish: string | null | undefined;
    for await (const chunk of await chatStream(client)) {
      content += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe("");
    expect(finish).toBe("stop");
  });

  it("answers 500 and records the call when nothing is scripted", async () => {
    const fake = await start();
    const error = await rejection(OpenAI.APIError, () => chat(openai(fake)));
    expect(error.status).toBe(500);
    expect(error.message).toContain("No reply scripted for request #1");
    expect(fake.unexpectedRequests).toHaveLength(1);
    expect(fake.unexpectedRequests[0]?.problem).toContain("push() one or pass a rule");
  });

  it("uses the rule once the queue is empty", async () => {
    const fake = await start({
      replies: [{ content: "scripted" }],
      rule: (request) => ({ content: `echo: ${lastMessageText(request)}` }),
    });
    const client = openai(fake);
    expect((await chat(client)).choices[0]?.message.content).toBe("scripted");
    expect((await chat(client)).choices[0]?.message.content).toBe(`echo: ${PROMPT}`);
    fake.push({ content: "pushed" });
    expect((await chat(client)).choices[0]?.message.content).toBe("pushed");
    fake.setRule(() => {
      throw new Error("rule exploded");
    });
    const error = await rejection(OpenAI.APIError, () => chat(client));
    expect(error.status).toBe(500);
    expect(fake.unexpectedRequests[0]?.problem).toContain("rule exploded");
  });

  it("rejects requests the real API would reject, without consuming a reply", async () => {
    const fake = await start({ replies: [{ content: "kept" }] });
    const url = `${fake.openaiBaseUrl}/chat/completions`;
    const post = (body: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });

    const missing = await post(JSON.stringify({ model: MODEL }));
    expect(missing.status).toBe(400);
    const body = (await missing.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("messages");

    expect((await post("{nope")).status).toBe(400);
    const unknown = await fetch(`${fake.url}/v1/embeddings`, { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
    await unknown.body?.cancel();

    expect(fake.pendingReplies).toBe(1);
    expect(fake.unexpectedRequests.map((request) => request.api)).toEqual([
      "openai",
      "openai",
      "unknown",
    ]);
  });

  it("lists models", async () => {
    const fake = await start({ models: ["a-model", "b-model"] });
    const page = await openai(fake).models.list();
    expect(page.data.map((model) => model.id)).toEqual(["a-model", "b-model"]);
    const claudePage = await anthropic(fake).models.list();
    expect(claudePage.data.map((model) => model.id)).toEqual(["a-model", "b-model"]);
  });

  it("checks the API key when one is configured", async () => {
    const fake = await start({ apiKey: "right-key", rule: () => ({ content: "ok" }) });
    await rejection(OpenAI.AuthenticationError, () => chat(openai(fake, { apiKey: "wrong-key" })));
    const completion = await chat(openai(fake, { apiKey: "right-key" }));
    expect(completion.choices[0]?.message.content).toBe("ok");
  });
});

describe("fake model server: latency", () => {
  it("delays each response without blocking concurrent ones", async () => {
    const fake = await start({ latencyMs: 100, rule: () => ({ content: "done" }) });
    const client = openai(fake);
    const started = performance.now();
    const replies = await Promise.all(Array.from({ length: 50 }, () => chat(client)));
    const elapsed = performance.now() - started;
    expect(replies.every((reply) => reply.choices[0]?.message.content === "done")).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(750); // serial would take 5 s
    expect(fake.requests).toHaveLength(50);
  });

  it("lets a reply set its own latency", async () => {
    const fake = await start({
      latencyMs: 1_000,
      replies: [
        { content: "fast", latencyMs: 0 },
        { content: "slow", latencyMs: 150 },
      ],
    });
    const client = openai(fake);
    let started = performance.now();
    await chat(client);
    expect(performance.now() - started).toBeLessThan(500); // not the server's 1 s
    started = performance.now();
    await chat(client);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });
});

describe("fake model server: Anthropic messages", () => {
  it("answers text with content blocks, stop_reason and usage", async () => {
    const fake = await start({ replies: [{ content: "Hello, world!" }] });
    const reply = await message(anthropic(fake));
    expect(reply.content).toEqual([{ type: "text", text: "Hello, world!" }]);
    expect(reply.stop_reason).toBe("end_turn");
    expect(reply.model).toBe(CLAUDE);
    expect(reply.id).toBe("msg_1");
    expect(reply.usage.input_tokens).toBe(9);
    expect(reply.usage.output_tokens).toBe(2);

    const [request] = fake.requests;
    if (request === undefined) throw new Error("no request recorded");
    expect(request.path).toBe("/v1/messages");
    expect(request.api).toBe("anthropic");
    // SDK versions differ in which header carries the key.
    const { authorization, "x-api-key": apiKey } = request.headers;
    expect([authorization, apiKey]).toContain(
      apiKey === undefined ? "Bearer test-key" : "test-key",
    );
    expect(lastMessageText(request)).toBe(PROMPT);
  });

  it("answers tool calls as tool_use blocks", async () => {
    const fake = await start({
      replies: [{ content: "Moving.", toolCalls: [{ name: "move", arguments: { to: "north" } }] }],
    });
    const reply = await message(anthropic(fake));
    expect(reply.stop_reason).toBe("tool_use");
    expect(reply.content).toEqual([
      { type: "text", text: "Moving." },
      { type: "tool_use", id: "toolu_1", name: "move", input: { to: "north" } },
    ]);
  });

  it("streams text and tool use that the SDK assembles", async () => {
    const fake = await start({
      replies: [
        { content: "Moving north.", toolCalls: [{ name: "move", arguments: '{"to":"north"}' }] },
      ],
    });
    const stream = anthropic(fake).messages.stream({
      model: CLAUDE,
      max_tokens: 64,
      messages: [{ role: "user", content: PROMPT }],
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: "text", text: "Moving north." },
      { type: "tool_use", id: "toolu_1", name: "move", input: { to: "north" } },
    ]);
    expect(final.stop_reason).toBe("tool_use");
    expect(final.usage.output_tokens).toBe(4);
    expect(final.usage.input_tokens).toBe(6);
  });

  it("answers faults in Anthropic's error shape", async () => {
    const fake = await start({
      replies: [
        { fault: "rate_limit", retryAfterSeconds: 0.25 },
        { fault: "server_error", status: 529 },
        { fault: "empty" },
      ],
    });
    const client = anthropic(fake);
    const limited = await rejection(Anthropic.RateLimitError, () => message(client));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("0.25");
    expect(limited.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });

    const overloaded = await rejection(Anthropic.APIError, () => message(client));
    expect(overloaded.status).toBe(529);
    expect(overloaded.error).toMatchObject({ error: { type: "overloaded_error" } });

    const empty = await message(client);
    expect(empty.content).toEqual([]);
    expect(empty.stop_reason).toBe("end_turn");
  });

  it("rejects a request without max_tokens, as the real API does", async () => {
    const fake = await start({ replies: [{ content: "unused" }] });
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: CLAUDE, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { type: string; error: { type: string } };
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(fake.pendingReplies).toBe(1);
  });

  it("refuses tool arguments that are not a JSON object, naming the mistake", async () => {
    const fake = await start({ replies: [{ toolCalls: [{ name: "move", arguments: "[1]" }] }] });
    const error = await rejection(Anthropic.APIError, () => message(anthropic(fake)));
    expect(error.status).toBe(500);
    expect(fake.unexpectedRequests[0]?.problem).toContain("must be a JSON object");
  });

  it("hangs until the SDK times out", async () => {
    const fake = await start({ replies: [{ fault: "hang" }] });
    const timeout = Anthropic.APIConnectionTimeoutError;
    await rejection(timeout, () => message(anthropic(fake, { timeout: 200 })));
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let tries = 0; tries < 200 && !condition(); tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(condition()).toBe(true);
}

describe("fake model server: huge replies and echoed keys", () => {
  const SIZE = 3 * 1024 * 1024 + 17;

  it("sends a huge reply whole to a client that reads it all, chunked or with its length", async () => {
    const fake = await start({
      replies: [
        { fault: "huge_reply", bytes: SIZE, content: "Thought: " },
        { fault: "huge_reply", bytes: SIZE, declareLength: true },
      ],
    });
    const client = openai(fake);
    const chunked = await chat(client).withResponse();
    expect(chunked.response.headers.get("content-length")).toBeNull();
    const text = chunked.data.choices[0]?.message.content ?? "";
    expect(Buffer.byteLength(text)).toBe(SIZE);
    expect(text.startsWith("Thought: lorem ipsum")).toBe(true);
    const declared = await chat(client).withResponse();
    expect(Number(declared.response.headers.get("content-length"))).toBe(
      fake.requests[1]?.sentBytes,
    );
    expect(declared.data.choices[0]?.message.content).toHaveLength(SIZE);
    expect(fake.requests[0]?.sentBytes).toBeGreaterThan(SIZE);
  });

  it("streams a huge reply in pieces the SDK assembles, for either wire", async () => {
    const fake = await start({ rule: () => ({ fault: "huge_reply", bytes: SIZE }) });
    let streamed = "";
    for await (const chunk of await chatStream(openai(fake))) {
      streamed += chunk.choices[0]?.delta.content ?? "";
    }
    expect(streamed).toHaveLength(SIZE);
    const reply = await message(anthropic(fake));
    const block = reply.content[0];
    expect(block?.type === "text" ? block.text.length : 0).toBe(SIZE);
  });

  it("stops writing when the client stops reading", async () => {
    const fake = await start({ replies: [{ fault: "huge_reply", bytes: 64 * 1024 * 1024 }] });
    const response = await fetch(`${fake.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: PROMPT }] }),
    });
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fake.requests[0]?.sentBytes).toBeLessThan(16 * 1024 * 1024);
  });

  it("echoes the caller's key where the reply says, or after its text", async () => {
    const fake = await start({
      replies: [
        {
          content: `key=${API_KEY_PLACEHOLDER}`,
          toolCalls: [{ name: "act", arguments: { k: API_KEY_PLACEHOLDER } }],
          model: `m-${API_KEY_PLACEHOLDER}`,
          echoKey: true,
        },
        { content: "Mine is", echoKey: true },
        { content: `no ${API_KEY_PLACEHOLDER}` }, // not asked to echo: the text as written
      ],
    });
    const client = openai(fake, { apiKey: "sk-the-callers-key" });
    const first = await chat(client);
    expect(first.choices[0]?.message.content).toBe("key=sk-the-callers-key");
    expect(first.model).toBe("m-sk-the-callers-key");
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" ? JSON.parse(call.function.arguments) : {}).toEqual({
      k: "sk-the-callers-key",
    });
    expect((await chat(client)).choices[0]?.message.content).toBe("Mine is sk-the-callers-key");
    expect((await chat(client)).choices[0]?.message.content).toBe(`no ${API_KEY_PLACEHOLDER}`);
  });
});
