/**
 * clade's client against servers that behave like AgentGym's: the tool servers, which parse the
 * whole reply and need its literal "Action:", and TextCraft's, which ignores a task field it
 * does not know and plays task 0 (the watch that warns about it). The fakes are in
 * tests/fixtures/agentgym-fakes.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readReactReply } from "../../src/agent/react.js";
import { resolveAgent } from "../../src/agent/registry.js";
import { createToolCallingAgent } from "../../src/agent/tool-calling.js";
import {
  connectRemoteEnv,
  createRemoteEnv,
  findAgentgymServer,
  guessAgentgymServer,
} from "../../src/env/remote/index.js";
import { TaskFieldCheck } from "../../src/env/remote/task-check.js";
import type { EnvDefinition } from "../../src/env/types.js";
import { runEpisode } from "../../src/rollout/episode.js";
import { startEnvServer } from "../../src/serve/index.js";
import { ScriptedModel } from "../../src/testing/index.js";
import {
  type FakeAgentgymServer,
  startFakeTextcraftServer,
  startFakeToolServer,
  textcraftGoal,
  toolTaskAnswer,
} from "../fixtures/agentgym-fakes.js";
import { counterEnv } from "../fixtures/counter-env.js";

const servers: FakeAgentgymServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function started(server: Promise<FakeAgentgymServer>): Promise<FakeAgentgymServer> {
  const running = await server;
  servers.push(running);
  return running;
}

const LIMITS = { maxTurns: 4, timeoutMs: 10_000 };

/** Plays one episode of the react agent, whose model answers `replies` in turn. */
async function playReact(def: EnvDefinition, task: number, replies: string[], send?: "reply") {
  const model = new ScriptedModel(replies);
  const agent = resolveAgent("react", def, {
    model,
    options: send ? { send } : {},
  }).create({ env: def.info, taskIndex: task, seed: 0, sampleIndex: 0 });
  const env = def.create();
  try {
    return await runEpisode({
      env,
      agent,
      context: { env: def.info, taskIndex: task, seed: 0, sampleIndex: 0 },
      limits: LIMITS,
    });
  } finally {
    await env.close?.();
  }
}

describe("the react agent against an AgentGym tool server", () => {
  const replies = (task: number) => [
    "Thought: I need the code first.\n\nAction: get_code with Action Input: {}",
    `Thought: Now I know it.\n\nAction: finish with Action Input: {"answer": "${toolTaskAnswer(task)}"}`,
  ];

  it("solves the task when it sends the whole reply", async () => {
    const server = await started(startFakeToolServer());
    const def = await connectRemoteEnv({
      url: server.url,
      dialect: "env_idx",
      info: { name: "todo" },
    });
    const record = await playReact(def, 3, replies(3), "reply");
    expect(record).toMatchObject({ outcome: "success", reward: 1, endReason: "done" });
    // What was sent is what is stored as the action: the reply itself.
    expect(record.steps[0]?.action).toBe(replies(3)[0]);
    expect(record.steps[0]?.message).toBe(replies(3)[0]);
    const steps = server.requests.filter((r) => r.path === "/step");
    expect((steps[0] as { body: { action: string } }).body.action).toBe(replies(3)[0]);
  });

  it("errors on every step when only the text after Action: is sent", async () => {
    const server = await started(startFakeToolServer());
    const def = await connectRemoteEnv({
      url: server.url,
      dialect: "env_idx",
      info: { name: "todo" },
    });
    const record = await playReact(def, 3, [...replies(3), ...replies(3)]);
    expect(record.outcome).toBe("failure");
    expect(record.steps[0]?.action).toBe("get_code with Action Input: {}");
    for (const step of record.steps) expect(step.observation.text).toMatch(/^ERROR \| TypeError/);
  });

  it("still asks again when the reply has no usable action, whatever is sent", () => {
    const reply = { content: "I think I will get the code.", toolCalls: [] } as never;
    expect(readReactReply(reply, { text: "" }, "reply")).toMatchObject({ ok: false });
    const good = { content: "Thought: t\nAction: look", toolCalls: [] } as never;
    expect(readReactReply(good, { text: "" }, "reply")).toMatchObject({
      ok: true,
      action: "Thought: t\nAction: look",
    });
    expect(readReactReply(good, { text: "" })).toMatchObject({ ok: true, action: "look" });
  });

  it("keeps send to the react agent: the tools agent refuses it", () => {
    expect(() => createToolCallingAgent(new ScriptedModel([]), { send: "reply" })).toThrow(
      /applies to the react agent only/,
    );
    expect(() =>
      resolveAgent("react", { info: {} } as EnvDefinition, {
        model: new ScriptedModel([]),
        options: { send: "everything" as "reply" },
      }).create({ env: {} as never, taskIndex: 0, seed: 0, sampleIndex: 0 }),
    ).toThrow(/send/);
  });
});

describe("AgentGym's servers by name", () => {
  it("knows what each expects, by task name, path or LMRL-Gym item prefix", () => {
    expect(findAgentgymServer("todo")).toMatchObject({ dialect: "env_idx", action: "reply" });
    expect(findAgentgymServer("/maze")).toMatchObject({ taskField: "game", action: "action" });
    expect(findAgentgymServer("lmrlgym_wordle")).toMatchObject({ taskField: "seed" });
    expect(findAgentgymServer("textcraft")).toMatchObject({ taskField: "data_idx" });
    expect(findAgentgymServer("chess")).toBeUndefined();
    // The path wins over the name, and the dialect must be the server's.
    expect(guessAgentgymServer({ dialect: "env_idx", envPath: "/weather", name: "x" })?.name).toBe(
      "weather",
    );
    expect(guessAgentgymServer({ dialect: "id", name: "todo" })).toBeUndefined();
  });
});

describe("a task field the server ignores", () => {
  function check(warnings: string[], taskFields = ["game"]) {
    return new TaskFieldCheck({
      envName: "textcraft",
      dialect: "id",
      taskFields,
      server: findAgentgymServer("textcraft"),
      warn: (message) => warnings.push(message),
    });
  }

  it("warns once when three tasks begin alike and answer the same first action alike", () => {
    const warnings: string[] = [];
    const watch = check(warnings);
    for (const task of [0, 1, 2, 3]) watch.reset(task, "Goal: craft item 1.");
    watch.firstStep(0, "craft item 1", "Crafted");
    watch.firstStep(1, "craft item 1", "Crafted");
    expect(warnings).toEqual([]);
    watch.firstStep(2, "craft item 1", "Crafted");
    watch.firstStep(3, "craft item 1", "Crafted");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^textcraft: tasks 0, 1, 2 began alike \("Goal: craft item 1\."\)/);
    expect(warnings[0]).toMatch(/ignoring the task field "game"/);
    expect(warnings[0]).toMatch(/TextCraft server reads "data_idx": try --task-field data_idx$/);
    expect(warnings[0]).not.toContain("\n");
  });

  it("stays quiet when tasks begin differently, or the same action gets different answers", () => {
    const warnings: string[] = [];
    const differ = check(warnings);
    differ.reset(0, "Goal: craft item 1.");
    differ.reset(1, "Goal: craft item 2.");
    differ.reset(2, "Goal: craft item 1.");
    for (const task of [0, 1, 2]) differ.firstStep(task, "look", "nothing");
    // Wordle: every game starts alike, but the same guess gets different feedback.
    const wordle = check(warnings, ["seed"]);
    for (const task of [0, 1, 2, 3]) wordle.reset(task, "Guess the word.");
    wordle.firstStep(0, "crane", "grey grey green grey grey");
    wordle.firstStep(1, "crane", "grey grey grey grey grey");
    wordle.firstStep(2, "crane", "grey grey grey grey grey");
    wordle.firstStep(3, "crane", "grey grey grey grey grey");
    // Samples of one task are one task.
    const samples = check(warnings);
    for (let i = 0; i < 5; i++) {
      samples.reset(0, "Goal: craft item 1.");
      samples.firstStep(0, "look", "nothing");
    }
    expect(warnings).toEqual([]);
  });

  it("lists the fields AgentGym's servers read when the server is not known", () => {
    const warnings: string[] = [];
    const watch = new TaskFieldCheck({
      envName: "mine",
      dialect: "id",
      taskFields: ["level"],
      server: undefined,
      warn: (message) => warnings.push(message),
    });
    for (const task of [5, 6, 7]) {
      watch.reset(task, "start");
      watch.firstStep(task, "go", "went");
    }
    expect(warnings[0]).toMatch(
      /"data_idx" \(TextCraft, BabyAI, SciWorld\), "game" \(ALFWorld, LMRL-Gym Maze\), "seed" \(LMRL-Gym Wordle\): check --task-field$/,
    );
  });

  it("is warned of by a TextCraft-like server given --task-field game, not data_idx", async () => {
    const server = await started(startFakeTextcraftServer());
    for (const taskField of ["game", "data_idx"]) {
      const warnings: string[] = [];
      const def = await connectRemoteEnv({
        url: server.url,
        taskField,
        info: { name: "textcraft" },
        onWarning: (message) => warnings.push(message),
      });
      const envs = [def.create(), def.create()];
      const rewards: number[] = [];
      for (const task of [0, 1, 2, 3]) {
        const env = envs[task % 2] as (typeof envs)[number];
        const first = await env.reset(task);
        const goal = /Goal: craft (.*)\./.exec(first.text)?.[1];
        rewards.push((await env.step(`craft ${goal}`)).reward);
      }
      await Promise.all(envs.map((env) => env.close?.()));
      // Every task "succeeds" either way: with game, task 0 four times.
      expect(rewards).toEqual([1, 1, 1, 1]);
      if (taskField === "game") {
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/"game".*try --task-field data_idx/);
        expect(textcraftGoal(0)).toBe("item 1");
      } else {
        expect(warnings).toEqual([]);
      }
    }
  });

  it("leaves a clade server alone: it reads the task field, even when tasks start alike", async () => {
    const server = await startEnvServer(counterEnv);
    try {
      // Counter tasks 0, 5 and 10 all count to 1: alike at the start and after "inc".
      const play = async (
        create: () => {
          reset(t: number): Promise<unknown>;
          step(a: string): Promise<unknown>;
          close?(): Promise<void>;
        },
      ) => {
        const env = create();
        for (const task of [0, 5, 10]) {
          await env.reset(task);
          await env.step("inc");
        }
        await env.close?.();
      };
      const known: string[] = [];
      const def = await connectRemoteEnv({ url: server.url, onWarning: (m) => known.push(m) });
      await play(() => def.create());
      expect(known).toEqual([]);
      // Without asking who it is (createRemoteEnv), the same episodes look suspicious.
      const unknown: string[] = [];
      await play(() =>
        createRemoteEnv({
          url: server.url,
          info: { name: "counter" },
          onWarning: (m) => unknown.push(m),
        }),
      );
      expect(unknown).toHaveLength(1);
      expect(unknown[0]).toMatch(/^counter: tasks 0, 5, 10 began alike/);
    } finally {
      await server.close();
    }
  });
});
