import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentFactory } from "../../src/agent/registry.js";
import { type EvalSettings, runEvaluation } from "../../src/eval/evaluation.js";
import { runMetrics } from "../../src/eval/report.js";
import { RunStore } from "../../src/store/run-store.js";
import { counterEnv, scriptedAgent } from "../fixtures/counter-env.js";

const settings = (over: Partial<EvalSettings> = {}): EvalSettings => ({
  runId: "run",
  tasks: [0, 1, 2, 3, 4],
  taskSpec: "0-4",
  samples: 3,
  maxTurns: 10,
  timeoutMs: 5_000,
  seed: 0,
  concurrency: 3,
  ...over,
});

const openStore = () => RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-eval-")), "c.db"));

describe("runEvaluation", () => {
  it("stores tasks × samples episodes and computes metrics with errors beside them", async () => {
    const store = openStore();
    // Sample 2 of every task errors; the others succeed.
    const agent: AgentFactory = {
      name: "flaky",
      create: (ctx) =>
        scriptedAgent(() => {
          if (ctx.sampleIndex === 2) throw new Error("provider 503");
          return "inc";
        }),
    };
    const result = await runEvaluation({ store, env: counterEnv, agent, settings: settings() });
    expect(result).toMatchObject({ resumed: false, skipped: 0, ran: 15, interrupted: false });
    const episodes = store.episodes("run");
    expect(episodes).toHaveLength(15);
    const metrics = runMetrics(episodes);
    expect(metrics.errors).toBe(5);
    expect(metrics.finished).toBe(10);
    expect(metrics.successRate).toBe(1);
    expect(store.getRun("run")?.status).toBe("complete");
  });

  it("resumes: keeps finished episodes, redoes errored ones, runs the missing ones", async () => {
    const store = openStore();
    let calls = 0;
    let failing = true;
    const agent: AgentFactory = {
      name: "a",
      create: (ctx) =>
        scriptedAgent(() => {
          calls++;
          if (failing && ctx.taskIndex === 1) throw new Error("transient");
          return "inc";
        }),
    };
    await runEvaluation({
      store,
      env: counterEnv,
      agent,
      settings: settings({ tasks: [0, 1], taskSpec: "0-1" }),
    });
    expect(store.episodes("run").filter((e) => e.outcome === "error")).toHaveLength(3);
    failing = false;
    calls = 0;
    const again = await runEvaluation({
      store,
      env: counterEnv,
      agent,
      settings: settings({ tasks: [0, 1], taskSpec: "0-1" }),
    });
    expect(again).toMatchObject({ resumed: true, skipped: 3, ran: 3 });
    // Task 1 needs 2 "inc" steps per episode, and only its 3 episodes ran again.
    expect(calls).toBe(6);
    const episodes = store.episodes("run");
    expect(episodes).toHaveLength(6);
    expect(episodes.every((e) => e.outcome === "success")).toBe(true);
  });

  it("marks a run interrupted when aborted, and a rerun completes it", async () => {
    const store = openStore();
    const controller = new AbortController();
    let stored = 0;
    const agent: AgentFactory = {
      name: "slow",
      create: () =>
        scriptedAgent(async () => {
          await new Promise((r) => setTimeout(r, 2));
          return "inc";
        }),
    };
    const first = await runEvaluation({
      store,
      env: counterEnv,
      agent,
      settings: settings({ concurrency: 2 }),
      onProgress: (p) => {
        if (p.last) stored++;
        if (stored === 4) controller.abort(new Error("SIGINT"));
      },
      signal: controller.signal,
    });
    expect(first.interrupted).toBe(true);
    expect(store.getRun("run")?.status).toBe("interrupted");
    const partial = store.episodes("run").length;
    expect(partial).toBeGreaterThanOrEqual(4);
    expect(partial).toBeLessThan(15);
    const second = await runEvaluation({ store, env: counterEnv, agent, settings: settings() });
    expect(second.skipped).toBe(partial);
    expect(store.episodes("run")).toHaveLength(15);
    expect(store.getRun("run")?.status).toBe("complete");
  });
});
