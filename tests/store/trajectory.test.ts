import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EpisodeRecord, StepRecord } from "../../src/rollout/episode.js";
import { BatchPacker, unpackBatch } from "../../src/store/episode-batch.js";
import { EpisodeWriter } from "../../src/store/episode-writer.js";
import { encodeEpisode, RunStore } from "../../src/store/run-store.js";
import { decodeSteps, encodeSteps } from "../../src/store/trajectory-codec.js";

const step = (turn: number, over: Partial<StepRecord> = {}): StepRecord => ({
  turn,
  action: `act ${turn}`,
  message: `act ${turn}`,
  observation: { text: `obs "${turn}"\nline two ✓` },
  reward: 0,
  done: false,
  elapsedMs: 0.25,
  info: {},
  ...over,
});

const steps: StepRecord[] = [
  step(0, { observation: { text: "a", availableActions: ["x", "y"] } }),
  step(1, {
    observation: { text: "b", availableActions: ["x", "y"] },
    message: "Thought: hm\n\nAction: act 1",
  }),
  step(2, { observation: { text: "c" }, info: { invalid: true } }),
  step(3, { observation: { text: "d", availableActions: ["z"] }, reward: 0.5 }),
  step(4, { reward: 1, done: true }),
];

const record = (taskIndex: number, sampleIndex: number): EpisodeRecord => ({
  taskIndex,
  sampleIndex,
  seed: 0,
  outcome: "success",
  reward: 1,
  endReason: "done",
  initialObservation: { text: "start", availableActions: ["x", "y"] },
  steps,
  startedAt: "2026-01-01T00:00:00.000Z",
  durationMs: 5,
  parseErrors: 0,
});

describe("trajectory codec", () => {
  it("round-trips messages, rewards, info, done and changing action lists", () => {
    const initial = { text: "start", availableActions: ["x", "y"] };
    const json = encodeSteps(steps, initial);
    expect(decodeSteps(json, initial)).toEqual(steps);
    // Defaults are left out: the unchanged list and the plain message are not repeated.
    const stored = JSON.parse(json);
    expect(stored[0].availableActions).toBeUndefined();
    expect(stored[1].availableActions).toBeUndefined();
    expect(stored[2].availableActions).toEqual([]);
    expect(stored[0].message).toBeUndefined();
    expect(stored[1].message).toContain("Thought");
    expect(stored[4].done).toBe(true);
    expect(stored[0].done).toBeUndefined();
  });

  it("packs batches for the writer thread without losing anything", () => {
    const packer = new BatchPacker();
    packer.add(record(0, 0));
    packer.add({ ...record(1, 2), outcome: "error", error: "Error: boom", steps: [] });
    expect(packer.size).toBe(2);
    const unpacked = unpackBatch(structuredClone(packer.take()));
    expect(packer.size).toBe(0);
    expect(unpacked).toEqual([
      encodeEpisode(record(0, 0)),
      encodeEpisode({ ...record(1, 2), outcome: "error", error: "Error: boom", steps: [] }),
    ]);
  });
});

describe("EpisodeWriter", () => {
  for (const thread of [false, true]) {
    it(`commits every episode by close() (${thread ? "writer thread" : "in process"})`, async () => {
      const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-writer-")), "w.db"));
      store.startRun({ id: "r", env: "e", envVersion: "1", agent: "a", config: {} });
      const writer = new EpisodeWriter(store, "r", { thread, maxEpisodes: 7 });
      for (let t = 0; t < 20; t++) writer.write(record(t, 0));
      await writer.close();
      const episodes = store.episodes("r");
      expect(episodes).toHaveLength(20);
      expect(store.steps(episodes[5]?.id as number)).toEqual(steps);
      store.close();
    });
  }

  it("commits a partial batch after the delay without waiting for close()", async () => {
    const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-writer-")), "d.db"));
    store.startRun({ id: "r", env: "e", envVersion: "1", agent: "a", config: {} });
    const writer = new EpisodeWriter(store, "r", { maxEpisodes: 100, maxDelayMs: 10 });
    writer.write(record(0, 0));
    expect(store.episodes("r")).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 40));
    expect(store.episodes("r")).toHaveLength(1);
    await writer.close();
    store.close();
  });

  it("reports a failed commit instead of dropping it silently", async () => {
    const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-writer-")), "f.db"));
    // No run "missing" exists: the foreign key makes the commit fail.
    const writer = new EpisodeWriter(store, "missing", { thread: true, maxEpisodes: 1 });
    writer.write(record(0, 0));
    await expect(writer.close()).rejects.toThrow(/FOREIGN KEY/);
    store.close();
  });
});
