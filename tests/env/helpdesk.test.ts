import { describe, expect, it } from "vitest";
import { faultyHelpdeskAssistant, solveHelpdesk } from "../../src/agent/helpdesk/assistant.js";
import { freshIntent } from "../../src/agent/helpdesk/nlu.js";
import { resolveAgent, UnknownAgentError } from "../../src/agent/registry.js";
import type { ReferenceSolver } from "../../src/agent/types.js";
import {
  BACKEND_FAULTS,
  FAULT_CAUSE,
  type FaultName,
  formatAction,
  type GoalKind,
  generateSession,
  type HelpdeskGroundTruth,
  helpdeskData,
  helpdeskEnv,
  isDecline,
  MAX_CALLS_PER_TURN,
  plannedFault,
  RCOF_CODES,
  type Rcof,
  scorePassages,
  searchHandbook,
  TOOL_AGENT,
  type TurnRecord,
} from "../../src/env/helpdesk/index.js";
import { mazeEnv } from "../../src/env/maze/index.js";
import { type EpisodeRecord, runEpisode } from "../../src/rollout/episode.js";
import { ScriptedModel } from "../../src/testing/index.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const TEST_TASKS = Array.from({ length: 100 }, (_, i) => i);

function groundTruth(record: EpisodeRecord): HelpdeskGroundTruth {
  const last = record.steps.at(-1);
  if (!last?.done) throw new Error(`task ${record.taskIndex}: the episode did not end`);
  return last.info.groundTruth as HelpdeskGroundTruth;
}

async function play(solver: ReferenceSolver, task: number, seed = 0): Promise<EpisodeRecord> {
  return runReferenceEpisode(helpdeskEnv, solver, task, seed);
}

/** The steps of each user turn: the tool calls, then the step that closed the turn. */
function turnsOf(record: EpisodeRecord) {
  const turns: { record: TurnRecord; tools: string[] }[] = [];
  let tools: string[] = [];
  for (const step of record.steps) {
    const turn = step.info.turn as TurnRecord | undefined;
    if (typeof step.info.tool === "string" && step.info.tool !== "reply" && !step.info.invalid) {
      tools.push(step.info.tool);
    }
    if (turn) {
      turns.push({ record: turn, tools });
      tools = [];
    }
  }
  return turns;
}

/**
 * The fault that should act on a turn: the planned one, where the turn made the call a backend
 * fault needs (a timeout hits any backend call, a truncation a read, a wrong or empty result a
 * search); an assistant-side fault always acts.
 */
function effectiveFault(task: number, turn: TurnRecord, tools: string[]): FaultName | null {
  const fault = plannedFault(task, 0, turn.turn_number, turn.goal_kind);
  if (fault === null || !BACKEND_FAULTS.has(fault)) return fault;
  const backend = tools.filter((t) => t !== "route");
  const needs =
    fault === "timeout"
      ? backend
      : backend.filter((t) => t === (fault === "truncation" ? "read_passage" : "search_handbook"));
  return needs.length > 0 ? fault : null;
}

describe("helpdesk data", () => {
  const data = helpdeskData();

  it("has a handbook of 25-40 passages whose facts each appear in exactly one passage", () => {
    expect(data.passages.length).toBeGreaterThanOrEqual(25);
    expect(data.passages.length).toBeLessThanOrEqual(40);
    for (const passage of data.passages) {
      expect(passage.text).not.toContain("?");
      expect(isDecline(passage.text), passage.id).toBe(false);
      for (const fact of passage.facts) {
        const holders = data.passages.filter((p) =>
          p.text.toLowerCase().includes(fact.answer.toLowerCase()),
        );
        expect(
          holders.map((p) => p.id),
          fact.answer,
        ).toEqual([passage.id]);
        // A truncation cuts just before the fact, so some text must come first.
        expect(passage.text.toLowerCase().indexOf(fact.answer.toLowerCase())).toBeGreaterThan(0);
      }
    }
  });

  it("retrieves every question's passage first, with the user's prefixes too", () => {
    const prefixes = ["", ...data.dialogue.afterSuccess, ...data.dialogue.policyRetry];
    for (const passage of data.passages) {
      for (const question of passage.facts.flatMap((f) => f.questions)) {
        for (const prefix of prefixes) {
          expect(searchHandbook(`${prefix} ${question}`)[0]?.id, question).toBe(passage.id);
        }
      }
    }
  });

  it("lets the assistant's router tell every phrasing's intent", () => {
    for (const passage of data.passages) {
      for (const q of passage.facts.flatMap((f) => f.questions))
        expect(freshIntent(q), q).toBe("policy");
    }
    for (const q of data.dialogue.ood) {
      for (const prefix of ["", ...data.dialogue.afterSuccess, ...data.dialogue.afterGiveUp]) {
        expect(freshIntent(`${prefix} ${q}`), q).toBe("ood");
      }
    }
    for (const template of [...data.dialogue.balance.open, ...data.dialogue.balance.retry]) {
      for (const type of data.leaveTypes)
        expect(freshIntent(template.replace("{type}", type))).toBe("balance");
    }
  });

  it("gives every employee distinct balances per leave type", () => {
    for (const employee of data.employees) {
      expect(new Set(Object.values(employee.balances)).size).toBe(data.leaveTypes.length);
    }
  });
});

describe("helpdesk env", () => {
  it("is registered with its info and an instruction naming every tool", () => {
    const { info } = helpdeskEnv;
    expect(info.name).toBe("helpdesk");
    expect(info.successThreshold).toBe(1);
    for (const tool of ["route", "reply", ...Object.keys(TOOL_AGENT)])
      expect(info.instruction).toContain(tool);
  });

  it("generates sessions deterministically and cheaply", () => {
    expect(generateSession(7, 3)).toEqual(generateSession(7, 3));
    expect(generateSession(7, 0)).not.toEqual(generateSession(7, 1));
    generateSession(0);
    const started = performance.now();
    for (let task = 0; task < 500; task++) generateSession(task);
    expect((performance.now() - started) / 500).toBeLessThan(1);
  });

  it("plays the same episode twice for the same task and seed", async () => {
    for (const task of [3, 42]) {
      const a = await play(faultyHelpdeskAssistant, task, 5);
      const b = await play(faultyHelpdeskAssistant, task, 5);
      const strip = (r: EpisodeRecord) => r.steps.map(({ elapsedMs: _, ...rest }) => rest);
      expect(strip(a)).toEqual(strip(b));
    }
  });

  it("is solved by the reference on every test task: every goal, every turn", async () => {
    for (const task of TEST_TASKS) {
      const record = await play(solveHelpdesk, task);
      expect(record.reward, `task ${task}`).toBe(1);
      const truth = groundTruth(record);
      expect(truth.goals.length).toBe(generateSession(task).goals.length);
      expect(truth.turns.every((t) => t.quality === "success" && t.rcof === null)).toBe(true);
    }
  });

  it("labels the faulty assistant's turns exactly as the injected faults say", async () => {
    const goalCauses = new Map<Rcof, number>();
    const turnCauses = new Map<Rcof, number>();
    let goals = 0;
    let achieved = 0;
    for (const task of TEST_TASKS) {
      const record = await play(faultyHelpdeskAssistant, task);
      for (const { record: turn, tools } of turnsOf(record)) {
        const fault = effectiveFault(task, turn, tools);
        const where = `task ${task} turn ${turn.turn_number} (${fault ?? "no fault"}): ${turn.reason}`;
        expect(turn.quality, where).toBe(fault === null ? "success" : "failure");
        expect(turn.rcof, where).toBe(fault === null ? null : FAULT_CAUSE[fault]);
        if (turn.rcof) turnCauses.set(turn.rcof, (turnCauses.get(turn.rcof) ?? 0) + 1);
      }
      const truth = groundTruth(record);
      for (const goal of truth.goals) {
        goals += 1;
        if (goal.success) achieved += 1;
        if (goal.rcof) goalCauses.set(goal.rcof, (goalCauses.get(goal.rcof) ?? 0) + 1);
      }
      expect(record.reward).toBeCloseTo(
        truth.goals.filter((g) => g.success).length / generateSession(task).goals.length,
      );
    }
    for (const code of RCOF_CODES) {
      expect(turnCauses.get(code) ?? 0, code).toBeGreaterThan(0);
      expect(goalCauses.get(code) ?? 0, code).toBeGreaterThan(0);
    }
    const gsr = (100 * achieved) / goals;
    expect(gsr).toBeGreaterThan(60);
    expect(gsr).toBeLessThan(90);
  });

  it("numbers turns from 1 and marks a new goal exactly where the goal changes", async () => {
    let multiTurnForms = 0;
    let followUps = 0;
    let ood = 0;
    for (const task of TEST_TASKS.slice(0, 50)) {
      const record = await play(faultyHelpdeskAssistant, task);
      const truth = groundTruth(record);
      const records = turnsOf(record).map((t) => t.record);
      expect(truth.turns.map((t) => t.turn_number)).toEqual(records.map((_, i) => i + 1));
      expect(truth.turns[0]?.is_new_goal).toBe(true);
      records.forEach((turn, i) => {
        expect(turn.is_new_goal).toBe(i === 0 || records[i - 1]?.goal_id !== turn.goal_id);
      });
      expect(truth.goals.flatMap((g) => g.turns)).toEqual(truth.turns.map((t) => t.turn_number));
      for (const goal of truth.goals) {
        const turns = truth.turns.filter((t) => goal.turns.includes(t.turn_number));
        expect(goal.success).toBe(turns.every((t) => t.quality === "success"));
        expect(goal.rcof).toBe(turns.find((t) => t.quality === "failure")?.rcof ?? null);
        const kinds: GoalKind[] = ["leave", "ticket"];
        if (kinds.includes(goal.kind) && goal.success && goal.turns.length > 1) multiTurnForms += 1;
        if (goal.kind === "policy" && goal.success && goal.turns.length === 2) followUps += 1;
        if (goal.kind === "ood") ood += 1;
      }
    }
    expect(multiTurnForms).toBeGreaterThan(5);
    expect(followUps).toBeGreaterThan(3);
    expect(ood).toBeGreaterThan(3);
  });

  it("answers bad actions with a clear observation, never a crash", async () => {
    const env = helpdeskEnv.create();
    await env.reset(0);
    const cases: [string, RegExp][] = [
      ["hello there", /could not parse the action.*Action: reply with/],
      [formatAction({ tool: "launch", args: {} }), /unknown tool "launch"/],
      [
        formatAction({ tool: "search_handbook", args: { query: "leave" } }),
        /belongs to the policy agent; route to it first/,
      ],
      [formatAction({ tool: "route", args: { agent: "sales" } }), /route takes/],
      [formatAction({ tool: "reply", args: {} }), /reply takes/],
    ];
    for (const [action, error] of cases) {
      const result = await env.step(action);
      expect(result.observation.text).toMatch(/^Error: /);
      expect(result.observation.text).toMatch(error);
      expect(result.done).toBe(false);
      expect(result.info.invalid).toBe(true);
    }
    await env.step(formatAction({ tool: "route", args: { agent: "policy" } }));
    const bad = await env.step(formatAction({ tool: "read_passage", args: { id: "P99" } }));
    expect(bad.observation.text).toMatch(/^Error: no passage "P99"/);
  });

  it("closes a turn unanswered after too many tool calls, with cause E5", async () => {
    const task = TEST_TASKS.find((t) => generateSession(t).goals[0]?.kind === "policy") ?? 0;
    const env = helpdeskEnv.create();
    await env.reset(task);
    let last = await env.step(formatAction({ tool: "route", args: { agent: "policy" } }));
    for (let i = 1; i < MAX_CALLS_PER_TURN; i++) {
      last = await env.step(formatAction({ tool: "route", args: { agent: "policy" } }));
    }
    expect(last.observation.text).toMatch(
      /No reply after \d+ tool calls[\s\S]*User: Hello\? Are you still there\?/,
    );
    expect(last.info.turn).toMatchObject({ turn_number: 1, quality: "failure", rcof: "E5" });
  });

  it("ends at the step limit with the open turn failed and the ground truth", async () => {
    const env = helpdeskEnv.create();
    await env.reset(1);
    let result = await env.step("nonsense");
    for (let i = 1; i < helpdeskEnv.info.maxSteps && !result.done; i++) {
      result = await env.step(formatAction({ tool: "reply", args: { message: "Hmm." } }));
    }
    expect(result.done).toBe(true);
    expect(result.info.groundTruth).toBeDefined();
    expect(result.reward).toBeLessThan(1);
  });

  it("runs the random agent to the end of its episodes", async () => {
    const factory = resolveAgent("random", helpdeskEnv);
    for (const task of [0, 1, 2, 3]) {
      const env = helpdeskEnv.create();
      const context = { env: helpdeskEnv.info, taskIndex: task, seed: 0, sampleIndex: 0 };
      const record = await runEpisode({
        env,
        agent: factory.create(context),
        context,
        limits: { maxTurns: helpdeskEnv.info.maxSteps, timeoutMs: 10_000 },
      });
      expect(record.error).toBeUndefined();
      expect(record.endReason).toBe("done");
    }
  });

  it("plays with a ReAct LLM agent: the Thought/Action reply is a valid action", async () => {
    const task = TEST_TASKS.find((t) => generateSession(t).goals[0]?.kind === "ood") ?? 0;
    const model = new ScriptedModel([
      'Thought:\nNot a work question.\n\nAction:\nreply with Action Input: {"message": "Sorry, that is outside what I can help with."}',
    ]);
    const context = { env: helpdeskEnv.info, taskIndex: task, seed: 0, sampleIndex: 0 };
    const agent = resolveAgent("react", helpdeskEnv, { model }).create(context);
    const env = helpdeskEnv.create();
    const observation = await env.reset(task);
    const { action } = await agent.act(
      { instruction: helpdeskEnv.info.instruction, observation, history: [] },
      new AbortController().signal,
    );
    const result = await env.step(action);
    expect(result.info.turn).toMatchObject({
      turn_number: 1,
      quality: "success",
      goal_kind: "ood",
    });
  });

  it("offers the assistant agent on helpdesk only", () => {
    expect(resolveAgent("assistant", helpdeskEnv).name).toBe("assistant");
    expect(() => resolveAgent("assistant", mazeEnv)).toThrow(UnknownAgentError);
  });

  it("draws wrong passages that the query does not match", () => {
    // The reference tells a wrong-passage fault by its zero score; real hits never score 0.
    const { passages } = helpdeskData();
    for (const question of passages.flatMap((p) => p.facts.flatMap((f) => f.questions))) {
      expect(scorePassages(question).filter((s) => s === 0).length).toBeGreaterThanOrEqual(3);
    }
  });
});
