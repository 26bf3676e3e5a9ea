/** detectFormat: `--format` left out, decided by extension and content, or one clear line. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detectFormat, readConversations } from "../../../src/eval/goals/import/index.js";
import { importError } from "../../fixtures/goals/expect-error.js";

const fixture = (name: string) => readFileSync(`tests/fixtures/goals/${name}`, "utf8");
const chatLine = JSON.stringify({ messages: [{ role: "user", content: "hi" }] });

describe("format detection", () => {
  it("knows each fixture by its content, whatever its name", () => {
    expect(detectFormat("a.json", fixture("tau.json"))).toBe("tau");
    expect(detectFormat("a.txt", fixture("dialogues.json"))).toBe("dialogues");
    expect(detectFormat("a.txt", fixture("chat.jsonl"))).toBe("chat");
    expect(detectFormat("a.json", chatLine)).toBe("chat");
  });

  it("takes .jsonl as chat JSONL without reading further, so the parser names bad lines", () => {
    expect(detectFormat("logs/A.JSONL", "not json at all")).toBe("chat");
  });

  it.each([
    ["an empty file", "  \n", "it is empty"],
    [
      "a SQLite store",
      "SQLite format 3\u0000...",
      "a SQLite file: to read a clade run, give its run id with --format run",
    ],
    [
      "an array of something else",
      '[{"id": 1}]',
      "a JSON array whose first item is not a τ-bench result with task_id and traj",
    ],
    [
      "an empty array",
      "[]",
      "a JSON array whose first item is not a τ-bench result with task_id and traj",
    ],
    [
      "another JSON object",
      '{"rows": []}',
      "JSON, but neither a τ-bench array, an object with dialogues, nor chat lines",
    ],
    [
      "a chat object over several lines",
      JSON.stringify(JSON.parse(chatLine), null, 2),
      "JSON, but neither a τ-bench array, an object with dialogues, nor chat lines",
    ],
    ["text", "hello\nworld", "neither JSON nor JSON lines with messages"],
  ])("cannot tell %s, and says so in one line", (_, text, why) => {
    expect(importError(() => detectFormat("in.json", text))).toBe(
      `in.json: cannot tell its format (${why}); give --format chat, tau or dialogues`,
    );
  });

  it("reads a file in the format found, or the format given", () => {
    expect(readConversations("tests/fixtures/goals/tau.json").map((c) => c.id)).toEqual([
      "12#0",
      "3#0",
      "12#1",
    ]);
    expect(readConversations("tests/fixtures/goals/dialogues.json")).toHaveLength(2);
    expect(readConversations("tests/fixtures/goals/chat.jsonl", "chat")).toHaveLength(3);
    expect(importError(() => readConversations("tests/fixtures/goals/tau.json", "dialogues"))).toBe(
      "tests/fixtures/goals/tau.json: expected object, got array",
    );
  });
});
