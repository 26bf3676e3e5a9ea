import { describe, expect, it } from "vitest";
import { planTextcraft, solveTextcraft } from "../../src/agent/reference/textcraft.js";
import { createRng } from "../../src/env/rng.js";
import { parseAction } from "../../src/env/textcraft/actions.js";
import { availableActionsFor } from "../../src/env/textcraft/available.js";
import {
  depthOf,
  formatRecipe,
  ITEMS_BY_DEPTH,
  isBaseItem,
  RECIPES,
  recipeFor,
  recipesNeededFor,
  resolveItem,
} from "../../src/env/textcraft/catalog.js";
import { applyAction } from "../../src/env/textcraft/crafting.js";
import { BASE_ITEMS } from "../../src/env/textcraft/data.js";
import { generateTask, textcraftEnv } from "../../src/env/textcraft/index.js";
import { formatTaskObservation } from "../../src/env/textcraft/task.js";
import { EpisodeDoneError, type Observation } from "../../src/env/types.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const info = textcraftEnv.info;
// Task 3 has a depth-4 goal, so the single-recipe probes below never finish it by accident.
const RULES_TASK = 3;

async function transcript(taskIndex: number, seed: number, actions: string[]): Promise<string[]> {
  const env = textcraftEnv.create();
  const texts = [(await env.reset(taskIndex, { seed })).text];
  for (const action of actions) texts.push((await env.step(action)).observation.text);
  return texts;
}

async function rulesEnv() {
  const env = textcraftEnv.create();
  await env.reset(RULES_TASK);
  return env;
}

describe("textcraft info and splits", () => {
  it("has the agreed splits, version and limits", () => {
    expect(info.name).toBe("textcraft");
    expect(info.version).toBe("1.2.0");
    expect(info.splits.test).toEqual({ start: 0, end: 100 });
    expect(info.splits.train).toEqual({ start: 100, end: 500 });
    expect(info.successThreshold).toBe(1);
    expect(info.maxSteps).toBe(40);
    for (const syntax of ["get N item", "craft N item using N ingredient", "inventory"]) {
      expect(info.instruction).toContain(syntax);
    }
  });
});

describe("textcraft recipe data", () => {
  it("has base items, and crafted items at every depth 1..4", () => {
    expect(BASE_ITEMS.length).toBeGreaterThanOrEqual(20);
    for (const depth of [1, 2, 3, 4]) {
      expect(ITEMS_BY_DEPTH[depth]?.length ?? 0).toBeGreaterThanOrEqual(10);
    }
    const crafted = ITEMS_BY_DEPTH.flat();
    expect(crafted.length).toBe(RECIPES.length);
    for (const recipe of RECIPES) {
      expect(isBaseItem(recipe.output)).toBe(false);
      for (const part of recipe.ingredients) {
        expect(isBaseItem(part.item) || recipeFor(part.item) !== undefined).toBe(true);
        expect(depthOf(part.item)).toBeLessThan(depthOf(recipe.output));
      }
    }
  });

  it("resolves names forgivingly: case, spaces, underscores, plurals", () => {
    expect(resolveItem("Ashwood  Planks")).toBe("ashwood plank");
    expect(resolveItem("TORCHES")).toBe("torch");
    expect(resolveItem("ember mosses")).toBe("ember moss");
    expect(resolveItem("iron_nail")).toBe("iron nail");
    expect(resolveItem("oak plank")).toBeUndefined();
  });
});

describe("textcraft tasks", () => {
  it("spreads goal depths 1..4 evenly over both splits", () => {
    const count = (start: number, end: number) => {
      const byDepth: Record<number, number> = {};
      for (let i = start; i < end; i++) {
        const depth = depthOf(generateTask(i).goal);
        byDepth[depth] = (byDepth[depth] ?? 0) + 1;
      }
      return byDepth;
    };
    const test = count(0, 100);
    const train = count(100, 500);
    console.info("textcraft goal depths: test", test, "train", train);
    expect(test).toEqual({ 1: 25, 2: 25, 3: 25, 4: 25 });
    expect(train).toEqual({ 1: 100, 2: 100, 3: 100, 4: 100 });
  });

  it("lists the needed recipes plus 3-6 distractors, then the goal", async () => {
    for (let i = 0; i < 500; i++) {
      const task = generateTask(i);
      const needed = new Set(recipesNeededFor(task.goal).map((r) => r.output));
      expect(new Set(task.needed.map((r) => r.output))).toEqual(needed);
      expect(task.distractors.length).toBeGreaterThanOrEqual(3);
      expect(task.distractors.length).toBeLessThanOrEqual(6);
      for (const recipe of task.distractors) expect(needed.has(recipe.output)).toBe(false);
      expect(task.commands.length).toBe(task.needed.length + task.distractors.length);
    }
    const task = generateTask(RULES_TASK);
    const text = await textcraftEnv.create().reset(RULES_TASK);
    const lines = text.text.split("\n");
    expect(lines[0]).toBe("Crafting commands:");
    expect(lines.slice(1, 1 + task.commands.length)).toEqual(
      task.commands.map((r) => formatRecipe(r)),
    );
    expect(lines.at(-1)).toBe(`Goal: craft ${task.goal}.`);
  });

  it("keeps test goals disjoint from train goals, both varied and covering depths 1..4", () => {
    const goals = (range: { start: number; end: number }) => {
      const out = new Set<string>();
      for (let i = range.start; i < range.end; i++) out.add(generateTask(i).goal);
      return out;
    };
    const test = goals(info.splits.test);
    const train = goals(info.splits.train);
    expect([...test].filter((goal) => train.has(goal))).toEqual([]);
    expect(test.size).toBeGreaterThanOrEqual(25);
    expect(train.size).toBeGreaterThanOrEqual(60);
    const depths = (items: Set<string>) => new Set([...items].map(depthOf));
    expect(depths(test)).toEqual(new Set([1, 2, 3, 4]));
    expect(depths(train)).toEqual(new Set([1, 2, 3, 4]));
    // The seed never moves a task's goal into the other split's pool.
    for (const seed of [1, 7]) {
      for (const i of [0, 57, 99]) expect(train.has(generateTask(i, seed).goal)).toBe(false);
    }
  });

  it("has 500 distinct (goal, distractors) tasks", () => {
    const keys = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const task = generateTask(i);
      keys.add(
        `${task.goal}|${task.distractors
          .map((r) => r.output)
          .sort()
          .join(",")}`,
      );
    }
    expect(keys.size).toBe(500);
  });

  it("is deterministic per (index, seed); indices differ; the seed reorders the commands", async () => {
    const actions = ["inventory", "get 2 flint", "craft 4 flint arrowhead using 2 flint", "jump"];
    expect(await transcript(42, 5, actions)).toEqual(await transcript(42, 5, actions));
    expect(await transcript(42, 0, actions)).not.toEqual(await transcript(43, 0, actions));
    let reordered = 0;
    for (let i = 0; i < 20; i++) {
      const a = generateTask(i, 0);
      const b = generateTask(i, 1);
      expect(b.goal).toBe(a.goal);
      expect(new Set(b.commands)).toEqual(new Set(a.commands));
      if (a.commands.some((r, k) => b.commands[k] !== r)) reordered++;
    }
    expect(reordered).toBeGreaterThanOrEqual(18);
  });
});

describe("textcraft actions", () => {
  it("gets base items, forgiving case, spacing and plurals", async () => {
    const env = await rulesEnv();
    const got = await env.step("  GET 3  Ashwood Logs. ");
    expect(got.observation.text).toBe("Got 3 ashwood log.");
    expect(got).toMatchObject({ reward: 0, done: false });
    expect(got.info.invalid).toBeUndefined();
    expect((await env.step("get coal")).observation.text).toBe("Got 1 coal.");
    expect((await env.step("inventory")).observation.text).toBe(
      "Inventory: [ashwood log] (3) [coal] (1)",
    );
  });

  it("refuses to get crafted or unknown items", async () => {
    const env = await rulesEnv();
    const crafted = await env.step("get 1 stick");
    expect(crafted.observation.text).toContain("stick is not a base item");
    expect(crafted.info).toMatchObject({ invalid: true, error: "not-gettable" });
    const unknown = await env.step("get 2 diamond");
    expect(unknown.observation.text).toBe("Could not find diamond.");
    expect(unknown.info).toMatchObject({ invalid: true, error: "unknown-item" });
    const zero = await env.step("get 0 coal");
    expect(zero.observation.text).toContain("Could not execute get 0 coal");
    expect((await env.step("inventory")).observation.text).toBe(
      "Inventory: You are not carrying anything.",
    );
  });

  it("crafts with a matching recipe, scaled by a multiple of the output count", async () => {
    const env = await rulesEnv();
    await env.step("get 3 ashwood log");
    const one = await env.step("craft 4 ashwood plank using 1 ashwood log");
    expect(one.observation.text).toBe("Crafted 4 ashwood plank.");
    expect(one.info.invalid).toBeUndefined();
    const two = await env.step("Craft 8 Ashwood Planks using 2 ashwood logs");
    expect(two.observation.text).toBe("Crafted 8 ashwood plank.");
    const sticks = await env.step("craft 8 stick using 4 ashwood plank");
    expect(sticks.observation.text).toBe("Crafted 8 stick.");
    expect((await env.step("inventory")).observation.text).toBe(
      "Inventory: [ashwood plank] (8) [stick] (8)",
    );
  });

  it("accepts ingredients in any order, joined by commas or 'and'", async () => {
    const env = await rulesEnv();
    await env.step("get 2 clay");
    await env.step("get 1 coal");
    const result = await env.step("craft 2 clay brick using 1 coal and 2 clay");
    expect(result.observation.text).toBe("Crafted 2 clay brick.");
  });

  it("rejects crafts that match no recipe, with clear errors", async () => {
    const env = await rulesEnv();
    await env.step("get 4 ashwood log");
    const cases: [string, string][] = [
      ["craft 3 ashwood plank using 1 ashwood log", "must be a multiple of 4"],
      ["craft 8 ashwood plank using 1 ashwood log", "counts must be the recipe's counts times 2"],
      ["craft 4 ashwood plank using 1 pinewood log", "the ingredients match no recipe"],
      ["craft 4 ashwood plank using 1 ashwood log, 1 coal", "the ingredients match no recipe"],
      ["craft 1 magic wand using 1 ashwood log", "Could not find a valid recipe for magic wand."],
      ["craft 1 coal using 1 ashwood log", "coal is a base item; get it."],
    ];
    for (const [action, message] of cases) {
      const result = await env.step(action);
      expect(result.observation.text).toContain("Could not find a valid recipe for");
      expect(result.observation.text).toContain(message);
      expect(result.info).toMatchObject({ invalid: true, error: "no-recipe" });
    }
    expect((await env.step("inventory")).observation.text).toBe("Inventory: [ashwood log] (4)");
  });

  it("reports missing ingredients and leaves the inventory unchanged", async () => {
    const env = await rulesEnv();
    await env.step("get 1 iron ore");
    const result = await env.step("craft 1 iron ingot using 1 iron ore, 1 coal");
    expect(result.observation.text).toBe(
      "Could not find enough items to craft 1 iron ingot. Missing: 1 coal.",
    );
    expect(result.info).toMatchObject({ invalid: true, error: "missing-items" });
    expect((await env.step("inventory")).observation.text).toBe("Inventory: [iron ore] (1)");
  });

  it("answers unparseable actions with 'Could not execute', as a counted step", async () => {
    const env = await rulesEnv();
    for (const action of ["dance", "craft stick", "craft 4 stick using ashwood plank", ""]) {
      const result = await env.step(action);
      expect(result.observation.text).toMatch(/^Could not execute/);
      expect(result).toMatchObject({ reward: 0, done: false });
      expect(result.info).toMatchObject({ invalid: true, error: "unparseable" });
    }
    expect((await env.step("inventory")).info.steps).toBe(5);
  });

  it("echoes at most about 60 characters of the agent's input in errors", async () => {
    const env = await rulesEnv();
    const huge = "x".repeat(100_000);
    const actions = [
      `get 1 ${huge}`,
      `craft 1 ${huge} using 1 coal`,
      `craft 4 ashwood plank using 1 ${huge}`,
      `craft 4 ashwood plank using ${huge}`,
      huge,
      // A long run of trailing-period candidates must not make parsing quadratic.
      `get 1 xxxx${".".repeat(200_000)}x`,
    ];
    for (const action of actions) {
      const { text } = (await env.step(action)).observation;
      expect(text.length, text).toBeLessThan(300);
      expect(text).toContain("xxx...");
    }
  });

  it("parses the syntax it documents", () => {
    expect(parseAction("craft 4 arrow using 1 flint arrowhead, 1 stick, 1 fletching")).toEqual({
      kind: "craft",
      count: 4,
      name: "arrow",
      ingredients: [
        { count: 1, name: "flint arrowhead" },
        { count: 1, name: "stick" },
        { count: 1, name: "fletching" },
      ],
    });
    expect(parseAction("get 2 sand")).toEqual({ kind: "get", count: 2, name: "sand" });
    expect(parseAction("Inventory")).toEqual({ kind: "inventory" });
    expect(parseAction("get 1000 sand").kind).toBe("malformed");
  });
});

describe("textcraft episode rules", () => {
  it("succeeds when the goal is crafted, then throws EpisodeDoneError", async () => {
    // Task 0 has a depth-1 goal: fetch its ingredients, craft once.
    const task = generateTask(0);
    expect(task.depth).toBe(1);
    const recipe = recipeFor(task.goal);
    if (!recipe) throw new Error("no recipe for the goal");
    const env = textcraftEnv.create();
    await env.reset(0);
    for (const part of recipe.ingredients) await env.step(`get ${part.count} ${part.item}`);
    const result = await env.step(formatRecipe(recipe));
    expect(result.reward).toBe(1);
    expect(result.done).toBe(true);
    expect(result.info.success).toBe(true);
    expect(result.observation.text).toContain(`Task completed: you have ${task.goal}.`);
    await expect(env.step("inventory")).rejects.toBeInstanceOf(EpisodeDoneError);
  });

  it("ends the episode unsuccessfully at maxSteps, invalid actions included", async () => {
    const env = await rulesEnv();
    for (let i = 1; i < info.maxSteps; i++) {
      const result = await env.step(i % 2 ? "nonsense" : "get 1 coal");
      expect(result.done).toBe(false);
    }
    const last = await env.step("inventory");
    expect(last).toMatchObject({ reward: 0, done: true });
    expect(last.info).toMatchObject({ success: false, truncated: true, steps: info.maxSteps });
    expect(last.observation.text).toContain("Step limit reached");
    await expect(env.step("inventory")).rejects.toBeInstanceOf(EpisodeDoneError);
  });

  it("reset starts a fresh episode with an empty inventory", async () => {
    const env = await rulesEnv();
    await env.step("get 5 sand");
    await env.reset(RULES_TASK);
    const result = await env.step("inventory");
    expect(result.observation.text).toBe("Inventory: You are not carrying anything.");
    expect(result.info.steps).toBe(1);
  });
});

describe("textcraft reference solver", () => {
  it("solves all 500 tasks for several seeds within maxSteps, taking only listed actions", async () => {
    let longest = 0;
    let listed = 0;
    for (const seed of [0, 1, 7]) {
      for (let i = 0; i < info.splits.train.end; i++) {
        const run = await runReferenceEpisode(textcraftEnv, solveTextcraft, i, seed);
        expect(run.reward, `task ${i} seed ${seed}`).toBeGreaterThanOrEqual(info.successThreshold);
        longest = Math.max(longest, run.steps.length);
        // The list suffices: every action the solver takes was offered at that moment.
        let before = run.initialObservation;
        for (const step of run.steps) {
          expect(before?.availableActions, `task ${i} seed ${seed}`).toContain(step.action);
          listed++;
          before = step.observation;
        }
      }
    }
    expect(longest).toBeLessThanOrEqual(info.maxSteps);
    console.info(
      `textcraft reference solver: longest episode ${longest} steps; ` +
        `${listed} of ${listed} actions were listed`,
    );
  });

  it("solves train tasks and uses the Thought/Action message format", async () => {
    for (const i of [100, 101, 102, 103, 250, 377, 499]) {
      const run = await runReferenceEpisode(textcraftEnv, solveTextcraft, i, 3);
      expect(run.reward, `task ${i}`).toBe(1);
      expect(run.steps[0]?.message).toMatch(/^Thought: .+\n\nAction: get \d+ .+$/);
    }
  });

  it("plans from the listed recipes only (ignores hidden data)", () => {
    const text = [
      "Crafting commands:",
      "craft 2 gizmo using 3 widget, 1 bolt",
      "craft 3 widget using 2 scrap",
      "craft 1 unrelated using 1 bolt",
      "",
      "Goal: craft gizmo.",
    ].join("\n");
    expect(planTextcraft(text).map((p) => p.action)).toEqual([
      "get 1 bolt",
      "get 2 scrap",
      "craft 3 widget using 2 scrap",
      "craft 2 gizmo using 3 widget, 1 bolt",
    ]);
  });
});

describe("textcraft available actions", () => {
  const stocked = () =>
    new Map([...BASE_ITEMS, ...RECIPES.map((r) => r.output)].map((i) => [i, 999]));

  it("follows the rule on a hand-checked command list", () => {
    const commands = ["hunting bow", "hemp rope", "stick", "ashwood plank", "clay brick"].map(
      (item) => recipeFor(item) ?? expect.fail(item),
    );
    expect(availableActionsFor(commands)).toEqual([
      "inventory",
      // Base ingredients at the counts their commands use, then the batch totals.
      "get 3 hemp fiber",
      "get 9 hemp fiber",
      "get 1 ashwood log",
      "get 2 clay",
      "get 1 coal",
      // Every command as listed; the hunting bow's batch needs three hemp rope crafts at once.
      "craft 1 hunting bow using 3 stick, 3 hemp rope",
      "craft 1 hemp rope using 3 hemp fiber",
      "craft 3 hemp rope using 9 hemp fiber",
      "craft 4 stick using 2 ashwood plank",
      "craft 4 ashwood plank using 1 ashwood log",
      "craft 2 clay brick using 2 clay, 1 coal",
    ]);
    // An ingredient no command makes and no one can get (hemp rope here) gets no get.
    const bow = recipeFor("hunting bow") ?? expect.fail("hunting bow");
    expect(availableActionsFor([bow])).toEqual([
      "inventory",
      "craft 1 hunting bow using 3 stick, 3 hemp rope",
    ]);
  });

  it("lists every shown command, distractors included, and well-formed gets and crafts", async () => {
    const sizes: number[] = [];
    for (let i = 0; i < info.splits.train.end; i++) {
      const task = generateTask(i);
      const { availableActions: actions = [] } = await textcraftEnv.create().reset(i);
      sizes.push(actions.length);
      expect(actions[0]).toBe("inventory");
      expect(new Set(actions).size).toBe(actions.length);
      expect(actions).toEqual(expect.arrayContaining(task.commands.map((r) => formatRecipe(r))));
      for (const recipe of task.commands) {
        for (const part of recipe.ingredients) {
          if (isBaseItem(part.item)) expect(actions).toContain(`get ${part.count} ${part.item}`);
        }
      }
      // Every action is accepted by the rules given enough of everything; nothing else is listed.
      for (const action of actions) {
        const parsed = parseAction(action);
        expect(["inventory", "get", "craft"]).toContain(parsed.kind);
        if (parsed.kind === "craft") {
          expect(task.commands.map((r) => r.output)).toContain(resolveItem(parsed.name));
        }
        expect(applyAction(stocked(), action, parsed).error, action).toBeUndefined();
      }
      // The list is a function of the shown commands alone.
      expect(actions).toEqual(availableActionsFor(task.commands));
    }
    sizes.sort((a, b) => a - b);
    const spread = [sizes[0], sizes[sizes.length >> 1], sizes.at(-1)];
    console.info(`textcraft available actions per task (min, median, max): ${spread.join(", ")}`);
    expect(sizes[0]).toBeGreaterThanOrEqual(5);
    expect(sizes.at(-1)).toBeLessThanOrEqual(60);
  });

  it("is the same at every observation of an episode, in a deterministic order, and empty at the end", async () => {
    const first = await textcraftEnv.create().reset(RULES_TASK, { seed: 2 });
    const again = await textcraftEnv.create().reset(RULES_TASK, { seed: 2 });
    expect(again.availableActions).toEqual(first.availableActions);
    // The seed reorders the shown commands; the list holds the same actions.
    const reseeded = await textcraftEnv.create().reset(RULES_TASK, { seed: 3 });
    expect(new Set(reseeded.availableActions)).toEqual(new Set(first.availableActions));

    const env = textcraftEnv.create();
    await env.reset(RULES_TASK, { seed: 2 });
    for (const action of ["inventory", "get 1 coal", "nonsense", "craft 1 coal using 1 flint"]) {
      const result = await env.step(action);
      expect(result.observation.availableActions, action).toEqual(first.availableActions);
    }
    // The observation text is unchanged by the list (AgentGym clients read only the text).
    expect(first.text).toBe(formatTaskObservation(generateTask(RULES_TASK, 2)));

    const task = generateTask(0);
    const recipe = recipeFor(task.goal) ?? expect.fail("no recipe for the goal");
    const won = textcraftEnv.create();
    await won.reset(0);
    for (const part of recipe.ingredients) await won.step(`get ${part.count} ${part.item}`);
    const last = await won.step(formatRecipe(recipe));
    expect(last.done).toBe(true);
    expect(last.observation.availableActions).toEqual([]);
  });
});

describe("textcraft action sampler", () => {
  it("draws well-formed actions that the env mostly accepts", async () => {
    let accepted = 0;
    let total = 0;
    const kinds = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const env = textcraftEnv.create();
      const rng = createRng(i, 0x5a);
      let observation = await env.reset(i);
      for (;;) {
        const action = textcraftEnv.sampleAction(rng.next, observation);
        kinds.add(action.split(" ")[0] ?? "");
        const result = await env.step(action);
        total++;
        expect(result.info.error, action).not.toBe("unparseable");
        expect(result.info.error, action).not.toBe("unknown-item");
        expect(result.info.error, action).not.toBe("no-recipe");
        if (!result.info.invalid) accepted++;
        observation = result.observation;
        if (result.done) break;
      }
    }
    expect(kinds).toEqual(new Set(["get", "craft", "inventory"]));
    expect(accepted / total).toBeGreaterThan(0.5);
  });

  it("draws from the listed actions when there are some, and copes without a list", async () => {
    const observation = await textcraftEnv.create().reset(RULES_TASK);
    const actions = observation.availableActions ?? [];
    const rng = createRng(RULES_TASK, 0x5b);
    const drawn = new Set<string>();
    for (let n = 0; n < 2000; n++) drawn.add(textcraftEnv.sampleAction(rng.next, observation));
    expect([...drawn].every((a) => actions.includes(a))).toBe(true);
    expect(drawn.size).toBe(actions.length);

    const env = textcraftEnv.create();
    const textOnly: Observation = { text: observation.text };
    await env.reset(RULES_TASK);
    for (let n = 0; n < 30; n++) {
      const action = textcraftEnv.sampleAction(rng.next, textOnly);
      const result = await env.step(action);
      expect(result.info.error, action).not.toBe("unparseable");
      expect(result.info.error, action).not.toBe("no-recipe");
      textOnly.text = result.observation.text;
    }
  });
});
