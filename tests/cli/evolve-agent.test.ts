/**
 * `clade evolve --agent DIR` as a user runs it: an agent folder from `clade init-agent`, both
 * models served by a fake OpenAI-compatible server (a rule plays the agent's model and the
 * modify-model), the search stored and read back (`tree`, `best --out`), the chosen agent's
 * folder evaluated with `clade eval --agent`. The key never reaches the store, the outputs or the
 * written folder; a search killed with SIGKILL resumes and finishes with a consistent log. The
 * fake server's models have no price: the search's cost reads "unpriced", never $0; with prices
 * in the configuration it reads in dollars.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/index.js";
import { runCli } from "../fixtures/cli.js";
import { fakeServerRule, MARKER, referenceActions } from "../improve/selfmod/fixtures-evolution.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "clade.js");
const TASKS = "0,2,6";
const CANARY = "sk-canary-evolve-agent-7f3a9c1e5b2d4068";

let dir: string;
let server: FakeModelServer;
let previousKey: string | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-evolve-agent-"));
  const actions = await referenceActions([0, 2, 6]);
  server = await startFakeModelServer({ rule: fakeServerRule(actions, "fix"), apiKey: CANARY });
  previousKey = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = CANARY;
  const init = await runCli("init-agent", join(dir, "agent"), "--name", "starter");
  expect(init.code).toBe(0);
});

afterAll(async () => {
  if (previousKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = previousKey;
  await server.close();
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
});

const model = (name: string) => `openai-compatible:${server.openaiBaseUrl}#${name}`;
const searchArgs = (runId: string, db: string, budget = 6) => [
  "evolve",
  "--agent",
  join(dir, "agent"),
  "--env",
  "gridworld",
  "--tasks",
  TASKS,
  "--method",
  "hgm",
  "--budget",
  String(budget),
  "--workers",
  "2",
  "--max-turns",
  "4",
  "--model",
  model("agent-model"),
  "--modify-model",
  model("modify-model"),
  "--run-id",
  runId,
  "--db",
  db,
];

describe("clade evolve --agent", () => {
  it("finds the patch that fixes the agent; tree, best --out and eval --agent read it", async () => {
    const db = join(dir, "e.db");
    const result = await runCli(...searchArgs("e1", db), "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      schema: "clade.evolve-agent/1",
      env: "gridworld",
      tasks: "0,2,6",
      sandbox: "bwrap",
      stopReason: "budget",
      t: 6,
    });
    expect(summary.nodes).toBeGreaterThan(0);
    expect(summary.chosen.node).toBeGreaterThan(0);
    expect(summary.chosen.s).toBeGreaterThan(0);
    // Both models are unpriced (a local server): the cost is unknown, not 0.
    expect(summary).toMatchObject({ costUsd: null, unpriced: true });

    const tree = await runCli("tree", "e1", "--db", db);
    expect(tree.code).toBe(0);
    expect(tree.stdout).toMatch(/search e1: hgm of starter on gridworld/);
    expect(tree.stdout).toMatch(/node 0 {2}own 0\/3/);
    expect(tree.stdout).toMatch(/<- final choice/);
    expect(tree.stdout).toMatch(/agents made, unpriced\n/);
    expect(tree.stdout).toMatch(/node 0 {2}.* {2}evaluated {2}unpriced/);
    expect(tree.stdout).not.toContain("$");
    const treeJson = JSON.parse((await runCli("tree", "e1", "--db", db, "--json")).stdout);
    expect(treeJson).toMatchObject({ costUsd: null, unpriced: true });
    expect(treeJson.nodes[0]).toMatchObject({ costUsd: null, unpriced: true });

    // The same command again: the finished search is read back and reported in text, with its
    // progress line, both unpriced.
    const text = await runCli(...searchArgs("e1", db));
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ {2}cost unpriced$/m);
    expect(text.stderr).toMatch(/^evolve e1: .*, unpriced$/m);
    expect(text.stdout + text.stderr).not.toContain("$0.00");

    const out = join(dir, "best");
    const best = await runCli("best", "e1", "--db", db, "--out", out, "--json");
    expect(best.code).toBe(0);
    expect(JSON.parse(best.stdout)).toMatchObject({ out, best: { node: summary.chosen.node } });
    expect(readFileSync(join(out, "src", "prompts.ts"), "utf8")).toContain(MARKER);

    // The chosen folder is a working agent: evaluated in the sandbox, it solves every task.
    const evaluated = await runCli(
      ...["eval", "--agent", out, "--env", "gridworld", "--tasks", TASKS, "--max-turns", "4"],
      ...["--model", model("agent-model"), "--db", db, "--run-id", "best-agent", "--json"],
    );
    expect(evaluated.code).toBe(0);
    expect(JSON.parse(evaluated.stdout).metrics).toMatchObject({ finished: 3, successes: 3 });

    // The key was sent to the server (it refuses requests without it) and stored nowhere.
    const everything = [
      readFileSync(db).toString("latin1"),
      existsSync(`${db}-wal`) ? readFileSync(`${db}-wal`).toString("latin1") : "",
      result.stdout,
      tree.stdout,
      best.stdout,
      evaluated.stdout,
      evaluated.stderr,
      readFileSync(join(out, "src", "agent.ts"), "utf8"),
    ].join("\n");
    expect(everything).not.toContain(CANARY);
  }, 240_000);

  it("with prices in the configuration, the cost reads in dollars", async () => {
    const db = join(dir, "priced.db");
    const config = join(dir, "clade.config.json");
    const price = { inputPerMTok: 3, outputPerMTok: 15 };
    writeFileSync(
      config,
      JSON.stringify({
        prices: {
          "openai-compatible:agent-model": price,
          "openai-compatible:modify-model": price,
        },
      }),
    );
    // Budget 0: the root's evaluations only, the agent's model calls priced.
    const args = [...searchArgs("p1", db, 0), "--config", config, "--quiet"];
    const result = await runCli(...args);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}cost \$\d+\.\d{4}$/m);
    expect(result.stdout).not.toContain("unpriced");
    const json = JSON.parse((await runCli(...args, "--json")).stdout);
    expect(json.costUsd).toBeGreaterThan(0);
    expect(json).not.toHaveProperty("unpriced");
    const tree = await runCli("tree", "p1", "--db", db);
    expect(tree.stdout).toMatch(/agents made, \$\d+\.\d{4}\n/);
    expect(tree.stdout).not.toContain("unpriced");
  }, 120_000);

  it("killed with SIGKILL mid-search and run again, finishes with every piece of work once", async () => {
    if (!existsSync(join(import.meta.dirname, "..", "..", "dist", "cli", "main.js"))) {
      throw new Error("dist/ is missing: run `npm run build` (npm test does it for you)");
    }
    const db = join(dir, "kill.db");
    const child = spawn(process.execPath, [BIN, ...searchArgs("k", db, 9), "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_code, signal) => resolve(signal)),
    );
    let finished = false;
    void exited.then(() => {
      finished = true;
    });
    const deadline = Date.now() + 120_000;
    while (!finished && childEvaluations(db) < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(finished, "the search ended before it could be killed").toBe(false);
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    const resumed = await runCli(...searchArgs("k", db, 9), "--json");
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ resumed: true, t: 9, stopReason: "budget" });
    const events = eventsOf(db, "k");
    const started = events.filter(
      (e) => e.type.endsWith("_started") || e.type.endsWith("_dispatched"),
    );
    const ended = events.filter((e) => e.type.endsWith("_finished") || e.type.endsWith("_failed"));
    // Each piece of work was dispatched once and ended once, however the kill fell.
    expect(new Set(started.map((e) => e.work)).size).toBe(started.length);
    expect(new Set(ended.map((e) => e.work)).size).toBe(ended.length);
    expect(ended.map((e) => e.work).sort((a, b) => a - b)).toEqual(
      started.map((e) => e.work).sort((a, b) => a - b),
    );
  }, 240_000);
});

function eventsOf(db: string, search: string): { type: string; work: number }[] {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite
      .prepare("SELECT type, work FROM search_events WHERE search_id = ? ORDER BY seq")
      .all(search) as { type: string; work: number }[];
  } finally {
    sqlite.close();
  }
}

/** Finished evaluations of agents other than the root (0 while the store does not exist). */
function childEvaluations(db: string): number {
  if (!existsSync(db)) return 0;
  try {
    const sqlite = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return (
        sqlite
          .prepare(
            "SELECT count(*) AS n FROM search_events WHERE type = 'evaluation_finished' AND node > 0",
          )
          .get() as { n: number }
      ).n;
    } finally {
      sqlite.close();
    }
  } catch {
    return 0;
  }
}
