/**
 * The coding agent: scripted tool calls edit an in-memory copy of the agent's files; bad
 * arguments, bad paths and the agent API file are answered with messages, not crashes; every
 * bound (steps, tokens, time) and a reply without a tool call stop it with their reason.
 */
import { describe, expect, it } from "vitest";
import { AGENT_API_FILE } from "../../../src/agent/folder/files.js";
import {
  type AgentChecks,
  type ImplementOptions,
  implement,
} from "../../../src/improve/selfmod/implementer.js";
import type { Target } from "../../../src/improve/selfmod/target.js";
import type { ModelRequest } from "../../../src/model/types.js";
import {
  ScriptedModel,
  type ScriptedReply,
  type ScriptedToolCall,
} from "../../../src/testing/scripted-model.js";
import { evaluation, PARENT_FILES, PARSE_SOURCE, PLAN } from "./fixtures.js";

const TARGET: Target = { kind: "task", task: 2, evaluation: evaluation(2, "fail") };

const PASSING: AgentChecks = {
  typecheck: async () => ({ ok: true, output: "" }),
  tests: async () => ({ ok: true, output: "# pass 3" }),
};

const call = (name: string, args: ScriptedToolCall["arguments"] = {}): ScriptedReply => ({
  toolCalls: [{ name, arguments: args }],
});

/** The tool results the model read before its n-th call (0-based). */
const toolResults = (model: ScriptedModel, n: number) =>
  (model.requests[n] as ModelRequest).messages
    .filter((m) => m.role === "tool")
    .map((m) => m.content);

const lastResult = (model: ScriptedModel, n: number) => toolResults(model, n).at(-1) ?? "";

function run(replies: ScriptedReply[], options: Partial<ImplementOptions> = {}) {
  const model = new ScriptedModel(replies);
  const result = implement({
    model,
    files: PARENT_FILES,
    plan: PLAN,
    target: TARGET,
    checks: PASSING,
    ...options,
  });
  return { model, result };
}

const OLD = "/Action:\\s*(.+)/.exec(reply)";
const NEW = "/Action:\\s*(.+)/i.exec(reply)";

describe("editing", () => {
  it("reads, replaces and finishes, giving the edited files", async () => {
    const { model, result } = run([
      call("list_files"),
      call("read_file", { path: "src/parse.ts" }),
      call("replace_in_file", { path: "src/parse.ts", old: OLD, new: NEW }),
      call("finish", { summary: "Case-insensitive actions." }),
    ]);
    const done = await result;
    expect(done.stopReason).toBe("finished");
    expect(done.summary).toBe("Case-insensitive actions.");
    expect(done.steps).toBe(4);
    expect(done.files.get("src/parse.ts")).toBe(PARSE_SOURCE.replace(OLD, NEW));
    expect([...done.files.keys()]).toEqual([...PARENT_FILES.keys()]);
    // The parent's files are not touched.
    expect(PARENT_FILES.get("src/parse.ts")).toBe(PARSE_SOURCE);
    expect(lastResult(model, 1)).toContain("- src/parse.ts (5 lines)");
    expect(lastResult(model, 2)).toBe(PARSE_SOURCE);
    expect(lastResult(model, 3)).toBe("Edited src/parse.ts.");
    // The usage is the sum over the calls (ScriptedModel's estimate).
    expect(done.usage.inputTokens).toBeGreaterThan(0);
    model.assertDone();
  });

  it("starts from the plan, the target and the file listing", async () => {
    const { model, result } = run([call("finish", { summary: "nothing" })]);
    await result;
    const first = model.requests[0] as ModelRequest;
    expect(first.tools?.map((tool) => tool.name)).toEqual([
      "list_files",
      "read_file",
      "write_file",
      "replace_in_file",
      "typecheck",
      "run_tests",
      "finish",
    ]);
    const prompt = first.messages[1]?.content ?? "";
    expect(prompt).toContain(PLAN.problem_description);
    expect(prompt).toContain(PLAN.implementation_suggestion);
    expect(prompt).toContain("failed task 2");
    expect(prompt).toContain("- test/parse.test.ts (3 lines)");
  });

  it("writes new files and runs the injected checks on the current files", async () => {
    const seen: string[][] = [];
    const checks: AgentChecks = {
      typecheck: async (files) => {
        seen.push([...files.keys()]);
        return {
          ok: false,
          output: "src/new.ts(1,7): error TS2322: Type 'string' is not assignable",
        };
      },
      tests: async () => ({ ok: true, output: "# pass 1" }),
    };
    const { model, result } = run(
      [
        call("write_file", { path: "src/new.ts", content: "export const x: number = 1;\n" }),
        call("typecheck"),
        call("run_tests"),
        call("finish", { summary: "added" }),
      ],
      { checks },
    );
    const done = await result;
    expect(done.files.get("src/new.ts")).toBe("export const x: number = 1;\n");
    expect(seen).toEqual([[...PARENT_FILES.keys(), "src/new.ts"].sort()]);
    expect(lastResult(model, 1)).toBe("Created src/new.ts.");
    expect(lastResult(model, 2)).toMatch(/^Typecheck failed\.\nsrc\/new\.ts\(1,7\): error TS2322/);
    expect(lastResult(model, 3)).toBe("Tests passed.\n# pass 1");
  });

  it("answers a replacement that is missing or not unique", async () => {
    const { model, result } = run([
      call("replace_in_file", { path: "src/parse.ts", old: "absent", new: "x" }),
      call("replace_in_file", { path: "src/parse.ts", old: "match", new: "m" }),
      call("replace_in_file", { path: "src/nope.ts", old: "a", new: "b" }),
      call("finish", { summary: "gave up" }),
    ]);
    const done = await result;
    expect(lastResult(model, 1)).toMatch(/does not occur in src\/parse\.ts/);
    expect(lastResult(model, 2)).toMatch(/occurs 3 times in src\/parse\.ts/);
    expect(lastResult(model, 3)).toMatch(/no file "src\/nope\.ts"/);
    expect(done.files.get("src/parse.ts")).toBe(PARSE_SOURCE);
  });

  it("replaces text containing $ patterns literally", async () => {
    const { result } = run([
      call("replace_in_file", { path: "src/parse.ts", old: "match[1]", new: "match[$1]$&" }),
      call("finish", { summary: "ok" }),
    ]);
    expect((await result).files.get("src/parse.ts")).toContain("match[$1]$&.trim()");
  });

  it("refuses the agent API file and bad paths, and warns of a broken manifest", async () => {
    const { model, result } = run([
      call("write_file", { path: AGENT_API_FILE, content: "declare module 'x' {}" }),
      call("replace_in_file", { path: AGENT_API_FILE, old: "a", new: "b" }),
      call("write_file", { path: "../escape.ts", content: "x" }),
      call("write_file", { path: "clade-agent.json", content: '{"format": "other"}' }),
      call("finish", { summary: "tried" }),
    ]);
    const done = await result;
    expect(lastResult(model, 1)).toMatch(/^Refused: clade-agent\.d\.ts is clade's agent API/);
    expect(lastResult(model, 2)).toMatch(/^Refused: clade-agent\.d\.ts/);
    expect(lastResult(model, 3)).toMatch(/^Refused: "\.\.\/escape\.ts" is not an acceptable path/);
    expect(lastResult(model, 4)).toMatch(/^Replaced clade-agent\.json\. Warning: the manifest/);
    expect(done.files.has(AGENT_API_FILE)).toBe(false);
    expect(done.files.has("../escape.ts")).toBe(false);
    // The manifest may change: the checks judge it.
    expect(done.files.get("clade-agent.json")).toBe('{"format": "other"}');
  });

  it("answers bad arguments and unknown tools with an error, and goes on", async () => {
    const { model, result } = run([
      call("read_file", "{not json"),
      call("read_file", { path: 3 }),
      call("write_file", { path: "a.ts" }),
      call("delete_everything"),
      call("finish", {}),
      call("finish", { summary: "ok" }),
    ]);
    const done = await result;
    expect(lastResult(model, 1)).toMatch(/^Error: the arguments are not valid JSON/);
    expect(lastResult(model, 2)).toBe(
      "Error: invalid arguments for read_file: path: must be a string.",
    );
    expect(lastResult(model, 3)).toMatch(/^Error: invalid arguments for write_file: content: /);
    expect(lastResult(model, 4)).toBe('Error: unknown tool "delete_everything".');
    expect(lastResult(model, 5)).toMatch(/^Error: invalid arguments for finish: summary/);
    expect(done.stopReason).toBe("finished");
    expect(done.steps).toBe(6);
  });

  it("runs the calls of a reply in order, and none after finish", async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: "replace_in_file", arguments: { path: "src/parse.ts", old: OLD, new: NEW } },
          { name: "finish", arguments: { summary: "done" } },
          { name: "write_file", arguments: { path: "late.ts", content: "x" } },
        ],
      },
    ]);
    const done = await implement({
      model,
      files: PARENT_FILES,
      plan: PLAN,
      target: TARGET,
      checks: PASSING,
    });
    expect(done.stopReason).toBe("finished");
    expect(done.files.get("src/parse.ts")).toContain(NEW);
    expect(done.files.has("late.ts")).toBe(false);
  });
});

describe("bounds", () => {
  it("stops after maxSteps model calls", async () => {
    const { model, result } = run([call("list_files"), call("list_files")], { maxSteps: 2 });
    expect(await result).toMatchObject({ stopReason: "max_steps", steps: 2 });
    model.assertDone();
  });

  it("stops once the tokens reach maxTokens", async () => {
    const big = { inputTokens: 300, outputTokens: 100 };
    const { result } = run(
      [
        { ...(call("list_files") as object), usage: big },
        { ...(call("list_files") as object), usage: big },
      ],
      { maxTokens: 700 },
    );
    expect(await result).toMatchObject({
      stopReason: "max_tokens",
      steps: 2,
      usage: { inputTokens: 600, outputTokens: 200, costUsd: 0 },
    });
  });

  it("stops when the clock passes maxMs", async () => {
    let t = 0;
    const { result } = run([call("list_files"), call("list_files")], {
      maxMs: 1000,
      now: () => {
        t += 400;
        return t;
      },
    });
    expect(await result).toMatchObject({ stopReason: "max_time", steps: 2 });
  });

  it("cuts off a model call still running at maxMs", async () => {
    const model = new ScriptedModel([call("list_files")], { delayMs: 5_000 });
    const done = await implement({
      model,
      files: PARENT_FILES,
      plan: PLAN,
      target: TARGET,
      checks: PASSING,
      maxMs: 50,
    });
    expect(done).toMatchObject({ stopReason: "max_time", steps: 0 });
  });

  it("reminds once of the tools, then stops on a second reply without a tool call", async () => {
    const { model, result } = run(["I will now think.", "Still thinking."]);
    expect(await result).toMatchObject({
      stopReason: "no_tool_call",
      steps: 2,
      summary: "Still thinking.",
    });
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(/^Your reply called no tool/);
  });

  it("a tool call after the reminder resets nothing: the next text reply stops it", async () => {
    const { result } = run(["hmm", call("list_files"), "done, I think"]);
    expect(await result).toMatchObject({ stopReason: "no_tool_call", steps: 3 });
  });

  it("throws when the caller aborts", async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([
      () => {
        controller.abort(new Error("interrupted"));
        return call("list_files");
      },
    ]);
    await expect(
      implement({
        model,
        files: PARENT_FILES,
        plan: PLAN,
        target: TARGET,
        checks: PASSING,
        signal: controller.signal,
      }),
    ).rejects.toThrow("interrupted");
  });
});
