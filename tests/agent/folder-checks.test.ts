/**
 * An agent folder's checks (src/agent/folder/checks.ts), run in the sandbox as they are for
 * untrusted folders: the template passes its type check and its tests; a type error, a failing
 * test and a test that never ends each fail the check with output that says why; the folder's
 * own clade-agent.d.ts never counts. Needs bubblewrap, like tests/sandbox.
 */
import { describe, expect, it } from "vitest";
import {
  AGENT_API_FILE,
  AGENT_MANIFEST,
  type AgentFiles,
  agentTemplate,
  CHECK_OUTPUT_CHARS,
  clipEnd,
  runAgentTests,
  runTypecheck,
} from "../../src/agent/folder/index.js";

const TEMPLATE = agentTemplate();

/** The template with some files replaced or added. */
function changed(files: Record<string, string>, base: AgentFiles = TEMPLATE): Map<string, string> {
  return new Map([...base, ...Object.entries(files)]);
}

/** The template's manifest with these tests. */
function withTests(tests: string[]): Record<string, string> {
  const manifest = JSON.parse(TEMPLATE.get(AGENT_MANIFEST) as string);
  return { [AGENT_MANIFEST]: JSON.stringify({ ...manifest, tests }) };
}

describe("the template", () => {
  it("passes its type check and its own tests in the sandbox", async () => {
    const typecheck = await runTypecheck(TEMPLATE);
    expect(typecheck, typecheck.output).toMatchObject({
      ok: true,
      killedBy: null,
      output: "no type errors",
    });
    const tests = await runAgentTests(TEMPLATE);
    expect(tests.ok, tests.output).toBe(true);
    expect(tests.killedBy).toBeNull();
    expect(tests.output).toMatch(/pass \d+/);
    expect(tests.output).toMatch(/fail 0/);
    expect(tests.durationMs).toBeGreaterThan(0);
  });

  it("passes them in mode none too (no sandbox, asked for)", async () => {
    expect(await runTypecheck(TEMPLATE, { mode: "none" })).toMatchObject({ ok: true });
    const tests = await runAgentTests(TEMPLATE, { mode: "none" });
    expect(tests.ok, tests.output).toBe(true);
  });
});

describe("failing checks", () => {
  it("a type error fails the type check, naming the file and line", async () => {
    const source = TEMPLATE.get("src/parse.ts") as string;
    const broken = changed({ "src/parse.ts": `${source}\nexport const count: number = "one";\n` });
    const result = await runTypecheck(broken);
    expect(result.ok).toBe(false);
    expect(result.killedBy).toBeNull();
    expect(result.output).toMatch(/src\/parse\.ts\(\d+,\d+\): error TS2322: Type 'string' is not/);
  });

  it("a failing test fails the tests, with the runner's report", async () => {
    const result = await runAgentTests(
      changed({
        ...withTests(["test/parse.test.ts", "test/wrong.test.ts"]),
        "test/wrong.test.ts": [
          'import assert from "node:assert/strict";',
          'import { test } from "node:test";',
          'import { parseAction } from "../src/parse.ts";',
          'test("expects the impossible", () => {',
          '  assert.deepEqual(parseAction("Action: up"), { ok: true, action: "down" });',
          "});",
        ].join("\n"),
      }),
    );
    expect(result.ok).toBe(false);
    expect(result.killedBy).toBeNull();
    expect(result.output).toMatch(/expects the impossible/);
    expect(result.output).toMatch(/fail 1/);
  });

  it("a test that never ends is killed by the wall clock", async () => {
    const result = await runAgentTests(
      changed({
        ...withTests(["test/loop.test.ts"]),
        "test/loop.test.ts":
          'import { test } from "node:test";\ntest("spins", () => { for (;;) {} });\n',
      }),
      { limits: { wallMs: 4_000 } },
    );
    expect(result).toMatchObject({ ok: false, killedBy: "wall" });
    expect(result.output).toMatch(/killed: it ran past its wall-clock limit \(4 s\)/);
    expect(result.durationMs).toBeGreaterThanOrEqual(3_900);
    expect(result.durationMs).toBeLessThan(15_000);
  });

  it("a folder that is not a usable agent fails without running anything", async () => {
    const noManifest = new Map(TEMPLATE);
    noManifest.delete(AGENT_MANIFEST);
    expect(await runAgentTests(noManifest)).toMatchObject({
      ok: false,
      output: "no clade-agent.json in the agent folder",
      durationMs: 0,
    });
    expect(await runTypecheck(changed({ "../escape.ts": "" }))).toMatchObject({
      ok: false,
      output: "not an acceptable file path: ../escape.ts",
    });
  });

  it("no tests listed is a pass that says so", async () => {
    expect(await runAgentTests(changed(withTests([])))).toEqual({
      ok: true,
      output: "no tests",
      durationMs: 0,
      killedBy: null,
    });
  });
});

describe("the agent API file is clade's", () => {
  // A folder that ships its own declarations, granting itself a type clade's do not have.
  const tampered = changed({
    [AGENT_API_FILE]: 'declare module "clade-agent" { export type Backdoor = number; }\n',
    "src/extra.ts": 'import type { Backdoor } from "clade-agent";\nexport const b: Backdoor = 1;\n',
    ...withTests(["test/api.test.ts"]),
    "test/api.test.ts": [
      'import assert from "node:assert/strict";',
      'import { readFileSync } from "node:fs";',
      'import { test } from "node:test";',
      'test("sees clade\'s declarations", () => {',
      '  const text = readFileSync("clade-agent.d.ts", "utf8");',
      '  assert.ok(!text.includes("Backdoor"));',
      '  assert.ok(text.includes("interface AgentModule"));',
      "});",
    ].join("\n"),
  });

  it("replaces the folder's own, for the type check and for the tests", async () => {
    const typecheck = await runTypecheck(tampered);
    expect(typecheck.ok).toBe(false);
    expect(typecheck.output).toMatch(
      /src\/extra\.ts\(1,15\): error TS2305: Module '"clade-agent"' has no exported member 'Backdoor'/,
    );
    const tests = await runAgentTests(tampered);
    expect(tests.ok, tests.output).toBe(true);
  });
});

describe("output", () => {
  it("keeps the end of a long output, saying how much was left out", () => {
    const text = `${"a".repeat(10_000)}THE END`;
    const clipped = clipEnd(text, CHECK_OUTPUT_CHARS);
    expect(clipped.endsWith("THE END")).toBe(true);
    expect(clipped.startsWith("[2007 earlier characters left out]\n")).toBe(true);
    expect(clipEnd("short", 10)).toBe("short");
  });
});
