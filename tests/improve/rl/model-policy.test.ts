/**
 * The model rollout policy: an LLM behind clade's model layer (the fake OpenAI-compatible server
 * over HTTP) driving RL rollouts on the maze. Trajectories carry the reply, its token
 * log-probabilities and their sum; the prompt is the ReAct agent's; a model error after retries,
 * or a reply without log-probabilities, ends only that sample as an error, reported, never 0.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createReactAgent } from "../../../src/agent/react.js";
import type { AgentState } from "../../../src/agent/types.js";
import { findEnv } from "../../../src/env/registry.js";
import {
  collectGroups,
  createModelRolloutPolicy,
  type ModelRolloutPolicyOptions,
  type Trajectory,
} from "../../../src/improve/rl/rollout/index.js";
import { createModelClient } from "../../../src/model/client.js";
import { parseModelSpec } from "../../../src/model/spec.js";
import type { ModelRequest } from "../../../src/model/types.js";
import {
  type FakeModelServer,
  type FakeReply,
  type FakeRequest,
  fakeTokenId,
  fakeTokenLogprobs,
  startFakeModelServer,
} from "../../../src/testing/fake-model-server.js";
import { ScriptedModel } from "../../../src/testing/scripted-model.js";

const maze = findEnv("maze");
const REPLY = "Thought:\nI will try going up.\n\nAction:\nmove up";
const REPLY_LOGPROBS = fakeTokenLogprobs(REPLY).map((t) => t.logprob);
const REPLY_LOGPROB = REPLY_LOGPROBS.reduce((sum, lp) => sum + lp, 0);
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, attemptTimeoutMs: 2_000 };

let server: FakeModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function fakeServer(rule: (request: FakeRequest) => FakeReply): Promise<FakeModelServer> {
  server = await startFakeModelServer({ rule });
  return server;
}

function policyFor(
  fake: FakeModelServer,
  options: Omit<ModelRolloutPolicyOptions, "model"> = {},
  maxRetries = 2,
) {
  const model = createModelClient(
    {
      name: "policy",
      spec: parseModelSpec(`openai-compatible:${fake.openaiBaseUrl}#qwen`),
      params: {},
      stream: false,
      maxRetries,
    },
    { retry: FAST_RETRY },
  );
  return createModelRolloutPolicy({ model, ...options });
}

interface WireBody {
  messages: { role: string; content: string }[];
  temperature?: number;
  seed?: number;
  logprobs?: boolean;
  return_tokens_as_token_ids?: boolean;
}

const bodyOf = (request: FakeRequest | undefined) => request?.body as WireBody;

async function firstObservation(task: number): Promise<string> {
  const env = maze.create();
  return (await env.reset(task, { seed: 0 })).text;
}

function expectLogprobTurns(trajectory: Trajectory): void {
  expect(trajectory.end).not.toBe("error");
  expect(trajectory.turns.length).toBeGreaterThan(0);
  for (const turn of trajectory.turns) {
    expect(turn.reply).toBe(REPLY);
    expect(turn.action).toBe("move up");
    expect(turn.tokenLogprobs).toEqual(REPLY_LOGPROBS);
    expect(turn.logprob).toBeCloseTo(REPLY_LOGPROB, 12);
  }
  // The estimators see each turn's sequence log-probability at its agent position.
  const logprobs = trajectory.sample.logprobs as number[];
  trajectory.turns.forEach((turn, t) => {
    expect(logprobs[2 * t + 1]).toBe(turn.logprob);
  });
  expect(trajectory.sample.mask).toEqual(
    Array.from({ length: 2 * trajectory.turns.length + 1 }, (_, p) => p % 2),
  );
}

describe("createModelRolloutPolicy", () => {
  it("collects groups whose turns carry the reply, token logprobs and their sum", async () => {
    const fake = await fakeServer(() => ({ content: REPLY }));
    const result = await collectGroups({
      env: maze,
      policy: policyFor(fake),
      tasks: [0, 1],
      groupSize: 2,
      horizon: 3,
      seed: 11,
      greedyBaseline: true,
    });
    expect(result.errors).toEqual([]);
    expect(result.trajectories).toHaveLength(4);
    for (const trajectory of result.trajectories) {
      expectLogprobTurns(trajectory);
      expect(trajectory.turns[0]).not.toHaveProperty("tokenIds");
    }
    for (const group of result.groups) expectLogprobTurns(group.baseline as Trajectory);

    const bodies = fake.requests.map(bodyOf);
    expect(bodies.every((b) => b.logprobs === true)).toBe(true);
    // Sampled turns: temperature 1 and a seed from the sample's stream; greedy turns: 0, no seed.
    const sampled = bodies.filter((b) => b.temperature === 1);
    const greedy = bodies.filter((b) => b.temperature === 0);
    expect(sampled.length + greedy.length).toBe(bodies.length);
    expect(greedy.length).toBe(
      result.groups.reduce((n, g) => n + (g.baseline?.turns.length ?? 0), 0),
    );
    expect(greedy.every((b) => b.seed === undefined)).toBe(true);
    expect(sampled.every((b) => Number.isInteger(b.seed) && (b.seed as number) >= 0)).toBe(true);
    expect(new Set(sampled.map((b) => b.seed)).size).toBe(sampled.length);
  });

  it("draws the same seeds for the same (seed, step), whatever the order", async () => {
    const seedsOf = async (mode: "independent" | "lockstep") => {
      const fake = await fakeServer(() => ({ content: REPLY }));
      await collectGroups({
        env: maze,
        policy: policyFor(fake),
        tasks: [2],
        groupSize: 3,
        horizon: 2,
        seed: 5,
        mode,
      });
      const seeds = fake.requests.map((r) => bodyOf(r).seed as number).sort((a, b) => a - b);
      await fake.close();
      return seeds;
    };
    const independent = await seedsOf("independent");
    expect(independent).toHaveLength(6);
    expect(await seedsOf("lockstep")).toEqual(independent);
  });

  it("reports vLLM token ids when asked for them", async () => {
    const fake = await fakeServer(() => ({ content: REPLY }));
    const result = await collectGroups({
      env: maze,
      policy: policyFor(fake, { tokenIds: true }),
      tasks: [0],
      groupSize: 1,
      horizon: 2,
      seed: 1,
    });
    const turn = result.trajectories[0]?.turns[0];
    expect(turn?.tokenIds).toEqual(fakeTokenLogprobs(REPLY).map((t) => fakeTokenId(t.token)));
    expect(turn?.tokenLogprobs).toEqual(REPLY_LOGPROBS);
    expect(bodyOf(fake.requests[0]).return_tokens_as_token_ids).toBe(true);
  });

  it("sends the ReAct agent's prompt, with past turns as the whole replies", async () => {
    const fake = await fakeServer(() => ({ content: REPLY }));
    const result = await collectGroups({
      env: maze,
      policy: policyFor(fake),
      tasks: [3],
      groupSize: 1,
      horizon: 2,
      seed: 2,
    });
    const trajectory = result.trajectories[0] as Trajectory;
    expect(trajectory.turns).toHaveLength(2);

    // The ReAct agent, given the same states (its history holds its replies), asks the same.
    const scripted = new ScriptedModel([REPLY, REPLY]);
    const agent = createReactAgent(scripted)({
      env: maze.info,
      taskIndex: 3,
      seed: 0,
      sampleIndex: 0,
    });
    const first = trajectory.turns[0];
    const states: AgentState[] = [
      {
        instruction: maze.info.instruction,
        observation: trajectory.initialObservation as NonNullable<Trajectory["initialObservation"]>,
        history: [],
      },
      {
        instruction: maze.info.instruction,
        observation: first?.observation as NonNullable<typeof first>["observation"],
        history: [
          {
            action: "move up",
            message: REPLY,
            observation: first?.observation as NonNullable<typeof first>["observation"],
            reward: first?.envReward ?? 0,
          },
        ],
      },
    ];
    for (const state of states) await agent.act(state, new AbortController().signal);
    const expected = scripted.requests.map((r: ModelRequest) => r.messages);
    expect(fake.requests.map((r) => bodyOf(r).messages)).toEqual(expected);
    expect(expected[1]?.[4]).toEqual({ role: "assistant", content: REPLY });
  });

  it("sends no action for a reply without one, as the ReAct agent does in the end", async () => {
    const fake = await fakeServer(() => ({ content: "I am not sure what to do." }));
    const result = await collectGroups({
      env: maze,
      policy: policyFor(fake),
      tasks: [0],
      groupSize: 1,
      horizon: 1,
      seed: 3,
    });
    const turn = result.trajectories[0]?.turns[0];
    expect(turn?.action).toBe("");
    expect(turn?.reply).toBe("I am not sure what to do.");
    expect(turn?.observation.text).toMatch(/Invalid action/);
    expect(turn?.logprob).toBeLessThan(0);
    // One call per turn: an unusable reply is not re-asked.
    expect(fake.requests).toHaveLength(1);
  });

  it("ends only the sample whose model calls fail after retries, with the reason reported", async () => {
    const broken = await firstObservation(1);
    const fake = await fakeServer((request) =>
      JSON.stringify(request.body).includes(JSON.stringify(broken).slice(1, -1))
        ? { fault: "server_error", status: 503 }
        : { content: REPLY },
    );
    const result = await collectGroups({
      env: maze,
      policy: policyFor(fake, {}, 2),
      tasks: [0, 1],
      groupSize: 1,
      horizon: 2,
      seed: 4,
    });
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({ taskIndex: 1, sampleIndex: 0, greedy: false });
    expect(result.errors[0]?.message).toMatch(
      /^ModelError: HTTP 503 service unavailable.*\(gave up after 3 attempts\)$/,
    );
    const [ok, failed] = result.trajectories as [Trajectory, Trajectory];
    expectLogprobTurns(ok);
    expect(failed.end).toBe("error");
    expect(failed.turns).toEqual([]);
    expect(failed.sample.error).toBe(result.errors[0]?.message);
    expect(failed.success).toBe(false);
  });

  it("makes a reply without logprobs an error sample unless told otherwise", async () => {
    const fake = await fakeServer(() => ({ content: REPLY, logprobs: null }));
    const strict = await collectGroups({
      env: maze,
      policy: policyFor(fake),
      tasks: [0],
      groupSize: 2,
      horizon: 2,
      seed: 6,
    });
    expect(strict.errors).toHaveLength(2);
    for (const error of strict.errors) {
      expect(error.message).toMatch(
        /^MissingLogprobsError: openai-compatible:qwen answered without log-probabilities/,
      );
    }
    expect(strict.trajectories.every((t) => t.end === "error" && t.sample.error)).toBe(true);

    const lenient = await collectGroups({
      env: maze,
      policy: policyFor(fake, { requireLogprobs: false }),
      tasks: [0],
      groupSize: 1,
      horizon: 2,
      seed: 6,
    });
    expect(lenient.errors).toEqual([]);
    const trajectory = lenient.trajectories[0] as Trajectory;
    expect(trajectory.turns[0]?.reply).toBe(REPLY);
    expect(trajectory.turns[0]).not.toHaveProperty("logprob");
    expect(trajectory.sample.logprobs).toBeUndefined();
  });

  it("refuses parameters it sets itself and a bad temperature", () => {
    const model = new ScriptedModel([]);
    expect(() =>
      createModelRolloutPolicy({ model, params: { temperature: 0.5 } as never }),
    ).toThrow(/params\.temperature is set by the policy/);
    expect(() => createModelRolloutPolicy({ model, temperature: 0 })).toThrow(RangeError);
  });
});
