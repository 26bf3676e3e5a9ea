/** Dialogue JSON, plain and labelled: turns as given, labels as per-turn ground truth. */
import { describe, expect, it } from "vitest";
import { conversationSchema } from "../../../src/eval/goals/conversation.js";
import { parseDialogues, readDialoguesFile } from "../../../src/eval/goals/import/index.js";
import { importError } from "../../fixtures/goals/expect-error.js";

const FIXTURE = "tests/fixtures/goals/dialogues.json";
const parse = (value: unknown) => parseDialogues(JSON.stringify(value), "d.json");
const turn = (user: string, system: string, labels: Record<string, unknown> = {}) => ({
  turn_id: `t-${user}`,
  user,
  system,
  ...labels,
});
const one = (...turns: unknown[]) => ({ dialogues: [{ dialogue_id: "d1", turns }] });

describe("dialogue JSON import", () => {
  const conversations = readDialoguesFile(FIXTURE);

  it("reads each dialogue's turns as they are, the system's replies as the assistant's", () => {
    expect(conversations.map((c) => [c.id, c.source.record])).toEqual([
      ["d1", "dialogue 0 (dialogue_id d1)"],
      ["7", "dialogue 1 (dialogue_id 7)"],
    ]);
    // A greeting before the user spoke stays turn 1, so labels keep their places.
    expect(conversations[1]).toEqual({
      id: "7",
      source: { format: "dialogues", file: FIXTURE, record: "dialogue 1 (dialogue_id 7)" },
      turns: [
        { turn_number: 1, user: "", assistant: "Hello! How can I help?" },
        { turn_number: 2, user: "Reset my password.", assistant: "Done." },
      ],
    });
    for (const c of conversations) expect(conversationSchema.parse(c)).toEqual(c);
  });

  it("takes labelled turns as per-turn ground truth, an absent rcof as null", () => {
    expect(conversations[0]?.turns.map((t) => t.assistant)).toEqual([
      "You get 25 days a year.",
      "Sorry, I cannot help with that.",
      "Ticket IT-42 is open.",
      "Sunny.",
    ]);
    expect(conversations[0]?.groundTruth).toEqual({
      kind: "turns",
      labels: [
        { turn_number: 1, is_new_goal: true, quality: "success", rcof: null },
        { turn_number: 2, is_new_goal: false, quality: "failure", rcof: "E2" },
        { turn_number: 3, is_new_goal: true, quality: "success", rcof: null },
        { turn_number: 4, is_new_goal: true, quality: "failure", rcof: null },
      ],
    });
  });

  const labelled = { is_new_goal: true, quality: "success" };
  it.each([
    ["a file that is an array", [], "d.json: expected object, got array"],
    ["no dialogues key", { conversations: [] }, "d.json: dialogues: missing"],
    ["no dialogues", { dialogues: [] }, "d.json: no dialogues"],
    [
      "a dialogue that is not an object",
      { dialogues: ["x"] },
      "d.json: dialogue 0: expected object, got string",
    ],
    [
      "a missing dialogue_id",
      { dialogues: [{ turns: [turn("a", "b")] }] },
      "d.json: dialogue 0: dialogue_id: expected a string or a number",
    ],
    [
      "a turn without system",
      one(turn("a", "b"), { turn_id: 2, user: "c" }),
      "d.json: dialogue 0 (dialogue_id d1): turns.1.system: missing",
    ],
    [
      "a user of the wrong type",
      one({ user: 3, system: "b" }),
      "d.json: dialogue 0 (dialogue_id d1): turns.0.user: expected string, got number",
    ],
    ["no turns", one(), "d.json: dialogue 0 (dialogue_id d1): turns: no user message"],
    [
      "no user text",
      one(turn("", "Hello?")),
      "d.json: dialogue 0 (dialogue_id d1): turns: no user message",
    ],
    [
      "a label left out of one turn",
      one(turn("a", "b", labelled), turn("c", "d", { is_new_goal: false })),
      "d.json: dialogue 0 (dialogue_id d1): turns.1.quality: missing (the dialogue's other turns are labelled)",
    ],
    [
      "a quality outside the two",
      one(turn("a", "b", { ...labelled, quality: "ok" })),
      "d.json: dialogue 0 (dialogue_id d1): turns.0.quality: expected one of success, failure",
    ],
    [
      "is_new_goal as text",
      one(turn("a", "b", { ...labelled, is_new_goal: "yes" })),
      "d.json: dialogue 0 (dialogue_id d1): turns.0.is_new_goal: expected boolean, got string",
    ],
    [
      "a first turn that starts no goal",
      one(turn("a", "b", { ...labelled, is_new_goal: false })),
      "d.json: dialogue 0 (dialogue_id d1): turns.0.is_new_goal: the first turn always starts a goal",
    ],
    [
      "a cause on a successful turn",
      one(turn("a", "b", { ...labelled, rcof: "E3" })),
      "d.json: dialogue 0 (dialogue_id d1): turns.0.rcof: a successful turn has no root cause (null or absent)",
    ],
    [
      "an empty cause",
      one(turn("a", "b", { is_new_goal: true, quality: "failure", rcof: "" })),
      "d.json: dialogue 0 (dialogue_id d1): turns.0.rcof: must not be empty",
    ],
  ])("rejects %s with one line", (_, value, expected) => {
    expect(importError(() => parse(value))).toBe(expected);
  });

  it("rejects a repeated dialogue_id, numbers and text alike, and text that is not JSON", () => {
    const dialogue = (dialogue_id: unknown) => ({ dialogue_id, turns: [turn("a", "b")] });
    expect(importError(() => parse({ dialogues: [dialogue(7), dialogue("7")] }))).toBe(
      'd.json: dialogue 1 (dialogue_id 7): dialogue_id: "7" repeats dialogue 0 (dialogue_id 7)',
    );
    expect(importError(() => parseDialogues('{"dialogues": [', "d.json"))).toMatch(
      /^d\.json: not JSON: /,
    );
  });
});
