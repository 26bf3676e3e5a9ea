import { describe, expect, it } from "vitest";
import { NO_ACTION } from "../../src/agent/prompting.js";
import { solveMaze } from "../../src/agent/reference/maze.js";
import {
  ACT_TOOL,
  actToolSpec,
  createToolCallingAgent,
  DEFAULT_TOOL_CALLING_SYSTEM_PROMPT,
  toolReplyMessage,
} from "../../src/agent/tool-calling.js";
import type { Agent, AgentState, EpisodeContext, Turn } from "../../src/agent/types.js";
import { findEnv } from "../../src/env/registry.js";
import type { EnvInfo, Observation } from "../../src/env/types.js";
import { ModelError } from "../../src/model/types.js";
import { runEpisode } from "../../src/rollout/episode.js";
import { ScriptedModel, type ScriptedReply } from "../../src/testing/scripted-model.js";

const INFO: EnvInfo = {
  name: "toy",
  version: "1",
  description: "toy",
  instruction: "Do the thing.",
  splits: { train: { start: 0, end: 1 }, test: { start: 1, end: 2 } },
  successThreshold: 1,
  maxSteps: 10,
};
const MOVES = ["move up", "move down"];
const signal = new AbortController().signal;

function context(sampleIndex = 0): EpisodeContext {
  return { env: INFO, taskIndex: 1, seed: 0, sampleIndex };
}

function obs(text: string, availableActions?: string[]): Observation {
  return availableActions ? { text, availableActions } : { text };
}

function act(action: string, content = ""): ScriptedReply {
  return { content, toolCalls: [{ name: ACT_TOOL, arguments: { action } }] };
}

const firstState: AgentState = {
  instruction: "Do the thing.",
  observation: obs("Start.", MOVES),
  history: [],
};

describe("act tool", () => {
  it("offers the available actions as an enum", () => {
    expect(actToolSpec(obs("x", MOVES))).toEqual({
      name: "act",
      description: expect.any(String),
      parameters: {
        type: "object",
        properties: {
          action: { type: "string", description: expect.any(String), enum: MOVES },
        },
        required: ["action"],
        additionalProperties: false,
      },
    });
  });

  it("takes free text when the observation lists no actions", () => {
    for (const observation of [obs("x"), obs("x", [])]) {
      const action = (actToolSpec(observation).parameters.properties as Record<string, object>)
        .action;
      expect(action).not.toHaveProperty("enum");
      expect(action).toMatchObject({ type: "string", description: /syntax the instruction/ });
    }
  });
});

describe("tool-calling agent messages", () => {
  it("sends the conversation, the tool, params and the sample index", async () => {
    const model = new ScriptedModel([act("move up", "Going up.")]);
    const params = { temperature: 0, seed: 1 };
    const reply = await createToolCallingAgent(model, { params })(context(3)).act(
      firstState,
      signal,
    );
    expect(reply).toEqual({
      action: "move up",
      message: "Going up.\n\nAction:\nmove up",
      parseErrors: 0,
    });
    expect(model.requests[0]).toEqual({
      messages: [
        { role: "system", content: DEFAULT_TOOL_CALLING_SYSTEM_PROMPT },
        { role: "user", content: "Do the thing." },
        { role: "assistant", content: "OK." },
        { role: "user", content: "Start.\n\nAvailable actions:\n- move up\n- move down" },
      ],
      tools: [actToolSpec(firstState.observation)],
      params,
      sampleIndex: 3,
    });
    model.assertDone();
  });

  it("replays past turns as tool calls with deterministic ids and tool results", async () => {
    const model = new ScriptedModel([act("a", "thinking"), act("b"), act("c")]);
    const agent = createToolCallingAgent(model, { systemPrompt: null })(context());
    const history: Turn[] = [];
    const observations = ["o0", "o1", "o2"];
    for (let i = 0; i < 3; i++) {
      const reply = await agent.act(
        { instruction: "I", observation: obs(observations[i] as string), history: [...history] },
        signal,
      );
      history.push({
        action: reply.action,
        message: reply.message ?? reply.action,
        observation: obs(`o${i + 1}`),
        reward: 0,
      });
    }
    expect(history.map((t) => t.message)).toEqual(["thinking\n\nAction:\na", "b", "c"]);
    expect(model.requests[2]?.messages).toEqual([
      { role: "user", content: "I" },
      { role: "assistant", content: "OK." },
      { role: "user", content: "o0" },
      {
        role: "assistant",
        content: "thinking",
        toolCalls: [{ id: "call_0", name: "act", arguments: '{"action":"a"}' }],
      },
      { role: "tool", toolCallId: "call_0", content: "o1" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_1", name: "act", arguments: '{"action":"b"}' }],
      },
      { role: "tool", toolCallId: "call_1", content: "o2" },
    ]);
  });

  it("trims history to the window, keeping the task statement", async () => {
    const model = new ScriptedModel([act("c")]);
    const agent = createToolCallingAgent(model, { systemPrompt: null, historyWindow: 1 })(
      context(),
    );
    await agent.act({ ...firstState, observation: obs("o0"), history: [] }, signal);
    model.push(act("c"));
    const history: Turn[] = [
      { action: "a", message: "a", observation: obs("o1"), reward: 0 },
      { action: "b", message: toolReplyMessage("why", "b"), observation: obs("o2"), reward: 0 },
    ];
    await agent.act({ instruction: "I", observation: obs("o2"), history }, signal);
    expect(model.requests[1]?.messages).toEqual([
      { role: "user", content: "I" },
      { role: "assistant", content: "OK." },
      { role: "user", content: "o0\n\n(1 earlier turn omitted.)\n\no1" },
      {
        role: "assistant",
        content: "why",
        toolCalls: [{ id: "call_1", name: "act", arguments: '{"action":"b"}' }],
      },
      { role: "tool", toolCallId: "call_1", content: "o2" },
    ]);
  });

  it("replays a turn that ended without an action as plain text", async () => {
    const model = new ScriptedModel([act("move up")]);
    const history: Turn[] = [
      { action: NO_ACTION, message: "I refuse.", observation: obs("Invalid."), reward: 0 },
    ];
    await createToolCallingAgent(model, { systemPrompt: null })(context()).act(
      { instruction: "I", observation: obs("Invalid.", MOVES), history },
      signal,
    );
    expect(model.requests[0]?.messages.slice(3)).toEqual([
      { role: "assistant", content: "I refuse." },
      { role: "user", content: "Invalid.\n\nAvailable actions:\n- move up\n- move down" },
    ]);
  });

  it("maps a differently cased action onto the env's spelling", async () => {
    const model = new ScriptedModel([act("Move  UP")]);
    const reply = await createToolCallingAgent(model)(context()).act(firstState, signal);
    expect(reply.action).toBe("move up");
  });

  it("accepts any text when the observation lists no actions", async () => {
    const model = new ScriptedModel([act("  craft 1 stick using 2 planks ")]);
    const state = { ...firstState, observation: obs("Goal: a stick.") };
    const reply = await createToolCallingAgent(model)(context()).act(state, signal);
    expect(reply.action).toBe("craft 1 stick using 2 planks");
  });
});

describe("tool-calling agent parse errors", () => {
  it("answers a reply without a tool call with a user message, and counts it", async () => {
    const model = new ScriptedModel(["I would go up.", act("move up")]);
    const reply = await createToolCallingAgent(model)(context()).act(firstState, signal);
    expect(reply).toMatchObject({ action: "move up", parseErrors: 1 });
    const retry = model.requests[1]?.messages.slice(4) ?? [];
    expect(retry[0]).toEqual({ role: "assistant", content: "I would go up." });
    expect(retry[1]?.role).toBe("user");
    expect(retry[1]?.content).toMatch(/called no tool.*Nothing was done/s);
    model.assertDone();
  });

  it("answers malformed arguments and values outside the enum as tool results", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: "provider-id-1", name: "act", arguments: '{"action": "move' }] },
      { toolCalls: [{ name: "act", arguments: { action: "jump" } }] },
      { toolCalls: [{ name: "act", arguments: { move: "up" } }] },
      act("move down"),
    ]);
    const agent = createToolCallingAgent(model, { maxParseRetries: 3 })(context());
    const reply = await agent.act(firstState, signal);
    expect(reply).toMatchObject({ action: "move down", parseErrors: 3 });
    const last = model.requests[3]?.messages.slice(4) ?? [];
    expect(last).toHaveLength(6);
    expect(last[0]).toEqual({
      role: "assistant",
      content: "",
      toolCalls: [{ id: "retry_0_0_0", name: "act", arguments: '{"action": "move' }],
    });
    expect(last[1]).toMatchObject({ role: "tool", toolCallId: "retry_0_0_0" });
    expect(last[1]?.content).toContain("not valid JSON");
    expect(last[3]?.content).toContain('"jump" is not one of the available actions');
    expect(last[3]?.content).toContain("- move up");
    expect(last[5]?.content).toContain('string "action"');
    model.assertDone();
  });

  it("answers every call of a reply that named an unknown tool", async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: "move", arguments: {} },
          { name: "look", arguments: {} },
        ],
      },
      act("move up"),
    ]);
    await createToolCallingAgent(model)(context()).act(firstState, signal);
    const feedback = model.requests[1]?.messages.slice(5) ?? [];
    expect(feedback.map((m) => m.role)).toEqual(["tool", "tool"]);
    expect(feedback[0]?.content).toContain('unknown tool "move"');
  });

  it("runs only the first act call of a reply", async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: "act", arguments: { action: "move up" } },
          { name: "act", arguments: { action: "move down" } },
        ],
      },
    ]);
    const reply = await createToolCallingAgent(model)(context()).act(firstState, signal);
    expect(reply).toEqual({ action: "move up", message: "move up", parseErrors: 0 });
  });

  it("gives up with no action after the retries, keeping what the model wrote", async () => {
    const bad = { content: "hmm", toolCalls: [{ name: "act", arguments: "nope" }] };
    const model = new ScriptedModel([bad, bad]);
    const reply = await createToolCallingAgent(model, { maxParseRetries: 1 })(context()).act(
      firstState,
      signal,
    );
    expect(reply).toEqual({ action: NO_ACTION, message: "hmm\n\nact(nope)", parseErrors: 2 });
    model.assertDone();
  });

  it("propagates model errors", async () => {
    const error = new ModelError("bad request", { status: 400, retryable: false });
    const model = new ScriptedModel([error]);
    await expect(createToolCallingAgent(model)(context()).act(firstState, signal)).rejects.toBe(
      error,
    );
  });
});

describe("tool-calling agent on the maze", () => {
  it("runs an episode end to end through the episode runner", async () => {
    const maze = findEnv("maze");
    const ctx: EpisodeContext = { env: maze.info, taskIndex: 3, seed: 1, sampleIndex: 0 };
    const limits = { maxTurns: 50, timeoutMs: 5000 };
    const solved = await runEpisode({
      env: maze.create(),
      agent: solveMaze(ctx),
      context: ctx,
      limits,
    });
    const moves = solved.steps.map((s) => s.action);

    const model = new ScriptedModel([
      { toolCalls: [{ name: "act", arguments: { action: "teleport" } }] },
      ...moves.map((move) => act(move)),
    ]);
    const inner = createToolCallingAgent(model)(ctx);
    const counts: number[] = [];
    const agent: Agent = {
      act: async (state, s) => {
        const reply = await inner.act(state, s);
        counts.push(reply.parseErrors ?? 0);
        return reply;
      },
    };
    const record = await runEpisode({ env: maze.create(), agent, context: ctx, limits });
    expect(record.outcome).toBe("success");
    expect(record.steps.map((s) => s.action)).toEqual(moves);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    const tools = model.requests[0]?.tools?.[0]?.parameters as {
      properties: { action: { enum: string[] } };
    };
    expect(tools.properties.action.enum).toEqual([
      "move up",
      "move down",
      "move left",
      "move right",
    ]);
    model.assertDone();
  });
});
