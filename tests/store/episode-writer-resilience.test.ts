/**
 * Nothing an episode holds can take the episode writer down: an episode that cannot be encoded
 * (JSON.stringify throwing, as it does with a RangeError on strings past V8's limit) or committed
 * (a value SQLite refuses) is stored as an `error` without its steps and call bodies, so a resume
 * runs it again, and the other episodes of its batch are stored as they were. On the writer
 * thread (what `clade eval` uses) and in process.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelCallRecord } from "../../src/model/call-record.js";
import type { EpisodeRecord, StepRecord } from "../../src/rollout/episode.js";
import { EpisodeWriter } from "../../src/store/episode-writer.js";
import { RunStore } from "../../src/store/run-store.js";

const step = (turn: number, info: Record<string, unknown> = {}): StepRecord => ({
  turn,
  action: "move up",
  message: "Thought: up.\n\nAction: move up",
  observation: { text: `at ${turn}` },
  reward: turn === 1 ? 1 : 0,
  done: turn === 1,
  elapsedMs: 1,
  info,
});

const call = (request: ModelCallRecord["request"]): ModelCallRecord => ({
  turn: 0,
  model: "openai:m",
  request,
  response: {
    content: "Thought: up.\n\nAction: move up",
    toolCalls: [],
    usage: { inputTokens: 10, outputTokens: 5 },
    finishReason: "stop",
    model: "m",
  },
  usage: { inputTokens: 10, outputTokens: 5 },
  costUsd: 0.25,
  latencyMs: 12,
  cacheHit: false,
  attempts: 2,
  attemptErrors: ["HTTP 500 server error"],
  startedAt: "2026-01-01T00:00:00.000Z",
});

const episode = (taskIndex: number, over: Partial<EpisodeRecord> = {}): EpisodeRecord => ({
  taskIndex,
  sampleIndex: 0,
  seed: 0,
  outcome: "success",
  reward: 1,
  endReason: "done",
  initialObservation: { text: "start" },
  steps: [step(0), step(1)],
  calls: [call({ messages: [{ role: "user", content: "go" }] })],
  parseErrors: 0,
  startedAt: "2026-01-01T00:00:00.000Z",
  durationMs: 5,
  ...over,
});

/** A value whose JSON encoding throws as a string past V8's length limit does. */
const unencodable = {
  toJSON() {
    throw new RangeError("Invalid string length");
  },
};

const BAD: Record<string, () => EpisodeRecord> = {
  "a step that cannot be encoded": () =>
    episode(1, { steps: [step(0, { huge: unencodable }), step(1)] }),
  "a call request that cannot be encoded": () =>
    episode(1, {
      calls: [call({ messages: [{ role: "user", content: "go" }], tools: [unencodable as never] })],
    }),
  "a value SQLite refuses": () =>
    episode(1, {
      calls: [{ ...call({ messages: [] }), usage: { inputTokens: NaN, outputTokens: 5 } }],
    }),
};

describe.each([
  ["writer thread", true],
  ["in process", false],
])("episode writer (%s)", (_, thread) => {
  it.each(Object.keys(BAD))(
    "%s: that episode becomes an error, the batch is kept",
    async (name) => {
      const path = join(mkdtempSync(join(tmpdir(), "clade-resilient-")), "r.db");
      const store = RunStore.open(path);
      store.startRun({ id: "r", env: "maze", envVersion: "1", agent: "react", config: {} });
      const writer = new EpisodeWriter(store, "r", { thread, maxEpisodes: 3 });
      writer.write(episode(0));
      writer.write((BAD[name] as () => EpisodeRecord)());
      writer.write(episode(2));
      await writer.close();

      const stored = store.episodes("r");
      expect(stored.map((e) => [e.taskIndex, e.outcome])).toEqual([
        [0, "success"],
        [1, "error"],
        [2, "success"],
      ]);
      const [good, bad, other] = stored;
      expect(bad).toMatchObject({ endReason: "store_error", turns: 0, reward: 0 });
      expect(bad?.error).toMatch(/^the episode could not be stored \(\w+Error: .+\)/);
      expect(bad?.error).toMatch(/a resume runs it again/);
      expect(store.steps(bad?.id ?? -1)).toEqual([]);
      // Its calls keep their accounting (cost, tokens, failed attempts) without their bodies.
      const [bareCall] = store.calls(bad?.id ?? -1);
      expect(bareCall).toMatchObject({
        request: { messages: [] },
        costUsd: 0.25,
        attempts: 2,
        attemptErrors: ["HTTP 500 server error"],
      });
      expect(bareCall?.response).toBeUndefined();
      // The others are whole.
      for (const e of [good, other]) {
        expect(store.steps(e?.id ?? -1)).toHaveLength(2);
        expect(store.calls(e?.id ?? -1)[0]?.response?.content).toMatch(/Action: move up/);
      }
      // A resume redoes the errored one only.
      expect(store.finishedEpisodeKeys("r")).toEqual(new Set(["0:0", "2:0"]));
      store.close();
    },
  );
});
