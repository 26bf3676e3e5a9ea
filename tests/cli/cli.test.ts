import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const cli = runCli;

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-cli-"));
  db = join(dir, "clade.db");
});

describe("clade envs", () => {
  it("lists the built-in environments with task counts", async () => {
    const { code, stdout } = await cli("envs", "--json");
    expect(code).toBe(0);
    const listed = JSON.parse(stdout) as {
      schema: string;
      envs: { name: string; testTasks: number; trainTasks: number }[];
    };
    expect(listed.schema).toBe("clade.envs/1");
    const envs = listed.envs;
    expect(envs.map((e) => e.name)).toEqual(
      expect.arrayContaining(["maze", "wordle", "textcraft", "todo", "gridworld", "sql"]),
    );
    for (const env of envs) {
      // blade's tasks are clade's six datasets, all for testing (BLADE has no train split).
      if (env.name === "blade") {
        expect([env.testTasks, env.trainTasks]).toEqual([6, 0]);
        continue;
      }
      expect(env.testTasks).toBeGreaterThanOrEqual(100);
      expect(env.trainTasks).toBeGreaterThanOrEqual(400);
    }
    const table = await cli("envs");
    expect(table.stdout).toMatch(/^env\s+version/);
    expect(table.stdout).toContain("textcraft");
  });
});

describe("clade eval, runs, show, export", () => {
  it("evaluates, lists, shows and exports a run", async () => {
    const run = await cli(
      "eval",
      "--env",
      "maze",
      "--agent",
      "reference",
      "--tasks",
      "0-9",
      "--samples",
      "2",
      "--run-id",
      "m1",
      "--db",
      db,
      "--json",
    );
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result.metrics.successRate).toBe(1);
    expect(result.metrics.episodes).toBe(20);

    const { runs } = JSON.parse((await cli("runs", "--db", db, "--json")).stdout);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      id: "m1",
      env: "maze",
      agent: "reference",
      status: "complete",
      episodes: 20,
    });

    const show = await cli("show", "m1", "--db", db);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/success rate\s+1\.000/);
    expect(show.stdout).toContain("pass@2");

    const traj = await cli("export", "m1", "--format", "agenttraj", "--db", db);
    const items = JSON.parse(traj.stdout);
    expect(items).toHaveLength(20);
    // AgentGym's name for the task (its tooling picks tasks by this prefix): docs/formats.md.
    expect(items[0].item_id).toBe("lmrlgym_maze_0");
    expect(items[0].success).toBe(true);
    expect(items[0].conversations[0]).toMatchObject({ from: "human", loss: null });
    expect(items[0].conversations[1]).toEqual({ from: "gpt", loss: false, value: "OK." });
    const gpt = items[0].conversations.filter((c: { from: string }) => c.from === "gpt");
    expect(gpt.slice(1).every((c: { loss: boolean }) => c.loss === true)).toBe(true);

    const out = join(dir, "chat.jsonl");
    const chat = await cli("export", "m1", "--format", "chat", "--db", db, "--out", out);
    expect(chat.code).toBe(0);
    const lines = readFileSync(out, "utf8").trim().split("\n");
    expect(lines).toHaveLength(20);
    const first = JSON.parse(lines[0] as string);
    expect(first.messages[0].role).toBe("system");
    expect(first.messages.at(-1).role).toBe("assistant");
    expect(readdirSync(dir).filter((f) => f.includes(".partial-"))).toEqual([]);
  });

  it("resumes a finished run without running anything again", async () => {
    const args = [
      "eval",
      "--env",
      "wordle",
      "--agent",
      "random",
      "--tasks",
      "0-4",
      "--run-id",
      "w",
      "--db",
      db,
      "--json",
    ];
    const first = JSON.parse((await cli(...args)).stdout);
    const second = JSON.parse((await cli(...args)).stdout);
    expect(first.ran).toBe(5);
    expect(second).toMatchObject({ resumed: true, skipped: 5, ran: 0 });
    expect(second.metrics).toEqual(first.metrics);
  });
});

describe("run identity", () => {
  it("knows a run by its tasks, however they were written", async () => {
    const base = [
      "eval",
      "--env",
      "maze",
      "--agent",
      "random",
      "--run-id",
      "same",
      "--db",
      db,
      "--json",
    ];
    const first = JSON.parse((await cli(...base, "--tasks", "test")).stdout);
    const again = JSON.parse((await cli(...base, "--tasks", " 0-49,50-99")).stdout);
    expect(first.ran).toBe(100);
    expect(again).toMatchObject({ resumed: true, skipped: 100, ran: 0 });
  });

  it("gives each run without --run-id its own id", async () => {
    const args = [
      "eval",
      "--env",
      "maze",
      "--agent",
      "random",
      "--tasks",
      "0",
      "--db",
      db,
      "--json",
    ];
    const [a, b] = await Promise.all([cli(...args), cli(...args)]);
    expect(JSON.parse(a.stdout).runId).not.toBe(JSON.parse(b.stdout).runId);
    expect(JSON.parse((await cli("runs", "--db", db, "--json")).stdout).runs).toHaveLength(2);
  });

  it("gives the same episodes whatever the concurrency", async () => {
    const run = async (id: string, concurrency: string) => {
      await cli(
        "eval",
        "--env",
        "textcraft",
        "--agent",
        "random",
        "--tasks",
        "0-19",
        "--samples",
        "3",
        "--concurrency",
        concurrency,
        "--run-id",
        id,
        "--db",
        db,
        "--json",
      );
      const show = JSON.parse((await cli("show", id, "--episodes", "--db", db, "--json")).stdout);
      return show.episodes.map(
        (e: { taskIndex: number; sampleIndex: number; reward: number; turns: number }) => [
          e.taskIndex,
          e.sampleIndex,
          e.reward,
          e.turns,
        ],
      );
    };
    expect(await run("c1", "1")).toEqual(await run("c7", "7"));
  });
});

describe("bad input: one line, exit 2, nothing written", () => {
  const cases: [string, string[], RegExp][] = [
    ["unknown env", ["eval", "--env", "chess"], /unknown environment "chess"/],
    ["unknown agent", ["eval", "--env", "maze", "--agent", "oracle"], /unknown agent "oracle"/],
    ["malformed range", ["eval", "--env", "maze", "--tasks", "5-x"], /bad task range/],
    ["reversed range", ["eval", "--env", "maze", "--tasks", "9-3"], /end before start/],
    ["task out of range", ["eval", "--env", "maze", "--tasks", "0-600"], /task 500 does not exist/],
    ["zero samples", ["eval", "--env", "maze", "--samples", "0"], /--samples must be at least 1/],
    [
      "non-numeric concurrency",
      ["eval", "--env", "maze", "--concurrency", "lots"],
      /--concurrency must be a whole number/,
    ],
    ["bad run id", ["eval", "--env", "maze", "--run-id", "a b"], /--run-id/],
    ["missing env", ["eval"], /--env/],
    ["unknown command", ["evaluate"], /unknown command/],
    ["bad export format", ["export", "x", "--format", "csv"], /--format must be/],
  ];
  for (const [name, argv, message] of cases) {
    it(name, async () => {
      const { code, stderr, stdout } = await cli(...argv, "--db", db);
      expect(code).toBe(2);
      expect(stderr).toMatch(message);
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stdout).toBe("");
      expect(existsSync(db)).toBe(false);
    });
  }

  it("a file that is not a database", async () => {
    writeFileSync(db, "hello, not sqlite ".repeat(100));
    for (const argv of [["runs"], ["show", "x"], ["eval", "--env", "maze", "--tasks", "0"]]) {
      const { code, stderr } = await cli(...argv, "--db", db);
      expect(code).toBe(2);
      expect(stderr).toMatch(/^clade: error: .*not a SQLite database/);
    }
    expect(readFileSync(db, "utf8")).toBe("hello, not sqlite ".repeat(100));
  });

  it("another application's database", async () => {
    const other = new Database(db);
    other.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
    other.close();
    const { code, stderr } = await cli("eval", "--env", "maze", "--tasks", "0", "--db", db);
    expect(code).toBe(2);
    expect(stderr).toMatch(/not a clade store/);
  });

  it("a run id that belongs to another config", async () => {
    await cli("eval", "--env", "maze", "--tasks", "0-2", "--run-id", "r", "--db", db, "--json");
    const before = JSON.parse((await cli("runs", "--db", db, "--json")).stdout);
    const { code, stderr } = await cli(
      "eval",
      "--env",
      "maze",
      "--tasks",
      "0-5",
      "--run-id",
      "r",
      "--db",
      db,
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/already exists with a different configuration \(tasks\)/);
    const after = JSON.parse((await cli("runs", "--db", db, "--json")).stdout);
    expect(after).toEqual(before);
  });

  it("an unknown run", async () => {
    await cli("eval", "--env", "maze", "--tasks", "0", "--run-id", "r", "--db", db, "--json");
    const { code, stderr } = await cli("show", "nope", "--db", db);
    expect(code).toBe(2);
    expect(stderr).toMatch(/no run "nope"/);
  });
});
