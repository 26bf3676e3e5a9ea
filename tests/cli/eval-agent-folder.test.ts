/**
 * `clade eval --agent ./DIR` with an agent folder: a folder that is not an agent is one line and
 * exit 2 with nothing written; a run records the folder's hash, so a changed folder cannot resume
 * it; `--sandbox none` is explicit and shows in the run's agent name on every report.
 */
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/index.js";
import { runCli } from "../fixtures/cli.js";

let dir: string;
let server: FakeModelServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-eval-folder-"));
  server = await startFakeModelServer({
    rule: () => ({ content: "Thought:\nLook around.\n\nAction:\nturn left" }),
  });
  expect((await runCli("init-agent", join(dir, "agent"))).code).toBe(0);
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const evalArgs = (agent: string, db: string, ...more: string[]) => [
  ...["eval", "--agent", agent, "--env", "gridworld", "--tasks", "0-1", "--max-turns", "2"],
  ...["--model", `openai-compatible:${server.openaiBaseUrl}#m`, "--db", db, ...more],
];

describe("clade eval --agent DIR", () => {
  it("refuses a folder that is not an agent in one line, writing nothing", async () => {
    const empty = join(dir, "empty");
    mkdirSync(empty);
    const db = join(dir, "bad.db");
    const result = await runCli(...evalArgs(empty, db));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/agent folder .*empty: no clade-agent\.json in the agent folder/);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(existsSync(db)).toBe(false);
  });

  it("runs it in the sandbox; a changed folder cannot resume the run", async () => {
    const db = join(dir, "runs.db");
    const first = await runCli(...evalArgs(join(dir, "agent"), db, "--run-id", "r1", "--json"));
    expect(first.code).toBe(0);
    const output = JSON.parse(first.stdout);
    expect(output.metrics).toMatchObject({ finished: 2, successes: 0, errors: 0 });
    appendFileSync(join(dir, "agent", "src", "prompts.ts"), "\n// changed\n");
    const again = await runCli(...evalArgs(join(dir, "agent"), db, "--run-id", "r1"));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/run "r1" already exists with a different configuration/);
  }, 60_000);

  it("--sandbox none is stored in the run and shown with it", async () => {
    const db = join(dir, "none.db");
    const result = await runCli(
      ...evalArgs(join(dir, "agent"), db, "--run-id", "n1", "--sandbox", "none"),
    );
    expect(result.stderr).toMatch(/0 errors/);
    expect(result.code).toBe(0);
    const runs = await runCli("runs", "--db", db);
    expect(runs.stdout).toMatch(/\+sandbox-none/);
    const shown = await runCli("show", "n1", "--db", db);
    expect(shown.stdout).toMatch(/\+sandbox-none/);
  }, 60_000);

  it("a module file still loads in-process as before (a folder is told apart by being one)", async () => {
    const file = join(dir, "my-agent.mjs");
    writeFileSync(
      file,
      "export default { name: 'plain', create: () => ({ act: async () => ({ action: 'turn left' }) }) };\n",
    );
    const result = await runCli(
      ...["eval", "--agent", file, "--env", "gridworld", "--tasks", "0", "--max-turns", "1"],
      ...["--db", join(dir, "module.db"), "--json"],
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).agent).toBe("plain");
  });
});
