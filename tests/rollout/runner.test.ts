import { describe, expect, it } from "vitest";
import type { EpisodeContext } from "../../src/agent/types.js";
import type { EpisodeRecord } from "../../src/rollout/episode.js";
import { runEpisode } from "../../src/rollout/episode.js";
import { runEpisodes } from "../../src/rollout/runner.js";
import { CounterEnv, counterInfo, scriptedAgent } from "../fixtures/counter-env.js";

const context = (taskIndex: number, sampleIndex = 0): EpisodeContext => ({
  env: counterInfo,
  taskIndex,
  seed: 0,
  sampleIndex,
});
const limits = { maxTurns: 10, timeoutMs: 5_000 };

describe("runEpisode", () => {
  it("records every step and judges success on the final reward", async () => {
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: scriptedAgent(() => "inc"),
      context: context(2),
      limits,
    });
    expect(record.outcome).toBe("success");
    expect(record.endReason).toBe("done");
    expect(record.steps.map((s) => s.observation.text)).toEqual([
      "count 1 of 3",
      "count 2 of 3",
      "count 3 of 3",
    ]);
    expect(record.steps.map((s) => s.turn)).toEqual([0, 1, 2]);
    expect(record.initialObservation?.text).toBe("count 0 of 3");
    expect(record.reward).toBe(1);
  });

  it("ends at the turn limit as a failure, not an error", async () => {
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: scriptedAgent(() => "wait"),
      context: context(0),
      limits: { maxTurns: 4, timeoutMs: 5_000 },
    });
    expect(record.outcome).toBe("failure");
    expect(record.endReason).toBe("max_turns");
    expect(record.steps).toHaveLength(4);
  });

  it("turns an agent exception into an error outcome, keeping the steps so far", async () => {
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: scriptedAgent((turn) => {
        if (turn === 1) throw new Error("model unavailable");
        return "wait";
      }),
      context: context(4),
      limits,
    });
    expect(record.outcome).toBe("error");
    expect(record.endReason).toBe("agent_error");
    expect(record.error).toContain("model unavailable");
    expect(record.steps).toHaveLength(1);
  });

  it("turns an env exception into an error outcome", async () => {
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: scriptedAgent(() => "explode"),
      context: context(0),
      limits,
    });
    expect(record.outcome).toBe("error");
    expect(record.endReason).toBe("env_error");
  });

  it("times out a hanging agent as an error and aborts its signal", async () => {
    let aborted = false;
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: {
        act: (_state, signal) =>
          new Promise(() => {
            signal.addEventListener("abort", () => {
              aborted = true;
            });
          }),
      },
      context: context(0),
      limits: { maxTurns: 5, timeoutMs: 50 },
    });
    expect(record.outcome).toBe("error");
    expect(record.endReason).toBe("timeout");
    expect(aborted).toBe(true);
  });

  it("times out an agent that blocks the thread instead of waiting", async () => {
    const busyWait = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {}
    };
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: scriptedAgent(() => {
        busyWait(30);
        return "wait";
      }),
      context: context(0),
      limits: { maxTurns: 1000, timeoutMs: 100 },
    });
    expect(record.outcome).toBe("error");
    expect(record.endReason).toBe("timeout");
    expect(record.durationMs).toBeLessThan(400);
  });

  it("lets other episodes' deadlines fire while a busy agent runs", async () => {
    const hung = runEpisode({
      env: new CounterEnv(),
      agent: { act: () => new Promise(() => {}) },
      context: context(0),
      limits: { maxTurns: 5, timeoutMs: 50 },
    });
    const busy = runEpisode({
      env: new CounterEnv(),
      agent: scriptedAgent(() => "wait"),
      context: context(1),
      limits: { maxTurns: 5_000_000, timeoutMs: 1_500 },
    });
    const hungRecord = await hung;
    expect(hungRecord.endReason).toBe("timeout");
    expect(hungRecord.durationMs).toBeLessThan(500);
    await busy;
  });

  it("calls a reply without a string action an agent error", async () => {
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: { act: async () => ({ action: 42 as unknown as string }) },
      context: context(0),
      limits,
    });
    expect(record.outcome).toBe("error");
    expect(record.endReason).toBe("agent_error");
  });

  it("gives an error, not a failure, for an unknown task index", async () => {
    const record = await runEpisode({
      env: new CounterEnv(),
      agent: scriptedAgent(() => "inc"),
      context: context(999),
      limits,
    });
    expect(record.outcome).toBe("error");
    expect(record.error).toContain("UnknownTaskError");
  });
});

describe("runEpisodes", () => {
  it("runs every episode once with at most `concurrency` in flight", async () => {
    let inFlight = 0;
    let peak = 0;
    const envs: CounterEnv[] = [];
    const seen: EpisodeRecord[] = [];
    const episodes = [];
    for (let t = 0; t < 10; t++)
      for (let s = 0; s < 3; s++) episodes.push({ taskIndex: t, sampleIndex: s, seed: 0 });
    await runEpisodes({
      episodes,
      envInfo: counterInfo,
      createEnv: () => {
        const env = new CounterEnv();
        envs.push(env);
        return env;
      },
      createAgent: () =>
        scriptedAgent(async () => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          await new Promise((r) => setTimeout(r, 1));
          inFlight--;
          return "inc";
        }),
      limits,
      concurrency: 4,
      onEpisode: (record) => {
        seen.push(record);
      },
    });
    expect(seen).toHaveLength(30);
    expect(new Set(seen.map((r) => `${r.taskIndex}:${r.sampleIndex}`)).size).toBe(30);
    expect(seen.every((r) => r.outcome === "success")).toBe(true);
    expect(peak).toBe(4);
    // One env per worker, reused across episodes.
    expect(envs).toHaveLength(4);
    expect(envs.reduce((s, e) => s + e.resets, 0)).toBe(30);
  });

  it("stops on abort without recording the episodes in flight", async () => {
    const controller = new AbortController();
    const seen: EpisodeRecord[] = [];
    const episodes = Array.from({ length: 20 }, (_, t) => ({
      taskIndex: t % 10,
      sampleIndex: t,
      seed: 0,
    }));
    const run = runEpisodes({
      episodes,
      envInfo: counterInfo,
      createEnv: () => new CounterEnv(),
      createAgent: () =>
        scriptedAgent(async () => {
          await new Promise((r) => setTimeout(r, 5));
          return "inc";
        }),
      limits,
      concurrency: 2,
      onEpisode: (record) => {
        seen.push(record);
        if (seen.length === 3) controller.abort(new Error("stop"));
      },
      signal: controller.signal,
    });
    await expect(run).rejects.toThrow("stop");
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.length).toBeLessThan(20);
    expect(seen.every((r) => r.outcome === "success")).toBe(true);
  });

  it("rejects a non-positive concurrency", async () => {
    await expect(
      runEpisodes({
        episodes: [],
        envInfo: counterInfo,
        createEnv: () => new CounterEnv(),
        createAgent: () => scriptedAgent(() => "inc"),
        limits,
        concurrency: 0,
        onEpisode: () => {},
      }),
    ).rejects.toThrow(RangeError);
  });
});
