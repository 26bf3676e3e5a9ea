/**
 * The model-driven rewrite of a prompt part: the strict reading of replies, the request the
 * mutator gets (quality task, part, per-call seed), retries with corrections, giving up cleanly
 * (child unchanged, counted, reported), model errors, aborts, and seed determinism through the
 * genome's mutate.
 */
import { describe, expect, it } from "vitest";
import { createRng, type Rng } from "../../../src/env/rng.js";
import type { EnvDefinition } from "../../../src/env/types.js";
import {
  type AgentConfig,
  agentConfigId,
  createAgentConfigGenome,
  MAX_TEXT_CHARS,
  type MutationEvent,
  parseAgentConfig,
  REWRITE_SYSTEM_PROMPT,
  readRewrite,
  rewritePart,
  type TaskDescription,
} from "../../../src/improve/qd/agent-config/index.js";
import type { ModelRequest } from "../../../src/model/types.js";
import { ScriptedModel, type ScriptedReply } from "../../../src/testing/scripted-model.js";

const CONFIG: AgentConfig = parseAgentConfig({
  parts: [
    { name: "role", text: "You are careful." },
    { name: "strategy", text: "Plan before acting." },
  ],
});
const TASKS: TaskDescription[] = [
  { name: "maze", description: "Find the goal.", instruction: "Move with `move up`." },
  { name: "wordle", description: "Guess the word.", instruction: "Guess five letters." },
];
const block = (text: string) => `Sure.\n\n\`\`\`prompt\n${text}\n\`\`\`\n`;

describe("reading a rewrite reply", () => {
  it("takes the one ```prompt block, trimmed", () => {
    expect(readRewrite(block("  Plan, then act.\nCheck twice.  "), "Plan before acting.")).toEqual({
      text: "Plan, then act.\nCheck twice.",
    });
    expect(readRewrite("```prompt\nNew.\n```", "Old.")).toEqual({ text: "New." });
  });

  it.each([
    ["", "the reply was empty"],
    ["Plan, then act.", "the reply has no ```prompt block"],
    ["```text\nPlan.\n```", "the reply has no ```prompt block"],
    ["```prompt\nPlan.", "the reply has no ```prompt block"],
    [`${block("One.")}${block("Two.")}`, "the reply has 2 ```prompt blocks, not exactly one"],
    ["```prompt\n\n```", "the ```prompt block is empty"],
    ["```prompt\n```", "the ```prompt block is empty"],
    [block("Use ```js fences."), "the new text contains ```"],
    [
      block("x".repeat(MAX_TEXT_CHARS + 1)),
      `the new text has ${MAX_TEXT_CHARS + 1} characters, over ${MAX_TEXT_CHARS}`,
    ],
    [block(" Old. "), "the new text is the current text unchanged"],
  ])("refuses %j", (reply, problem) => {
    expect(readRewrite(reply, "Old.")).toEqual({ problem });
  });
});

describe("rewritePart", () => {
  const options = (model: ScriptedModel) => ({
    model,
    config: CONFIG,
    partIndex: 1,
    qualityTask: 1,
    tasks: TASKS,
    seed: 1234,
  });

  it("asks about the quality task and the part, with the call's seed, and takes a good reply", async () => {
    const model = new ScriptedModel([block("Guess common letters first.")]);
    const outcome = await rewritePart(options(model));
    expect(outcome).toMatchObject({
      ok: true,
      part: "strategy",
      text: "Guess common letters first.",
      attempts: 1,
    });
    model.assertDone();
    const request = model.requests[0] as ModelRequest;
    expect(request.params).toEqual({ temperature: 0.7, maxTokens: 4096, seed: 1234 });
    expect(request.messages[0]).toEqual({ role: "system", content: REWRITE_SYSTEM_PROMPT });
    const prompt = request.messages[1]?.content ?? "";
    expect(prompt).toContain(
      "- task 0: maze: Find the goal.\n- task 1: wordle: Guess the word. (quality task)",
    );
    expect(prompt).toContain("# The quality task: wordle\nGuess the word.");
    expect(prompt).toContain("Guess five letters.");
    expect(prompt).toContain(
      '## part "role"\nYou are careful.\n\n## part "strategy"\nPlan before acting.',
    );
    expect(prompt).toContain('Rewrite the part "strategy"');
  });

  it("answers a bad reply with what was wrong and takes the next good one", async () => {
    const model = new ScriptedModel(["I would plan more.", block("Plan, then guess.")]);
    const outcome = await rewritePart(options(model));
    expect(outcome).toMatchObject({ ok: true, text: "Plan, then guess.", attempts: 2 });
    const second = model.requests[1] as ModelRequest;
    expect(second.messages).toHaveLength(4);
    expect(second.messages[2]).toEqual({ role: "assistant", content: "I would plan more." });
    expect(second.messages[3]?.content).toMatch(
      /^Your reply could not be used: the reply has no ```prompt block\. Answer again/,
    );
    model.assertDone();
  });

  it("gives up after the attempts, saying why", async () => {
    const model = new ScriptedModel([
      "no",
      block("Plan before acting."),
      { content: "```prompt\nPlan", finishReason: "length" },
    ]);
    const outcome = await rewritePart(options(model));
    expect(outcome).toEqual({
      ok: false,
      part: "strategy",
      reason:
        "no usable rewrite after 3 attempt(s): the reply has no ```prompt block (the reply was cut off at the length limit)",
      attempts: 3,
      tokens: expect.any(Number),
    });
    expect((model.requests[2] as ModelRequest).messages[5]?.content).toContain(
      "the new text is the current text unchanged",
    );
    model.assertDone();
  });

  it("ends on a model error without asking again", async () => {
    const model = new ScriptedModel([new Error("503 from provider")]);
    const outcome = await rewritePart({ ...options(model), maxAttempts: 5 });
    expect(outcome).toMatchObject({
      ok: false,
      reason: "model error: 503 from provider",
      attempts: 1,
    });
    model.assertDone();
  });

  it("stops when the signal aborts, rather than reporting a failure", async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([
      () => {
        controller.abort(new Error("interrupted"));
        return new Error("request aborted");
      },
    ]);
    await expect(rewritePart({ ...options(model), signal: controller.signal })).rejects.toThrow(
      "request aborted",
    );
  });
});

describe("the rewrite as the genome's mutation", () => {
  const env = (name: string): EnvDefinition => ({
    info: {
      name,
      version: "1",
      description: `${name} tasks`,
      instruction: `Play ${name}.`,
      splits: { train: { start: 1, end: 1 }, test: { start: 0, end: 1 } },
      successThreshold: 1,
      maxSteps: 1,
    },
    create: () => {
      throw new Error("not played here");
    },
  });
  const ONLY_REWRITE = {
    jitter: 0,
    dropExample: 0,
    addExample: 0,
    swapExample: 0,
    toggleTool: 0,
    switchKind: 0,
    rewrite: 1,
  };
  const genomeWith = (replies: ScriptedReply[], events: MutationEvent[] = []) => {
    const mutator = new ScriptedModel(replies, { name: "mutator" });
    const genome = createAgentConfigGenome({
      model: new ScriptedModel([]),
      tasks: [
        { env: env("alpha"), tasks: [0] },
        { env: env("beta"), tasks: [0] },
      ],
      mutator: { spec: "scripted:mutator", client: mutator },
      rates: ONLY_REWRITE,
      rewriteAttempts: 2,
      onMutation: (event) => events.push(event),
    });
    return { genome, mutator };
  };
  /** Draws: the choice, the part (int(2) of 0.75 → 1), the seed (int(2³¹) of 0.5 → 2³⁰). */
  const drawsRng = (): Rng => {
    const values = [0.3, 0.75, 0.5];
    const next = () => {
      const value = values.shift();
      if (value === undefined) throw new Error("more draws than scripted");
      return value;
    };
    const int = (n: number) => Math.floor(next() * n);
    return {
      next,
      int,
      pick: (items) => items[int(items.length)] as never,
      shuffle: () => {
        throw new Error("not drawn here");
      },
    };
  };

  it("rewrites the drawn part with the drawn seed", async () => {
    const events: MutationEvent[] = [];
    const { genome, mutator } = genomeWith([block("Go for beta.")], events);
    const child = await genome.mutate(CONFIG, 1, drawsRng());
    expect(child).toEqual({
      ...CONFIG,
      parts: [CONFIG.parts[0], { name: "strategy", text: "Go for beta." }],
    });
    expect(mutator.requests[0]?.params?.seed).toBe(2 ** 30);
    expect(mutator.requests[0]?.messages[1]?.content).toContain("# The quality task: beta");
    expect(genome.stats.rewrites).toEqual({ succeeded: 1, failed: 0 });
    expect(genome.stats.applied.rewrite).toBe(1);
    expect(events).toEqual([
      {
        qualityTask: 1,
        mutation: "rewrite",
        rewrite: expect.objectContaining({ ok: true, part: "strategy" }),
      },
    ]);
    expect(genome.settings.mutator).toBe("scripted:mutator");
  });

  it("leaves the child unchanged when the rewrite gives up, and counts it", async () => {
    const events: MutationEvent[] = [];
    const { genome, mutator } = genomeWith(["nothing", "still nothing"], events);
    const child = await genome.mutate(CONFIG, 0, drawsRng());
    expect(child).toEqual(CONFIG);
    expect(agentConfigId(child)).toBe(agentConfigId(CONFIG));
    expect(genome.stats.rewrites).toEqual({ succeeded: 0, failed: 1 });
    expect(genome.stats.lastRewriteFailure).toBe(
      "no usable rewrite after 2 attempt(s): the reply has no ```prompt block",
    );
    expect(events[0]?.rewrite?.ok).toBe(false);
    mutator.assertDone();
  });

  it("passes the run's abort on", async () => {
    const { genome } = genomeWith([block("x")]);
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(genome.mutate(CONFIG, 0, createRng(1), controller.signal)).rejects.toThrow("stop");
    expect(genome.stats.rewrites).toEqual({ succeeded: 0, failed: 0 });
  });

  it("makes the same child from the same seed (the mutator answering by the request's seed)", async () => {
    const bySeed = (request: ModelRequest) => block(`Variant ${request.params?.seed}.`);
    const childOf = async (seed: number) => {
      const { genome } = genomeWith([bySeed]);
      return genome.mutate(CONFIG, 0, createRng(seed, 3));
    };
    expect(await childOf(5)).toEqual(await childOf(5));
    const ids = new Set<string>();
    for (let seed = 0; seed < 6; seed++) ids.add(agentConfigId(await childOf(seed)));
    expect(ids.size).toBeGreaterThan(1);
  });
});
