/**
 * Latency is the provider's time alone: waiting for the model's limiter (queue) and sleeping
 * between retries (retry) are measured apart, by the one retry loop every provider goes through.
 */
import { describe, expect, it } from "vitest";
import { CallRecorder } from "../../src/model/call-record.js";
import { createModelClient } from "../../src/model/client.js";
import type { ResolvedModel } from "../../src/model/resolve.js";
import { type AttemptGate, PhaseClock, withRetries } from "../../src/model/retry.js";
import { ModelError } from "../../src/model/types.js";
import { ScriptedModel } from "../../src/testing/scripted-model.js";

describe("PhaseClock in withRetries (a clock that only moves when told)", () => {
  it("splits queue, provider and retry time over every attempt", async () => {
    let now = 0;
    const clock = new PhaseClock(() => now);
    // The gate holds each attempt 100 ms; each attempt takes 40 ms; each backoff sleeps 250 ms.
    const gate: AttemptGate = {
      run: async (fn) => {
        now += 100;
        return fn();
      },
    };
    let attempts = 0;
    const result = await withRetries(
      async () => {
        attempts++;
        now += 40;
        if (attempts < 3) throw new ModelError("503", { status: 503, retryable: true });
        return "ok";
      },
      { maxRetries: 5 },
      {
        gate,
        clock,
        sleep: async (ms) => {
          now += ms;
        },
        random: () => 0.5,
      },
    );
    expect(result).toBe("ok");
    expect(clock.snapshot()).toEqual({ queueMs: 300, providerMs: 120, retryMs: 250 + 500 });
  });

  it("counts the phase in progress when read mid-call", () => {
    let now = 0;
    const clock = new PhaseClock(() => now);
    clock.enter("queue");
    now = 70;
    expect(clock.snapshot()).toEqual({ queueMs: 70, providerMs: 0, retryMs: 0 });
    clock.enter("provider");
    now = 100;
    clock.leave();
    now = 500;
    expect(clock.snapshot()).toEqual({ queueMs: 70, providerMs: 30, retryMs: 0 });
  });
});

const model: ResolvedModel = {
  name: "m",
  spec: { provider: "openai", model: "m" },
  params: {},
  price: { inputPerMTok: 1, outputPerMTok: 1 },
  stream: false,
};

describe("the model client's accounting of time (real timers)", () => {
  it("leaves the limiter's queue out of latency", async () => {
    // One call at a time, each 80 ms at the provider: the second waits ~80 ms in the queue.
    const provider = new ScriptedModel(["a", "b"], { delayMs: 80 });
    const client = createModelClient({ ...model, maxConcurrency: 1 }, {}, provider);
    const recorder = new CallRecorder(client);
    await Promise.all([recorder.complete({ messages: [] }), recorder.complete({ messages: [] })]);
    const [first, second] = recorder.take();
    for (const call of [first, second]) {
      expect(call?.latencyMs).toBeGreaterThanOrEqual(75);
      expect(call?.latencyMs).toBeLessThan(150);
      expect(call?.retryMs).toBe(0);
    }
    expect(first?.queueMs).toBeLessThan(20);
    expect(second?.queueMs).toBeGreaterThanOrEqual(60);
  });

  it("leaves the sleep before a retry out of latency", async () => {
    const provider = new ScriptedModel([
      new ModelError("429", { status: 429, retryable: true, retryAfterSeconds: 0.2 }),
      "ok",
    ]);
    const recorder = new CallRecorder(createModelClient(model, {}, provider));
    await recorder.complete({ messages: [] });
    const [call] = recorder.take();
    expect(call?.attempts).toBe(2);
    expect(call?.retryMs).toBeGreaterThanOrEqual(195);
    expect(call?.latencyMs).toBeLessThan(100);
    expect(call?.queueMs).toBeLessThan(20);
  });

  it("records the wait so far of a call abandoned in the queue, and no latency", async () => {
    const provider = new ScriptedModel(["a"], { delayMs: 300 });
    const recorder = new CallRecorder(
      createModelClient({ ...model, maxConcurrency: 1 }, {}, provider),
    );
    const busy = recorder.complete({ messages: [] });
    const controller = new AbortController();
    const queued = recorder.complete({ messages: [] }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort(new Error("deadline"));
    await expect(queued).rejects.toThrow();
    await busy;
    const abandoned = recorder.take().find((c) => c.error);
    expect(abandoned).toMatchObject({ attempts: 0, latencyMs: null, retryMs: 0 });
    expect(abandoned?.queueMs).toBeGreaterThanOrEqual(90);
  });

  it("gives cache hits no latency, queue or retry time", async () => {
    const { RunStore } = await import("../../src/store/run-store.js");
    const { createResponseCache } = await import("../../src/store/response-cache.js");
    const store = RunStore.open(":memory:");
    const recorder = new CallRecorder(
      createModelClient(model, { cache: createResponseCache(store.db) }, new ScriptedModel(["a"])),
    );
    const request = { messages: [{ role: "user" as const, content: "x" }] };
    await recorder.complete(request);
    await recorder.complete(request);
    const [, hit] = recorder.take();
    expect(hit).toMatchObject({ cacheHit: true, latencyMs: null });
    expect(hit?.queueMs).toBeUndefined();
    expect(hit?.retryMs).toBeUndefined();
    store.close();
  });
});
