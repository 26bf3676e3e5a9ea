import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLlmAgent } from "../../src/agent/llm.js";
import type { AgentFactory } from "../../src/agent/registry.js";
import { findEnv } from "../../src/env/registry.js";
import {
  DEFAULT_FAIL_FAST_ERRORS,
  ErrorStreak,
  type EvalSettings,
  FAIL_FAST_STOP,
  normaliseError,
  runEvaluation,
} from "../../src/eval/evaluation.js";
import type { EpisodeRecord } from "../../src/rollout/episode.js";
import { RunStore } from "../../src/store/run-store.js";
import { counterEnv, scriptedAgent } from "../fixtures/counter-env.js";

const settings = (over: Partial<EvalSettings> = {}): EvalSettings => ({
  runId: "run",
  tasks: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  taskSpec: "0-9",
  samples: 2,
  maxTurns: 10,
  timeoutMs: 5_000,
  seed: 0,
  concurrency: 1,
  ...over,
});

const openStore = () => RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-ff-")), "c.db"));

/** Fails like a dead local server: the port and the timing differ from episode to episode. */
function deadServerAgent(): AgentFactory {
  let n = 0;
  return {
    name: "dead",
    create: () =>
      scriptedAgent(() => {
        n++;
        throw new Error(
          `connection refused at http://127.0.0.1:${40000 + n}/v1 after ${n * 13} ms (request req_${n}a8f3c9d2e1)`,
        );
      }),
  };
}

const outcomes = (store: RunStore) => {
  const counts: Record<string, number> = {};
  for (const e of store.episodes("run")) counts[e.outcome] = (counts[e.outcome] ?? 0) + 1;
  return counts;
};

describe("normaliseError", () => {
  it("sets aside ports, addresses, timings, counts and ids", () => {
    const a = normaliseError(
      "ModelError: connection refused: no server is running at http://127.0.0.1:43047/v1 (gave up after 5 attempts) id 3f2b8c1e-9d4a-4b7e-8f00-123456789abc",
    );
    const b = normaliseError(
      "ModelError: connection refused: no server is running at http://127.0.0.1:39207/v1 (gave up after 2 attempts) id 0a1b2c3d-0000-4b7e-8f00-fedcba987654",
    );
    expect(a).toBe(b);
    expect(a).toContain("connection refused: no server is running at http://#.#.#.#:#/v#");
    expect(normaliseError("HTTP 429 rate limited (request req_abc123def456)")).toBe(
      normaliseError("HTTP 429 rate limited (request req_zz9876543yx)"),
    );
    expect(normaliseError("HTTP 401 authentication failed")).not.toBe(
      normaliseError("HTTP 404 not found"),
    );
  });

  it("ErrorStreak counts errors of one cause in a row; anything else starts over", () => {
    const streak = new ErrorStreak();
    const record = (outcome: EpisodeRecord["outcome"], error?: string): EpisodeRecord => ({
      taskIndex: 0,
      sampleIndex: 0,
      seed: 0,
      outcome,
      reward: 0,
      endReason: outcome === "error" ? "agent_error" : "done",
      ...(error ? { error } : {}),
      steps: [],
      parseErrors: 0,
      startedAt: "",
      durationMs: 0,
    });
    expect(streak.observe(record("error", "port 1 refused"))).toBe(1);
    expect(streak.observe(record("error", "port 2 refused"))).toBe(2);
    expect(streak.error).toBe("port 2 refused");
    expect(streak.observe(record("error", "HTTP 500"))).toBe(1);
    expect(streak.observe(record("success"))).toBe(0);
    expect(streak.observe(record("error", "HTTP 500"))).toBe(1);
  });
});

describe("runEvaluation fail-fast", () => {
  it("stops after N episodes fail the same way: the rest stay unrun and a rerun resumes", async () => {
    const store = openStore();
    const result = await runEvaluation({
      store,
      env: counterEnv,
      agent: deadServerAgent(),
      settings: settings(),
      failFast: { consecutiveErrors: DEFAULT_FAIL_FAST_ERRORS },
    });
    expect(result).toMatchObject({
      ran: 5,
      interrupted: true,
      notRun: 15,
      stopReason: FAIL_FAST_STOP,
      failFast: { episodes: 5 },
    });
    expect(result.failFast?.error).toMatch(/^Error: connection refused at http:\/\/127\.0\.0\.1:/);
    expect(outcomes(store)).toEqual({ error: 5, not_run: 15 });
    expect(store.getRun("run")).toMatchObject({ status: "interrupted", stopReason: "fail-fast" });

    // Fixed: the same run again runs everything, errored and unrun episodes alike.
    const again = await runEvaluation({
      store,
      env: counterEnv,
      agent: { name: "dead", create: () => scriptedAgent(() => "inc") },
      settings: settings(),
      failFast: { consecutiveErrors: 5 },
    });
    expect(again).toMatchObject({ resumed: true, skipped: 0, ran: 20, notRun: 0 });
    expect(again.stopReason).toBeUndefined();
    expect(outcomes(store)).toEqual({ success: 20 });
    expect(store.getRun("run")?.status).toBe("complete");
  });

  it("lets episodes in flight finish and counts those that failed the same way", async () => {
    const store = openStore();
    const result = await runEvaluation({
      store,
      env: counterEnv,
      agent: deadServerAgent(),
      settings: settings({ concurrency: 4 }),
      failFast: { consecutiveErrors: 3 },
    });
    expect(result.stopReason).toBe(FAIL_FAST_STOP);
    // The third error stops new episodes; at most the three others in flight finish after it.
    expect(result.ran).toBeGreaterThanOrEqual(3);
    expect(result.ran).toBeLessThanOrEqual(6);
    expect(result.failFast?.episodes).toBe(result.ran);
    expect(result.notRun).toBe(20 - result.ran);
    expect(outcomes(store)).toEqual({ error: result.ran, not_run: 20 - result.ran });
  });

  it("does not stop on errors broken up by a finished episode or of different causes", async () => {
    const store = openStore();
    let n = 0;
    const agent: AgentFactory = {
      name: "mixed",
      create: (ctx) =>
        scriptedAgent(() => {
          n++;
          // Every third episode succeeds; the errors alternate between two causes.
          if (ctx.taskIndex % 3 === 2) return "inc";
          throw new Error(n % 2 ? "HTTP 500 server error" : "HTTP 401 authentication failed");
        }),
    };
    const result = await runEvaluation({
      store,
      env: counterEnv,
      agent,
      settings: settings({ samples: 1 }),
      failFast: { consecutiveErrors: 2 },
    });
    expect(result.stopReason).toBeUndefined();
    expect(result.ran).toBe(10);
    expect(store.getRun("run")?.status).toBe("complete");
  });

  it("is off when disabled (false or 0), and off by default in the full form", async () => {
    for (const failFast of [false, { consecutiveErrors: 0 }, undefined] as const) {
      const store = openStore();
      const result = await runEvaluation({
        store,
        env: counterEnv,
        agent: deadServerAgent(),
        settings: settings({ samples: 1 }),
        ...(failFast === undefined ? {} : { failFast }),
      });
      expect(result).toMatchObject({ ran: 10, interrupted: false, notRun: 0 });
      expect(outcomes(store)).toEqual({ error: 10 });
    }
  });

  it("stops nothing when the streak ends with the run: the run is complete", async () => {
    const store = openStore();
    const result = await runEvaluation({
      store,
      env: counterEnv,
      agent: deadServerAgent(),
      settings: settings({ tasks: [0, 1, 2], taskSpec: "0-2", samples: 1 }),
      failFast: { consecutiveErrors: 3 },
    });
    expect(result).toMatchObject({ ran: 3, interrupted: false, notRun: 0 });
    expect(result.stopReason).toBeUndefined();
    expect(result.failFast).toBeUndefined();
    expect(store.getRun("run")?.status).toBe("complete");
  });

  it("the budget stop and fail-fast share the stop: whichever comes first names it", async () => {
    const store = openStore();
    const budget = new AbortController();
    budget.abort("budget");
    const result = await runEvaluation({
      store,
      env: counterEnv,
      agent: deadServerAgent(),
      settings: settings(),
      stop: budget.signal,
      failFast: { consecutiveErrors: 1 },
    });
    expect(result).toMatchObject({ ran: 0, notRun: 20, stopReason: "budget" });
    expect(result.failFast).toBeUndefined();
  });

  it("refuses a bad threshold", async () => {
    await expect(
      runEvaluation({
        store: openStore(),
        env: counterEnv,
        agent: deadServerAgent(),
        settings: settings(),
        failFast: { consecutiveErrors: -1 },
      }),
    ).rejects.toThrow(/consecutiveErrors/);
  });

  it("a dead model server (connection refused) stops the short form after 5 episodes", async () => {
    // A port nothing listens on.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const agent = await createLlmAgent({
      model: "fake-model",
      baseUrl: `http://127.0.0.1:${port}/v1`,
      config: {},
      // The default policy retries a refused connection 4 times (about 4 s); kept short here.
      retry: { baseDelayMs: 1, maxDelayMs: 1 },
    });
    const started = performance.now();
    const result = await runEvaluation({
      env: findEnv("maze"),
      tasks: "0-19",
      agent,
      concurrency: 2,
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(result.stopReason).toBe(FAIL_FAST_STOP);
    expect(result.ran).toBeGreaterThanOrEqual(5);
    expect(result.ran).toBeLessThanOrEqual(6);
    expect(result.notRun).toBe(20 - result.ran);
    expect(result.failFast?.error).toContain(
      `connection refused: no server is running at http://127.0.0.1:${port}/v1`,
    );
    expect(result.episodes.filter((e) => e.outcome === "not_run")).toHaveLength(result.notRun);
  });
});
