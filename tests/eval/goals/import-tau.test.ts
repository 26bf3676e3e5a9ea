/**
 * τ-bench results files, in the shape tau_bench/run.py writes (EnvRunResult.model_dump()):
 * the tool-calling agent's and the ReAct agent's trajectories, errored runs, one-line errors.
 */
import { describe, expect, it } from "vitest";
import { conversationSchema, tauSuccess } from "../../../src/eval/goals/conversation.js";
import { parseTauResults, readTauFile } from "../../../src/eval/goals/import/index.js";
import { importError } from "../../fixtures/goals/expect-error.js";

const FIXTURE = "tests/fixtures/goals/tau.json";
const WIKI =
  "# Retail agent policy\n\nAs a retail agent, you can help users cancel or modify pending orders.";

const traj = (...more: unknown[]) => [
  { role: "system", content: "policy" },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello" },
  ...more,
];
const result = (task_id: unknown, extra: Record<string, unknown> = {}) => ({
  task_id,
  reward: 1.0,
  info: {},
  traj: traj(),
  trial: 0,
  ...extra,
});
const parse = (items: unknown) => parseTauResults(JSON.stringify(items, null, 2), "tau.json");

describe("τ-bench results import", () => {
  const skipped: string[] = [];
  const conversations = readTauFile(FIXTURE, {
    onSkip: (record, reason) => skipped.push(`${record}: ${reason}`),
  });

  it("reads each (task, trial) as a conversation with the policy as its system prompt", () => {
    expect(conversations.map((c) => c.id)).toEqual(["12#0", "3#0", "12#1"]);
    expect(conversations[0]).toMatchObject({
      source: { format: "tau", file: FIXTURE, record: "record 0 (task_id 12)" },
      system: WIKI,
      metadata: { task_id: 12, trial: 0, info: { source: "user" } },
    });
    for (const c of conversations) expect(conversationSchema.parse(c)).toEqual(c);
  });

  it("groups tool calls into the turn and keeps the user's ###STOP### message as the closing", () => {
    expect(conversations[0]?.turns).toEqual([
      {
        turn_number: 1,
        user: "Hi, I forgot my user id. My email is yusuf@example.com.",
        assistant: "Your user id is yusuf_rossi_9620.",
        tool_calls: [
          {
            id: "call_a1",
            name: "find_user_id_by_email",
            arguments: '{"email":"yusuf@example.com"}',
          },
        ],
        tool_results: [
          { tool_call_id: "call_a1", name: "find_user_id_by_email", content: "yusuf_rossi_9620" },
        ],
      },
    ]);
    expect(conversations[0]?.closing).toBe("Great, thank you! ###STOP###");
  });

  it("ends a conversation a tool ended (a transfer to a human) with that tool-only turn", () => {
    const c = conversations[1];
    expect(c?.turns.map((t) => [t.user, t.assistant, t.tool_calls?.map((x) => x.name)])).toEqual([
      [
        "I want my money back in cash.",
        "I can only refund to the original payment method.",
        undefined,
      ],
      ["Then get me a human.", "", ["transfer_to_human_agents"]],
    ]);
    expect(c?.closing).toBeUndefined();
  });

  it("reads the ReAct agent's Action JSON and API outputs as tool calls and results", () => {
    expect(conversations[2]?.turns).toEqual([
      {
        turn_number: 1,
        user: "Hi, I forgot my user id. My email is yusuf@example.com.",
        assistant: "I could not find you.",
        tool_calls: [{ name: "find_user_id_by_email", arguments: '{"email":"yusuf@example.com"}' }],
        tool_results: [{ name: "find_user_id_by_email", content: "Error: user not found" }],
      },
    ]);
    expect(conversations[2]?.closing).toBe("Oh well. ###STOP###");
  });

  it("takes the reward as one goal per conversation, succeeded as τ-bench counts success", () => {
    expect(conversations.map((c) => c.groundTruth)).toEqual([
      { kind: "outcome", reward: 1, success: true },
      { kind: "outcome", reward: 0, success: false },
      { kind: "outcome", reward: 0, success: false },
    ]);
    expect([1, 1 - 1e-7, 1 + 1e-7, 0.999, 0.5, 0].map(tauSuccess)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it("leaves out runs τ-bench recorded as errors, and says so once the import succeeded", () => {
    expect(skipped).toEqual([
      "record 2 (task_id 5): τ-bench recorded an error: litellm.RateLimitError: too many requests",
    ]);
    const told: string[] = [];
    const errored = { task_id: 1, reward: 0, info: { error: "boom" }, traj: [], trial: 0 };
    const text = JSON.stringify([errored, { ...result(2), reward: "1" }]);
    importError(() => parseTauResults(text, "tau.json", { onSkip: (r) => told.push(r) }));
    expect(told).toEqual([]);
    expect(importError(() => parse([errored]))).toBe(
      "tau.json: every record is an errored run (empty traj)",
    );
  });

  it("gives the record, its task_id and the field for a bad message", () => {
    const items = [
      result(1),
      result(2),
      result(5),
      result(12, { traj: traj({ role: "user", content: "x" }, { role: "robot", content: "x" }) }),
    ];
    expect(importError(() => parse(items))).toBe(
      "tau.json: record 3 (task_id 12): traj.4.role: expected one of system, user, assistant, tool",
    );
  });

  it.each([
    [
      "a missing reward",
      { task_id: 4, info: {}, traj: traj(), trial: 0 },
      "tau.json: record 0 (task_id 4): reward: missing",
    ],
    [
      "a reward as text",
      result(4, { reward: "1.0" }),
      "tau.json: record 0 (task_id 4): reward: expected number, got string",
    ],
    [
      "a missing trial",
      { task_id: 4, reward: 0, info: {}, traj: traj() },
      "tau.json: record 0 (task_id 4): trial: missing",
    ],
    [
      "info that is not an object",
      result(4, { info: [] }),
      "tau.json: record 0 (task_id 4): info: expected object, got array",
    ],
    [
      "no task_id",
      { reward: 0, info: {}, traj: traj(), trial: 0 },
      "tau.json: record 0: task_id: expected an integer or a string",
    ],
    ["a record that is not an object", null, "tau.json: record 0: expected object, got null"],
    [
      "tool call arguments of the wrong type",
      result(4, {
        traj: traj({
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", function: { name: "f", arguments: 3 } }],
        }),
      }),
      "tau.json: record 0 (task_id 4): traj.3.tool_calls.0.function.arguments: expected a JSON string or an object",
    ],
    [
      "an empty traj without an error",
      result(4, { traj: [] }),
      "tau.json: record 0 (task_id 4): traj: no user message",
    ],
    [
      "a traj with the system message alone",
      result(4, { traj: [{ role: "system", content: "policy" }] }),
      "tau.json: record 0 (task_id 4): traj: no user message",
    ],
  ])("rejects %s with one line", (_, item, expected) => {
    expect(importError(() => parse([item]))).toBe(expected);
  });

  it("rejects a file that is not an array of results, or not JSON", () => {
    expect(importError(() => parse({ results: [] }))).toBe(
      "tau.json: a τ-bench results file is one JSON array of {task_id, reward, info, traj, trial}",
    );
    expect(importError(() => parse([]))).toBe("tau.json: no records");
    const text = JSON.stringify([result(1)], null, 2);
    expect(importError(() => parseTauResults(text.slice(0, 60), "tau.json"))).toMatch(
      /^tau\.json: not JSON: .+$/,
    );
    expect(importError(() => parseTauResults('[\n  {"task_id": 1,}\n]', "tau.json"))).toMatch(
      /^tau\.json: not JSON: .+ \(line 2, column 17\)$/,
    );
  });

  it("rejects the same task and trial twice", () => {
    expect(importError(() => parse([result(1), result(1)]))).toBe(
      'tau.json: record 1 (task_id 1): task_id, trial: "1#0" repeats record 0 (task_id 1)',
    );
    expect(parse([result(1), result(1, { trial: 1 })]).map((c) => c.id)).toEqual(["1#0", "1#1"]);
  });
});
