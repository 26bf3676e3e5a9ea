/**
 * The improver end to end, with test doubles for the model, the stored files and evaluations,
 * the checks and the smoke episode: a change to src/parse.ts becomes a child whose patch rebuilds
 * the new files from the parent's; each failed validation, an empty patch, a failed diagnosis and
 * a parent with nothing to fix give no child, with a one-line reason.
 */
import { describe, expect, it } from "vitest";
import type { AgentFiles } from "../../../src/agent/folder/files.js";
import { memoryLog, runSearch } from "../../../src/improve/search/engine.js";
import type { SearchPolicy } from "../../../src/improve/search/policy.js";
import type { SearchNode } from "../../../src/improve/search/tree.js";
import type { AgentChecks } from "../../../src/improve/selfmod/implementer.js";
import {
  type AgentImproverDeps,
  type ChildRecord,
  createAgentImprover,
  firstErrorLine,
} from "../../../src/improve/selfmod/improver.js";
import { applyPatch } from "../../../src/improve/selfmod/patch.js";
import type { NodeEvaluation } from "../../../src/improve/selfmod/target.js";
import { ScriptedModel, type ScriptedReply } from "../../../src/testing/scripted-model.js";
import { evaluation, node, PARENT_FILES, PARSE_SOURCE, PLAN, planReply } from "./fixtures.js";

const OLD = "/Action:\\s*(.+)/.exec(reply)";
const NEW = "/Action:\\s*(.+)/i.exec(reply)";
const CHILD_FILES = new Map(PARENT_FILES).set("src/parse.ts", PARSE_SOURCE.replace(OLD, NEW));

const USAGE = { inputTokens: 100, outputTokens: 10 };

/** Diagnosis, then a coding agent that edits src/parse.ts and finishes. */
const EDITING_SCRIPT: ScriptedReply[] = [
  { content: planReply(), usage: USAGE },
  {
    toolCalls: [
      { name: "replace_in_file", arguments: { path: "src/parse.ts", old: OLD, new: NEW } },
    ],
    usage: USAGE,
  },
  { toolCalls: [{ name: "finish", arguments: { summary: "Case-insensitive." } }], usage: USAGE },
];

const PASS = { ok: true, output: "" };

function setup(
  overrides: Partial<AgentImproverDeps> & {
    script?: ScriptedReply[];
    evaluations?: NodeEvaluation[];
  } = {},
) {
  const model = new ScriptedModel(overrides.script ?? EDITING_SCRIPT);
  const validated: { check: string; files: AgentFiles }[] = [];
  const checks: AgentChecks = overrides.checks ?? {
    typecheck: async (files) => {
      validated.push({ check: "typecheck", files });
      return PASS;
    },
    tests: async (files) => {
      validated.push({ check: "tests", files });
      return PASS;
    },
  };
  const improver = createAgentImprover({
    modifyModel: model,
    nodeFiles: async () => PARENT_FILES,
    evaluationsOf: async () =>
      overrides.evaluations ?? [evaluation(0, "pass"), evaluation(3, "fail", { log: "no action" })],
    checks,
    smoke: overrides.smoke ?? (async () => ({ ok: true })),
    seed: 1,
    ...(overrides.limits ? { limits: overrides.limits } : {}),
  });
  const improve = (parent: SearchNode = node(0), signal = new AbortController().signal) =>
    improver.improve(parent, { work: 1, ordinal: 0, signal });
  return { model, improve, validated };
}

describe("a child", () => {
  it("holds a patch that rebuilds the new files from the parent's", async () => {
    const { model, improve, validated } = setup();
    const result = await improve();
    model.assertDone();
    if (result.child === null) throw new Error(`no child: ${result.reason}`);
    const data = result.child.data as ChildRecord;
    expect([...applyPatch(PARENT_FILES, data.patch)]).toEqual([...CHILD_FILES]);
    expect(data.patch).toMatch(/^diff --git a\/src\/parse\.ts b\/src\/parse\.ts\n/);
    expect(data).toEqual({
      patch: data.patch,
      plan: PLAN,
      target: { kind: "task", task: 3 },
      summary: "Case-insensitive.",
      stopReason: "finished",
      steps: 2,
    });
    // The scripted modify-model is a plain Model: unpriced.
    expect(result.usage).toEqual({
      inputTokens: 300,
      outputTokens: 30,
      costUsd: 0,
      unpriced: true,
    });
    // The child that was validated is the one the patch rebuilds.
    expect(validated.map((v) => v.check)).toEqual(["typecheck", "tests"]);
    expect([...(validated[0]?.files ?? [])]).toEqual([...CHILD_FILES]);
    // The diagnosis read the failed task's log.
    expect(model.requests[0]?.messages[1]?.content).toContain("no action");
  });

  it("is recorded by the search engine as an improvement", async () => {
    const { model } = setup();
    const improver = createAgentImprover({
      modifyModel: model,
      nodeFiles: async () => PARENT_FILES,
      evaluationsOf: async () => [evaluation(0, "fail")],
      checks: { typecheck: async () => PASS, tests: async () => PASS },
      smoke: async () => ({ ok: true }),
      seed: 1,
    });
    // Expands the root once, then evaluates the child on the one task.
    const expandOnce: SearchPolicy = {
      method: "once",
      hyperparameters: {},
      decide: ({ tree }) => {
        if (tree.node(0).expansions === 0) return { kind: "expand", parent: 0 };
        if (tree.size > 1 && tree.node(1).openTasks > 0) {
          return { kind: "evaluate", node: 1, position: 0 };
        }
        return { kind: "wait" };
      },
      observe: () => {},
      cmpEstimate: () => 0,
      finalChoice: () => null,
    };
    const events = memoryLog();
    await runSearch({
      policy: expandOnce,
      improver,
      evaluator: { evaluate: async () => ({ outcome: "fail" }) },
      tasks: [0],
      T: 1,
      W: 1,
      seed: 1,
      log: events,
    });
    const finished = events.read().find((e) => e.type === "improvement_finished");
    expect(finished).toMatchObject({
      type: "improvement_finished",
      usage: { inputTokens: 300, outputTokens: 30, costUsd: 0, unpriced: true },
    });
  });
});

describe("no child", () => {
  it("when no evaluation finished: the model is not called", async () => {
    const { model, improve } = setup({
      evaluations: [evaluation(1, "error")],
    });
    expect(await improve()).toEqual({ child: null, reason: "nothing to fix" });
    expect(model.requests).toHaveLength(0);
  });

  it("when the diagnosis gives no plan", async () => {
    const { improve } = setup({ script: ["no", "still no"], limits: { diagnoseAttempts: 2 } });
    const result = await improve();
    expect(result.child).toBeNull();
    expect(result).toMatchObject({
      reason: expect.stringMatching(/^diagnosis failed: no usable plan after 2 attempts: /),
    });
    expect(result.usage?.inputTokens).toBeGreaterThan(0);
  });

  it("when the patch is empty", async () => {
    const { improve, validated } = setup({
      script: [planReply(), { toolCalls: [{ name: "finish", arguments: { summary: "none" } }] }],
    });
    const result = await improve();
    expect(result).toMatchObject({
      child: null,
      reason: "empty patch (the coding agent stopped: finished)",
    });
    expect(validated).toEqual([]);
  });

  it("when the typecheck fails, naming its first error", async () => {
    const { improve } = setup({
      checks: {
        typecheck: async () => ({
          ok: false,
          output:
            "\n> tsc --noEmit\nsrc/parse.ts(3,10): error TS2532: Object is possibly 'undefined'.\nsrc/parse.ts(4,1): error TS1005\n",
        }),
        tests: async () => PASS,
      },
    });
    expect(await improve()).toMatchObject({
      child: null,
      reason: "typecheck failed: src/parse.ts(3,10): error TS2532: Object is possibly 'undefined'.",
    });
  });

  it("when the tests fail", async () => {
    const { improve } = setup({
      checks: {
        typecheck: async () => PASS,
        tests: async () => ({
          ok: false,
          output: "TAP version 13\n# Subtest: parses\nnot ok 1 - parses lower case\n# fail 1",
        }),
      },
    });
    expect(await improve()).toMatchObject({
      child: null,
      reason: "tests failed: not ok 1 - parses lower case",
    });
  });

  it("when the smoke episode fails, in one line", async () => {
    const { improve } = setup({
      smoke: async () => ({
        ok: false,
        reason: "error: the agent threw\n  at act (src/agent.ts:3)",
        // The smoke episode's model calls are part of the improvement's cost.
        usage: { inputTokens: 7, outputTokens: 3, costUsd: 0.5 },
      }),
    });
    expect(await improve()).toMatchObject({
      child: null,
      reason: "smoke episode failed: error: the agent threw at act (src/agent.ts:3)",
      usage: { inputTokens: 307, outputTokens: 33, costUsd: 0.5 },
    });
  });
});

describe("errors and aborts", () => {
  it("lets errors of its dependencies through (the engine records them)", async () => {
    const { improve } = setup({
      checks: {
        typecheck: async () => {
          throw new Error("sandbox unavailable");
        },
        tests: async () => PASS,
      },
    });
    await expect(improve()).rejects.toThrow("sandbox unavailable");
  });

  it("throws when aborted", async () => {
    const controller = new AbortController();
    const { improve } = setup({
      smoke: async () => {
        controller.abort(new Error("search interrupted"));
        return { ok: true };
      },
    });
    await expect(improve(node(0), controller.signal)).rejects.toThrow("search interrupted");
  });
});

describe("firstErrorLine", () => {
  it("finds the line that names an error, else the first line", () => {
    expect(firstErrorLine("ok so far\nsrc/a.ts(1,1): error TS1: x\nmore")).toBe(
      "src/a.ts(1,1): error TS1: x",
    );
    expect(firstErrorLine("\n  something odd  \nelse")).toBe("something odd");
    // A passing test about errors is not the failure.
    expect(firstErrorLine("ok 1 - handles error replies\nnot ok 2 - parses\n# fail 1")).toBe(
      "not ok 2 - parses",
    );
    expect(firstErrorLine("")).toBe("(no output)");
  });
});
