/** Progress everyone can see: lines on stderr without a terminal, the same fields on the bar. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import {
  barFields,
  createProgress,
  formatDuration,
  formatProgressLine,
  type ProgressSnapshot,
} from "../../src/cli/progress.js";
import type { EvalProgress } from "../../src/eval/evaluation.js";
import type { ModelCallRecord } from "../../src/model/call-record.js";
import type { EpisodeRecord, Outcome } from "../../src/rollout/episode.js";
import { runCli } from "../fixtures/cli.js";

function call(costUsd: number, inputTokens: number, outputTokens: number): ModelCallRecord {
  return {
    turn: 0,
    model: "openai:gpt-4o-mini",
    request: { messages: [] },
    usage: { inputTokens, outputTokens },
    costUsd,
    latencyMs: 1,
    cacheHit: false,
    attempts: 1,
    startedAt: "",
  };
}

function episode(outcome: Outcome, calls: ModelCallRecord[] = []): EpisodeRecord {
  return {
    taskIndex: 0,
    sampleIndex: 0,
    seed: 0,
    outcome,
    reward: outcome === "success" ? 1 : 0,
    endReason: outcome === "error" ? "agent_error" : "done",
    steps: [],
    ...(calls.length > 0 ? { calls } : {}),
    parseErrors: 0,
    startedAt: "",
    durationMs: 0,
  };
}

function capture(interactive = false): { io: CliIo; lines: () => string[] } {
  let text = "";
  return {
    io: {
      stdout: () => {},
      stderr: (t) => {
        text += t;
      },
      interactive,
    },
    lines: () => text.split("\n").filter(Boolean),
  };
}

describe("progress without a terminal", () => {
  let clock = 0;
  const now = () => clock;
  /** Moves the fake clock and the fake timers together. */
  const advance = (ms: number) => {
    clock += ms;
    vi.advanceTimersByTime(ms);
  };

  beforeEach(() => {
    clock = 0;
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("writes a line every interval while episodes finish, and one at the end", () => {
    const { io, lines } = capture();
    const progress = createProgress(io, "maze/react", true, { intervalMs: 5_000, now });
    const total = 100;
    let done = 0;
    const finish = (record: EpisodeRecord) => {
      done++;
      progress.update({ done, total, skipped: 0, last: record });
    };
    progress.update({ done, total, skipped: 0 });
    advance(1_000);
    finish(episode("success", [call(0.01, 1_000, 200), call(0.0023, 30_000, 10)]));
    finish(episode("failure", [call(0, 14_000, 0)]));
    expect(lines()).toEqual([]);
    advance(4_000);
    expect(lines()).toEqual([
      "progress maze/react: 2/100 episodes, 1 ok, 1 failed, 0 errors, $0.0123, 45,210 tokens, 5.0 s elapsed, ETA 4m 5s",
    ]);
    finish(episode("error"));
    advance(5_000);
    expect(lines()[1]).toBe(
      "progress maze/react: 3/100 episodes, 1 ok, 1 failed, 1 error, $0.0123, 45,210 tokens, 10.0 s elapsed, ETA 5m 23s",
    );
    progress.stop();
    progress.stop();
    expect(lines()).toHaveLength(3);
    // The last line has no ETA: the run is over, whatever is left.
    expect(lines()[2]).toBe(
      "progress maze/react: 3/100 episodes, 1 ok, 1 failed, 1 error, $0.0123, 45,210 tokens, 10.0 s elapsed",
    );
    advance(60_000);
    expect(lines()).toHaveLength(3);
  });

  it("while nothing finishes, says so only every sixth interval", () => {
    const { io, lines } = capture();
    const progress = createProgress(io, "todo/tools", true, { intervalMs: 1_000, now });
    progress.update({ done: 0, total: 4, skipped: 0 });
    advance(1_000);
    expect(lines()).toHaveLength(1); // the first tick reports the start
    advance(5_000);
    expect(lines()).toHaveLength(1);
    advance(1_000);
    expect(lines()).toEqual([
      "progress todo/tools: 0/4 episodes, 0 ok, 0 failed, 0 errors, 1.0 s elapsed",
      "progress todo/tools: 0/4 episodes, 0 ok, 0 failed, 0 errors, 7.0 s elapsed",
    ]);
    progress.stop();
  });

  it("counts a resume's stored episodes apart, and leaves cost out when no model was called", () => {
    const { io, lines } = capture();
    const progress = createProgress(io, "maze/reference", true, { now });
    progress.update({ done: 30, total: 40, skipped: 30 });
    advance(2_000);
    for (let done = 31; done <= 40; done++) {
      progress.update({ done, total: 40, skipped: 30, last: episode("success") });
    }
    progress.stop();
    expect(lines()).toEqual([
      "progress maze/reference: 40/40 episodes (30 already stored), 10 ok, 0 failed, 0 errors, 2.0 s elapsed",
    ]);
  });

  it("says when calls had no price: unpriced, never $0.0000; a priced part is summed", () => {
    const { io, lines } = capture();
    const progress = createProgress(io, "maze/react", true, { intervalMs: 10, now });
    const unpriced = { ...call(0, 10, 5), unpriced: true as const };
    progress.update({ done: 1, total: 2, skipped: 0, last: episode("failure", [unpriced]) });
    advance(1_000);
    progress.update({
      done: 2,
      total: 2,
      skipped: 0,
      last: episode("success", [call(0.001, 1, 1)]),
    });
    progress.stop();
    expect(lines()[0]).toContain(", unpriced, 15 tokens");
    expect(lines()[0]).not.toContain("$0.0000");
    expect(lines().at(-1)).toContain(", $0.0010 + unpriced, 17 tokens");
  });

  it("is silent when disabled (--quiet, --json)", () => {
    const { io, lines } = capture();
    const progress = createProgress(io, "maze/react", false, { intervalMs: 10, now });
    const update: EvalProgress = { done: 1, total: 2, skipped: 0, last: episode("success") };
    progress.update(update);
    advance(1_000);
    progress.stop();
    expect(lines()).toEqual([]);
  });
});

describe("progress formatting", () => {
  it("formats durations as the bar's ETA does", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(44_600)).toBe("45s");
    expect(formatDuration(80_000)).toBe("1m 20s");
    expect(formatDuration(2 * 3600_000 + 5 * 60_000)).toBe("2h 05m");
  });

  it("gives the bar the line's fields and a labelled ETA", () => {
    const snapshot: ProgressSnapshot = {
      done: 40,
      total: 100,
      skipped: 0,
      successes: 31,
      failures: 7,
      errors: 2,
      calls: 80,
      cost: { costUsd: 0.0123 },
      tokens: 45_210,
      elapsedMs: 12_300,
      etaMs: 80_000,
    };
    expect(formatProgressLine("maze/react", snapshot)).toBe(
      "progress maze/react: 40/100 episodes, 31 ok, 7 failed, 2 errors, $0.0123, 45,210 tokens, 12.3 s elapsed, ETA 1m 20s",
    );
    expect(barFields(snapshot)).toEqual({
      counts: "31 ok, 7 failed, 2 errors, $0.0123, 45,210 tokens",
      elapsed: "12s",
      eta: "ETA 1m 20s",
    });
    const { etaMs: _, ...started } = snapshot;
    expect(barFields(started).eta).toBe("ETA --");
  });

  it("on a terminal, draws the bar and stays off stderr's text stream", () => {
    const { io, lines } = capture(true);
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const progress = createProgress(io, "maze/react", true);
      progress.update({ done: 0, total: 2, skipped: 0 });
      progress.update({ done: 1, total: 2, skipped: 0, last: episode("success") });
      progress.stop();
    } finally {
      write.mockRestore();
    }
    expect(lines()).toEqual([]);
  });
});

describe("clade eval's progress line", () => {
  const db = () => join(mkdtempSync(join(tmpdir(), "clade-progress-")), "c.db");

  it("ends a run without a terminal with one line on stderr", async () => {
    const result = await runCli("eval", "--env", "maze", "--tasks", "0-2", "--db", db());
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^progress maze\/reference: 3\/3 episodes, 3 ok, 0 failed, 0 errors, \d+\.\d s elapsed\n$/,
    );
  });

  it("--quiet and --json silence it", async () => {
    for (const flag of ["--quiet", "--json"]) {
      const result = await runCli("eval", "--env", "maze", "--tasks", "0-1", "--db", db(), flag);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
    }
  });
});
