/**
 * Scoring a configuration: its LLM agent plays built-in environments through the rollout runner
 * with a scripted model (the maze played by the reference solver's replies, a failing player, a
 * model error), errored episodes left out of the rate, a task whose every episode errors
 * refused; and the tools kind held to its tool set.
 */
import { describe, expect, it } from "vitest";
import { NO_ACTION } from "../../../src/agent/prompting.js";
import { solveMaze } from "../../../src/agent/reference/maze.js";
import type { Agent, AgentState } from "../../../src/agent/types.js";
import { smallMazes } from "../../../src/env/maze/small.js";
import { findEnv } from "../../../src/env/registry.js";
import { mixSeeds } from "../../../src/env/rng.js";
import {
  type AgentConfig,
  evaluateConfig,
  narrowObservation,
  parseAgentConfig,
  renderSystemPrompt,
  restrictTools,
  toolOf,
} from "../../../src/improve/qd/agent-config/index.js";
import type { ModelRequest } from "../../../src/model/types.js";
import type { EpisodeRecord } from "../../../src/rollout/episode.js";
import { ScriptedModel, type ScriptedReply } from "../../../src/testing/scripted-model.js";

const maze = findEnv("maze");
const grid = findEnv("gridworld");
const [t0, t1, t2] = smallMazes(maze.info.splits.test) as [number, number, number];

/** The reference solver's replies for a maze task, in the ReAct format, played to the goal. */
async function referenceReplies(task: number): Promise<string[]> {
  const env = maze.create();
  const solver = solveMaze({ env: maze.info, taskIndex: task, seed: 0, sampleIndex: 0 });
  let observation = await env.reset(task, { seed: 0 });
  const replies: string[] = [];
  for (let turn = 0; turn < maze.info.maxSteps; turn++) {
    const state: AgentState = { instruction: maze.info.instruction, observation, history: [] };
    const reply = await solver.act(state, new AbortController().signal);
    replies.push(reply.message ?? `Action: ${reply.action}`);
    const step = await env.step(reply.action);
    observation = step.observation;
    if (step.done) {
      expect(step.reward).toBe(1);
      return replies;
    }
  }
  throw new Error(`the reference did not solve maze ${task}`);
}

const CONFIG: AgentConfig = parseAgentConfig({
  parts: [{ name: "role", text: "Find the shortest path." }],
  fewShot: [{ id: "ex", text: "Action: move up" }],
  params: { temperature: 0.3, topP: 0.8, maxTokens: 200 },
});

describe("evaluateConfig", () => {
  it("scores success over the episodes that did not error, per task", async () => {
    const solved = await referenceReplies(t0);
    const turns = solved.length;
    const dance = Array.from({ length: turns }, () => "Thought: why not.\n\nAction: dance");
    const model = new ScriptedModel([
      ...solved, // task 0, maze t0: solved
      new Error("connection reset"), // task 0, maze t1: errored
      ...dance, // task 0, maze t2: out of turns
      ...solved, // task 1, maze t0: solved
    ]);
    const outcomes: string[] = [];
    const scores = await evaluateConfig(CONFIG, {
      model,
      tasks: [
        { env: maze, tasks: [t0, t1, t2] },
        { env: maze, tasks: [t0] },
      ],
      episode: { concurrency: 1, maxTurns: turns, generationSeed: 9 },
      onEpisode: (k, record: EpisodeRecord) => {
        outcomes.push(`${k}:${record.taskIndex}:${record.outcome}`);
      },
    });
    expect(scores).toEqual([0.5, 1]);
    expect(outcomes).toEqual([
      `0:${t0}:success`,
      `0:${t1}:error`,
      `0:${t2}:failure`,
      `1:${t0}:success`,
    ]);
    model.assertDone();
    const first = model.requests[0] as ModelRequest;
    expect(first.messages[0]).toEqual({ role: "system", content: renderSystemPrompt(CONFIG) });
    const seed = mixSeeds(9, t0, 0);
    expect(first.params).toEqual({ temperature: 0.3, topP: 0.8, maxTokens: 200, seed });
    // Each episode has its own seed; every call of an episode shares it.
    const seeds = new Set(model.requests.map((r) => r.params?.seed));
    expect(seeds).toEqual(new Set([seed, mixSeeds(9, t1, 0), mixSeeds(9, t2, 0)]));
  });

  it("throws when every episode of a task errors", async () => {
    const solved = await referenceReplies(t0);
    const model = new ScriptedModel([...solved, new Error("quota"), new Error("quota")]);
    await expect(
      evaluateConfig(CONFIG, {
        model,
        tasks: [
          { env: maze, tasks: [t0] },
          { env: maze, tasks: [t1, t2] },
        ],
        episode: { concurrency: 1 },
      }),
    ).rejects.toThrow(/^every episode of task 1 \(maze\) errored \(2\); first: .*quota/);
    model.assertDone();
  });

  it("offers the tools agent only the actions of its tool set", async () => {
    const task = grid.info.splits.test.start;
    const listed = (await grid.create().reset(task, { seed: 0 })).availableActions ?? [];
    expect(listed.some((a) => toolOf(a) !== "turn")).toBe(true);
    const act = (action: string): ScriptedReply => ({
      toolCalls: [{ name: "act", arguments: { action } }],
    });
    const notTurn = listed.find((a) => toolOf(a) !== "turn") as string;
    const model = new ScriptedModel([act(notTurn), act("turn left"), act("turn right")]);
    const config = parseAgentConfig({ kind: "tools", tools: ["turn"] });
    const scores = await evaluateConfig(config, {
      model,
      tasks: [{ env: grid, tasks: [task] }],
      episode: { concurrency: 1, maxTurns: 2 },
    });
    expect(scores).toEqual([0]);
    model.assertDone();
    const request = model.requests[0] as ModelRequest;
    const parameters = request.tools?.[0]?.parameters as
      | { properties: { action: { enum: string[] } } }
      | undefined;
    const action = parameters?.properties.action;
    expect(action?.enum).toEqual(["turn left", "turn right"]);
    expect(request.messages[0]?.content).toContain(
      "Use only these tools (an action's first word): turn.",
    );
    // The action outside the set was corrected by the agent, never sent to the environment.
    expect((model.requests[1] as ModelRequest).messages.at(-1)?.content).toContain(
      "is not one of the available actions",
    );
  });
});

describe("the tool set around an agent", () => {
  it("names an action's tool by its first word, after an optional Action:", () => {
    expect(toolOf('Action: add_task with Action Input: {"title": "x"}')).toBe("add_task");
    expect(toolOf("craft 4 oak planks using 1 oak log")).toBe("craft");
    expect(toolOf("  Move up")).toBe("move");
    expect(toolOf("")).toBe("");
  });

  it("narrows listed actions, now and in the history, and stops actions outside the set", async () => {
    const seen: AgentState[] = [];
    const replies = [
      "Action: list_tasks with Action Input: {}",
      "delete_task with Action Input: {}",
    ];
    const inner: Agent = {
      async act(state) {
        seen.push(state);
        const action = replies.shift() as string;
        return { action, message: `Thought: t\n${action}`, parseErrors: 1 };
      },
      takeCalls: () => [],
    };
    const agent = restrictTools(inner, ["list_tasks", "finish"]);
    const observation = {
      text: "hi",
      availableActions: ["list_tasks {}", "delete_task {}", "finish"],
    };
    const state: AgentState = {
      instruction: "i",
      observation,
      history: [{ action: "a", message: "a", observation, reward: 0 }],
    };
    const signal = new AbortController().signal;
    expect(await agent.act(state, signal)).toEqual({
      action: "Action: list_tasks with Action Input: {}",
      message: "Thought: t\nAction: list_tasks with Action Input: {}",
      parseErrors: 1,
    });
    expect(seen[0]?.observation.availableActions).toEqual(["list_tasks {}", "finish"]);
    expect(seen[0]?.history[0]?.observation.availableActions).toEqual(["list_tasks {}", "finish"]);
    expect(await agent.act(state, signal)).toEqual({
      action: NO_ACTION,
      message: "Thought: t\ndelete_task with Action Input: {}",
      parseErrors: 2,
    });
    expect(agent.takeCalls?.()).toEqual([]);
    expect(narrowObservation({ text: "free text" }, new Set(["x"]))).toEqual({ text: "free text" });
  });
});
