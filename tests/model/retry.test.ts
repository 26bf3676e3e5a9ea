import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { APIError as AnthropicAPIError } from "@anthropic-ai/sdk/error";
import OpenAI from "openai";
import {
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
} from "openai/error";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  parseRetryAfterSeconds,
  redactSecrets,
  toModelError,
} from "../../src/model/http-errors.js";
import { createRateLimiter } from "../../src/model/rate-limit.js";
import {
  backoffDelayMs,
  type RetryInfo,
  type RetryOptions,
  resolveRetryPolicy,
  withRetries,
} from "../../src/model/retry.js";
import { ModelError } from "../../src/model/types.js";

const FAKE_KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123456789";

/** What openai@6 throws for an HTTP error response. */
function openaiHttpError(status: number, message: string, headers: Record<string, string> = {}) {
  return APIError.generate(status, { error: { message } }, undefined, new Headers(headers));
}

/** An attempt function that throws the given errors in order, then returns "ok". */
function scriptedAttempt(failures: unknown[]) {
  const calls: AbortSignal[] = [];
  const attempt = async (signal: AbortSignal) => {
    calls.push(signal);
    const failure = failures[calls.length - 1];
    if (failure !== undefined) throw failure;
    return "ok";
  };
  return { attempt, calls };
}

/** Records requested sleeps and returns at once. */
function instantSleep() {
  const sleeps: number[] = [];
  const sleep: NonNullable<RetryOptions["sleep"]> = async (ms) => {
    sleeps.push(ms);
  };
  return { sleep, sleeps };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

describe("toModelError", () => {
  it("marks 408, 409, 429 and every 5xx (529 included) retryable", () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) {
      const error = toModelError(openaiHttpError(status, "nope"));
      expect(error.retryable, `status ${status}`).toBe(true);
      expect(error.options.status).toBe(status);
    }
  });

  it("marks other 4xx not retryable", () => {
    for (const status of [400, 401, 403, 404, 422]) {
      const error = toModelError(openaiHttpError(status, "nope"));
      expect(error.retryable, `status ${status}`).toBe(false);
      expect(error.options.status).toBe(status);
    }
  });

  it("classifies Anthropic's 529 overloaded error", () => {
    const thrown = AnthropicAPIError.generate(
      529,
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      undefined,
      new Headers({ "retry-after": "3" }),
    );
    const error = toModelError(thrown);
    expect(error.retryable).toBe(true);
    expect(error.options.status).toBe(529);
    expect(error.options.retryAfterSeconds).toBe(3);
    expect(error.message).toMatch(/^HTTP 529 overloaded/);
  });

  it("reads Retry-After as seconds, as an HTTP date, and retry-after-ms first", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfterSeconds(new Headers({ "retry-after": "7" }), now)).toBe(7);
    expect(parseRetryAfterSeconds(new Headers({ "retry-after": "1.5" }), now)).toBe(1.5);
    const date = new Headers({ "retry-after": "Wed, 01 Jan 2025 00:00:30 GMT" });
    expect(parseRetryAfterSeconds(date, now)).toBe(30);
    const past = new Headers({ "retry-after": "Tue, 31 Dec 2024 23:00:00 GMT" });
    expect(parseRetryAfterSeconds(past, now)).toBe(0);
    const both = new Headers({ "retry-after": "9", "retry-after-ms": "250" });
    expect(parseRetryAfterSeconds(both, now)).toBe(0.25);
    expect(parseRetryAfterSeconds({ "Retry-After": "4" }, now)).toBe(4);
    expect(parseRetryAfterSeconds(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfterSeconds(new Headers({ "retry-after": "-3" }), now)).toBeUndefined();
    expect(parseRetryAfterSeconds(undefined, now)).toBeUndefined();
  });

  it("never leaks keys or Authorization headers, and keeps one line", () => {
    const thrown = new AuthenticationError(
      401,
      { message: `Incorrect API key provided: ${FAKE_KEY}.\nYou can find your API key...` },
      undefined,
      new Headers(),
    );
    const error = toModelError(thrown);
    expect(error.retryable).toBe(false);
    expect(error.message).not.toContain("abcdefghij");
    expect(error.message).not.toContain("\n");
    expect(error.message).toMatch(/^HTTP 401 authentication failed/);

    const raw = new Error("failed: Authorization: Bearer tok_secret123 sent to https://u:pw@h/x");
    const message = toModelError(raw).message;
    expect(message).not.toContain("tok_secret123");
    expect(message).not.toContain("pw@");

    const custom = toModelError(new Error("echo mysecretvalue42"), {
      secrets: ["mysecretvalue42"],
    });
    expect(custom.message).not.toContain("mysecretvalue42");
    expect(redactSecrets('{"api_key": "abc123def"} ?key=zzz999&x=1')).toBe(
      '{"api_key": "***"} ?key=***&x=1',
    );
  });

  it("says a refused local connection means the server is not running", async () => {
    const server = createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    server.close();
    await once(server, "close");

    const fromFetch = toModelError(await rejection(fetch(`http://127.0.0.1:${port}/v1/models`)));
    expect(fromFetch.retryable).toBe(true);
    expect(fromFetch.message).toContain(`no server is running at 127.0.0.1:${port}`);

    const baseURL = `http://127.0.0.1:${port}/v1`;
    const client = new OpenAI({ apiKey: FAKE_KEY, baseURL, maxRetries: 0 });
    const thrown = await rejection(
      client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    );
    const fromSdk = toModelError(thrown, { baseUrl: baseURL });
    expect(fromSdk.retryable).toBe(true);
    expect(fromSdk.message).toContain(`no server is running at ${baseURL}`);
    expect(fromSdk.message).toMatch(/vLLM, Ollama/);
  });

  it("retries dropped connections and timeouts, not aborts", () => {
    const hangUp = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(toModelError(hangUp).retryable).toBe(true);
    expect(toModelError(hangUp).message).toContain("ECONNRESET");
    const terminated = new TypeError("terminated", {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    expect(toModelError(terminated).retryable).toBe(true);
    expect(toModelError(new Error("socket hang up")).retryable).toBe(true);
    expect(toModelError(new DOMException("timed out", "TimeoutError")).retryable).toBe(true);
    expect(toModelError(new APIConnectionTimeoutError()).retryable).toBe(true);

    const userAbort = toModelError(new APIUserAbortError());
    expect(userAbort.retryable).toBe(false);
    expect(userAbort.message).toContain("aborted");
    expect(toModelError(new DOMException("aborted", "AbortError")).retryable).toBe(false);
    expect(toModelError(new TypeError("x is not a function")).retryable).toBe(false);
  });

  it("classifies a mid-stream error event by its type", () => {
    const overloaded = new APIError(
      undefined,
      { type: "server_error", message: "boom" },
      undefined,
      undefined,
    );
    expect(toModelError(overloaded).retryable).toBe(true);
    const invalid = new APIError(
      undefined,
      { type: "invalid_request_error", message: "bad" },
      undefined,
      undefined,
    );
    expect(toModelError(invalid).retryable).toBe(false);
  });

  it("passes a ModelError through unchanged", () => {
    const original = new ModelError("x", { retryable: true });
    expect(toModelError(original)).toBe(original);
  });
});

describe("backoffDelayMs", () => {
  const policy = resolveRetryPolicy({ baseDelayMs: 500, maxDelayMs: 3_000 });

  it("doubles the ceiling per retry, capped at maxDelayMs, scaled by the jitter", () => {
    const top = () => 0.999_999;
    expect([0, 1, 2, 3, 4].map((i) => backoffDelayMs(i, policy, top))).toEqual([
      499, 999, 1_999, 2_999, 2_999,
    ]);
    const half = () => 0.5;
    expect([0, 1, 2, 3].map((i) => backoffDelayMs(i, policy, half))).toEqual([
      250, 500, 1_000, 1_500,
    ]);
    expect(backoffDelayMs(3, policy, () => 0)).toBe(0);
  });
});

describe("withRetries", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("honours Retry-After exactly on 429", async () => {
    const { attempt, calls } = scriptedAttempt([
      openaiHttpError(429, "Rate limit reached", { "retry-after": "2" }),
    ]);
    const { sleep, sleeps } = instantSleep();
    const infos: RetryInfo[] = [];
    // Backoff alone would wait ~9.9 s here; the server's 2 s is what counts.
    const result = await withRetries(
      attempt,
      { baseDelayMs: 10_000 },
      {
        sleep,
        random: () => 0.99,
        onRetry: (info) => infos.push(info),
      },
    );
    expect(result).toBe("ok");
    expect(calls).toHaveLength(2);
    expect(sleeps).toEqual([2_000]);
    expect(infos.map((i) => [i.attempt, i.delayMs, i.error.options.status])).toEqual([
      [1, 2_000, 429],
    ]);
  });

  it("retries 500 up to maxRetries and says how many attempts were made", async () => {
    const failures = Array.from({ length: 10 }, () => openaiHttpError(500, "boom"));
    const { attempt, calls } = scriptedAttempt(failures);
    const { sleep, sleeps } = instantSleep();
    const error = (await rejection(
      withRetries(attempt, { maxRetries: 4, baseDelayMs: 100 }, { sleep, random: () => 0.5 }),
    )) as ModelError;
    expect(calls).toHaveLength(5);
    expect(sleeps).toEqual([50, 100, 200, 400]);
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toMatch(/^HTTP 500 server error: boom \(gave up after 5 attempts\)$/);
    expect(error.options.status).toBe(500);
  });

  it("does not retry 400", async () => {
    const { attempt, calls } = scriptedAttempt([openaiHttpError(400, "bad schema")]);
    const { sleep, sleeps } = instantSleep();
    const error = (await rejection(withRetries(attempt, {}, { sleep }))) as ModelError;
    expect(calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(error.retryable).toBe(false);
    expect(error.options.status).toBe(400);
  });

  it("reports the attempt count when a non-retryable error follows retries", async () => {
    const { attempt, calls } = scriptedAttempt([
      openaiHttpError(503, "busy"),
      openaiHttpError(401, "who are you"),
    ]);
    const { sleep } = instantSleep();
    const error = (await rejection(withRetries(attempt, {}, { sleep }))) as ModelError;
    expect(calls).toHaveLength(2);
    expect(error.message).toContain("gave up after 2 attempts");
  });

  it("times out a hung attempt and retries it", async () => {
    vi.useFakeTimers();
    const signals: AbortSignal[] = [];
    let calls = 0;
    const attempt = (signal: AbortSignal) => {
      calls++;
      signals.push(signal);
      // The first attempt hangs and ignores its signal; the second answers.
      return calls === 1 ? new Promise<string>(() => {}) : Promise.resolve("late ok");
    };
    const { sleep, sleeps } = instantSleep();
    const result = withRetries(attempt, { attemptTimeoutMs: 1_000 }, { sleep, random: () => 0 });
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe("late ok");
    expect(calls).toBe(2);
    expect(signals[0]?.aborted).toBe(true);
    expect(sleeps).toEqual([0]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("gives up on repeated timeouts with a clear message", async () => {
    vi.useFakeTimers();
    const attempt = () => new Promise<string>(() => {});
    const result = withRetries(attempt, { attemptTimeoutMs: 100, maxRetries: 2, baseDelayMs: 10 });
    const settled = rejection(result);
    await vi.advanceTimersByTimeAsync(1_000);
    const error = (await settled) as ModelError;
    expect(error.retryable).toBe(true);
    expect(error.message).toBe("model call timed out after 100 ms (gave up after 3 attempts)");
  });

  it("stops at once, without retrying, when the caller aborts mid-attempt", async () => {
    const controller = new AbortController();
    const reason = new Error("interrupted");
    let calls = 0;
    const attempt = (signal: AbortSignal) => {
      calls++;
      return new Promise<string>((_, reject) => {
        // Like the SDKs: report the abort as a user abort.
        signal.addEventListener("abort", () => reject(new APIUserAbortError()));
      });
    };
    const result = withRetries(attempt, {}, { signal: controller.signal });
    controller.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(calls).toBe(1);
  });

  it("stops at once when the caller aborts during backoff", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const { attempt, calls } = scriptedAttempt([openaiHttpError(500, "boom")]);
    const result = rejection(
      withRetries(
        attempt,
        { baseDelayMs: 10_000 },
        { signal: controller.signal, random: () => 0.5 },
      ),
    );
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort(new Error("stop"));
    expect(((await result) as Error).message).toBe("stop");
    expect(calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with the reason at once when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("already"));
    const { attempt, calls } = scriptedAttempt([]);
    await expect(withRetries(attempt, {}, { signal: controller.signal })).rejects.toThrow(
      "already",
    );
    expect(calls).toHaveLength(0);
  });

  it("gives up when the server asks to wait longer than maxRetryAfterMs", async () => {
    const { attempt, calls } = scriptedAttempt([
      openaiHttpError(429, "slow down", { "retry-after": "300" }),
    ]);
    const { sleep, sleeps } = instantSleep();
    const error = (await rejection(withRetries(attempt, {}, { sleep }))) as ModelError;
    expect(calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(error.message).toContain("gave up after 1 attempt;");
    expect(error.message).toContain("asked to wait 300 s, more than the 120 s allowed");
    expect(error.options.retryAfterSeconds).toBe(300);
  });

  it("waits a Retry-After up to the cap, with real timers", async () => {
    const { attempt, calls } = scriptedAttempt([
      openaiHttpError(429, "slow down", { "retry-after-ms": "30" }),
    ]);
    const started = performance.now();
    await expect(withRetries(attempt, { maxRetryAfterMs: 30 })).resolves.toBe("ok");
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
    expect(calls).toHaveLength(2);
  });

  it("rejects invalid policies", async () => {
    const { attempt } = scriptedAttempt([]);
    await expect(withRetries(attempt, { maxRetries: -1 })).rejects.toThrow();
  });

  it("starts the attempt timeout only once the gate admits the attempt", async () => {
    vi.useFakeTimers();
    const limiter = createRateLimiter({ maxConcurrency: 1 });
    let releaseFirst: (value: string) => void = () => {};
    const first = limiter.run(() => new Promise<string>((resolve) => (releaseFirst = resolve)));
    let calls = 0;
    const attempt = async () => {
      calls++;
      return "second";
    };
    const second = withRetries(attempt, { attemptTimeoutMs: 100 }, { gate: limiter });
    await vi.advanceTimersByTimeAsync(5_000); // far past the attempt timeout, still queued
    expect(calls).toBe(0);
    releaseFirst("first");
    await expect(first).resolves.toBe("first");
    await expect(second).resolves.toBe("second");
    expect(calls).toBe(1);
  });
});

describe("withRetries with the openai SDK against a local server", () => {
  async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
    const server: Server = createServer(handler);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    return { server, baseURL: `http://127.0.0.1:${port}/v1` };
  }

  const completion = {
    id: "c1",
    object: "chat.completion",
    created: 0,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };

  it("retries 429 (Retry-After) and 500, then succeeds", async () => {
    const statuses = [429, 500, 200];
    let requests = 0;
    const { server, baseURL } = await serve((req, res) => {
      req.resume();
      const status = statuses[requests++] ?? 200;
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (status === 429) headers["retry-after-ms"] = "20";
      res.writeHead(status, headers);
      res.end(JSON.stringify(status === 200 ? completion : { error: { message: "nope" } }));
    });
    try {
      const client = new OpenAI({ apiKey: FAKE_KEY, baseURL, maxRetries: 0 });
      const infos: RetryInfo[] = [];
      const result = await withRetries(
        (signal) =>
          client.chat.completions.create(
            { model: "m", messages: [{ role: "user", content: "hi" }] },
            { signal },
          ),
        { baseDelayMs: 10 },
        { onRetry: (info) => infos.push(info) },
      );
      expect(result.choices[0]?.message.content).toBe("hi");
      expect(requests).toBe(3);
      expect(infos.map((i) => i.error.options.status)).toEqual([429, 500]);
      expect(infos[0]?.delayMs).toBe(20);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("makes a hang past the attempt timeout a retryable timeout, not a user abort", async () => {
    let requests = 0;
    const { server, baseURL } = await serve((req) => {
      requests++;
      req.resume(); // never answer
    });
    try {
      const client = new OpenAI({ apiKey: FAKE_KEY, baseURL, maxRetries: 0 });
      const error = (await rejection(
        withRetries(
          (signal) =>
            client.chat.completions.create(
              { model: "m", messages: [{ role: "user", content: "hi" }] },
              { signal },
            ),
          { attemptTimeoutMs: 50, maxRetries: 1, baseDelayMs: 1 },
        ),
      )) as ModelError;
      expect(requests).toBe(2);
      expect(error.retryable).toBe(true);
      expect(error.message).toBe("model call timed out after 50 ms (gave up after 2 attempts)");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
