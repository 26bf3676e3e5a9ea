/**
 * Crash safety of the real CLI process: kill it mid-run, run the same command again, and the store
 * must hold exactly the episodes an uninterrupted run produces — none lost, none duplicated.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "clade.js");
const SAMPLES = 30;
const TOTAL = 100 * SAMPLES;

beforeAll(() => {
  if (!existsSync(join(import.meta.dirname, "..", "..", "dist", "cli", "main.js"))) {
    throw new Error("dist/ is missing: run `npm run build` (npm test does it for you)");
  }
});

function evalArgs(db: string): string[] {
  return [
    BIN,
    "eval",
    "--env",
    "maze",
    "--agent",
    "random",
    "--tasks",
    "test",
    "--samples",
    String(SAMPLES),
    "--concurrency",
    "4",
    "--run-id",
    "k",
    "--db",
    db,
    "--json",
  ];
}

function exitOf(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
}

function countEpisodes(db: string): number {
  if (!existsSync(db)) return 0;
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (conn.prepare("SELECT COUNT(*) AS n FROM episodes").get() as { n: number }).n;
  } catch {
    return 0; // schema not created yet
  } finally {
    conn.close();
  }
}

/** Starts the CLI and sends `signal` once at least `atLeast` episodes are stored. */
async function interruptAfter(db: string, atLeast: number, signal: NodeJS.Signals) {
  const child = spawn(process.execPath, evalArgs(db), { stdio: ["ignore", "pipe", "pipe"] });
  const exited = exitOf(child);
  let finished = false;
  exited.then(() => {
    finished = true;
  });
  const deadline = Date.now() + 20_000;
  while (!finished && countEpisodes(db) < atLeast && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(finished, "the run ended before it could be interrupted").toBe(false);
  child.kill(signal);
  return exited;
}

async function runToEnd(db: string): Promise<{ ran: number; skipped: number }> {
  const child = spawn(process.execPath, evalArgs(db), { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  const { code } = await exitOf(child);
  expect(code).toBe(0);
  return JSON.parse(out);
}

type Row = {
  task_index: number;
  sample_index: number;
  outcome: string;
  reward: number;
  turns: number;
  steps: number;
};

function episodes(db: string): Row[] {
  const conn = new Database(db, { readonly: true });
  const rows = conn
    .prepare(
      `SELECT e.task_index, e.sample_index, e.outcome, e.reward, e.turns,
         (SELECT json_array_length(t.steps) FROM trajectories t WHERE t.episode_id = e.id) AS steps,
         (SELECT json_group_array(json_remove(j.value, '$.ms'))
            FROM trajectories t, json_each(t.steps) j WHERE t.episode_id = e.id) AS content
       FROM episodes e ORDER BY e.task_index, e.sample_index`,
    )
    .all() as Row[];
  conn.close();
  return rows;
}

describe("killing the CLI mid-run", () => {
  it("SIGKILL then resume gives neither lost nor duplicated episodes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "clade-kill-"));
    const killed = join(dir, "killed.db");
    const { signal } = await interruptAfter(killed, 200, "SIGKILL");
    expect(signal).toBe("SIGKILL");
    const partial = countEpisodes(killed);
    expect(partial).toBeGreaterThanOrEqual(200);
    expect(partial).toBeLessThan(TOTAL);
    // The run is still marked running, but its process is gone: shown as killed.
    const listed = await runCli("runs", "--db", killed);
    expect(listed.stdout).toMatch(/\bk\s+maze v[\d.]+\s+random\s+killed \(resumable\)/);

    const resumed = await runToEnd(killed);
    expect(resumed.skipped).toBeGreaterThanOrEqual(partial);
    expect(resumed.skipped + resumed.ran).toBe(TOTAL);

    const clean = join(dir, "clean.db");
    await runToEnd(clean);
    const after = episodes(killed);
    expect(after).toHaveLength(TOTAL);
    // Every stored episode is whole: its step rows match its turn count.
    expect(after.every((e) => e.steps === e.turns)).toBe(true);
    // Episodes are deterministic, so the resumed run equals an uninterrupted one.
    expect(after).toEqual(episodes(clean));
  }, 60_000);

  it("SIGINT stops cleanly with exit code 130 and an interrupted run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "clade-int-"));
    const db = join(dir, "int.db");
    const { code } = await interruptAfter(db, 100, "SIGINT");
    expect(code).toBe(130);
    const conn = new Database(db, { readonly: true });
    const run = conn.prepare("SELECT status FROM runs WHERE id = 'k'").get() as { status: string };
    conn.close();
    expect(run.status).toBe("interrupted");
    const resumed = await runToEnd(db);
    expect(resumed.skipped + resumed.ran).toBe(TOTAL);
    expect(episodes(db)).toHaveLength(TOTAL);
  }, 60_000);
});
