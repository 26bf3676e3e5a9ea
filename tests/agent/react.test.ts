import { describe, expect, it } from "vitest";
import {
  ACKNOWLEDGEMENT,
  NO_ACTION,
  omittedTurnsNote,
  parseReactAction,
} from "../../src/agent/prompting.js";
import { createReactAgent, DEFAULT_REACT_SYSTEM_PROMPT } from "../../src/agent/react.js";
import { solveMaze } from "../../src/agent/reference/maze.js";
import type { Agent, AgentState, EpisodeContext, Turn } from "../../src/agent/types.js";
import { findEnv } from "../../src/env/registry.js";
import type { EnvInfo, Observation } from "../../src/env/types.js";
import { ModelError } from "../../src/model/types.js";
import { runEpisode } from "../../src/rollout/episode.js";
import { ScriptedModel } from "../../src/testing/scripted-model.js";

const INFO: EnvInfo = {
  name: "toy",
  version: "1",
  description: "toy",
  instruction: "Do the thing.",
  splits: { train: { start: 0, end: 1 }, test: { start: 1, end: 2 } },
  successThreshold: 1,
  maxSteps: 10,
};

function context(sampleIndex = 0): EpisodeContext {
  return { env: INFO, taskIndex: 1, seed: 0, sampleIndex };
}

const signal = new AbortController().signal;

function obs(text: string, availableActions?: string[]): Observation {
  return availableActions ? { text, availableActions } : { text };
}

function turn(message: string, action: string, observationText: string): Turn {
  return { action, message, observation: obs(observationText), reward: 0 };
}

/** Plays turns through one agent, as the runner does, with a given list of observations. */
async function play(agent: Agent, observations: string[], actions: string[]): Promise<void> {
  const history: Turn[] = [];
  for (let i = 0; i < actions.length; i++) {
    const state: AgentState = {
      instruction: INFO.instruction,
      observation: obs(observations[i] as string),
      history: [...history],
    };
    const reply = await agent.act(state, signal);
    expect(reply.action).toBe(actions[i]);
    history.push(turn(reply.message ?? reply.action, reply.action, observations[i + 1] as string));
  }
}

describe("parseReactAction", () => {
  const cases: Array<[string, string, string]> = [
    ["action on the next line", "Thought:\nGo up.\n\nAction:\nmove up", "move up"],
    ["action on the same line", "Thought: go.\n\nAction: move up", "move up"],
    ["the last of several", "Action: move up\nThought: no.\nAction: move down", "move down"],
    ["markdown bold header", "**Thought:** hm\n\n**Action:** move left", "move left"],
    ["bold around the word only", "**Action**:\nmove left", "move left"],
    ["heading with colon", "## Action:\nmove right", "move right"],
    ["backticks", "Action: `move up`", "move up"],
    ["quotes", 'Action:\n"move up"', "move up"],
    ["code fence", "Action:\n```\nmove up\n```", "move up"],
    ["code fence with language", "Action:\n```text\nmove up\n```\nDone.", "move up"],
    ["one-line code fence", "Action: ```move up```\nObservation: x", "move up"],
    ["fence with a blank line inside", "Action:\n```\n{\n\n}\n```", "{\n\n}"],
    ["lowercase header", "action: move up", "move up"],
    ["CRLF line ends", "Thought:\r\nx\r\n\r\nAction:\r\nmove up\r\n", "move up"],
    ["stops at a hallucinated observation", "Action: move up\nObservation: you moved", "move up"],
    ["stops at a blank line", "Action:\nmove up\n\nThat should work.", "move up"],
    [
      "keeps a multi-line JSON action",
      'Action:\nadd_task with Action Input: {\n  "title": "x"\n}',
      'add_task with Action Input: {\n  "title": "x"\n}',
    ],
    [
      "does not take Action Input as a header",
      'Action: add_task with Action Input: {"a": 1}',
      'add_task with Action Input: {"a": 1}',
    ],
    ["inner quotes are kept", 'Action: say "hi" to "bob"', 'say "hi" to "bob"'],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => expect(parseReactAction(text)).toEqual({ ok: true, action: expected }));
  }

  it("rejects a missing Action section", () => {
    expect(parseReactAction("Thought: I will move up.")).toEqual({
      ok: false,
      error: 'the reply has no "Action:" section',
    });
  });

  it("rejects an empty Action section, even when an earlier one had text", () => {
    const expected = { ok: false, error: 'the "Action:" section is empty' };
    expect(parseReactAction("Thought: x\n\nAction:\n")).toEqual(expected);
    expect(parseReactAction("Action: move up\nAction: ``")).toEqual(expected);
  });

  it("rejects an empty reply", () => {
    expect(parseReactAction("  \n")).toEqual({ ok: false, error: "the reply was empty" });
  });

  it("accepts a bare reply only when it is an available action", () => {
    const actions = ["move up", "move down"];
    expect(parseReactAction("Move Up", actions)).toEqual({ ok: true, action: "move up" });
    expect(parseReactAction("`move down`", actions)).toEqual({ ok: true, action: "move down" });
    expect(parseReactAction("move up", undefined).ok).toBe(false);
    expect(parseReactAction("fly away", actions).ok).toBe(false);
  });
});

describe("ReAct agent messages", () => {
  it("opens with system prompt, instruction, OK. and the observation with actions", async () => {
    const model = new ScriptedModel(["Thought:\nUp.\n\nAction:\nmove up"]);
    const params = { temperature: 0.7, maxTokens: 64, seed: 5, stop: ["\nObservation:"] };
    const agent = createReactAgent(model, { params })(context(4));
    const reply = await agent.act(
      {
        instruction: "Do the thing.",
        observation: obs("Start.", ["move up", "move down"]),
        history: [],
      },
      signal,
    );
    expect(reply).toEqual({
      action: "move up",
      message: "Thought:\nUp.\n\nAction:\nmove up",
      parseErrors: 0,
    });
    expect(model.requests).toEqual([
      {
        messages: [
          { role: "system", content: DEFAULT_REACT_SYSTEM_PROMPT },
          { role: "user", content: "Do the thing." },
          { role: "assistant", content: ACKNOWLEDGEMENT },
          { role: "user", content: "Start.\n\nAvailable actions:\n- move up\n- move down" },
        ],
        params,
        sampleIndex: 4,
      },
    ]);
    model.assertDone();
  });

  it("uses a custom system prompt, or none, and can hide available actions", async () => {
    const model = new ScriptedModel(["Action: a", "Action: a"]);
    const state = { instruction: "I", observation: obs("O", ["a"]), history: [] };
    await createReactAgent(model, { systemPrompt: "Be brief." })(context()).act(state, signal);
    await createReactAgent(model, { systemPrompt: null, showAvailableActions: false })(
      context(),
    ).act(state, signal);
    expect(model.requests[0]?.messages[0]).toEqual({ role: "system", content: "Be brief." });
    expect(model.requests[1]?.messages).toEqual([
      { role: "user", content: "I" },
      { role: "assistant", content: "OK." },
      { role: "user", content: "O" },
    ]);
    expect(model.requests[1]).not.toHaveProperty("params");
  });

  it("replays past turns as assistant replies and user observations", async () => {
    const model = new ScriptedModel(["Action: a", "Thought: t\nAction: b", "Action: c"]);
    const agent = createReactAgent(model, { systemPrompt: null })(context());
    await play(agent, ["o0", "o1", "o2", "o3"], ["a", "b", "c"]);
    expect(model.requests[2]?.messages).toEqual([
      { role: "user", content: "Do the thing." },
      { role: "assistant", content: "OK." },
      { role: "user", content: "o0" },
      { role: "assistant", content: "Action: a" },
      { role: "user", content: "o1" },
      { role: "assistant", content: "Thought: t\nAction: b" },
      { role: "user", content: "o2" },
    ]);
  });

  it("keeps the instruction, the first observation and the last N turns", async () => {
    const replies = ["Action: a", "Action: b", "Action: c", "Action: d"];
    const model = new ScriptedModel(replies);
    const agent = createReactAgent(model, { systemPrompt: null, historyWindow: 1 })(context());
    await play(agent, ["o0", "o1", "o2", "o3", "o4"], ["a", "b", "c", "d"]);
    // Turn 2 (two past turns): one dropped, its observation merged into the opening message.
    expect(model.requests[2]?.messages).toEqual([
      { role: "user", content: "Do the thing." },
      { role: "assistant", content: "OK." },
      { role: "user", content: `o0\n\n${omittedTurnsNote(1)}\n\no1` },
      { role: "assistant", content: "Action: b" },
      { role: "user", content: "o2" },
    ]);
    expect(model.requests[3]?.messages.slice(2)).toEqual([
      { role: "user", content: "o0\n\n(2 earlier turns omitted.)\n\no2" },
      { role: "assistant", content: "Action: c" },
      { role: "user", content: "o3" },
    ]);
  });

  it("with a window of 0 sends only the task and the latest observation", async () => {
    const model = new ScriptedModel(["Action: a", "Action: b"]);
    const agent = createReactAgent(model, { systemPrompt: null, historyWindow: 0 })(context());
    await play(agent, ["o0", "o1", "o2"], ["a", "b"]);
    expect(model.requests[1]?.messages).toEqual([
      { role: "user", content: "Do the thing." },
      { role: "assistant", content: "OK." },
      { role: "user", content: "o0\n\n(1 earlier turn omitted.)\n\no1" },
    ]);
  });

  it("rejects invalid options", () => {
    const model = new ScriptedModel([]);
    expect(() => createReactAgent(model, { historyWindow: -1 })).toThrow(/historyWindow/);
    expect(() => createReactAgent(model, { maxParseRetries: 1.5 })).toThrow(/maxParseRetries/);
    expect(() => createReactAgent(model, { params: { temperature: -1 } })).toThrow(/temperature/);
  });
});

describe("ReAct agent parse errors", () => {
  const state: AgentState = {
    instruction: "Do the thing.",
    observation: obs("Start.", ["move up", "move down"]),
    history: [],
  };

  it("answers an unparseable reply with an explanation, asks again and counts it", async () => {
    const model = new ScriptedModel(["I think I should go up.", "Thought: ok\n\nAction: move up"]);
    const reply = await createReactAgent(model, { systemPrompt: null })(context()).act(
      state,
      signal,
    );
    expect(reply).toEqual({
      action: "move up",
      message: "Thought: ok\n\nAction: move up",
      parseErrors: 1,
    });
    const retry = model.requests[1]?.messages ?? [];
    expect(retry).toHaveLength(5);
    expect(retry[3]).toEqual({ role: "assistant", content: "I think I should go up." });
    expect(retry[4]?.role).toBe("user");
    expect(retry[4]?.content).toContain('the reply has no "Action:" section');
    expect(retry[4]?.content).toContain("Nothing was done in the environment");
    expect(retry[4]?.content).toContain("- move down");
    model.assertDone();
  });

  it("gives up after maxParseRetries re-asks: no action, the text kept", async () => {
    const model = new ScriptedModel(["nonsense", "", "Action:"]);
    const reply = await createReactAgent(model)(context()).act(state, signal);
    expect(reply).toEqual({ action: NO_ACTION, message: "Action:", parseErrors: 3 });
    // The empty reply is shown to the model as a placeholder, and every correction accumulates.
    const last = model.requests[2]?.messages ?? [];
    expect(last.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual([
      "OK.",
      "nonsense",
      "(empty reply)",
    ]);
    expect(last.at(-1)?.content).toContain("the reply was empty");
    model.assertDone();
  });

  it("maxParseRetries 0 gives up at once", async () => {
    const model = new ScriptedModel(["nonsense"]);
    const reply = await createReactAgent(model, { maxParseRetries: 0 })(context()).act(
      state,
      signal,
    );
    expect(reply).toEqual({ action: "", message: "nonsense", parseErrors: 1 });
    model.assertDone();
  });

  it("propagates model errors", async () => {
    const error = new ModelError("server error", { status: 500, retryable: true });
    const model = new ScriptedModel([error]);
    await expect(createReactAgent(model)(context()).act(state, signal)).rejects.toBe(error);
  });

  it("passes the abort signal to the model", async () => {
    const model = new ScriptedModel(["Action: move up"], { delayMs: 10_000 });
    const controller = new AbortController();
    const pending = createReactAgent(model)(context()).act(state, controller.signal);
    controller.abort(new Error("cancelled"));
    await expect(pending).rejects.toThrow("cancelled");
  });
});

describe("ReAct agent on the maze", () => {
  it("runs an episode end to end, recording full replies and counting a parse error", async () => {
    const maze = findEnv("maze");
    const ctx: EpisodeContext = { env: maze.info, taskIndex: 0, seed: 0, sampleIndex: 2 };
    const limits = { maxTurns: 50, timeoutMs: 5000 };
    const solved = await runEpisode({
      env: maze.create(),
      agent: solveMaze(ctx),
      context: ctx,
      limits,
    });
    const moves = solved.steps.map((s) => s.action);
    expect(solved.outcome).toBe("success");

    const replies = moves.map((move, i) => `Thought:\nStep ${i}.\n\nAction:\n${move}`);
    const model = new ScriptedModel(["I am not sure.", ...replies]);
    const inner = createReactAgent(model)(ctx);
    let parseErrors = 0;
    const agent: Agent = {
      act: async (state, s) => {
        const reply = await inner.act(state, s);
        parseErrors += reply.parseErrors ?? 0;
        return reply;
      },
    };
    const record = await runEpisode({ env: maze.create(), agent, context: ctx, limits });
    expect(record.outcome).toBe("success");
    expect(record.steps.map((s) => s.action)).toEqual(moves);
    expect(record.steps[0]?.message).toBe(replies[0]);
    expect(parseErrors).toBe(1);
    expect(model.requests.every((r) => r.sampleIndex === 2)).toBe(true);
    // The last request carries the whole episode: instruction, OK., then alternating turns.
    const last = model.requests.at(-1)?.messages ?? [];
    expect(last[1]).toEqual({ role: "user", content: maze.info.instruction });
    expect(last).toHaveLength(4 + 2 * (moves.length - 1));
    model.assertDone();
  });
});
