/**
 * The diagnosis: what the model is shown, how the plan is read from its reply (fenced or bare
 * JSON), and how a reply without a usable plan is corrected and retried, a bounded number of times,
 * with the usage summed over every attempt.
 */
import { describe, expect, it } from "vitest";
import { clipMiddle, diagnose, extractJson, readPlan } from "../../../src/improve/selfmod/plan.js";
import type { Target } from "../../../src/improve/selfmod/target.js";
import type { AccountedModel, CallMeta } from "../../../src/model/call-record.js";
import type { ModelRequest, ModelResponse } from "../../../src/model/types.js";
import { ScriptedModel } from "../../../src/testing/scripted-model.js";
import { evaluation, PARENT_FILES, PLAN, planReply } from "./fixtures.js";

const TASK_TARGET: Target = {
  kind: "task",
  task: 7,
  evaluation: evaluation(7, "fail", { log: "turn 1: look\nturn 2: Action: go north" }),
};

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

const lastUser = (request: ModelRequest | undefined) => request?.messages.at(-1)?.content ?? "";

describe("the prompt", () => {
  it("shows the source, the episode, the task and the JSON fields", async () => {
    const model = new ScriptedModel([planReply()]);
    await diagnose({ model, files: PARENT_FILES, target: TASK_TARGET });
    const prompt = lastUser(model.requests[0]);
    expect(prompt).toContain("----- src/parse.ts -----\nexport function parseAction");
    expect(prompt).toContain("failed task 7");
    expect(prompt).toContain("turn 2: Action: go north");
    for (const field of [
      "log_summarization",
      "potential_improvements",
      "improvement_proposal",
      "implementation_suggestion",
      "problem_description",
    ]) {
      expect(prompt).toContain(`"${field}"`);
    }
    expect(model.requests[0]?.messages[0]?.content).toMatch(/not be specific to the one task/);
  });

  it("clips the log to logChars, keeping its head and tail", async () => {
    const log = `HEAD${"x".repeat(5000)}TAIL`;
    const model = new ScriptedModel([planReply()]);
    const target: Target = { kind: "task", task: 1, evaluation: evaluation(1, "fail", { log }) };
    await diagnose({ model, files: PARENT_FILES, target, logChars: 200 });
    const prompt = lastUser(model.requests[0]);
    expect(prompt).toContain("HEAD");
    expect(prompt).toContain("TAIL");
    expect(prompt).toContain("[... 4808 characters omitted ...]");
    expect(prompt).not.toContain("x".repeat(201));
  });

  it("describes a theme, with an example episode when there is one", async () => {
    const model = new ScriptedModel([planReply(), planReply()]);
    const example = evaluation(3, "fail", { parseErrors: 4, log: "(empty reply)" });
    await diagnose({
      model,
      files: PARENT_FILES,
      target: { kind: "theme", theme: "unparseable_replies", evaluation: example },
    });
    await diagnose({
      model,
      files: PARENT_FILES,
      target: { kind: "theme", theme: "context_length", evaluation: null },
    });
    expect(lastUser(model.requests[0])).toMatch(
      /replies could not be used[\s\S]*4 unusable model replies/,
    );
    expect(lastUser(model.requests[1])).toMatch(/context length[\s\S]*no episode log shows it/);
  });

  it("clipMiddle leaves short texts alone and bounds long ones", () => {
    expect(clipMiddle("short", 10)).toBe("short");
    const clipped = clipMiddle("a".repeat(50) + "b".repeat(50), 20);
    expect(clipped.startsWith("a".repeat(10))).toBe(true);
    expect(clipped.endsWith("b".repeat(10))).toBe(true);
  });
});

describe("reading the plan", () => {
  it("takes the last ```json block", () => {
    const reply = `First idea:\n\`\`\`json\n{"draft": true}\n\`\`\`\nBetter:\n${planReply()}`;
    expect(readPlan(reply)).toEqual({ plan: PLAN });
  });

  it("takes a bare JSON object, skipping braces in the reasoning", () => {
    const reply = `The parser uses { match } and a regex /a{2}/.\nAnswer: ${JSON.stringify(PLAN)} done.`;
    expect(readPlan(reply)).toEqual({ plan: PLAN });
  });

  it("keeps braces and quotes inside strings", () => {
    const plan = { ...PLAN, implementation_suggestion: 'use "{" and "}" in \\"quotes\\"' };
    expect(readPlan(JSON.stringify(plan))).toEqual({ plan });
  });

  it("says what is wrong", () => {
    expect(extractJson("")).toEqual({ problem: "the reply was empty" });
    expect(extractJson("no json here")).toEqual({
      problem: "the reply holds no JSON object in a ```json block",
    });
    expect(extractJson('```json\n{"a": 1,}\n```')).toMatchObject({
      problem: expect.stringMatching(/^the last ```json block is not valid JSON/),
    });
    const missing: Record<string, unknown> = { ...PLAN };
    delete missing.problem_description;
    expect(readPlan(planReply(missing))).toMatchObject({
      problem: expect.stringMatching(/does not fit the format: problem_description: /),
    });
    expect(readPlan(planReply({ ...PLAN, potential_improvements: "one" }))).toMatchObject({
      problem: expect.stringMatching(/potential_improvements: /),
    });
  });
});

describe("retries", () => {
  it("answers bad JSON with a correction naming the problem, then takes the good reply", async () => {
    const model = new ScriptedModel([
      { content: '```json\n{"log_summarization": \n```', usage: usage(100, 10) },
      (request) => {
        expect(request.messages.at(-2)).toEqual({
          role: "assistant",
          content: '```json\n{"log_summarization": \n```',
        });
        expect(lastUser(request)).toMatch(
          /could not be used: the last ```json block is not valid JSON/,
        );
        return { content: planReply(), usage: usage(150, 20) };
      },
    ]);
    const result = await diagnose({ model, files: PARENT_FILES, target: TASK_TARGET });
    expect(result).toEqual({
      plan: PLAN,
      attempts: 2,
      // A plain Model says nothing of prices: its tokens count, its cost is unknown.
      usage: { inputTokens: 250, outputTokens: 30, costUsd: 0, unpriced: true },
    });
    model.assertDone();
  });

  it("names a missing field in the correction", async () => {
    const { problem_description: _, ...missing } = PLAN;
    const model = new ScriptedModel([
      planReply(missing),
      (request) => {
        expect(lastUser(request)).toMatch(/problem_description/);
        return planReply();
      },
    ]);
    expect((await diagnose({ model, files: PARENT_FILES, target: TASK_TARGET })).plan).toEqual(
      PLAN,
    );
  });

  it("gives up after maxAttempts, with the last problem and the usage of every attempt", async () => {
    const model = new ScriptedModel([
      { content: "", usage: usage(10, 0) },
      { content: "thinking…", usage: usage(20, 5) },
      { content: "{oops}", usage: usage(30, 5) },
    ]);
    const result = await diagnose({ model, files: PARENT_FILES, target: TASK_TARGET });
    expect(result.plan).toBeNull();
    expect(result).toMatchObject({
      reason:
        "no usable plan after 3 attempts: no JSON object in the reply parses (and there is no ```json block)",
      attempts: 3,
      usage: { inputTokens: 60, outputTokens: 10, costUsd: 0 },
    });
    // An empty reply is shown back as a placeholder: providers refuse empty assistant turns.
    expect(model.requests[1]?.messages.at(-2)?.content).toBe("(empty reply)");
    model.assertDone();
  });

  it("counts the cost of a priced (accounted) model", async () => {
    const inner = new ScriptedModel(["nothing", planReply()]);
    const model: AccountedModel = {
      id: "priced",
      complete: (request, signal) => inner.complete(request, signal),
      async completeWithMeta(request, signal) {
        const response: ModelResponse = await inner.complete(request, signal);
        const meta: CallMeta = {
          usage: response.usage,
          costUsd: 0.25,
          latencyMs: 1,
          cacheHit: false,
          attempts: 1,
        };
        return { response, meta };
      },
    };
    const result = await diagnose({ model, files: PARENT_FILES, target: TASK_TARGET });
    expect(result.usage.costUsd).toBeCloseTo(0.5);
    expect(result.usage).not.toHaveProperty("unpriced");
  });

  it("stops when aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    const model = new ScriptedModel([planReply()]);
    await expect(
      diagnose({ model, files: PARENT_FILES, target: TASK_TARGET, signal: controller.signal }),
    ).rejects.toThrow("stop");
  });
});
