/**
 * Each episode keeps the instruction its agent saw (migration 5): one row per distinct text,
 * through the writer thread too, and never a reference to a row a failed commit took back.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EpisodeRecord } from "../../src/rollout/episode.js";
import { EpisodeWriter } from "../../src/store/episode-writer.js";
import { RunStore } from "../../src/store/run-store.js";

function record(taskIndex: number, instruction?: string): EpisodeRecord {
  return {
    taskIndex,
    sampleIndex: 0,
    seed: 0,
    outcome: "success",
    reward: 1,
    endReason: "done",
    ...(instruction !== undefined ? { instruction } : {}),
    initialObservation: { text: "start" },
    steps: [
      {
        turn: 0,
        action: "a",
        message: "a",
        observation: { text: "end" },
        reward: 1,
        done: true,
        elapsedMs: 1,
        info: {},
      },
    ],
    parseErrors: 0,
    startedAt: new Date().toISOString(),
    durationMs: 1,
  };
}

function openStore(): RunStore {
  const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-instr-")), "c.db"));
  store.startRun({ id: "r", env: "remote", envVersion: "unknown", agent: "react", config: {} });
  return store;
}

const idOf = (store: RunStore, task: number) =>
  store.episodes("r").find((e) => e.taskIndex === task)?.id as number;

describe("stored instructions", () => {
  it("keeps each episode's instruction, each distinct text once; none is null", () => {
    const store = openStore();
    store.saveEpisodes("r", [record(0, "Solve it."), record(1, "Solve it."), record(2, "")]);
    store.saveEpisodes("r", [record(3, "Solve it."), record(4)]);
    expect([0, 1, 2, 3, 4].map((task) => store.instruction(idOf(store, task)))).toEqual([
      "Solve it.",
      "Solve it.",
      "",
      "Solve it.",
      null,
    ]);
    expect(store.db.prepare("SELECT COUNT(*) AS n FROM instructions").get()).toEqual({ n: 2 });
    expect(store.finishedWithoutInstruction("r")).toBe(1);
    store.close();
  });

  it("does not point at a row that a failed commit rolled back", () => {
    const store = openStore();
    const broken = { ...record(0, "New words."), outcome: "bogus" } as unknown as EpisodeRecord;
    expect(() => store.saveEpisodes("r", [broken])).toThrow(/CHECK constraint/);
    expect(store.db.prepare("SELECT COUNT(*) AS n FROM instructions").get()).toEqual({ n: 0 });
    store.saveEpisodes("r", [record(1, "New words.")]);
    expect(store.instruction(idOf(store, 1))).toBe("New words.");
    store.close();
  });

  it("arrive through the writer thread", async () => {
    const store = openStore();
    const writer = new EpisodeWriter(store, "r", { thread: true });
    writer.write(record(0, "Through the thread."));
    writer.write(record(1, "Through the thread."));
    await writer.close();
    expect(store.instruction(idOf(store, 0))).toBe("Through the thread.");
    expect(store.instruction(idOf(store, 1))).toBe("Through the thread.");
    store.close();
  });
});
