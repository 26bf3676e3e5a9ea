/**
 * `clade evolve`: bad input is one line and exit 2; the comparison prints its table; a stored
 * search resumes; and a search killed with SIGKILL in the middle, then run again, leaves exactly
 * the log an uninterrupted search leaves (the real CLI process, from dist/).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "clade.js");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-evolve-"));
});

describe("bad input: one line, exit 2, nothing written", () => {
  it.each([
    [["--method", "hgm"], /give --agent DIR .* or --simulate SCENARIO/],
    [["--simulate", "trap", "--env", "maze"], /--env is for a search over an agent folder/],
    [["--agent", "./a", "--simulate", "trap"], /--agent and --simulate are two kinds of search/],
    [["--agent", "./a", "--env", "maze"], /--agent needs --modify-model SPEC .*, --run-id ID/],
    [
      ["--agent", "./a", "--env", "maze", "--modify-model", "m", "--run-id", "r", "--seeds", "2"],
      /--seeds is for simulated searches, not --agent/,
    ],
    [
      ["--agent", "./nope", "--env", "maze", "--modify-model", "openai:gpt-4o", "--run-id", "r"],
      /--agent \.\/nope: the agent folder .*nope does not exist/,
    ],
    [
      [
        "--agent",
        "./a",
        "--env",
        "maze",
        "--modify-model",
        "m",
        "--run-id",
        "r",
        "--method",
        "hgm,dgm",
      ],
      /a search over an agent takes one --method/,
    ],
    [["--simulate", "nope"], /unknown scenario "nope" \(built in: trap, mismatch-mild/],
    [["--simulate", "trap", "--method", "hgm,mcts"], /--method: unknown method "mcts"/],
    [["--simulate", "trap", "--method", "hgm,hgm"], /--method lists a method twice/],
    [["--simulate", "trap", "--seeds", "0"], /--seeds must be at least 1/],
    [["--simulate", "trap", "--budget", "ten"], /--budget must be a whole number/],
    [["--simulate", "trap", "--workers", "0"], /--workers must be at least 1/],
    [["--simulate", "trap", "--seed", "4"], /--seed is for one stored search: give --run-id/],
    [["--simulate", "trap", "--budget-usd", "4"], /--budget-usd is for one stored search/],
    [["--simulate", "trap", "--run-id", "x", "--seeds", "3"], /takes --seed/],
    [["--simulate", "trap", "--run-id", "x", "--method", "hgm,dgm"], /takes one --method/],
    [["--simulate", "trap", "--run-id", "bad id"], /--run-id use 1-100 letters/],
    [["--simulate", "./missing.json"], /cannot read a JSON scenario \(ENOENT\)/],
  ])("%j", async (args, message) => {
    const db = join(dir, "bad.db");
    const result = await runCli("evolve", ...args, "--db", db);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(existsSync(db)).toBe(false);
  });

  it("a scenario file that is not one", async () => {
    const file = join(dir, "scenario.json");
    writeFileSync(
      file,
      JSON.stringify({ name: "mine", description: "", root: { type: "a", p: 2 }, types: {} }),
    );
    const result = await runCli("evolve", "--simulate", file);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/scenario\.json: root\.p: .*(<=|at most)/i);
  });
});

describe("the comparison", () => {
  it("prints one row per method and the definitions", async () => {
    const result = await runCli(
      "evolve",
      "--simulate",
      "steady",
      "--seeds",
      "4",
      "--budget",
      "200",
    );
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(/^scenario steady: /);
    for (const method of ["hgm", "dgm", "greedy", "random"]) {
      expect(lines.some((line) => line.startsWith(`${method} `))).toBe(true);
    }
    expect(result.stdout).toMatch(/budget 200 evaluations; 4 seeds; 1 worker/);
    expect(result.stdout).toMatch(/CMP corr\./);
  });

  it("takes a scenario from a JSON file", async () => {
    const file = join(dir, "two.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "two-step",
        description: "one type that gains",
        tasks: 20,
        root: { type: "a", p: 0.2 },
        types: { a: { children: [{ type: "a", p: [0, 0.2], relative: true, max: 0.9 }] } },
      }),
    );
    const result = await runCli(
      "evolve",
      "--simulate",
      file,
      "--seeds",
      "3",
      "--budget",
      "100",
      "--method",
      "hgm,greedy",
      "--json",
    );
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.scenario).toMatchObject({ name: "two-step", tasks: 20, bestQuality: 0.9 });
    expect(out.methods.map((m: { method: string }) => m.method)).toEqual(["hgm", "greedy"]);
  });
});

/** The log of a stored search, without what differs between processes (times, durations). */
function eventsOf(db: string, id: string): unknown[] {
  const conn = new Database(db, { readonly: true });
  try {
    return conn
      .prepare(
        `SELECT seq, type, work, node, parent, task, attempt, outcome, reason, cost_usd, data
         FROM search_events WHERE search_id = ? ORDER BY seq`,
      )
      .all(id);
  } finally {
    conn.close();
  }
}

function countEvents(db: string): number {
  if (!existsSync(db)) return 0;
  try {
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return (conn.prepare("SELECT COUNT(*) AS n FROM search_events").get() as { n: number }).n;
    } finally {
      conn.close();
    }
  } catch {
    return 0; // not created yet
  }
}

const SEARCH = [
  "evolve",
  "--simulate",
  "trap",
  "--method",
  "hgm",
  "--seed",
  "5",
  "--budget",
  "300",
];

describe("a stored search", () => {
  it("runs again as a resume, and refuses another configuration", async () => {
    const db = join(dir, "stored.db");
    const first = await runCli(...SEARCH, "--run-id", "s", "--db", db, "--json");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      resumed: false,
      t: 300,
      stopReason: "budget",
    });
    const written = eventsOf(db, "s").length;
    const again = await runCli(...SEARCH, "--run-id", "s", "--db", db, "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ resumed: true, redispatched: 0, t: 300 });
    expect(eventsOf(db, "s")).toHaveLength(written); // nothing left to do, nothing written
    const other = await runCli(...SEARCH, "--budget", "400", "--run-id", "s", "--db", db);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      /search "s" already exists with a different configuration \(budget\)/,
    );
  });

  it("stops at --budget-usd with exit 3 and finishes with a larger one", async () => {
    const db = join(dir, "usd.db");
    const stopped = await runCli(
      ...SEARCH,
      "--run-id",
      "u",
      "--db",
      db,
      "--budget-usd",
      "5",
      "--json",
    );
    expect(stopped.code).toBe(3);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ stopReason: "budget-usd", exitCode: 3 });
    const done = await runCli(...SEARCH, "--run-id", "u", "--db", db, "--budget-usd", "100");
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/300\/300 evaluations/);
    await runCli(...SEARCH, "--run-id", "whole", "--db", db);
    expect(eventsOf(db, "u").map((e) => ({ ...(e as object), seq: 0 }))).toEqual(
      eventsOf(db, "whole").map((e) => ({ ...(e as object), seq: 0 })),
    );
  });

  it("killed with SIGKILL mid-search and run again, ends with the uninterrupted search's log", async () => {
    if (!existsSync(join(import.meta.dirname, "..", "..", "dist", "cli", "main.js"))) {
      throw new Error("dist/ is missing: run `npm run build` (npm test does it for you)");
    }
    const db = join(dir, "kill.db");
    const args = [BIN, ...SEARCH, "--run-id", "k", "--db", db, "--json", "--latency-ms", "3"];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_c, s) => resolve(s)),
    );
    let finished = false;
    void exited.then(() => {
      finished = true;
    });
    const deadline = Date.now() + 20_000;
    while (!finished && countEvents(db) < 250 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(finished, "the search ended before it could be killed").toBe(false);
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const partial = countEvents(db);
    expect(partial).toBeGreaterThanOrEqual(250);

    const resumed = await runCli(...SEARCH, "--run-id", "k", "--db", db, "--json");
    expect(resumed.code).toBe(0);
    const summary = JSON.parse(resumed.stdout);
    expect(summary).toMatchObject({ resumed: true, t: 300 });
    expect(summary.redispatched).toBeLessThanOrEqual(1);

    await runCli(...SEARCH, "--run-id", "clean", "--db", db);
    expect(eventsOf(db, "k")).toEqual(eventsOf(db, "clean"));
    expect(eventsOf(db, "k").length).toBeGreaterThan(partial);
  }, 60_000);
});
