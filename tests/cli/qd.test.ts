/**
 * `clade qd` and `clade archive` as a user runs them, at a tiny scale: the base and the experts
 * trained for one step each, a few generations over two tasks, the finalists played on a few test
 * tasks. The same command resumes a run whose log was cut where a kill cuts it, and goes on to
 * the archives an uninterrupted run reaches; bad input is one line and writes nothing.
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { QdStore } from "../../src/store/qd-log.js";
import { runCli } from "../fixtures/cli.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-qd-cli-"));
});
afterAll(() => {
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
});

const GENERATIONS = 8;
const qdArgs = (runId: string, db: string, generations = GENERATIONS, extra: string[] = []) => [
  ...["qd", "--tasks", "maze,gridworld", "--generations", String(generations)],
  ...["--base-steps", "1", "--expert-steps", "2", "--batch", "4", "--group", "2"],
  ...["--search-tasks", "6", "--test-tasks", "4", "--seed", "3"],
  ...["--run-id", runId, "--db", db, "--dir", join(dir, "runs", runId), ...extra],
];

interface ArchiveJson {
  generation: number;
  lastGeneration: number;
  tasks: string[];
  archives: {
    task: number;
    label: string;
    stats: { elites: number; coverage: number; qdScore: number };
    cells: { cell: number[]; id: string; quality: number; scores: number[] }[];
  }[];
}

async function archiveJson(db: string, runId: string, ...extra: string[]): Promise<ArchiveJson> {
  const result = await runCli("archive", runId, "--db", db, "--json", ...extra);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ArchiveJson;
}

describe("clade qd", () => {
  let db: string;
  let summary: Record<string, unknown> & {
    generations: number;
    test: { name: string; mean: number; perTask: { task: string; rate: number }[] }[];
  };

  beforeAll(async () => {
    db = join(dir, "a.db");
    const result = await runCli(...qdArgs("a", db), "--json");
    expect(result.code, result.stderr).toBe(0);
    summary = JSON.parse(result.stdout);
  }, 120_000);

  it("trains the experts, runs the generations and compares the finalists on test tasks", () => {
    expect(summary).toMatchObject({
      schema: "clade.qd/1",
      runId: "a",
      variant: "paper",
      tasks: ["maze", "gridworld"],
      generations: GENERATIONS,
      resumed: false,
    });
    expect(summary.test.map((t) => t.name)).toEqual([
      "CycleQD best-mean",
      "CycleQD merge",
      "base",
      "expert maze",
      "expert gridworld",
    ]);
    for (const row of summary.test) {
      expect(row.perTask.map((t) => t.task)).toEqual(["maze", "gridworld"]);
      expect(row.mean).toBeCloseTo(
        ((row.perTask[0]?.rate as number) + (row.perTask[1]?.rate as number)) / 2,
        12,
      );
    }
    for (const file of [
      "base.safetensors",
      "final-best-mean.safetensors",
      "final-merge.safetensors",
    ]) {
      expect(existsSync(join(dir, "runs", "a", file))).toBe(true);
    }
  });

  it("draws the archives as heat maps, at the last generation or an earlier one", async () => {
    const text = await runCli("archive", "a", "--db", db);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`generation ${GENERATIONS} of ${GENERATIONS} (complete)`);
    expect(text.stdout).toContain("archive 0 (quality: maze 0..1)");
    expect(text.stdout).toContain("archive 1 (quality: gridworld 0..1)");
    // K = 2: one row of 15 cells per archive, one digit per filled cell.
    const last = await archiveJson(db, "a");
    expect(last.generation).toBe(GENERATIONS);
    for (const archive of last.archives) {
      expect(archive.cells).toHaveLength(archive.stats.elites);
      for (const cell of archive.cells) expect(cell.quality).toBe(cell.scores[archive.task]);
    }
    const first = await archiveJson(db, "a", "--generation", "0", "--task", "gridworld");
    expect(first.archives.map((a) => a.label)).toEqual(["gridworld"]);
    expect(first.archives[0]?.stats.elites as number).toBeLessThanOrEqual(2);
    expect(first.archives[0]?.stats.elites as number).toBeLessThanOrEqual(
      last.archives[1]?.stats.elites as number,
    );
  });

  it("resumes a run cut after a generation to the archives of the uninterrupted run", async () => {
    const cut = join(dir, "cut.db");
    copyFileSync(db, cut);
    const raw = openDatabase(cut);
    raw.prepare("DELETE FROM qd_generations WHERE run_id = 'a' AND generation > 3").run();
    raw.prepare("UPDATE qd_runs SET status = 'running' WHERE id = 'a'").run();
    raw.close();
    const resumed = await runCli(...qdArgs("a", cut), "--json");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ resumed: true, generations: GENERATIONS });
    const again = await archiveJson(cut, "a");
    const uninterrupted = await archiveJson(db, "a");
    expect(again.archives).toEqual(uninterrupted.archives);
  }, 120_000);

  it("resumes a run killed by SIGKILL mid-search, on the uninterrupted run's archives", async () => {
    const killed = join(dir, "killed.db");
    const bin = join(import.meta.dirname, "..", "..", "bin", "clade.js");
    const child = spawn(process.execPath, [bin, ...qdArgs("k", killed, 30), "--quiet"], {
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    // Kill once a few generations are stored (the search is under way), never after the end.
    const deadline = Date.now() + 60_000;
    let stored = -1;
    while (Date.now() < deadline && stored < 3) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (!existsSync(killed)) continue;
      try {
        const store = QdStore.open(killed, { readonly: true });
        try {
          stored = store.getRun("k") ? store.lastGeneration("k") : -1;
        } finally {
          store.close();
        }
      } catch {
        // The file is being created, or its tables are not there yet.
      }
    }
    child.kill("SIGKILL");
    await exited;
    expect(stored).toBeGreaterThanOrEqual(3);
    const resumed = await runCli(...qdArgs("k", killed, 30), "--json");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ resumed: true, generations: 30 });
    // Same seed and settings as run "a": its generations are the first of this run's.
    const atEight = await archiveJson(killed, "k", "--generation", String(GENERATIONS));
    const uninterrupted = await archiveJson(db, "a", "--generation", String(GENERATIONS));
    expect(atEight.archives).toEqual(uninterrupted.archives);
  }, 120_000);

  it("extends a finished run with more generations, and refuses another configuration", async () => {
    const more = await runCli(...qdArgs("a", db, GENERATIONS + 2), "--json");
    expect(more.code, more.stderr).toBe(0);
    expect(JSON.parse(more.stdout)).toMatchObject({ resumed: true, generations: GENERATIONS + 2 });
    const other = await runCli(...qdArgs("a", db, GENERATIONS, ["--variant", "released"]));
    expect(other.code).not.toBe(0);
    expect(other.stderr.trim().split("\n")).toHaveLength(1);
    expect(other.stderr).toMatch(/already exists with a different configuration \(variant\)/);
  }, 120_000);

  it("says in one line what is wrong with bad input, writing nothing", async () => {
    const fresh = join(dir, "never.db");
    const cases: [string[], RegExp][] = [
      [["--tasks", "maze,nowhere"], /unknown environment "nowhere"/],
      [["--tasks", "maze"], /at least 2 tasks/],
      [["--tasks", "maze:0-9,gridworld"], /names test tasks/],
      [["--tasks", "maze,gridworld", "--ranges", "0:1"], /1 range\(s\) for 2 tasks/],
      [["--tasks", "maze,gridworld", "--expert", "maze=x.safetensors"], /--expert needs --base/],
      [["--tasks", "maze,gridworld", "--variant", "best"], /--variant must be paper or released/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli("qd", ...args, "--run-id", "x", "--db", fresh);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
    expect(existsSync(fresh)).toBe(false);
    const missing = await runCli("archive", "nope", "--db", db);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no CycleQD run "nope"/);
  });
});
