/** OpenAI chat JSONL: turns with tool calls, what sits outside turns, and one-line errors. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { conversationSchema } from "../../../src/eval/goals/conversation.js";
import { parseChatJsonl, readChatFile } from "../../../src/eval/goals/import/index.js";
import { toChatMessages } from "../../../src/store/export.js";
import type { StoredEpisode } from "../../../src/store/run-store.js";
import { importError } from "../../fixtures/goals/expect-error.js";

const FIXTURE = "tests/fixtures/goals/chat.jsonl";
const line = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...extra, messages });
const user = (content: unknown) => ({ role: "user", content });
const assistant = (content: unknown) => ({ role: "assistant", content });

describe("chat JSONL import", () => {
  const conversations = readChatFile(FIXTURE);

  it("reads every line as a conversation, with its id, source, system prompt and metadata", () => {
    expect(conversations.map((c) => c.id)).toEqual(["c1", "c2", "line-4"]);
    const [c1] = conversations;
    expect(c1).toEqual({
      id: "c1",
      source: { format: "chat", file: FIXTURE, record: "line 1 (id c1)" },
      system: "You are the helpdesk of Acme.",
      turns: [
        { turn_number: 1, user: "How many leave days do I get?", assistant: "25 days a year." },
        {
          turn_number: 2,
          user: "Can I carry them over?",
          assistant: "Up to 5 days, into the next year.",
        },
      ],
      metadata: { channel: "web" },
    });
    for (const c of conversations) expect(conversationSchema.parse(c)).toEqual(c);
  });

  it("keeps tool calls and results in the turn, up to the assistant's next reply", () => {
    expect(conversations[1]?.turns).toEqual([
      {
        turn_number: 1,
        user: "Book leave for 3 March.",
        assistant: "Checking the calendar.\n\nDone: 3 March is booked.",
        tool_calls: [
          { id: "call_1", name: "get_balance", arguments: '{"user":"ann"}' },
          // An object is kept as JSON text, as OpenAI sends arguments.
          { id: "call_2", name: "book_leave", arguments: '{"date":"2025-03-03"}' },
        ],
        tool_results: [
          { tool_call_id: "call_1", content: '{"days": 12}' },
          { tool_call_id: "call_2", content: "booked" },
        ],
      },
      { turn_number: 2, user: "Thanks!", assistant: "You're welcome." },
    ]);
  });

  it("keeps a greeting before the first user message and an unanswered last message apart", () => {
    const c = conversations[2];
    expect(c).toMatchObject({
      id: "line-4",
      source: { record: "line 4" },
      system: "Be brief.",
      opening: "Hello, how can I help?",
      closing: "Bye.",
    });
    // Two user messages before any reply are one turn; a non-text part is named in brackets.
    expect(c?.turns).toEqual([
      {
        turn_number: 1,
        user: "My laptop is broken.\n\nThe screen is black.\n[image_url]",
        assistant: "I opened ticket IT-7 for you.",
      },
    ]);
    expect(c?.groundTruth).toBeUndefined();
  });

  it("reads clade's own chat export: instruction, observations and replies", () => {
    const episode = { taskIndex: 0, initialObservation: { text: "obs 0" } } as StoredEpisode;
    const step = (message: string, observation: string) => ({
      turn: 0,
      action: message,
      message,
      observation: { text: observation },
      reward: 0,
      done: false,
      elapsedMs: 1,
      info: {},
    });
    const exported = toChatMessages({
      env: "maze",
      instruction: "Solve the maze.",
      episode,
      steps: [step("up", "obs 1"), step("left", "obs 2")],
    });
    const [c] = parseChatJsonl(`${JSON.stringify(exported)}\n`, "maze.jsonl");
    expect(c).toMatchObject({
      id: "line-1",
      system: "Solve the maze.",
      turns: [
        { turn_number: 1, user: "obs 0", assistant: "up" },
        { turn_number: 2, user: "obs 1", assistant: "left" },
      ],
    });
    expect(c?.closing).toBeUndefined();
  });

  it("reads legacy function calls and takes numeric ids as text", () => {
    const text = line(
      [
        user("Weather?"),
        { role: "assistant", content: null, function_call: { name: "weather", arguments: "{}" } },
        { role: "function", name: "weather", content: "sunny" },
        assistant("Sunny."),
      ],
      { id: 42 },
    );
    expect(parseChatJsonl(text, "f.jsonl")[0]).toMatchObject({
      id: "42",
      source: { record: "line 1 (id 42)" },
      turns: [
        {
          user: "Weather?",
          assistant: "Sunny.",
          tool_calls: [{ name: "weather", arguments: "{}" }],
          tool_results: [{ name: "weather", content: "sunny" }],
        },
      ],
    });
  });

  it("imports nothing from a file with a line broken in the middle", () => {
    expect(importError(() => readChatFile("tests/fixtures/goals/chat-broken.jsonl"))).toMatch(
      /^tests\/fixtures\/goals\/chat-broken\.jsonl: line 2: not JSON: .+ \(column \d+\)$/,
    );
  });

  it.each([
    ["a line that is not JSON", '{"messages": [', /^c\.jsonl: line 1: not JSON: .+$/],
    ["a line that is not an object", "[1, 2]", "c.jsonl: line 1: expected object, got array"],
    ["no messages", '{"id": "a"}', "c.jsonl: line 1 (id a): messages: missing"],
    [
      "an unknown role",
      line([user("hi"), { role: "robot", content: "beep" }], { id: "a" }),
      "c.jsonl: line 1 (id a): messages.1.role: expected one of system, developer, user, assistant, tool, function",
    ],
    [
      "content of the wrong type",
      line([user(5)]),
      "c.jsonl: line 1: messages.0.content: expected a string, null or an array of content parts",
    ],
    [
      "a tool call without a name",
      line([
        user("hi"),
        { role: "assistant", tool_calls: [{ id: "x", function: { arguments: "{}" } }] },
      ]),
      "c.jsonl: line 1: messages.1.tool_calls.0.function.name: missing",
    ],
    [
      "tool calls on a user message",
      line([
        { role: "user", content: "hi", tool_calls: [{ function: { name: "f", arguments: "{}" } }] },
      ]),
      "c.jsonl: line 1: messages.0.tool_calls: only assistant messages carry tool_calls",
    ],
    [
      "an id of the wrong type",
      line([user("hi"), assistant("yo")], { id: true }),
      "c.jsonl: line 1: id: expected a string or a number",
    ],
    [
      "no message at all",
      line([], { id: "e" }),
      "c.jsonl: line 1 (id e): messages: no user message",
    ],
    [
      "only the assistant",
      line([{ role: "system", content: "s" }, assistant("Hello?")]),
      "c.jsonl: line 1: messages: no user message",
    ],
    [
      "a user message nobody answered",
      line([user("Anyone?")]),
      "c.jsonl: line 1: messages: no user message is answered by the assistant",
    ],
    [
      "a tool result before any user message",
      line([{ role: "system", content: "s" }, { role: "tool", content: "x" }, user("hi")]),
      "c.jsonl: line 1: messages.1: a tool result before the first user message",
    ],
  ])("rejects %s with one line", (_, text, expected) => {
    const message = importError(() => parseChatJsonl(text, "c.jsonl"));
    if (typeof expected === "string") expect(message).toBe(expected);
    else expect(message).toMatch(expected);
  });

  it("names the line of a bad record after good ones, blank lines counted", () => {
    const text = `${line([user("a"), assistant("b")])}\n\n${line([user("a"), { role: "assistant", content: {} }])}\n`;
    expect(importError(() => parseChatJsonl(text, "c.jsonl"))).toBe(
      "c.jsonl: line 3: messages.1.content: expected a string, null or an array of content parts",
    );
  });

  it("rejects a repeated id and an empty file", () => {
    const ok = line([user("a"), assistant("b")], { id: "a" });
    expect(importError(() => parseChatJsonl(`${ok}\n${ok}\n`, "c.jsonl"))).toBe(
      'c.jsonl: line 2 (id a): id: "a" repeats line 1 (id a)',
    );
    expect(importError(() => parseChatJsonl("\n  \n", "c.jsonl"))).toBe("c.jsonl: no lines");
  });

  it("reads a file saved with a byte-order mark", () => {
    const path = join(mkdtempSync(join(tmpdir(), "clade-chat-")), "bom.jsonl");
    writeFileSync(path, `\uFEFF${line([user("hi"), assistant("hello")])}\n`);
    expect(readChatFile(path)[0]?.turns).toEqual([
      { turn_number: 1, user: "hi", assistant: "hello" },
    ]);
  });

  it("names a file it cannot read", () => {
    expect(importError(() => readChatFile("tests/fixtures/goals/missing.jsonl"))).toBe(
      "cannot read tests/fixtures/goals/missing.jsonl: ENOENT",
    );
  });
});
