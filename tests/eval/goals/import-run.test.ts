/**
 * clade runs as conversations: observations as the user, actions as the assistant, tool steps
 * and turn labels from step info, the episode's outcome as ground truth otherwise.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findEnvInfo } from "../../../src/env/infos.js";
import { conversationSchema } from "../../../src/eval/goals/conversation.js";
import { importRun, RUN_STEP_INFO } from "../../../src/eval/goals/import/index.js";
import type { EpisodeRecord, StepRecord } from "../../../src/rollout/episode.js";
import { RunStore } from "../../../src/store/run-store.js";
import { importError } from "../../fixtures/goals/expect-error.js";

let path: string;
let store: RunStore;
beforeEach(() => {
  path = join(mkdtempSync(join(tmpdir(), "clade-goals-")), "c.db");
  store = RunStore.open(path);
  store.startRun({ id: "conv", env: "chatty", envVersion: "1.0.0", agent: "bot", config: {} });
});
afterEach(() => store.close());

function step(action: string, observation: string, info: Record<string, unknown> = {}): StepRecord {
  return {
    turn: 0,
    action,
    message: `Thought: answer.\nAction: ${action}`,
    observation: { text: observation },
    reward: 0,
    done: false,
    elapsedMs: 1,
    info,
  };
}

function episode(
  taskIndex: number,
  steps: StepRecord[],
  extra: Partial<EpisodeRecord> = {},
): EpisodeRecord {
  return {
    taskIndex,
    sampleIndex: 0,
    seed: 0,
    outcome: "success",
    reward: 1,
    endReason: "done",
    instruction: "You are the Acme helpdesk.",
    initialObservation: { text: "Hi, I need three days of leave." },
    steps,
    parseErrors: 0,
    startedAt: new Date().toISOString(),
    durationMs: 1,
    ...extra,
  };
}

const tool = (name: string) => ({ [RUN_STEP_INFO.toolResult]: true, tool: name });
const label = (is_new_goal: boolean, quality: string, rcof?: string | null) => ({
  [RUN_STEP_INFO.label]: { is_new_goal, quality, ...(rcof !== undefined ? { rcof } : {}) },
});
const episodeId = (task: number) => store.episodes("conv").find((e) => e.taskIndex === task)?.id;

describe("run import", () => {
  it("reads observations as the user, actions as the assistant, tool steps inside the turn", () => {
    store.saveEpisodes("conv", [
      episode(0, [
        step("From when?", "From 3 March."),
        step('book_leave {"days": 3}', "booked", tool("book_leave")),
        step("Booked: 3 to 5 March.", "Thanks, bye."),
      ]),
      episode(1, [step("Sorry, no.", "Never mind.")], { outcome: "failure", reward: 0 }),
    ]);
    const conversations = importRun(store, "conv");
    expect(conversations[0]).toEqual({
      id: "0/0",
      source: {
        format: "run",
        runId: "conv",
        record: `episode ${episodeId(0)} (task 0, sample 0)`,
      },
      system: "You are the Acme helpdesk.",
      turns: [
        { turn_number: 1, user: "Hi, I need three days of leave.", assistant: "From when?" },
        {
          turn_number: 2,
          user: "From 3 March.",
          assistant: "Booked: 3 to 5 March.",
          tool_calls: [{ name: "book_leave", arguments: 'book_leave {"days": 3}' }],
          tool_results: [{ name: "book_leave", content: "booked" }],
        },
      ],
      closing: "Thanks, bye.",
      groundTruth: { kind: "outcome", reward: 1, success: true },
      metadata: { env: "chatty", task: 0, sample: 0, seed: 0, end_reason: "done" },
    });
    expect(conversations[1]?.groundTruth).toEqual({ kind: "outcome", reward: 0, success: false });
    for (const c of conversations) expect(conversationSchema.parse(c)).toEqual(c);
  });

  it("takes the environment's turn labels as per-turn ground truth", () => {
    store.saveEpisodes("conv", [
      episode(
        0,
        [
          step("25 days.", "Can I book 3?", label(true, "success")),
          step("check", "12 left", { ...tool("balance"), ...label(false, "success") }),
          step("Sorry, I cannot.", "Weather?", label(false, "failure", "E2")),
          step("Sunny.", "ok", label(true, "failure", null)),
        ],
        { outcome: "failure", reward: 0 },
      ),
    ]);
    const [c] = importRun(store, "conv");
    expect(c?.turns.map((t) => t.assistant)).toEqual(["25 days.", "Sorry, I cannot.", "Sunny."]);
    expect(c?.groundTruth).toEqual({
      kind: "turns",
      labels: [
        { turn_number: 1, is_new_goal: true, quality: "success", rcof: null },
        // The turn's last labelled step counts: the reply, not the tool call before it.
        { turn_number: 2, is_new_goal: false, quality: "failure", rcof: "E2" },
        { turn_number: 3, is_new_goal: true, quality: "failure", rcof: null },
      ],
    });
  });

  it("takes the session's labels from the last step's info.groundTruth, extra keys passed by", () => {
    const turns = [
      { turn_number: 1, is_new_goal: true, quality: "success", rcof: null, goal_id: "g1" },
      { turn_number: 2, is_new_goal: true, quality: "failure", rcof: "E6", goal_id: "g2" },
    ];
    const truth = { session_id: "s1", goals: [], turns };
    const steps = (labels: unknown) => [
      step("25 days.", "Open a ticket."),
      step("Ask finance.", "Bye.", { [RUN_STEP_INFO.groundTruth]: labels }),
    ];
    store.saveEpisodes("conv", [episode(0, steps(truth))]);
    expect(importRun(store, "conv")[0]?.groundTruth).toEqual({
      kind: "turns",
      labels: [
        { turn_number: 1, is_new_goal: true, quality: "success", rcof: null },
        { turn_number: 2, is_new_goal: true, quality: "failure", rcof: "E6" },
      ],
    });
    const where = () => `run conv: episode ${episodeId(0)} (task 0, sample 0)`;
    store.saveEpisodes("conv", [episode(0, steps({ turns: turns.slice(0, 1) }))]);
    expect(importError(() => importRun(store, "conv"))).toBe(
      `${where()}: steps.1.info.groundTruth.turns: 1 labels for 2 turns`,
    );
    store.saveEpisodes("conv", [episode(0, steps({ turns: [turns[0], turns[0]] }))]);
    expect(importError(() => importRun(store, "conv"))).toBe(
      `${where()}: steps.1.info.groundTruth.turns.1.turn_number: expected 2`,
    );
    store.saveEpisodes("conv", [episode(0, steps({ turns: [{ ...turns[0], quality: 1 }] }))]);
    expect(importError(() => importRun(store, "conv"))).toBe(
      `${where()}: steps.1.info.groundTruth.turns.0.quality: expected one of success, failure`,
    );
  });

  it("leaves out errored, unrun episodes and tells of them once the import succeeded", () => {
    store.saveEpisodes("conv", [
      episode(0, [step("Hello.", "Bye.")]),
      episode(1, [], { outcome: "error", endReason: "agent_error", error: "Error: boom\n  at x" }),
    ]);
    store.markNotRun("conv", [{ taskIndex: 2, sampleIndex: 0, seed: 0 }]);
    const skipped: string[] = [];
    const conversations = importRun(store, "conv", {
      onSkip: (record, reason) => skipped.push(`${record}: ${reason}`),
    });
    expect(conversations.map((c) => c.id)).toEqual(["0/0"]);
    expect(skipped).toEqual([
      `episode ${episodeId(1)} (task 1, sample 0): errored: Error: boom at x`,
      `episode ${episodeId(2)} (task 2, sample 0): not_run`,
    ]);
  });

  it("reads a store by path, and uses the built-in env's instruction for older episodes", () => {
    store.startRun({ id: "old", env: "maze", envVersion: "1.0.0", agent: "random", config: {} });
    store.saveEpisodes("old", [episode(0, [step("up", "moved")], { instruction: undefined })]);
    store.close();
    const [c] = importRun(path, "old");
    expect(c?.system).toBe(findEnvInfo("maze")?.instruction);
    expect(importError(() => importRun(path, "nope"))).toBe(
      `no run "nope" in ${path} (see: clade runs)`,
    );
    store = RunStore.open(path);
  });

  it("rejects a run with no finished episode, one with no step, and bad labels", () => {
    expect(importError(() => importRun(store, "conv"))).toBe(
      "run conv: no finished episodes (success or failure)",
    );
    store.saveEpisodes("conv", [episode(0, [])]);
    expect(importError(() => importRun(store, "conv"))).toBe(
      `run conv: episode ${episodeId(0)} (task 0, sample 0): steps: no user message is answered by the assistant`,
    );
    store.saveEpisodes("conv", [
      episode(0, [step("a", "b", label(true, "success")), step("c", "d")]),
    ]);
    expect(importError(() => importRun(store, "conv"))).toBe(
      `run conv: episode ${episodeId(0)} (task 0, sample 0): turn 2: no info.goal_label (other turns are labelled)`,
    );
    store.saveEpisodes("conv", [episode(0, [step("a", "b", label(true, "fine"))])]);
    expect(importError(() => importRun(store, "conv"))).toBe(
      `run conv: episode ${episodeId(0)} (task 0, sample 0): steps.0.info.goal_label.quality: expected one of success, failure`,
    );
    store.saveEpisodes("conv", [episode(0, [step("a", "b", label(false, "success"))])]);
    expect(importError(() => importRun(store, "conv"))).toBe(
      `run conv: episode ${episodeId(0)} (task 0, sample 0): steps.0.info.goal_label.is_new_goal: the first turn always starts a goal`,
    );
  });
});
