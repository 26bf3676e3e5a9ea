/**
 * Agent configurations as a CycleQD genome: validation at the file boundary, ids, the system
 * prompt, every operator on hand-made configurations with a scripted Rng (so each expected child
 * is worked out by hand from the draws), determinism with seeded Rngs, and a short CycleQD run
 * over two toy environments whose scripted model succeeds according to the system prompt.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_REACT_SYSTEM_PROMPT } from "../../../src/agent/react.js";
import { DEFAULT_TOOL_CALLING_SYSTEM_PROMPT } from "../../../src/agent/tool-calling.js";
import { createRng, type Rng } from "../../../src/env/rng.js";
import type { EnvDefinition, Observation, StepResult } from "../../../src/env/types.js";
import {
  type AgentConfig,
  type AgentConfigPool,
  addExample,
  agentConfigId,
  applicableMutations,
  chooseMutation,
  createAgentConfigGenome,
  crossoverConfigs,
  dropExample,
  FileAgentConfigStore,
  jitterParams,
  MUTATION_RATES,
  type MutationEvent,
  type MutationRates,
  mutationRates,
  parseAgentConfig,
  parseAgentConfigPool,
  readAgentConfigFile,
  renderSystemPrompt,
  swapExample,
  switchKind,
  toggleTool,
} from "../../../src/improve/qd/agent-config/index.js";
import {
  cycleStateFromJSON,
  cycleStateToJSON,
  initCycle,
  MemoryGenomeStore,
  runCycle,
} from "../../../src/improve/qd/cycle.js";
import type { ModelRequest } from "../../../src/model/types.js";
import { ScriptedModel, type ScriptedReply } from "../../../src/testing/scripted-model.js";

/** An Rng that returns the given uniforms in order and fails when asked for more. */
function scriptedRng(values: readonly number[]): Rng & { readonly left: number } {
  let i = 0;
  const next = () => {
    if (i >= values.length) throw new Error(`scripted Rng: draw ${i + 1} of ${values.length}`);
    return values[i++] as number;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]) => items[int(items.length)] as T,
    shuffle: <T>(items: readonly T[]) => {
      const out = items.slice();
      for (let j = out.length - 1; j > 0; j--) {
        const k = int(j + 1);
        [out[j], out[k]] = [out[k] as T, out[j] as T];
      }
      return out;
    },
    get left() {
      return values.length - i;
    },
  };
}

const e = (id: string) => ({ id, text: `example ${id}` });

const A: AgentConfig = {
  kind: "react",
  parts: [
    { name: "role", text: "A role" },
    { name: "strategy", text: "A strategy" },
  ],
  fewShot: [e("e1"), e("e2")],
  params: { temperature: 0.2, topP: 0.9, maxTokens: 256 },
  tools: null,
};
const B: AgentConfig = {
  kind: "tools",
  parts: [
    { name: "strategy", text: "B strategy" },
    { name: "style", text: "B style" },
  ],
  fewShot: [e("e2"), e("e3"), e("e4")],
  params: { temperature: 1, topP: 0.5, maxTokens: 1024 },
  tools: ["move"],
};
const POOL: AgentConfigPool = {
  fewShot: ["e1", "e2", "e3", "e4", "e5"].map(e),
  tools: ["go", "move", "turn"],
};
/** u such that −log(1 − u) = w: a simplex weight of exactly w before normalising. */
const expDraw = (w: number) => 1 - Math.exp(-w);
/** Two uniforms that make standardNormal return z ∈ {1, −1, 0} (Box–Muller with r = 1). */
const normal = (z: 1 | -1 | 0): [number, number] => [
  1 - Math.exp(-0.5),
  z === 1 ? 0 : z === -1 ? 0.5 : 0.25,
];

describe("agent config validation", () => {
  it("fills defaults, sorts the tool set, and keeps what was given", () => {
    const config = parseAgentConfig({
      kind: "tools",
      parts: [{ name: "role", text: "Be careful." }],
      tools: ["turn", "go"],
    });
    expect(config).toEqual({
      kind: "tools",
      parts: [{ name: "role", text: "Be careful." }],
      fewShot: [],
      params: { temperature: 0.7, topP: 1, maxTokens: 1024 },
      tools: ["go", "turn"],
    });
    expect(parseAgentConfig({})).toMatchObject({ kind: "react", parts: [], tools: null });
  });

  it.each([
    [{ kind: "plan" }, /^cfg\.json: kind: /],
    [{ parts: [{ name: "role", text: "  " }] }, /^cfg\.json: parts\.0\.text: must not be empty$/],
    [
      {
        parts: [
          { name: "a", text: "x" },
          { name: "a", text: "y" },
        ],
      },
      /^cfg\.json: parts\.1: duplicate part name$/,
    ],
    [{ params: { temperature: 3 } }, /^cfg\.json: params\.temperature: /],
    [{ params: { maxTokens: 100.5 } }, /^cfg\.json: params\.maxTokens: /],
    [{ params: { top_p: 0.5 } }, /^cfg\.json: params: /],
    [{ tools: ["Move"] }, /^cfg\.json: tools\.0: must be lowercase/],
    [{ fewShot: [e("x"), e("x")] }, /^cfg\.json: fewShot\.1: duplicate few-shot id$/],
    [{ prompt: "hi" }, /^cfg\.json: /],
  ])("rejects %j with one line naming the field", (json, message) => {
    let error: unknown;
    try {
      parseAgentConfig(json, "cfg.json");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain("\n");
  });

  const dir = mkdtempSync(join(tmpdir(), "clade-agent-config-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a file, and names the file in its errors", async () => {
    const good = join(dir, "good.json");
    writeFileSync(good, JSON.stringify(A));
    expect(await readAgentConfigFile(good)).toEqual(A);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ kind: react }");
    await expect(readAgentConfigFile(bad)).rejects.toThrow(/^.*bad\.json: not valid JSON/);
    await expect(readAgentConfigFile(join(dir, "none.json"))).rejects.toThrow(
      /none\.json: cannot read \(ENOENT\)/,
    );
  });

  it("keeps elites as DIR/<id>.json and reads them back validated", async () => {
    const store = new FileAgentConfigStore(join(dir, "elites"));
    const id = agentConfigId(A);
    expect(await store.get(id)).toBeUndefined();
    await store.put(id, A);
    expect(await store.get(id)).toEqual(A);
    writeFileSync(store.path("broken"), JSON.stringify({ ...A, kind: "plan" }));
    await expect(store.get("broken")).rejects.toThrow(/broken\.json: kind: /);
    expect(() => store.path("../x")).toThrow('agent config store: "../x" is not a usable id');
  });

  it("validates pools", () => {
    expect(parseAgentConfigPool({ tools: ["b", "a"] })).toEqual({ fewShot: [], tools: ["a", "b"] });
    expect(() => parseAgentConfigPool({ tools: ["a", "a"] }, "pool.json")).toThrow(
      "pool.json: tools.1: duplicate tool",
    );
  });
});

describe("agent config ids and prompts", () => {
  it("is sha256 of canonical JSON: key order does not matter, any gene does", () => {
    const id = agentConfigId(A);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    const reordered = JSON.parse(
      '{"tools":null,"params":{"maxTokens":256,"topP":0.9,"temperature":0.2},"fewShot":[{"text":"example e1","id":"e1"},{"id":"e2","text":"example e2"}],"parts":[{"text":"A role","name":"role"},{"name":"strategy","text":"A strategy"}],"kind":"react"}',
    ) as AgentConfig;
    expect(agentConfigId(reordered)).toBe(id);
    expect(agentConfigId({ ...A, params: { ...A.params, topP: 0.91 } })).not.toBe(id);
    expect(agentConfigId({ ...A, parts: [...A.parts].reverse() })).not.toBe(id);
    expect(agentConfigId({ ...A, tools: [] })).not.toBe(id);
  });

  it("puts the kind's prompt first, then parts, examples and (tools kind) the tool set", () => {
    expect(renderSystemPrompt(A)).toBe(
      `${DEFAULT_REACT_SYSTEM_PROMPT}\n\nA role\n\nA strategy\n\nExamples of solved tasks:\n\nExample 1:\nexample e1\n\nExample 2:\nexample e2`,
    );
    expect(renderSystemPrompt({ ...B, fewShot: [] })).toBe(
      `${DEFAULT_TOOL_CALLING_SYSTEM_PROMPT}\n\nB strategy\n\nB style\n\nUse only these tools (an action's first word): move.`,
    );
    // The react agent has no tool set: the gene is carried, not shown.
    expect(renderSystemPrompt({ ...B, kind: "react", fewShot: [] })).not.toContain("tools");
  });
});

describe("agent config crossover", () => {
  it("crosses parts by name, samples the examples' union, blends parameters, picks kind and tools", () => {
    const rng = scriptedRng([
      // parts role, strategy, style: parent B (lacks role), A, B
      0.7,
      0.2,
      0.6,
      // few-shot: n = 2 + int(2·0.9) = 3; shuffle of union indices [0,1,2,3] → [3,2,1,0]
      0.9,
      0,
      0.5,
      0.99,
      // temperature: equal weights; topP: all weight on B; maxTokens: weights 1 : 3
      0.5,
      0.5,
      0,
      0.5,
      expDraw(1),
      expDraw(3),
      // kind from A, tools from B
      0.1,
      0.8,
    ]);
    const child = crossoverConfigs([A, B], rng);
    expect(rng.left).toBe(0);
    expect(child).toEqual({
      kind: "react",
      parts: [
        { name: "strategy", text: "A strategy" },
        { name: "style", text: "B style" },
      ],
      fewShot: [e("e2"), e("e3"), e("e4")],
      params: { temperature: 0.6, topP: 0.5, maxTokens: 832 },
      tools: ["move"],
    });
  });

  it("is deterministic for a seed, and the seed matters", () => {
    const children = (seed: number) => crossoverConfigs([A, B], createRng(seed, 1));
    expect(children(3)).toEqual(children(3));
    const ids = new Set(Array.from({ length: 8 }, (_, s) => agentConfigId(children(s))));
    expect(ids.size).toBeGreaterThan(1);
  });

  it("keeps every child inside the bounds and the few-shot limit", () => {
    for (let s = 0; s < 50; s++) {
      const child = crossoverConfigs(
        [A, B, { ...B, params: { ...B.params, temperature: 2 } }],
        createRng(s),
      );
      expect(() => parseAgentConfig(child)).not.toThrow();
      expect(child.params.temperature).toBeGreaterThanOrEqual(0.2);
      expect(child.params.temperature).toBeLessThanOrEqual(2);
      expect(child.fewShot.length).toBeGreaterThanOrEqual(2);
      expect(child.fewShot.length).toBeLessThanOrEqual(3);
    }
  });
});

describe("agent config mutation operators", () => {
  it("jitters each parameter by σ = 10 % of its range, clamped and rounded", () => {
    const rng = scriptedRng([...normal(1), ...normal(-1), ...normal(0)]);
    expect(jitterParams(A.params, rng)).toEqual({ temperature: 0.4, topP: 0.8, maxTokens: 256 });
    const high = scriptedRng([...normal(1), ...normal(1), ...normal(-1)]);
    expect(jitterParams({ temperature: 1.95, topP: 0.95, maxTokens: 16 }, high)).toEqual({
      temperature: 2,
      topP: 1,
      maxTokens: 16,
    });
  });

  it("drops, adds and swaps few-shot examples from the pool", () => {
    expect(dropExample(A, scriptedRng([0.6])).fewShot).toEqual([e("e1")]);
    // Missing from A: e3, e4, e5; the middle one is drawn.
    expect(addExample(A, POOL, scriptedRng([0.5])).fewShot).toEqual([e("e1"), e("e2"), e("e4")]);
    expect(swapExample(A, POOL, scriptedRng([0, 0.99])).fewShot).toEqual([e("e5"), e("e2")]);
  });

  it("toggles a pool tool; an unrestricted set starts as the whole pool", () => {
    expect(toggleTool(B, POOL, scriptedRng([0.9])).tools).toEqual(["move", "turn"]);
    expect(toggleTool(B, POOL, scriptedRng([0.5])).tools).toEqual([]);
    const open = { ...B, tools: null };
    expect(toggleTool(open, POOL, scriptedRng([0.4])).tools).toEqual(["go", "turn"]);
    expect(switchKind(A).kind).toBe("tools");
    expect(switchKind(B).kind).toBe("react");
  });

  it("chooses among the applicable operators in proportion to their rates", () => {
    const ones = mutationRates(
      Object.fromEntries(Object.keys(MUTATION_RATES).map((k) => [k, 1])) as MutationRates,
    );
    const context = { pool: POOL, rates: ones, tasks: [] };
    // A is react (no tool toggling) and there is no mutator (no rewrite).
    const names = applicableMutations(A, context);
    expect(names).toEqual(["jitter", "dropExample", "addExample", "swapExample", "switchKind"]);
    expect(chooseMutation(names, ones, scriptedRng([0.5]))).toBe("addExample");
    expect(chooseMutation(names, ones, scriptedRng([0.99]))).toBe("switchKind");
    expect(applicableMutations(B, { ...context, pool: { fewShot: [], tools: [] } })).toEqual([
      "jitter",
      "dropExample",
      "switchKind",
    ]);
    expect(applicableMutations(B, { ...context, pool: POOL })).toContain("toggleTool");
    const none = mutationRates({ jitter: 0, switchKind: 0 });
    expect(
      applicableMutations(
        { ...A, fewShot: [] },
        { pool: { fewShot: [], tools: [] }, rates: none, tasks: [] },
      ),
    ).toEqual([]);
    expect(chooseMutation([], none, scriptedRng([]))).toBe("none");
  });

  it("rejects bad rates", () => {
    expect(() => mutationRates({ jitter: -1 })).toThrow(
      "mutation rate jitter must be a finite number ≥ 0, got -1",
    );
    expect(() => mutationRates({ flip: 1 } as Partial<MutationRates>)).toThrow(
      'unknown mutation "flip"',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// A short CycleQD run over two toy environments
// ---------------------------------------------------------------------------------------------

/**
 * One-step environments: task i's observation names it; the action "solve" succeeds, anything
 * else fails. The scripted model below decides whether to solve.
 */
function toyEnv(name: string): EnvDefinition {
  const info = {
    name,
    version: "1",
    description: `${name} tasks`,
    instruction: `You play ${name}.`,
    splits: { train: { start: 4, end: 4 }, test: { start: 0, end: 4 } },
    successThreshold: 1,
    maxSteps: 1,
  };
  return {
    info,
    create: () => {
      let task = 0;
      return {
        info,
        async reset(taskIndex: number): Promise<Observation> {
          task = taskIndex;
          return { text: `${name} task ${task}` };
        },
        async step(action: string): Promise<StepResult> {
          const reward = action === "solve" ? 1 : 0;
          return { observation: { text: "over" }, reward, done: true, info: {} };
        },
      };
    },
  };
}
const TOY_TASKS = [
  { env: toyEnv("alpha"), tasks: [0, 1, 2, 3] },
  { env: toyEnv("beta"), tasks: [0, 1, 2, 3] },
];

const count = (text: string, token: string) => text.split(token).length - 1;

/**
 * The agent's model: solves `<env> task i` exactly when its system prompt names the env's token
 * (ALPHA, BETA) more than i times, so a configuration's score on a toy env is
 * min(count, 4) / 4. It answers as the agent kind expects (text or an `act` call).
 */
function toyAgentReply(request: ModelRequest): ScriptedReply {
  const system = request.messages[0]?.role === "system" ? request.messages[0].content : "";
  const observation = request.messages.find(
    (m) => m.role === "user" && / task \d+$/.test(m.content),
  );
  const [env, index] = (observation?.content ?? "").split(" task ");
  const action = count(system, (env ?? "").toUpperCase()) > Number(index) ? "solve" : "pass";
  if (request.tools) return { toolCalls: [{ name: "act", arguments: { action } }] };
  return `Thought: deciding.\n\nAction: ${action}`;
}

function expectedScores(config: AgentConfig): number[] {
  const system = renderSystemPrompt(config);
  const solvable = (token: string) => Math.min(count(system, token), 4) / 4;
  const toolsOk =
    config.kind !== "tools" || config.tools === null || config.tools.includes("solve");
  return toolsOk ? [solvable("ALPHA"), solvable("BETA")] : [0, 0];
}

/** The mutator: appends the quality task's token to the part it is asked to rewrite. */
function toyRewrite(request: ModelRequest): ScriptedReply {
  const prompt = request.messages[1]?.content ?? "";
  const quality = /# The quality task: (\w+)/.exec(prompt)?.[1] ?? "";
  const part = /Rewrite the part "([^"]+)"/.exec(prompt)?.[1] ?? "";
  const current = new RegExp(
    `## part "${part}"\\n([\\s\\S]*?)(?:\\n\\n## part |\\n\\n# Your job)`,
  ).exec(prompt)?.[1];
  return `Here it is.\n\n\`\`\`prompt\n${current} ${quality.toUpperCase()}\n\`\`\``;
}

const many = (reply: ScriptedReply, n: number) => Array.from({ length: n }, () => reply);

const EXPERT_ALPHA = parseAgentConfig({
  parts: [
    { name: "focus", text: "ALPHA ALPHA matters." },
    { name: "style", text: "Be brief." },
  ],
});
const EXPERT_BETA = parseAgentConfig({
  kind: "tools",
  parts: [
    { name: "focus", text: "BETA BETA matters." },
    { name: "extra", text: "Think." },
  ],
  tools: ["pass", "solve"],
});

describe("agent config genome in a CycleQD run", () => {
  const genomeOf = (events: MutationEvent[]) => {
    const agentModel = new ScriptedModel(many(toyAgentReply, 400), { name: "agent" });
    const mutator = new ScriptedModel(many(toyRewrite, 100), { name: "mutator" });
    const genome = createAgentConfigGenome({
      model: agentModel,
      tasks: TOY_TASKS,
      pool: { fewShot: [{ id: "hint", text: "ALPHA BETA" }], tools: ["pass", "solve"] },
      mutator: { spec: "scripted:mutator", client: mutator },
      rates: { rewrite: 0.6 },
      episode: { concurrency: 1 },
      onMutation: (event) => events.push(event),
    });
    return { genome, agentModel, mutator };
  };

  it("scores the experts by what their prompts make the model do", async () => {
    const { genome } = genomeOf([]);
    expect(await genome.evaluate(EXPERT_ALPHA)).toEqual([0.5, 0]);
    expect(await genome.evaluate(EXPERT_BETA)).toEqual([0, 0.5]);
    expect(await genome.evaluate({ ...EXPERT_BETA, tools: ["pass"] })).toEqual([0, 0]);
  });

  it("runs generations that fill the archives, and resumes exactly", async () => {
    const events: MutationEvent[] = [];
    const { genome, mutator } = genomeOf(events);
    const store = new MemoryGenomeStore<AgentConfig>();
    const setup = { genome, store, seed: 11 };
    const ranges = [
      { min: 0, max: 1 },
      { min: 0, max: 1 },
    ];
    const { state } = await initCycle(setup, {
      experts: [EXPERT_ALPHA, EXPERT_BETA],
      ranges,
      bins: 5,
    });
    expect(state.archives.archives.map((a) => a.size)).toEqual([2, 2]);
    const saved = JSON.stringify(cycleStateToJSON(state));
    const result = await runCycle(setup, state, { generations: 8 });
    expect(result).toEqual({ stopped: "done", generation: 8 });
    expect(state.errored).toBe(0);

    // One mutation per child, and the rewrites went through the mutator role.
    expect(events).toHaveLength(8);
    expect(Object.values(genome.stats.applied).reduce((a, b) => a + b, 0)).toBe(8);
    const rewrites = events.filter((ev) => ev.mutation === "rewrite");
    expect(rewrites.length).toBeGreaterThan(0);
    expect(genome.stats.rewrites.succeeded).toBe(rewrites.length);
    expect(mutator.requests).toHaveLength(rewrites.length);

    // The archives grew past the experts, and every elite's scores are its configuration's.
    const elites = state.archives.archives.flatMap((a) => a.elites());
    expect(elites.length).toBeGreaterThan(4);
    for (const elite of elites) {
      const config = store.get(elite.id) as AgentConfig;
      expect(agentConfigId(config)).toBe(elite.id);
      expect(elite.scores).toEqual(expectedScores(config));
    }
    const best = Math.max(...elites.map((el) => el.scores[0] as number));
    expect(best).toBeGreaterThan(0.5);

    // A run resumed after generation 0 from its JSON gives the same archives.
    const again = genomeOf([]);
    const resumedSetup = {
      genome: again.genome,
      store: new MemoryGenomeStore<AgentConfig>(),
      seed: 11,
    };
    for (const expert of [EXPERT_ALPHA, EXPERT_BETA])
      resumedSetup.store.put(agentConfigId(expert), expert);
    const resumed = cycleStateFromJSON(JSON.parse(saved));
    await runCycle(resumedSetup, resumed, { generations: 8 });
    expect(cycleStateToJSON(resumed)).toEqual(cycleStateToJSON(state));
  });

  it("drops a child whose every episode errors, without stopping the run", async () => {
    const agentModel = new ScriptedModel([
      ...many(toyAgentReply, 16),
      ...many(new Error("server down"), 4),
    ]);
    const genome = createAgentConfigGenome({
      model: agentModel,
      tasks: TOY_TASKS,
      rates: { jitter: 1, switchKind: 0, rewrite: 0 },
      episode: { concurrency: 1 },
    });
    const setup = { genome, store: new MemoryGenomeStore<AgentConfig>(), seed: 2 };
    const ranges = [
      { min: 0, max: 1 },
      { min: 0, max: 1 },
    ];
    const { state } = await initCycle(setup, {
      experts: [EXPERT_ALPHA, EXPERT_BETA],
      ranges,
      bins: 5,
    });
    const records: string[] = [];
    await runCycle(setup, state, {
      generations: 1,
      onGeneration: (record) => {
        records.push(record.child.error ?? "ok");
      },
    });
    expect(state.errored).toBe(1);
    expect(records).toEqual([
      expect.stringMatching(
        /^every episode of task 0 \(alpha\) errored \(4\); first: .*server down/,
      ),
    ]);
    agentModel.assertDone();
  });

  it("refuses options that cannot work", () => {
    const model = new ScriptedModel([]);
    expect(() => createAgentConfigGenome({ model, tasks: TOY_TASKS.slice(0, 1) })).toThrow(
      "CycleQD needs ≥ 2 tasks, got 1",
    );
    expect(() =>
      createAgentConfigGenome({
        model,
        tasks: [TOY_TASKS[0], { env: toyEnv("x"), tasks: [] }] as never,
      }),
    ).toThrow("task 1 lists no task indices");
    expect(() =>
      createAgentConfigGenome({ model, tasks: TOY_TASKS, pool: { fewShot: [], tools: ["A"] } }),
    ).toThrow("agent config genome: pool: tools.0: must be lowercase");
    expect(() => createAgentConfigGenome({ model, tasks: TOY_TASKS, rewriteAttempts: 0 })).toThrow(
      "rewriteAttempts must be an integer ≥ 1, got 0",
    );
    expect(() =>
      createAgentConfigGenome({ model, tasks: TOY_TASKS, episode: { samples: 0 } }),
    ).toThrow("agent config genome: episode.samples must be an integer ≥ 1, got 0");
  });
});
