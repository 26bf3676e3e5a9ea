/**
 * Regression tests for attacks on the CLI and the store file (issue 7): huge numbers, damaged
 * rows, read-only stores, foreign files given as --db, a directory given as --out, runs whose
 * episodes errored, and a --config that is missing or invalid. Each goes through the path the
 * attack used: the CLI as a user types it, or the store file changed behind clade's back.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";

const cli = runCli;
const BIN = resolve(import.meta.dirname, "../../bin/clade.js");

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-reliability-"));
  db = join(dir, "clade.db");
});

/** The one line a user error prints, and nothing else. */
function expectOneErrorLine(stderr: string, pattern: RegExp): void {
  expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(stderr).toMatch(/^clade: error: /);
  expect(stderr).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe("numeric options", () => {
  it("refuses a task index past 2^53 at once instead of looping forever", () => {
    const started = Date.now();
    const run = spawnSync(
      process.execPath,
      [BIN, "eval", "--env", "maze", "--tasks", "9007199254740992", "--db", db],
      { encoding: "utf8", timeout: 20_000 },
    );
    expect(run.signal).toBeNull();
    expect(run.status).toBe(2);
    expect(Date.now() - started).toBeLessThan(15_000);
    expectOneErrorLine(run.stderr, /9007199254740992/);
    expect(existsSync(db)).toBe(false);
  });

  it.each([
    [["--tasks", "0-9007199254740993"]],
    [["--tasks", "1000000000"]],
    [["--tasks", "0-499", "--samples", "10000"]],
    [["--samples", "99999999999999999999"]],
    [["--samples", "0"]],
    [["--concurrency", "1e9"]],
    [["--timeout", "-1"]],
    [["--seed", "9007199254740993"]],
    [["--max-turns", "1.5"]],
    [["--budget-usd", "1e400"]],
    [["--history", "-5"]],
    [["--max-tokens", "NaN"]],
    [["--temperature", "Infinity"]],
  ])("refuses %j with one line, exit 2 and nothing written", async (args) => {
    const { code, stderr } = await cli("eval", "--env", "maze", "--db", db, ...args);
    expect(code).toBe(2);
    expectOneErrorLine(stderr, /./);
    expect(existsSync(db)).toBe(false);
  });
});

function sql(path: string, statement: string): void {
  const conn = new Database(path);
  conn.exec(statement);
  conn.close();
}

describe("damaged rows", () => {
  const evalArgs = (path: string) => [
    "eval",
    "--env",
    "maze",
    "--tasks",
    "0-3",
    "--run-id",
    "d",
    "--db",
    path,
    "--quiet",
  ];

  it("marks unreadable episodes damaged in show, export and runs, and redoes them on resume", async () => {
    expect((await cli(...evalArgs(db))).code).toBe(0);
    const fresh = join(dir, "fresh.db");
    expect((await cli(...evalArgs(fresh))).code).toBe(0);
    sql(
      db,
      `UPDATE episodes SET initial_actions = '["move up", ' WHERE task_index = 1;
       UPDATE trajectories SET steps = '{"truncated":'
         WHERE episode_id = (SELECT id FROM episodes WHERE task_index = 2);`,
    );
    // integrity_check is content-blind: the file is sound, two values are not.
    const conn = new Database(db, { readonly: true });
    expect(conn.pragma("integrity_check", { simple: true })).toBe("ok");
    conn.close();

    const warning = /^warning: 2 episodes of run d could not be read \(damaged rows\)/;
    const show = await cli("show", "d", "--db", db, "--json", "--episodes");
    expect(show.code).toBe(0);
    expect(show.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(show.stderr).toMatch(warning);
    const report = JSON.parse(show.stdout) as {
      metrics: { successes: number; finished: number; errors: number };
      episodes: { taskIndex: number; outcome: string }[];
    };
    expect(report.metrics).toMatchObject({ successes: 2, finished: 2, errors: 0 });
    expect(report.episodes.map((e) => e.outcome)).toEqual([
      "success",
      "damaged",
      "damaged",
      "success",
    ]);
    const table = await cli("show", "d", "--db", db, "--episodes");
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("damaged");

    const exported = await cli("export", "d", "--db", db, "--format", "agenttraj");
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(warning);
    expect(JSON.parse(exported.stdout)).toHaveLength(2);

    const runs = await cli("runs", "--db", db, "--json");
    expect(runs.code).toBe(0);
    expect(JSON.parse(runs.stdout).runs[0]).toMatchObject({ id: "d", successes: 2, damaged: 2 });

    // Resume runs the two damaged episodes again; the run then equals an undamaged one.
    const resumed = await cli(...evalArgs(db), "--json");
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ skipped: 2, ran: 2 });
    const after = await cli("show", "d", "--db", db, "--json");
    expect(after.stderr).toBe("");
    expect(JSON.parse(after.stdout).metrics).toMatchObject({ successes: 4, finished: 4 });
    const left = (await cli("export", "d", "--db", db, "--format", "chat")).stdout;
    const right = (await cli("export", "d", "--db", fresh, "--format", "chat")).stdout;
    expect(left).toBe(right);
  });

  it("reads a run whose stored configuration is damaged, and refuses to resume it", async () => {
    expect((await cli(...evalArgs(db))).code).toBe(0);
    sql(db, `UPDATE runs SET config = '{"tasks":' WHERE id = 'd'`);
    const show = await cli("show", "d", "--db", db);
    expect(show.code).toBe(0);
    expect(show.stderr).toMatch(/configuration of run d could not be read/);
    expect((await cli("runs", "--db", db)).code).toBe(0);
    const resumed = await cli(...evalArgs(db));
    expect(resumed.code).toBe(2);
    expectOneErrorLine(resumed.stderr, /damaged stored configuration/);
  });
});

describe("stores this user cannot write", () => {
  const root = process.getuid?.() === 0;
  /** Runs the built CLI as a user without write access (nobody, when the tests run as root). */
  function asReader(...args: string[]) {
    const run = spawnSync(process.execPath, [BIN, ...args], {
      cwd: dir,
      encoding: "utf8",
      timeout: 20_000,
      ...(root ? { uid: 65534, gid: 65534 } : {}),
    });
    return { code: run.status, stdout: run.stdout, stderr: run.stderr };
  }

  it("reads them with runs, show and export, refuses to write, and leaves no file behind", async () => {
    const folder = join(dir, "shared");
    mkdirSync(folder);
    const store = join(folder, "clade.db");
    expect(
      (await cli("eval", "--env", "maze", "--tasks", "0-1", "--run-id", "r", "--db", store)).code,
    ).toBe(0);
    chmodSync(dir, 0o755);
    chmodSync(store, 0o444);
    chmodSync(folder, 0o555);
    const before = readdirSync(folder);
    try {
      const runs = asReader("runs", "--db", store);
      expect(runs.stderr).toBe("");
      expect(runs.code).toBe(0);
      expect(runs.stdout).toMatch(/^r\s+maze/m);
      const show = asReader("show", "r", "--db", store, "--json");
      expect(show.code).toBe(0);
      expect(JSON.parse(show.stdout).metrics.successes).toBe(2);
      const exported = asReader("export", "r", "--db", store, "--format", "chat");
      expect(exported.code).toBe(0);
      expect(exported.stdout.trim().split("\n")).toHaveLength(2);
      const write = asReader(
        "eval",
        "--env",
        "maze",
        "--tasks",
        "0-1",
        "--run-id",
        "w",
        "--db",
        store,
      );
      expect(write.code).toBe(2);
      expectOneErrorLine(write.stderr, /read-only/);
      expect(readdirSync(folder)).toEqual(before);
    } finally {
      chmodSync(folder, 0o755);
      chmodSync(store, 0o644);
    }
  });
});

describe("--db that is not a store", () => {
  it.each([
    ["a 1-byte file", "x"],
    ["a text file", "results\n".repeat(1000)],
    ["a file shorter than SQLite's header", "SQLite"],
  ])("refuses %s and leaves it as it was", async (_name, content) => {
    writeFileSync(db, content);
    for (const args of [
      ["eval", "--env", "maze", "--tasks", "0", "--db", db],
      ["runs", "--db", db],
      ["show", "r", "--db", db],
    ]) {
      const { code, stderr } = await cli(...args);
      expect(code).toBe(2);
      expectOneErrorLine(stderr, /is not a SQLite database/);
    }
    expect(readFileSync(db, "utf8")).toBe(content);
    expect(readdirSync(dir)).toEqual(["clade.db"]);
  });

  it("takes an empty file as a new store: there is nothing in it to lose", async () => {
    writeFileSync(db, "");
    expect((await cli("eval", "--env", "maze", "--tasks", "0", "--db", db)).code).toBe(0);
  });
});

describe("export --out", () => {
  it("refuses a directory with one line and writes nothing", async () => {
    expect(
      (await cli("eval", "--env", "maze", "--tasks", "0", "--run-id", "r", "--db", db)).code,
    ).toBe(0);
    const out = join(dir, "out");
    mkdirSync(out);
    const { code, stderr } = await cli("export", "r", "--db", db, "--format", "chat", "--out", out);
    expect(code).toBe(2);
    expectOneErrorLine(stderr, /--out .* is a directory/);
    expect(readdirSync(out)).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.includes("partial"))).toEqual([]);
  });
});

describe("--config", () => {
  it.each(["reference", "random"])(
    "is an error for the %s agent when missing or invalid",
    async (agent) => {
      const base = ["eval", "--env", "maze", "--agent", agent, "--tasks", "0", "--db", db];
      const missing = await cli(...base, "--config", join(dir, "missing.json"));
      expect(missing.code).toBe(2);
      expectOneErrorLine(missing.stderr, /no config file/);
      const broken = join(dir, "broken.json");
      writeFileSync(broken, "{ not json");
      const invalid = await cli(...base, "--config", broken);
      expect(invalid.code).toBe(2);
      expectOneErrorLine(invalid.stderr, /broken\.json/);
      const unknown = join(dir, "unknown.json");
      writeFileSync(unknown, JSON.stringify({ modles: {} }));
      expect((await cli(...base, "--config", unknown)).code).toBe(2);
      expect(existsSync(db)).toBe(false);
    },
  );
});

describe("exit codes of runs whose episodes errored", () => {
  let server: Awaited<ReturnType<typeof startFakeModelServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const llmEval = (runId: string) => [
    "eval",
    "--env",
    "maze",
    "--tasks",
    "0-1",
    "--model",
    `openai-compatible:${server?.openaiBaseUrl}#fake-model`,
    "--concurrency",
    "1",
    "--max-turns",
    "2",
    "--run-id",
    runId,
    "--db",
    db,
    "--quiet",
  ];

  it("exits 5 when every episode ended in an error", async () => {
    server = await startFakeModelServer({ rule: () => ({ fault: "bad_request", status: 400 }) });
    const { code, stderr } = await cli(...llmEval("all"));
    expect(code).toBe(5);
    expect(stderr).toMatch(/2 episodes ended in an error/);
  });

  it("exits 4 when some episodes ended in an error, and 0 once a resume finishes them", async () => {
    server = await startFakeModelServer({
      replies: [{ fault: "bad_request", status: 400 }],
      rule: () => ({ content: "Thought: up.\nAction: move up" }),
    });
    const first = await cli(...llmEval("some"));
    expect(first.code).toBe(4);
    expect(first.stderr).toMatch(/1 episodes ended in an error/);
    const resumed = await cli(...llmEval("some"));
    expect(resumed.code).toBe(0);
  });
});
