/**
 * Export of RL rollouts (src/improve/rl/export) on hand-built trajectories: AgentTraj's loss
 * flags and chat's masks, each advantage on its own agent turn, the policy's reply shown rather
 * than its action, token fields when the policy gave them, errored and excluded samples left out
 * and counted, and both formats parsing back (a bad line failing with one clear message).
 */
import { describe, expect, it } from "vitest";
import type { Observation } from "../../../src/env/types.js";
import {
  type AdvantageResult,
  computeAdvantages,
  type Estimate,
} from "../../../src/improve/rl/estimators/index.js";
import {
  exportRollouts,
  parseRolloutAgentTraj,
  parseRolloutChat,
  parseRolloutChatLine,
  RolloutFormatError,
  selectExportable,
  toRolloutAgentTraj,
  toRolloutChatLine,
} from "../../../src/improve/rl/export/index.js";
import { layoutSample } from "../../../src/improve/rl/rollout/collect.js";
import type {
  AgentTurnRecord,
  PolicyDecision,
  Trajectory,
} from "../../../src/improve/rl/rollout/types.js";
import { toAgentTraj } from "../../../src/store/export.js";

const ENV = { name: "maze", version: "1.1.0", instruction: "Find the goal. Actions: up, down." };

interface Spec {
  task?: number;
  group?: number;
  sample?: number;
  decisions: PolicyDecision[];
  reward?: number;
  success?: boolean;
  end?: "done" | "horizon";
  error?: string;
}

const obs = (text: string): Observation => ({ text, availableActions: ["up", "down"] });

/** A trajectory as collectGroups makes it, with its estimators' layout. */
function trajectory(spec: Spec): Trajectory {
  const group = spec.group ?? 0;
  const turns: AgentTurnRecord[] = spec.decisions.map((d, t) => ({
    ...d,
    turn: t,
    envReward: 0,
    observation: obs(`obs ${t + 1}`),
  }));
  const reward = spec.error === undefined ? (spec.reward ?? 0) : 0;
  return {
    taskIndex: spec.task ?? 3,
    sampleIndex: spec.sample ?? 0,
    group,
    greedy: false,
    resetSeed: 0,
    initialObservation: obs("obs 0"),
    turns,
    reward,
    success: spec.error === undefined && (spec.success ?? reward >= 1),
    end: spec.error !== undefined ? "error" : (spec.end ?? "done"),
    ...(spec.error !== undefined ? { error: spec.error } : {}),
    sample: layoutSample(group, turns, true, reward, spec.error),
    envSteps: turns.length,
    envMs: 1,
    policyMs: 1,
  };
}

/** Estimates with distinct numbers per agent turn: turn t gets advantage `base + t`. */
function estimateFor(t: Trajectory, base: number): Estimate {
  const n = t.sample.mask.length;
  const advantages = new Array<number>(n).fill(0);
  const returns = new Array<number>(n).fill(0);
  t.turns.forEach((_, k) => {
    advantages[2 * k + 1] = base + k;
    returns[2 * k + 1] = 10 * (base + k);
  });
  return { advantages, returns };
}

const THREE_TURNS: PolicyDecision[] = [
  { action: "up", reply: "Thought: the goal is north.\nAction: up", logprob: -0.5 },
  { action: "down", logprob: -1.25 },
  {
    action: "up",
    reply: "Action: up",
    logprob: -0.1,
    tokenIds: [11, 12, 13],
    tokenLogprobs: [-0.01, -0.02, -0.07],
  },
];

describe("AgentTraj items", () => {
  const t = trajectory({ task: 3, group: 2, sample: 1, decisions: THREE_TURNS, reward: 1 });
  const exported = { trajectory: t, advantages: [0.5, 1.5, 2.5], returns: [5, 15, 25] };
  const item = toRolloutAgentTraj(exported, { env: ENV, estimator: "gae" });

  it("has clade export's conversation, with trained gpt turns carrying their advantages", () => {
    expect(item.item_id).toBe("lmrlgym_maze_3");
    expect(item.conversations).toEqual([
      { from: "human", loss: null, value: ENV.instruction },
      { from: "gpt", loss: false, value: "OK." },
      { from: "human", loss: null, value: "obs 0" },
      { from: "gpt", loss: true, value: "Thought: the goal is north.\nAction: up", advantage: 0.5 },
      { from: "human", loss: null, value: "obs 1" },
      { from: "gpt", loss: true, value: "down", advantage: 1.5 },
      { from: "human", loss: null, value: "obs 2" },
      { from: "gpt", loss: true, value: "Action: up", advantage: 2.5 },
    ]);
    expect(item).toMatchObject({ reward: 1, success: true, group: 2, sample: 1, estimator: "gae" });
  });

  it("lays the conversation out exactly as the stored-run export does", () => {
    const plain = item.conversations.map(({ advantage: _, ...turn }) => turn);
    const source = {
      env: "maze",
      instruction: ENV.instruction,
      episode: {
        id: 1,
        taskIndex: 3,
        sampleIndex: 1,
        seed: 0,
        outcome: "success" as const,
        reward: 1,
        endReason: "done" as const,
        error: null,
        initialObservation: obs("obs 0"),
        turns: 3,
        parseErrors: 0,
        startedAt: "",
        durationMs: 0,
      },
      steps: t.turns.map((turn) => ({
        turn: turn.turn,
        action: turn.action,
        message: turn.reply ?? turn.action,
        observation: turn.observation,
        reward: 0,
        done: false,
        elapsedMs: 0,
        info: {},
      })),
    };
    expect(plain).toEqual(toAgentTraj(source).conversations);
  });

  it("names items clade's way on request", () => {
    const clade = toRolloutAgentTraj(exported, { env: ENV, estimator: "gae", itemIds: "clade" });
    expect(clade.item_id).toBe("maze_3");
  });
});

describe("chat lines", () => {
  const t = trajectory({ task: 4, group: 1, sample: 2, decisions: THREE_TURNS, reward: 0.25 });
  const line = toRolloutChatLine(
    { trajectory: t, advantages: [-1, 0, 1], returns: [0.1, 0.2, 0.3] },
    { env: ENV, estimator: "reinforce_plus_plus" },
  );

  it("masks context 0 and assistant turns 1, each with its own advantage and return", () => {
    expect(line.messages.map((m) => [m.role, m.mask])).toEqual([
      ["system", 0],
      ["user", 0],
      ["assistant", 1],
      ["user", 0],
      ["assistant", 1],
      ["user", 0],
      ["assistant", 1],
    ]);
    const assistants = line.messages.filter((m) => m.role === "assistant");
    expect(assistants.map((m) => m.advantage)).toEqual([-1, 0, 1]);
    expect(assistants.map((m) => m.return)).toEqual([0.1, 0.2, 0.3]);
    for (const m of line.messages.filter((m) => m.role !== "assistant")) {
      expect(Object.keys(m).sort()).toEqual(["content", "mask", "role"]);
    }
  });

  it("shows the reply, falling back to the action; token fields only where given", () => {
    const [first, second, third] = line.messages.filter((m) => m.role === "assistant");
    expect(first?.content).toBe("Thought: the goal is north.\nAction: up");
    expect(second?.content).toBe("down");
    expect(first?.logprob).toBe(-0.5);
    expect(first).not.toHaveProperty("token_ids");
    expect(third).toMatchObject({
      content: "Action: up",
      token_ids: [11, 12, 13],
      token_logprobs: [-0.01, -0.02, -0.07],
    });
  });

  it("names the trajectory: env, task, group, sample, outcome and estimator", () => {
    const { messages: _, ...top } = line;
    expect(top).toEqual({
      env: "maze",
      env_version: "1.1.0",
      task: 4,
      group: 1,
      sample: 2,
      reset_seed: 0,
      reward: 0.25,
      success: false,
      end: "done",
      estimator: "reinforce_plus_plus",
    });
    expect(line.messages[0]).toEqual({ role: "system", content: ENV.instruction, mask: 0 });
  });
});

describe("which samples are exported", () => {
  // Two groups: group 0 has a success, a failure and an errored sample; group 1 two samples.
  const trajectories = [
    trajectory({ group: 0, sample: 0, task: 3, decisions: THREE_TURNS, reward: 1 }),
    trajectory({ group: 0, sample: 1, task: 3, decisions: THREE_TURNS.slice(0, 1), reward: 0 }),
    trajectory({ group: 0, sample: 2, task: 3, decisions: [], error: "Error: env broke" }),
    trajectory({ group: 1, sample: 0, task: 5, decisions: THREE_TURNS.slice(0, 2), reward: 1 }),
    trajectory({ group: 1, sample: 1, task: 5, decisions: THREE_TURNS.slice(0, 2), reward: 0 }),
  ];

  it("leaves errored samples and those the estimator excluded out, and counts them", () => {
    const advantages: AdvantageResult = {
      estimates: [
        estimateFor(trajectories[0] as Trajectory, 1),
        estimateFor(trajectories[1] as Trajectory, 2),
        null,
        estimateFor(trajectories[3] as Trajectory, 3),
        null, // e.g. ReMax without a baseline
      ],
      excluded: [],
    };
    const selection = selectExportable(trajectories, advantages);
    expect(selection.errored).toBe(1);
    expect(selection.excluded).toBe(1);
    expect(selection.exported.map((e) => [e.trajectory.group, e.trajectory.sampleIndex])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
    ]);
    // Turn t reads position 2t + 1.
    expect(selection.exported[0]?.advantages).toEqual([1, 2, 3]);
    expect(selection.exported[0]?.returns).toEqual([10, 20, 30]);
    expect(selection.exported[2]?.advantages).toEqual([3, 4]);
  });

  it("refuses estimates that do not line up with the trajectories", () => {
    expect(() => selectExportable(trajectories, { estimates: [null], excluded: [] })).toThrow(
      /1 estimates for 5 trajectories/,
    );
  });

  it("GRPO's advantages reach every turn of a sample, errored samples left out of the group", () => {
    const samples = trajectories.map((t) => t.sample);
    const result = computeAdvantages("grpo", samples);
    const file = exportRollouts(trajectories, result, {
      format: "chat",
      env: ENV,
      estimator: "grpo",
    });
    expect(file).toMatchObject({ exported: 4, errored: 1, excluded: 0 });
    const lines = parseRolloutChat(file.text);
    const perSample = lines.map((l) =>
      l.messages.filter((m) => m.role === "assistant").map((m) => m.advantage),
    );
    // Within each group the success is above 0 and the failure below, on every turn alike.
    for (const advantages of perSample) expect(new Set(advantages).size).toBe(1);
    expect((perSample[0]?.[0] as number) > 0).toBe(true);
    expect((perSample[1]?.[0] as number) < 0).toBe(true);
    expect(perSample[0]?.[0]).toBeCloseTo(-(perSample[1]?.[0] as number), 12);
  });
});

describe("parsing back", () => {
  const trajectories = [
    trajectory({ group: 0, sample: 0, task: 3, decisions: THREE_TURNS, reward: 1 }),
    trajectory({ group: 0, sample: 1, task: 3, decisions: THREE_TURNS.slice(1), reward: 0 }),
  ];
  const advantages = computeAdvantages(
    "gae",
    trajectories.map((t) => ({ ...t.sample, values: t.sample.mask.map(() => 0.5) })),
    { gamma: 0.9, lam: 0.95 },
  );
  const options = { env: ENV, estimator: "gae" as const };

  it("AgentTraj: the file is a JSON array of the items, unchanged", () => {
    const file = exportRollouts(trajectories, advantages, { ...options, format: "agenttraj" });
    const items = parseRolloutAgentTraj(file.text);
    const expected = selectExportable(trajectories, advantages).exported.map((e) =>
      toRolloutAgentTraj(e, options),
    );
    expect(items).toEqual(expected);
    expect(file.text.startsWith("[\n{")).toBe(true);
    // GAE's advantages differ from turn to turn.
    const first = items[0]?.conversations.filter((c) => c.loss === true).map((c) => c.advantage);
    expect(new Set(first).size).toBe(3);
  });

  it("chat: one line per trajectory, unchanged", () => {
    const file = exportRollouts(trajectories, advantages, { ...options, format: "chat" });
    expect(file.text.trimEnd().split("\n")).toHaveLength(2);
    const lines = parseRolloutChat(file.text);
    const expected = selectExportable(trajectories, advantages).exported.map((e) =>
      toRolloutChatLine(e, options),
    );
    expect(lines).toEqual(expected);
  });

  it("an empty collection writes an empty file that parses", () => {
    const none = { estimates: [], excluded: [] };
    expect(
      parseRolloutAgentTraj(exportRollouts([], none, { ...options, format: "agenttraj" }).text),
    ).toEqual([]);
    expect(parseRolloutChat(exportRollouts([], none, { ...options, format: "chat" }).text)).toEqual(
      [],
    );
  });

  const good = toRolloutChatLine(
    { trajectory: trajectories[0] as Trajectory, advantages: [1, 2, 3], returns: [1, 2, 3] },
    options,
  );
  const lineWith = (edit: (line: Record<string, unknown>) => void): string => {
    const copy = JSON.parse(JSON.stringify(good)) as Record<string, unknown>;
    edit(copy);
    return JSON.stringify(copy);
  };
  const messages = (line: Record<string, unknown>) => line.messages as Record<string, unknown>[];

  it.each([
    [
      "an assistant message without its advantage",
      lineWith((l) => {
        delete messages(l)[2]?.advantage;
      }),
      /^line 2: messages\.2\.advantage: an assistant message carries its advantage$/,
    ],
    [
      "a user message with mask 1",
      lineWith((l) => {
        (messages(l)[1] as Record<string, unknown>).mask = 1;
      }),
      /^line 2: messages\.1\.mask: a user message has mask 0$/,
    ],
    [
      "an advantage on a user message",
      lineWith((l) => {
        (messages(l)[3] as Record<string, unknown>).advantage = 0.5;
      }),
      /^line 2: messages\.3\.advantage: only assistant messages carry advantage$/,
    ],
    [
      "token ids and log-probs of different lengths",
      lineWith((l) => {
        (messages(l)[6] as Record<string, unknown>).token_logprobs = [-1];
      }),
      /^line 2: messages\.6\.token_logprobs: 1 token_logprobs for 3 token_ids$/,
    ],
    ["a line that is not JSON", "{not json", /^line 2: not JSON: /],
    [
      "an unknown estimator",
      lineWith((l) => {
        l.estimator = "a2c";
      }),
      /^line 2: estimator: /,
    ],
  ])("chat: %s fails with one line naming it", (_, bad, message) => {
    const text = `${JSON.stringify(good)}\n${bad}\n`;
    expect(() => parseRolloutChat(text)).toThrow(RolloutFormatError);
    try {
      parseRolloutChat(text);
    } catch (error) {
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toMatch(/\n/);
    }
  });

  it("AgentTraj: a trained turn without its advantage names the item and the turn", () => {
    const item = toRolloutAgentTraj(
      { trajectory: trajectories[0] as Trajectory, advantages: [1, 2, 3], returns: [1, 2, 3] },
      options,
    );
    const bad = JSON.parse(JSON.stringify(item));
    delete bad.conversations[5].advantage;
    expect(() => parseRolloutAgentTraj(JSON.stringify([item, bad]))).toThrow(
      /^item 1 \(lmrlgym_maze_3\): conversations\.5\.advantage: a trained gpt turn \(loss true\) carries its advantage$/,
    );
    expect(() => parseRolloutAgentTraj("{}")).toThrow(/one JSON array of items/);
    expect(() => parseRolloutChatLine({ ...good, messages: [] })).toThrow(/system message/);
  });
});
