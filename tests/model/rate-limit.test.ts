import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRateLimiter, RATE_WINDOW_MS } from "../../src/model/rate-limit.js";

/** A call that stays in flight until finished by hand; records when it started. */
function trackedCalls(now: () => number) {
  const started: Array<{ name: string; at: number }> = [];
  const finishers = new Map<string, () => void>();
  const call = (name: string) => () => {
    started.push({ name, at: now() });
    return new Promise<string>((resolve) => finishers.set(name, () => resolve(name)));
  };
  const finish = (name: string) => {
    const finisher = finishers.get(name);
    if (!finisher) throw new Error(`${name} has not started`);
    finisher();
  };
  return { call, finish, started, names: () => started.map((s) => s.name) };
}

describe("createRateLimiter", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("calls straight through when no limits are set", async () => {
    const limiter = createRateLimiter();
    let ran = false;
    const result = limiter.run(async () => {
      ran = true;
      return 7;
    });
    expect(ran).toBe(true); // synchronously: no queue, no extra hop
    expect(limiter.inFlight).toBe(1);
    await expect(result).resolves.toBe(7);
    expect(limiter.inFlight).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps at most maxConcurrency in flight and serves waiters FIFO", async () => {
    const limiter = createRateLimiter({ maxConcurrency: 2 });
    const { call, finish, names } = trackedCalls(() => Date.now());
    const results = ["a", "b", "c", "d", "e"].map((name) => limiter.run(call(name)));
    expect(names()).toEqual(["a", "b"]);
    expect(limiter.inFlight).toBe(2);
    expect(limiter.queued).toBe(3);

    finish("b");
    await vi.advanceTimersByTimeAsync(0);
    expect(names()).toEqual(["a", "b", "c"]);
    finish("a");
    finish("c");
    await vi.advanceTimersByTimeAsync(0);
    expect(names()).toEqual(["a", "b", "c", "d", "e"]);
    expect(limiter.inFlight).toBe(2);
    finish("d");
    finish("e");
    await expect(Promise.all(results)).resolves.toEqual(["a", "b", "c", "d", "e"]);
    expect(limiter.inFlight).toBe(0);
    expect(limiter.queued).toBe(0);
  });

  it("frees the slot when a call throws, synchronously or not", async () => {
    const limiter = createRateLimiter({ maxConcurrency: 1 });
    const sync = limiter.run(() => {
      throw new Error("sync");
    });
    const async = limiter.run(async () => {
      throw new Error("async");
    });
    const ok = limiter.run(async () => "ok");
    await expect(sync).rejects.toThrow("sync");
    await expect(async).rejects.toThrow("async");
    await expect(ok).resolves.toBe("ok");
    expect(limiter.inFlight).toBe(0);
  });

  it("starts at most requestsPerMinute calls in any sliding 60 s window", async () => {
    const start = Date.now();
    const clock = () => Date.now() - start;
    const limiter = createRateLimiter({ requestsPerMinute: 2 });
    const { call, finish, started } = trackedCalls(clock);

    void limiter.run(call("a"));
    await vi.advanceTimersByTimeAsync(30_000);
    void limiter.run(call("b"));
    await vi.advanceTimersByTimeAsync(1_000);
    void limiter.run(call("c")); // window holds a (0 s) and b (30 s): waits until 60 s
    void limiter.run(call("d")); // then waits for b to leave the window: 90 s
    finish("a");
    finish("b");
    expect(limiter.queued).toBe(2);

    await vi.advanceTimersByTimeAsync(RATE_WINDOW_MS - 31_000 - 1);
    expect(started.map((s) => s.name)).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(started.map((s) => s.name)).toEqual(["a", "b", "c"]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(started).toEqual([
      { name: "a", at: 0 },
      { name: "b", at: 30_000 },
      { name: "c", at: 60_000 },
      { name: "d", at: 90_000 },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never admits more than the limit per window under a burst", async () => {
    const start = Date.now();
    const clock = () => Date.now() - start;
    const limiter = createRateLimiter({ requestsPerMinute: 5, maxConcurrency: 3 });
    const started: number[] = [];
    // Each call takes 1 s.
    const call = () => {
      started.push(clock());
      return new Promise((resolve) => setTimeout(resolve, 1_000));
    };
    for (let i = 0; i < 12; i++) void limiter.run(call);
    await vi.advanceTimersByTimeAsync(3 * RATE_WINDOW_MS);
    for (const t of started) {
      const inWindow = started.filter((u) => u > t - RATE_WINDOW_MS && u <= t);
      expect(inWindow.length).toBeLessThanOrEqual(5);
    }
    // Concurrency admits 3, then 2 more as they finish; the window holds the rest for 60 s.
    const w = RATE_WINDOW_MS;
    expect(started).toEqual([0, 0, 0, 1e3, 1e3, w, w, w, w + 1e3, w + 1e3, 2 * w, 2 * w]);
  });

  it("lets a queued caller abort, without disturbing the others", async () => {
    const limiter = createRateLimiter({ maxConcurrency: 1 });
    const { call, finish, names } = trackedCalls(() => Date.now());
    const controller = new AbortController();
    const first = limiter.run(call("first"));
    const aborted = limiter.run(call("aborted"), controller.signal);
    const last = limiter.run(call("last"));
    expect(limiter.queued).toBe(2);

    const reason = new Error("user cancelled");
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(limiter.queued).toBe(1);

    finish("first");
    await vi.advanceTimersByTimeAsync(0);
    finish("last");
    await expect(Promise.all([first, last])).resolves.toEqual(["first", "last"]);
    expect(names()).toEqual(["first", "last"]);
  });

  it("clears its window timer when every waiter aborts", async () => {
    const limiter = createRateLimiter({ requestsPerMinute: 1 });
    await limiter.run(async () => "a");
    const controller = new AbortController();
    const waiting = limiter.run(async () => "b", controller.signal);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort(new Error("bye"));
    await expect(waiting).rejects.toThrow("bye");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects at once with an already aborted signal, limited or not", async () => {
    const controller = new AbortController();
    controller.abort(new Error("too late"));
    const fn = vi.fn(async () => 1);
    await expect(createRateLimiter().run(fn, controller.signal)).rejects.toThrow("too late");
    const limited = createRateLimiter({ maxConcurrency: 1 });
    await expect(limited.run(fn, controller.signal)).rejects.toThrow("too late");
    expect(fn).not.toHaveBeenCalled();
  });

  it("rejects invalid limits", () => {
    expect(() => createRateLimiter({ maxConcurrency: 0 })).toThrow();
    expect(() => createRateLimiter({ requestsPerMinute: 1.5 })).toThrow();
  });
});
