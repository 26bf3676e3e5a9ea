/**
 * The helpdesk's user voice: the environment with a voice (what it asks, what it keeps, that
 * the ground truth does not move), the model voice's checks and its one correction
 * (ScriptedModel), and withModelUser's wiring of a user model into a run (calls stored with
 * their episode, as the user's).
 */
import { describe, expect, it } from "vitest";
import { faultyHelpdeskAssistant, solveHelpdesk } from "../../src/agent/helpdesk/assistant.js";
import {
  checkUserMessage,
  cleanUserMessage,
  createModelUserVoice,
  USER_CALL_PREFIX,
  UserVoiceError,
  withModelUser,
} from "../../src/agent/helpdesk/user-model.js";
import type { ReferenceSolver } from "../../src/agent/types.js";
import {
  formatAction,
  HELPDESK_INFO,
  HelpdeskEnv,
  helpdeskData,
  helpdeskEnv,
  MAX_CALLS_PER_TURN,
  mustKeepFacts,
  type UserVoice,
  type UserVoiceRequest,
} from "../../src/env/helpdesk/index.js";
import { mazeEnv } from "../../src/env/maze/index.js";
import type { Env } from "../../src/env/types.js";
import { runEvaluation } from "../../src/eval/evaluation.js";
import type { Model, ModelRequest } from "../../src/model/types.js";
import { type EpisodeRecord, runEpisode } from "../../src/rollout/episode.js";
import { RunStore } from "../../src/store/run-store.js";
import { ScriptedModel } from "../../src/testing/index.js";

const TEST_TASKS = Array.from({ length: 100 }, (_, i) => i);

async function play(
  env: Env,
  solver: ReferenceSolver,
  taskIndex: number,
  seed = 0,
): Promise<EpisodeRecord> {
  const context = { env: helpdeskEnv.info, taskIndex, seed, sampleIndex: 0 };
  return runEpisode({
    env,
    agent: solver(context),
    context,
    limits: { maxTurns: HELPDESK_INFO.maxSteps, timeoutMs: 60_000 },
  });
}

/** Everything an episode's grading produced: each step's labels and the final ground truth. */
function labels(record: EpisodeRecord) {
  return {
    reward: record.reward,
    outcome: record.outcome,
    turns: record.steps.map((s) => s.info.turn ?? s.info.lastTurn ?? null),
    groundTruth: record.steps.at(-1)?.info.groundTruth,
  };
}

const HI = /^Hi, I'm (.+?) \(employee (E\d{4})\)\./;
const HELLO = /^Hello, this is (.+?), employee (E\d{4})\./;

/**
 * The intent with the other greeting of the data's two (the rule-based assistant reads both;
 * one it cannot read would change what it does, and so, rightly, the labels).
 */
function otherGreeting(intent: string): string {
  if (HI.test(intent)) return intent.replace(HI, "Hello, this is $1, employee $2.");
  return intent.replace(HELLO, "Hi, I'm $1 (employee $2).");
}

/** A voice that says the intent with another greeting, and remembers what it was asked. */
function greetingVoice(requests: UserVoiceRequest[] = []): UserVoice {
  return {
    say: async (request) => {
      requests.push(request);
      return otherGreeting(request.intent);
    },
  };
}

const userLines = (text: string) =>
  text
    .split("\n")
    .filter((line) => line.startsWith("User: "))
    .map((line) => line.slice("User: ".length));

function request(overrides: Partial<UserVoiceRequest> = {}): UserVoiceRequest {
  const intent =
    overrides.intent ??
    "Hi, I'm Priya Shah (employee E1001). I'd like to book annual leave from 2026-03-02 until 2026-03-06.";
  return {
    employee: { name: "Priya Shah", id: "E1001" },
    company: "Tessellate Robotics",
    assistant: "Tess",
    goal: "to book leave through the assistant, giving the details it asks for",
    intent,
    facts: mustKeepFacts(intent),
    situation: { opensSession: true, newGoal: true, retry: false, unanswered: false },
    history: [],
    turn: 1,
    ...overrides,
  };
}

describe("the helpdesk with a voice", () => {
  it("marks its version, and keeps the plain one without a voice", () => {
    expect(new HelpdeskEnv().info).toBe(HELPDESK_INFO);
    const voiced = new HelpdeskEnv({ voice: greetingVoice() }).info;
    expect(voiced.version).toBe(`${HELPDESK_INFO.version}+user-model`);
    expect({ ...voiced, version: HELPDESK_INFO.version }).toEqual(HELPDESK_INFO);
  });

  it("grades and labels every test task as without a voice when the facts are kept", async () => {
    let voicedMessages = 0;
    for (const solver of [faultyHelpdeskAssistant, solveHelpdesk]) {
      for (const task of TEST_TASKS) {
        const plain = await play(new HelpdeskEnv(), solver, task);
        const requests: UserVoiceRequest[] = [];
        const voiced = await play(
          new HelpdeskEnv({ voice: greetingVoice(requests) }),
          solver,
          task,
        );
        expect(voiced.outcome, `task ${task}`).not.toBe("error");
        expect(labels(voiced), `task ${task}`).toEqual(labels(plain));
        // The voice's words reached the assistant: the greeting differs, the rest is the same.
        const [said] = userLines(voiced.initialObservation?.text ?? "");
        const [meant] = userLines(plain.initialObservation?.text ?? "");
        expect(said).not.toBe(meant);
        expect(said).toBe(otherGreeting(meant ?? ""));
        voicedMessages += requests.length;
      }
    }
    expect(voicedMessages).toBeGreaterThan(400);
  });

  it("asks the voice with the employee, the goal, the intent, its facts and the conversation", async () => {
    // Task 5: a leave request answered slot by slot, then a second leave goal.
    const plain = await play(new HelpdeskEnv(), faultyHelpdeskAssistant, 5);
    const intents = [
      ...userLines(plain.initialObservation?.text ?? ""),
      ...plain.steps.flatMap((s) => userLines(s.observation.text)),
    ];
    const requests: UserVoiceRequest[] = [];
    const voiced = await play(
      new HelpdeskEnv({ voice: greetingVoice(requests) }),
      faultyHelpdeskAssistant,
      5,
    );
    const [first, ...rest] = requests;
    const employee = helpdeskData().employees.find((e) => e.id === first?.employee.id);
    expect(first).toMatchObject({
      employee: { name: employee?.name },
      company: "Tessellate Robotics",
      assistant: "Tess",
      turn: 1,
      history: [],
      situation: { opensSession: true, newGoal: true, retry: false, unanswered: false },
    });
    expect(first?.intent).toContain(`employee ${first?.employee.id}`);
    expect(first?.facts.map((f) => f.value)).toContain(first?.employee.id);
    expect(first?.goal).toMatch(/^to book leave/);
    // Every message but the closing line was phrased, in order, with the turn numbers.
    expect(requests.map((r) => r.intent)).toEqual(intents.slice(0, -1));
    expect(requests.map((r) => r.turn)).toEqual(requests.map((_, i) => i + 1));
    // The history is the conversation as the assistant saw it: voiced messages and replies.
    const replies = voiced.steps
      .filter((s) => s.info.tool === "reply")
      .map((s) => JSON.parse(s.action.slice(s.action.indexOf("{"))).message as string);
    for (const [i, r] of rest.entries()) {
      expect(r.history).toHaveLength(2 * (i + 1));
      expect(r.history.at(-1)).toEqual({ role: "assistant", text: replies[i] });
      expect(r.history.at(-2)).toEqual({
        role: "user",
        text: otherGreeting((requests[i] as UserVoiceRequest).intent),
      });
      expect(r.situation.opensSession).toBe(false);
    }
    expect(rest.some((r) => r.situation.kind === "answer" && !r.situation.newGoal)).toBe(true);
    const next = rest.find((r) => r.situation.kind === "next-goal");
    expect(next?.situation).toMatchObject({ newGoal: true, previousGoal: "achieved" });
    // The session's closing line is the data's: no assistant answers it.
    const closing = userLines(voiced.steps.at(-1)?.observation.text ?? "")[0] ?? "";
    const { dialogue } = helpdeskData();
    expect([...dialogue.closingSuccess, ...dialogue.closingGiveUp]).toContain(closing);
  });

  it("tells the voice about retries, a goal given up and an unanswered message", async () => {
    const seen: UserVoiceRequest[] = [];
    for (const task of TEST_TASKS.slice(0, 40)) {
      const requests: UserVoiceRequest[] = [];
      await play(
        new HelpdeskEnv({ voice: greetingVoice(requests) }),
        faultyHelpdeskAssistant,
        task,
      );
      seen.push(...requests);
    }
    const retry = seen.find((r) => r.situation.retry);
    expect(retry?.situation).toMatchObject({ kind: "retry", newGoal: false });
    expect(seen.some((r) => r.situation.previousGoal === "abandoned")).toBe(true);

    // An assistant that never replies: after the tool-call limit the user speaks unanswered.
    const requests: UserVoiceRequest[] = [];
    const env = new HelpdeskEnv({ voice: greetingVoice(requests) });
    await env.reset(0);
    const route = formatAction({ tool: "route", args: { agent: "policy" } });
    let result = await env.step(route);
    for (let i = 1; i < MAX_CALLS_PER_TURN; i++) result = await env.step(route);
    expect(result.info.turn).toMatchObject({ quality: "failure", rcof: "E5" });
    expect(requests.at(-1)?.situation).toMatchObject({ unanswered: true });
    expect(requests.at(-1)?.intent).toMatch(/^Hello\? Are you still there\?/);
  });

  it("puts a multi-line message on one line, and ends the episode as an error when the voice fails", async () => {
    const env = new HelpdeskEnv({
      voice: { say: async (r) => `  ${r.intent.replace(". ", ".\n\n")}  ` },
    });
    const observation = await env.reset(3);
    const line = userLines(observation.text)[0] ?? "";
    expect(line).not.toContain("\n");
    expect(observation.text.split("\n").filter((l) => l.startsWith("User: "))).toHaveLength(1);

    let calls = 0;
    const failing: UserVoice = {
      say: async (r) => {
        calls += 1;
        if (calls > 1) throw new UserVoiceError("the user model broke down");
        return r.intent;
      },
    };
    const record = await play(new HelpdeskEnv({ voice: failing }), solveHelpdesk, 3);
    expect(record).toMatchObject({ outcome: "error", endReason: "env_error" });
    expect(record.error).toContain("the user model broke down");

    const empty = new HelpdeskEnv({ voice: { say: async () => "  \n " } });
    await expect(empty.reset(3)).rejects.toThrow(/empty message/);
  });
});

describe("mustKeepFacts", () => {
  it("finds ids, dates, numbers, leave types, urgency, locations and IT categories", () => {
    const facts = mustKeepFacts(
      "Hi, I'm Li Wei (employee E1022). I'd like to book study leave from 2026-03-02 until 2026-03-06. " +
        "Also my laptop battery drains within an hour. It's high priority. I'm based in the Leeds office. " +
        "Who signs off expenses under £500?",
    );
    expect(facts.map((f) => [f.kind, f.value])).toEqual([
      ["employee-id", "E1022"],
      ["date", "2026-03-02"],
      ["date", "2026-03-06"],
      ["number", "500"],
      ["leave-type", "study"],
      ["urgency", "high"],
      ["location", "Leeds"],
      ["it-category", "hardware"],
    ]);
    // The problem may be reworded: any of its category's keywords keeps it.
    expect(facts.at(-1)?.forms).toContain("monitor");
    expect(facts.at(-1)?.label).toBe("laptop or battery");
    expect(mustKeepFacts("I work remotely.")).toEqual([
      { kind: "location", value: "Remote", forms: ["remote"], label: "remote" },
    ]);
    // Courtesies carry no fact; nor does a keyword inside a longer word.
    expect(mustKeepFacts("Thanks, that's all for today.")).toEqual([]);
    expect(mustKeepFacts("When do I return accessories?")).toEqual([]);
  });
});

describe("the model voice", () => {
  const intentOf = (req: ModelRequest) =>
    /Your next message must say: (.*)\n/.exec(req.messages.at(1)?.content ?? "")?.[1] ?? "";

  it("says the intent in the model's words when they keep every fact", async () => {
    const reply =
      'Employee: "Good morning, Priya Shah here (E1001). Could I book annual leave from 2026-03-02 until 2026-03-06?"';
    const model = new ScriptedModel([reply]);
    const voice = createModelUserVoice(model, { params: { temperature: 0.7 }, sampleIndex: 2 });
    const said = await voice.say(request());
    expect(said).toBe(
      "Good morning, Priya Shah here (E1001). Could I book annual leave from 2026-03-02 until 2026-03-06?",
    );
    model.assertDone();
    const [sent] = model.requests;
    expect(sent?.params).toEqual({ temperature: 0.7 });
    expect(sent?.sampleIndex).toBe(2);
    expect(sent?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    const system = sent?.messages[0]?.content ?? "";
    expect(system).toContain("You are Priya Shah (employee id E1001)");
    expect(system).toMatch(/never the assistant/);
    expect(system).toMatch(/Keep every fact of the intent exactly/);
    expect(intentOf(sent as ModelRequest)).toBe(request().intent);
    expect(sent?.messages[1]?.content).toContain(
      "Keep exactly: E1001, 2026-03-02, 2026-03-06, annual leave.",
    );
    expect(sent?.messages[1]?.content).toContain("This is your first message");
  });

  it("shows the conversation so far and the situation", async () => {
    const model = new ScriptedModel([
      "That's still not it: how many study leave days do I have left?",
    ]);
    await createModelUserVoice(model).say(
      request({
        intent: "That's not what I asked: how many study leave days do I have left?",
        facts: [],
        situation: {
          opensSession: false,
          newGoal: false,
          retry: true,
          kind: "retry",
          unanswered: false,
        },
        history: [
          {
            role: "user",
            text: "Hello, this is Priya, E1001. How much study leave do I have left?",
          },
          { role: "assistant", text: "Study leave is for exams." },
        ],
        turn: 2,
      }),
    );
    const prompt = model.requests[0]?.messages[1]?.content ?? "";
    expect(prompt).toContain(
      "You: Hello, this is Priya, E1001. How much study leave do I have left?\nTess: Study leave is for exams.",
    );
    expect(prompt).toContain("did not help: you ask again");
    expect(prompt).not.toContain("Keep exactly");
  });

  it("asks once more with a one-line correction when the first reply drops a fact", async () => {
    const model = new ScriptedModel([
      "Hi! Priya here (E1001). I'd like some annual leave starting 2026-03-02, please.",
      "Hi! Priya here (E1001). I'd like annual leave from 2026-03-02 through 2026-03-06, please.",
    ]);
    const said = await createModelUserVoice(model).say(request());
    expect(said).toBe(
      "Hi! Priya here (E1001). I'd like annual leave from 2026-03-02 through 2026-03-06, please.",
    );
    model.assertDone();
    const retry = model.requests[1];
    expect(retry?.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(retry?.messages[2]?.content).toBe(
      "Hi! Priya here (E1001). I'd like some annual leave starting 2026-03-02, please.",
    );
    const correction = retry?.messages[3]?.content ?? "";
    expect(correction).toContain("it leaves out 2026-03-06");
    expect(correction).not.toContain("\n");
  });

  it("throws a clear error when the corrected reply fails too, never sending the intent instead", async () => {
    const model = new ScriptedModel([
      "Tess: Sure, I can help you with that!",
      "Hi, it's Priya. I want to book leave next week, for 5 days.",
    ]);
    const voice = createModelUserVoice(model);
    const error = await voice.say(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserVoiceError);
    expect((error as Error).message).toMatch(/failed its checks twice/);
    expect((error as Error).message).toContain(
      "it leaves out E1001, 2026-03-02, 2026-03-06, annual leave",
    );
    expect((error as Error).message).toContain("it adds 5, which the intent does not say");
    expect(model.requests[1]?.messages[3]?.content).toContain("it speaks as Tess");
    model.assertDone();
  });

  it("checks cleaning, length, role, meta talk and invented facts", () => {
    const r = request();
    const ok = "Morning! E1001 here: annual leave from 2026-03-02 until 2026-03-06, please.";
    expect(checkUserMessage(ok, r)).toEqual({ ok: true, text: ok });
    expect(cleanUserMessage(`**Priya:** "${ok}"`, r)).toBe(ok);
    expect(cleanUserMessage(`  “${ok}”  `, r)).toBe(ok);
    const problems = (text: string) => {
      const check = checkUserMessage(text, r);
      return check.ok ? [] : check.problems;
    };
    expect(problems('""')).toEqual(["the message is empty"]);
    expect(problems(`${ok} ${"Really. ".repeat(60)}`)[0]).toMatch(/^it is too long/);
    expect(problems(`${ok}\nAssistant: Done!`)).toEqual(["it speaks as Tess, not as the employee"]);
    expect(problems(`Here is the message: ${ok}`)).toEqual([
      "it talks about the task instead of being the message",
    ]);
    expect(problems(`${ok} I work remotely from Lisbon.`)).toEqual([
      "it adds Lisbon, remote, which the intent does not say",
    ]);
    // What the conversation already holds is no invention: an id the assistant gave, say.
    const later = request({
      intent: "Great, thank you. What is my study leave balance?",
      facts: mustKeepFacts("Great, thank you. What is my study leave balance?"),
      history: [{ role: "assistant", text: "Filed as request LR-6972." }],
    });
    expect(
      checkUserMessage("Thanks for LR-6972! And what's my study leave balance?", later),
    ).toMatchObject({
      ok: true,
    });
    expect(
      checkUserMessage("Thanks! What's my study leave balance for 2026-05-01?", later).ok,
    ).toBe(false);
  });
});

/** A user model that says each intent as it is: the run must then equal the plain one. */
function echoModel(): Model & { calls: number } {
  const model = {
    id: "echo",
    calls: 0,
    async complete(req: ModelRequest) {
      model.calls += 1;
      const intent = /Your next message must say: (.*)\n/.exec(req.messages[1]?.content ?? "")?.[1];
      return {
        content: intent ?? "",
        toolCalls: [],
        usage: { inputTokens: 10, outputTokens: 5 },
        finishReason: "stop",
        model: "echo",
      };
    },
  };
  return model;
}

describe("withModelUser", () => {
  it("stores the user's calls with their episode, as the user's, and leaves the labels as they were", async () => {
    const model = echoModel();
    const assistant = { name: "assistant", create: faultyHelpdeskAssistant };
    const { env, agent } = withModelUser(helpdeskEnv, assistant, { model });
    expect(env.info.version).toBe(`${HELPDESK_INFO.version}+user-model`);
    const options = { tasks: "0-11", samples: 2, concurrency: 5 } as const;
    const store = RunStore.open(":memory:");
    try {
      const voiced = await runEvaluation({ ...options, env, agent, store, runId: "voiced" });
      const plain = await runEvaluation({ ...options, env: helpdeskEnv, agent: assistant, store });
      expect(voiced.metrics.errors).toBe(0);
      expect(voiced.episodes).toHaveLength(24);
      let stored = 0;
      for (const episode of voiced.episodes) {
        const twin = plain.episodes.find(
          (e) => e.taskIndex === episode.taskIndex && e.sampleIndex === episode.sampleIndex,
        );
        const steps = store.steps(episode.id);
        expect(steps.at(-1)?.info.groundTruth).toEqual(
          store.steps(twin?.id ?? -1).at(-1)?.info.groundTruth,
        );
        expect(episode.reward).toBe(twin?.reward);
        const calls = store.calls(episode.id);
        expect(calls.every((c) => c.model === `${USER_CALL_PREFIX}echo`)).toBe(true);
        // One call per message the assistant read: the opening and one per turn but the last.
        const closed = steps.filter((s) => s.info.turn !== undefined);
        expect(calls).toHaveLength(closed.length);
        // Each is stored with the turn whose observation holds the message it phrased.
        const turnsWithMessage = [0, ...closed.map((s) => s.turn + 1)].slice(0, closed.length);
        expect(calls.map((c) => c.turn)).toEqual(turnsWithMessage);
        stored += calls.length;
      }
      expect(stored).toBe(model.calls);
    } finally {
      store.close();
    }
  });

  it("refuses any environment but the helpdesk", () => {
    const assistant = { name: "assistant", create: faultyHelpdeskAssistant };
    expect(() => withModelUser(mazeEnv, assistant, { model: echoModel() })).toThrow(
      /helpdesk environment only/,
    );
  });
});
