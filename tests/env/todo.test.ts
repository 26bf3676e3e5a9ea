import { describe, expect, it } from "vitest";
import { solveTodo } from "../../src/agent/reference/todo.js";
import { createRng } from "../../src/env/rng.js";
import {
  canonicalState,
  checkAnswer,
  cloneState,
  formatAction,
  generateScenario,
  MAX_GOLD_CALLS,
  mentions,
  parseAction,
  REQUEST_TEMPLATES,
  runTool,
  TOOL_NAMES,
  TOOLS,
  type TodoState,
  type TodoTask,
  todoEnv,
} from "../../src/env/todo/index.js";
import { type Env, EpisodeDoneError, type StepResult } from "../../src/env/types.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const TODAY = "2026-03-04";

/** A small hand-made database: one overdue task, one upcoming, one completed. */
function fixture(): TodoState {
  const tasks: TodoState["tasks"] = new Map();
  tasks.set("t1", {
    id: "t1",
    project: "Work",
    title: "Write report",
    due: "2026-03-01",
    priority: "high",
    labels: ["email"],
    completed: false,
  });
  tasks.set("t2", {
    id: "t2",
    project: "Work",
    title: "Call Ana",
    due: "2026-03-06",
    priority: "medium",
    labels: [],
    completed: false,
  });
  tasks.set("t3", {
    id: "t3",
    project: "Home",
    title: "Fix tap",
    due: null,
    priority: "low",
    labels: ["urgent"],
    completed: true,
  });
  return { projects: ["Work", "Home"], tasks, nextId: 4 };
}

function call(state: TodoState, tool: string, args: Record<string, unknown>) {
  return runTool({ state, today: TODAY }, tool, args);
}

/** The fields tool outputs may carry (each tool fills some of them). */
interface ToolJson {
  count?: number;
  tasks?: TodoTask[];
  created?: TodoTask;
  deleted?: TodoTask;
  note?: string;
}

function output(state: TodoState, tool: string, args: Record<string, unknown>): ToolJson {
  const outcome = call(state, tool, args);
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.output as ToolJson;
}

const ids = (out: ToolJson) => (out.tasks ?? []).map((task) => task.id);

/** Plays the gold calls of a task and returns the env, ready for a finish. */
async function playGold(taskIndex: number, seed = 0): Promise<Env> {
  const env = todoEnv.create();
  const goldCalls = generateScenario(taskIndex, seed).goldCalls;
  const playGoldCalls = () => {
    let next = 0;
    const act = async () => {
      const goldCall = goldCalls[next++];
      if (!goldCall) throw new Error(`task ${taskIndex}: no gold call left`);
      return { action: formatAction(goldCall) };
    };
    return { act };
  };
  const { steps } = await runReferenceEpisode(todoEnv, playGoldCalls, taskIndex, seed, {
    env,
    maxTurns: goldCalls.length,
    expectEnd: "max_turns",
  });
  for (const step of steps) expect(step.info.invalid).toBeUndefined();
  return env;
}

const finish = (answer: string) => formatAction({ tool: "finish", args: { answer } });

function firstIndexOfKind(kind: string, withAnswers?: boolean): number {
  for (let i = 0; i < 100; i++) {
    const scenario = generateScenario(i);
    if (scenario.kind !== kind) continue;
    if (withAnswers === undefined || scenario.answers.length > 0 === withAnswers) return i;
  }
  throw new Error(`no test task of kind ${kind}`);
}

describe("todo env info", () => {
  it("has the agreed splits, version, limits and a complete instruction", () => {
    const { info } = todoEnv;
    expect(info.name).toBe("todo");
    expect(info.version).toBe("1.1.0");
    expect(info.splits.test).toEqual({ start: 0, end: 100 });
    expect(info.splits.train).toEqual({ start: 100, end: 500 });
    expect(info.successThreshold).toBe(1);
    expect(info.maxSteps).toBe(30);
    for (const tool of TOOL_NAMES) expect(info.instruction).toContain(`- ${tool} {`);
    expect(info.instruction).toContain("Action: <tool> with Action Input:");
  });
});

describe("todo tools", () => {
  it("list_projects counts open and completed tasks per project", () => {
    expect(output(fixture(), "list_projects", {})).toEqual({
      projects: [
        { name: "Work", open: 2, completed: 0 },
        { name: "Home", open: 0, completed: 1 },
      ],
    });
  });

  it("list_tasks applies every filter", () => {
    const state = fixture();
    expect(ids(output(state, "list_tasks", {}))).toEqual(["t1", "t2"]);
    expect(output(state, "list_tasks", {}).count).toBe(2);
    expect(ids(output(state, "list_tasks", { status: "all" }))).toEqual(["t1", "t2", "t3"]);
    expect(ids(output(state, "list_tasks", { status: "completed" }))).toEqual(["t3"]);
    expect(ids(output(state, "list_tasks", { project: "home", status: "all" }))).toEqual(["t3"]);
    expect(ids(output(state, "list_tasks", { label: "EMAIL" }))).toEqual(["t1"]);
    expect(ids(output(state, "list_tasks", { priority: "medium" }))).toEqual(["t2"]);
    expect(ids(output(state, "list_tasks", { overdue: true }))).toEqual(["t1"]);
    expect(ids(output(state, "list_tasks", { overdue: false }))).toEqual(["t2"]);
    const window = { due_from: "2026-03-02", due_to: "2026-03-06", status: "all" };
    expect(ids(output(state, "list_tasks", window))).toEqual(["t2"]);
    expect(ids(output(state, "list_tasks", { due_to: "2026-03-01" }))).toEqual(["t1"]);
  });

  it("get_task and search_tasks find tasks of any status", () => {
    const state = fixture();
    expect(output(state, "get_task", { id: "t3" })).toMatchObject({ title: "Fix tap" });
    expect(ids(output(state, "search_tasks", { query: "TAP" }))).toEqual(["t3"]);
    expect(ids(output(state, "search_tasks", { query: "a" }))).toEqual(["t2", "t3"]);
    expect(output(state, "search_tasks", { query: "zebra" }).count).toBe(0);
  });

  it("create_project adds a project and refuses duplicates", () => {
    const state = fixture();
    expect(output(state, "create_project", { name: "Garden" })).toEqual({
      created_project: "Garden",
    });
    expect(state.projects).toEqual(["Work", "Home", "Garden"]);
    const again = call(state, "create_project", { name: "garden" });
    expect(again.ok).toBe(false);
  });

  it("add_task creates an open task with defaults and the next id", () => {
    const state = fixture();
    const created = output(state, "add_task", { project: "home", title: "Mow lawn" }).created;
    expect(created).toEqual({
      id: "t4",
      project: "Home",
      title: "Mow lawn",
      due: null,
      priority: "medium",
      labels: [],
      completed: false,
    });
    const full = output(state, "add_task", {
      project: "Work",
      title: "Plan",
      due: "2026-03-09",
      priority: "high",
      labels: ["Urgent", "call"],
    }).created;
    expect(full).toMatchObject({ id: "t5", due: "2026-03-09", labels: ["call", "urgent"] });
    expect(state.tasks.size).toBe(5);
  });

  it("update_task changes only the given fields and can move or clear", () => {
    const state = fixture();
    output(state, "update_task", { id: "t2", due: "2026-03-10", priority: "low" });
    expect(state.tasks.get("t2")).toMatchObject({ due: "2026-03-10", priority: "low" });
    expect(state.tasks.get("t2")?.title).toBe("Call Ana");
    output(state, "update_task", { id: "t2", project: "HOME", due: null, title: "Call Bo" });
    expect(state.tasks.get("t2")).toMatchObject({ project: "Home", due: null, title: "Call Bo" });
  });

  it("complete_task, delete_task, add_label and remove_label mutate the task", () => {
    const state = fixture();
    output(state, "complete_task", { id: "t2" });
    expect(state.tasks.get("t2")?.completed).toBe(true);
    expect(call(state, "complete_task", { id: "t2" }).ok).toBe(false);
    output(state, "add_label", { id: "t1", label: "Call" });
    expect(state.tasks.get("t1")?.labels).toEqual(["call", "email"]);
    expect(output(state, "add_label", { id: "t1", label: "call" }).note).toContain("already");
    expect(state.tasks.get("t1")?.labels).toEqual(["call", "email"]);
    output(state, "remove_label", { id: "t1", label: "email" });
    expect(state.tasks.get("t1")?.labels).toEqual(["call"]);
    expect(call(state, "remove_label", { id: "t1", label: "email" }).ok).toBe(false);
    expect(output(state, "delete_task", { id: "t3" }).deleted?.id).toBe("t3");
    expect(state.tasks.has("t3")).toBe(false);
  });

  it("rejects bad arguments without changing the state", () => {
    const state = fixture();
    const before = canonicalState(state, new Set(state.tasks.keys()));
    const bad: [string, Record<string, unknown>, string][] = [
      ["get_task", { id: "t99" }, 'no task with id "t99"'],
      ["complete_task", {}, "id"],
      ["update_task", { id: 3 }, "id"],
      ["update_task", { id: "t1" }, "at least one field"],
      ["update_task", { id: "t1", due: "2026-02-30" }, "YYYY-MM-DD"],
      ["update_task", { id: "t1", project: "Nowhere" }, 'no project named "Nowhere"'],
      ["add_task", { project: "Work", title: "x", priority: "urgent" }, "priority"],
      ["add_task", { project: "Work", title: "x", due_date: "2026-03-05" }, "due_date"],
      ["add_task", { project: "Work", title: "  " }, "title"],
      ["add_label", { id: "t1", label: 5 }, "label"],
      ["list_tasks", { status: "done" }, "status"],
      ["list_tasks", { project: "Nowhere" }, "Nowhere"],
      ["launch_rocket", {}, 'unknown tool "launch_rocket"'],
    ];
    for (const [tool, args, fragment] of bad) {
      const outcome = call(state, tool, args);
      expect(outcome.ok, `${tool} ${JSON.stringify(args)}`).toBe(false);
      if (!outcome.ok) expect(outcome.error).toContain(fragment);
    }
    expect(canonicalState(state, new Set(["t1", "t2", "t3"]))).toBe(before);
  });
});

describe("todo action syntax", () => {
  it("parses tool calls, tolerating a leading thought", () => {
    expect(parseAction('Action: get_task with Action Input: {"id": "t1"}')).toEqual({
      ok: true,
      call: { tool: "get_task", args: { id: "t1" } },
    });
    const withThought = "Thought: look.\n\nAction: list_projects with Action Input: {}";
    expect(parseAction(withThought)).toEqual({
      ok: true,
      call: { tool: "list_projects", args: {} },
    });
    expect(parseAction("list everything").ok).toBe(false);
    expect(parseAction("Action: get_task with Action Input: {id: t1}").ok).toBe(false);
    expect(parseAction("Action: get_task with Action Input: [1]").ok).toBe(false);
  });

  it("keeps the leading Action: optional", () => {
    expect(parseAction('get_task with Action Input: {"id": "t1"}')).toEqual({
      ok: true,
      call: { tool: "get_task", args: { id: "t1" } },
    });
  });

  it("forgives fences, trailing text and a newline instead of 'with'", () => {
    const getT1 = { ok: true, call: { tool: "get_task", args: { id: "t1" } } };
    const forms = [
      'Action: get_task with Action Input: ```json\n{"id": "t1"}\n```',
      'Action: get_task with Action Input:\n```\n{"id": "t1"}\n```\nI will wait.',
      'Action: get_task with Action Input: {"id": "t1"}\nObservation: (pending)',
      'Action: get_task with Action Input: {"id": "t1"} and then I will finish.',
      'Action: get_task\nAction Input: {"id": "t1"}',
      'Thought: check it.\nAction: get_task\nAction Input:\n```json\n{"id": "t1"}\n```',
      'get_task\nAction Input: {"id": "t1"}',
    ];
    for (const form of forms) expect(parseAction(form), form).toEqual(getT1);
  });

  it("extracts the first complete JSON object, braces inside strings included", () => {
    const text =
      'Action: add_task with Action Input: {"project": "Work", "title": "Fix } and { \\" ' +
      'quotes", "labels": ["a"]} {"ignored": true}';
    expect(parseAction(text)).toEqual({
      ok: true,
      call: {
        tool: "add_task",
        args: { project: "Work", title: 'Fix } and { " quotes', labels: ["a"] },
      },
    });
    const nested = 'Action: list_tasks with Action Input: {"a": {"b": {}}}, done';
    expect(parseAction(nested)).toEqual({
      ok: true,
      call: { tool: "list_tasks", args: { a: { b: {} } } },
    });
    expect(parseAction('Action: get_task with Action Input: {"id": "t1"').ok).toBe(false);
    expect(parseAction("Action: get_task with Action Input: ```json\n[1]\n```").ok).toBe(false);
    expect(parseAction('Action Input: {"id": "t1"}').ok).toBe(false);
  });
});

describe("todo episodes", () => {
  it("states today and the request at reset", async () => {
    const env = todoEnv.create();
    const obs = await env.reset(0);
    const scenario = generateScenario(0);
    expect(obs.text).toContain(`Today is ${scenario.today}`);
    expect(obs.text).toContain(scenario.request);
  });

  it("answers tool calls with JSON and invalid actions with errors, and goes on", async () => {
    const env = todoEnv.create();
    await env.reset(3);
    const good = await env.step("Action: list_projects with Action Input: {}");
    expect(JSON.parse(good.observation.text).projects.length).toBeGreaterThanOrEqual(3);
    expect(good).toMatchObject({ reward: 0, done: false, info: { tool: "list_projects" } });
    const invalid = [
      "do something",
      "Action: get_task with Action Input: {not json}",
      "Action: fly with Action Input: {}",
      'Action: get_task with Action Input: {"id": 7}',
      'Action: get_task with Action Input: {"id": "t404"}',
      'Action: finish with Action Input: {"reply": "hi"}',
    ];
    for (const action of invalid) {
      const result = await env.step(action);
      expect(result.observation.text.startsWith("Error:"), action).toBe(true);
      expect(result).toMatchObject({ reward: 0, done: false, info: { invalid: true } });
    }
  });

  it("keeps error messages short whatever the size of the action", async () => {
    const env = todoEnv.create();
    await env.reset(3);
    const huge = "q".repeat(200_000);
    const calls: [string, unknown][] = [
      [huge, {}],
      ["get_task", { id: huge }],
      ["list_tasks", { project: huge }],
      ["list_tasks", { [huge]: true }],
      [
        "add_task",
        { project: "Work", title: "x", labels: Array.from({ length: 50_000 }, () => 1) },
      ],
      ["remove_label", { id: "t1", label: huge }],
    ];
    const actions = calls.map(
      ([tool, args]) => `Action: ${tool} with Action Input: ${JSON.stringify(args)}`,
    );
    actions.push(`Action: get_task with Action Input: {"id": ${huge}}`, `${huge} with ${huge}`);
    for (const action of actions) {
      const result = await env.step(action);
      expect(result.info.invalid).toBe(true);
      expect(result.observation.text.length, result.observation.text.slice(0, 300)).toBeLessThan(
        400,
      );
    }
  });

  it("ends at the step limit, counting invalid actions, then throws", async () => {
    const env = todoEnv.create();
    await env.reset(5);
    let last: StepResult | undefined;
    for (let i = 0; i < todoEnv.info.maxSteps; i++) {
      last = await env.step(i % 2 ? "nonsense" : "Action: list_projects with Action Input: {}");
      expect(last.done).toBe(i === todoEnv.info.maxSteps - 1);
    }
    expect(last).toMatchObject({ reward: 0, done: true, info: { success: false } });
    await expect(env.step(finish("done"))).rejects.toThrow(EpisodeDoneError);
  });

  it("rewards finish only when the state matches the gold state", async () => {
    const changing = firstIndexOfKind("rename_label");
    const untouched = todoEnv.create();
    await untouched.reset(changing);
    const early = await untouched.step(finish("Done."));
    expect(early).toMatchObject({ reward: 0, done: true, info: { stateMatches: false } });
    await expect(untouched.step(finish("again"))).rejects.toThrow(EpisodeDoneError);

    const right = await playGold(changing);
    expect(await right.step(finish("Done."))).toMatchObject({ reward: 1, done: true });

    const extra = await playGold(changing);
    await extra.step('Action: add_task with Action Input: {"project": "Work", "title": "x"}');
    await extra.step('Action: create_project with Action Input: {"name": "Extra"}');
    const spoiled = await extra.step(finish("Done."));
    expect(spoiled).toMatchObject({ reward: 0, info: { success: false, stateMatches: false } });
  });

  it("fails a wrong extra change to an existing task", async () => {
    const index = firstIndexOfKind("add_task");
    const env = await playGold(index);
    const target = [...generateScenario(index).initial.tasks.keys()][0];
    await env.step(formatAction({ tool: "add_label", args: { id: target, label: "zzz" } }));
    expect((await env.step(finish("Done."))).reward).toBe(0);
  });

  it("requires every answer string in the finish answer", async () => {
    const index = firstIndexOfKind("busiest_project");
    const { answers } = generateScenario(index);
    expect(answers).toHaveLength(2);
    const partial = await playGold(index);
    const missing = await partial.step(finish(`It is ${answers[0]}.`));
    expect(missing).toMatchObject({ reward: 0, info: { stateMatches: true } });
    expect(missing.info.missingAnswers).toEqual([answers[1]]);
    const full = await playGold(index);
    expect((await full.step(finish(`${answers[0]}, with ${answers[1]} tasks.`))).reward).toBe(1);
  });
});

/** Project names and task titles of a task, as a blind guesser could read them off the app. */
function everyName(index: number): string[] {
  const { candidates } = generateScenario(index);
  return [...candidates.projects, ...candidates.titles];
}

const EVERY_COUNT = Array.from({ length: 31 }, (_, n) => String(n)).join(" ");

describe("todo answer hedging", () => {
  const questions = Array.from({ length: 100 }, (_, i) => i).filter(
    (i) => generateScenario(i).answers.length > 0,
  );

  it("rejects every count plus every project as the answer to question-only tasks", async () => {
    let tried = 0;
    for (const index of questions) {
      const scenario = generateScenario(index);
      const mutates = scenario.goldCalls.some((call) => TOOLS[call.tool]?.mutates);
      if (mutates) continue;
      tried += 1;
      const env = todoEnv.create();
      await env.reset(index);
      const guess = `${EVERY_COUNT} ${scenario.candidates.projects.join(" ")}`;
      const result = await env.step(finish(guess));
      expect(result.reward, `task ${index}`).toBe(0);
      expect(result.info.stateMatches, `task ${index}`).toBe(true);
    }
    expect(tried).toBeGreaterThanOrEqual(15);
  });

  it("rejects a reply listing every count and name even after the right changes", async () => {
    expect(questions.length).toBeGreaterThanOrEqual(30);
    for (const index of questions) {
      const env = await playGold(index);
      const result = await env.step(finish(`${EVERY_COUNT}. ${everyName(index).join(", ")}`));
      expect(result.reward, `task ${index}`).toBe(0);
      expect(result.info.missingAnswers).toEqual([]);
      expect((result.info.hedgedAnswers as string[]).length, `task ${index}`).toBeGreaterThan(0);
    }
  });

  it("accepts natural answers that mention a date, an extra number or one rival", async () => {
    for (const index of questions) {
      const { answers, candidates, request } = generateScenario(index);
      const number = answers.find((answer) => /^\d+$/.test(answer));
      const name = answers.find((answer) => !/^\d+$/.test(answer));
      // One other name of the same kind as the answer.
      const sameKind = candidates.projects.includes(name ?? "")
        ? candidates.projects
        : candidates.titles;
      const rival = sameKind.find((other) => other !== name);
      const parts: string[] = [];
      if (name !== undefined) parts.push(`"${name}" is the one you asked about, not "${rival}".`);
      if (number !== undefined) {
        parts.push(`There are ${number} of them; I moved 2 of them to 2026-03-16 at 09:30 (t4).`);
      }
      const env = await playGold(index);
      const result = await env.step(finish(parts.join(" ")));
      expect(result.reward, `task ${index}: ${request} -> ${parts.join(" ")}`).toBe(1);
    }
  });

  it("grades the reviewer's examples", () => {
    const candidates = {
      projects: ["Work", "Home", "Groceries"],
      titles: ["Buy oat milk", "Swim 20 laps", "Call the plumber"],
    };
    const ok = (answer: string, required: string[]) => {
      const verdict = checkAnswer(answer, required, candidates);
      return verdict.missing.length === 0 && verdict.hedged.length === 0;
    };
    expect(ok("Work has the most open tasks: 5.", ["Work", "5"])).toBe(true);
    expect(ok("Work has five open tasks, Home has 3.", ["Work", "5"])).toBe(true);
    const moved = "There are 3 tasks left in Groceries; I moved 2 of them to 2026-03-16.";
    expect(ok(moved, ["3"])).toBe(true);
    expect(ok('3 left, including "Swim 20 laps", t12 and t14.', ["3"])).toBe(true);
    expect(ok('The earliest is "Buy oat milk", then "Call the plumber".', ["Buy oat milk"])).toBe(
      true,
    );
    // Hedging: competing numbers (digits or words) or names of the answer's kind.
    expect(ok("3, or maybe 4, 5 or 6", ["3"])).toBe(false);
    expect(ok("three, four, five or six", ["3"])).toBe(false);
    expect(ok("Work, Home or Groceries; 5", ["Work", "5"])).toBe(false);
    expect(checkAnswer("Work, Home or Groceries; 5", ["Work", "5"], candidates)).toEqual({
      missing: [],
      hedged: ["Work"],
    });
    expect(ok("Buy oat milk, Swim 20 laps or Call the plumber", ["Buy oat milk"])).toBe(false);
    // Other kinds do not compete: project names beside a title answer are fine.
    expect(ok('"Buy oat milk" in Groceries (not Work or Home)', ["Buy oat milk"])).toBe(true);
  });
});

describe("todo grading", () => {
  it("matches answers as whole phrases, case-insensitively, numbers also as words", () => {
    expect(mentions("There are 3 left.", "3")).toBe(true);
    expect(mentions("There are three left.", "3")).toBe(true);
    expect(mentions("There are 13 left.", "3")).toBe(false);
    expect(mentions("the title is WASH THE CAR", "Wash the car")).toBe(true);
    expect(mentions("Wash the carpet", "Wash the car")).toBe(false);
  });

  it("compares states ignoring order and the ids of newly created tasks", () => {
    const initialIds = new Set(["t1", "t2", "t3"]);
    const a = fixture();
    const b = fixture();
    output(a, "add_task", { project: "Work", title: "A" });
    output(a, "add_task", { project: "Home", title: "B", labels: ["x", "y"] });
    output(b, "add_task", { project: "Home", title: "B", labels: ["y", "x"] });
    output(b, "add_task", { project: "Work", title: "A" });
    b.projects.reverse();
    expect(canonicalState(a, initialIds)).toBe(canonicalState(b, initialIds));
    const c = cloneState(b);
    output(c, "update_task", { id: "t1", priority: "low" });
    expect(canonicalState(c, initialIds)).not.toBe(canonicalState(b, initialIds));
    expect(canonicalState(b, initialIds)).toBe(canonicalState(cloneState(b), initialIds));
  });
});

describe("todo task generation", () => {
  it("is deterministic in (index, seed) and varies with both", () => {
    const first = generateScenario(17, 3);
    const again = generateScenario(17, 3);
    expect(canonicalState(again.initial, new Set())).toBe(canonicalState(first.initial, new Set()));
    expect(again.request).toBe(first.request);
    expect(again.goldCalls).toEqual(first.goldCalls);
    const fingerprint = (i: number) => {
      const { today, request, initial } = generateScenario(i);
      return `${today} ${request} ${canonicalState(initial, new Set())}`;
    };
    const distinct = new Set(Array.from({ length: 100 }, (_, i) => fingerprint(i)));
    expect(distinct.size).toBe(100);
    expect(generateScenario(17, 4).request).not.toBe(first.request);
  });

  it("covers every request kind in the test split, within the call budget", () => {
    const kinds = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const scenario = generateScenario(i);
      kinds.add(scenario.kind);
      expect(scenario.goldCalls.length).toBeLessThanOrEqual(MAX_GOLD_CALLS);
      expect(scenario.initial.tasks.size).toBeGreaterThanOrEqual(6);
      expect(scenario.initial.tasks.size).toBeLessThanOrEqual(14);
    }
    expect(kinds.size).toBe(REQUEST_TEMPLATES.length);
    expect(kinds.size).toBeGreaterThanOrEqual(8);
  });

  it("gives identical observation sequences for the same index and seed", async () => {
    const trace = async (index: number, seed: number) => {
      const env = todoEnv.create();
      const random = createRng(99).next;
      let observation = await env.reset(index, { seed });
      const texts = [observation.text];
      for (let i = 0; i < 12; i++) {
        const result = await env.step(todoEnv.sampleAction(random, observation));
        observation = result.observation;
        texts.push(observation.text);
        if (result.done) break;
      }
      return texts;
    };
    expect(await trace(21, 2)).toEqual(await trace(21, 2));
    expect(await trace(21, 2)).not.toEqual(await trace(22, 2));
  });
});

describe("todo reference solver", () => {
  it("solves every test task for seed 0", async () => {
    for (let i = 0; i < 100; i++) {
      const result = await runReferenceEpisode(todoEnv, solveTodo, i, 0);
      expect(result.reward, `task ${i}`).toBeGreaterThanOrEqual(todoEnv.info.successThreshold);
    }
  });

  it("solves every test task for other seeds", async () => {
    for (const seed of [1, 2, 12345]) {
      for (let i = 0; i < 100; i++) {
        const result = await runReferenceEpisode(todoEnv, solveTodo, i, seed);
        expect(result.reward, `task ${i} seed ${seed}`).toBe(1);
      }
    }
  });

  it("solves train tasks", async () => {
    for (const i of [100, 101, 157, 250, 333, 499]) {
      expect((await runReferenceEpisode(todoEnv, solveTodo, i, 0)).reward, `task ${i}`).toBe(1);
    }
  });

  it("replies with the bare action and an AgentGym-style message", async () => {
    const env = todoEnv.create();
    const agent = solveTodo({ env: env.info, taskIndex: 4, seed: 0, sampleIndex: 0 });
    const observation = await env.reset(4);
    const reply = await agent.act(
      { instruction: env.info.instruction, observation, history: [] },
      new AbortController().signal,
    );
    expect(reply.action.startsWith("Action: ")).toBe(true);
    expect(reply.message).toMatch(/^Thought: [\s\S]+\n\nAction: \w+ with Action Input: \{/);
  });
});

describe("todo sampleAction", () => {
  it("draws actions the env mostly accepts", async () => {
    const random = createRng(7).next;
    let steps = 0;
    let invalid = 0;
    const tools = new Set<string>();
    for (let index = 0; index < 20; index++) {
      const env = todoEnv.create();
      let observation = await env.reset(index);
      for (let i = 0; i < 30; i++) {
        const action = todoEnv.sampleAction(random, observation);
        const parsed = parseAction(action);
        expect(parsed.ok, action).toBe(true);
        if (parsed.ok) tools.add(parsed.call.tool);
        const result = await env.step(action);
        steps += 1;
        if (result.info.invalid) invalid += 1;
        observation = result.observation;
        if (result.done) break;
      }
    }
    expect(invalid / steps).toBeLessThan(0.4);
    expect(tools.size).toBe(TOOL_NAMES.length);
  });
});
