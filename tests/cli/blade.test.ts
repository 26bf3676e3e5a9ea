/**
 * The blade commands as a user runs them, through the built CLI (bin/clade.js on dist/, built by
 * `npm test`'s pretest): an eval of the reference solver and its BLADE report (table and JSON),
 * `clade blade score` on a submissions file written here, bad input as one line with exit 2,
 * `clade blade hash` with clade's reader and with pandas, `clade doctor`, and --runtime refused
 * outside blade. The pandas hash is skipped, saying why, where no python3 with pandas and
 * statsmodels is installed.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expertAnalysis } from "../../src/agent/reference/blade.js";
import { naiveAnalysis } from "../../src/agent/reference/blade-naive.js";
import { readBladeDataset } from "../../src/env/blade/dataset.js";
import { OWN_DATASETS_DIR } from "../../src/env/blade/folders.js";
import { findPython } from "../../src/env/blade/runtime/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "clade.js");
const TUTORING_CSV = join(ROOT, "data", "blade", "datasets", "tutoring", "data.csv");
const KNOWN = "coffee, crashes, icecream, readmit, stress, tutoring";

const python = await findPython().catch((error: Error) => error);
const noPython = python instanceof Error ? python.message : undefined;
if (noPython) console.warn(`skipping clade blade hash --pandas: ${noPython}`);

const dir = mkdtempSync(join(tmpdir(), "clade-blade-cli-"));
const db = join(dir, "clade.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI in `dir` and collects what it printed. */
function clade(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Exit 2 with one `clade: error:` line matching the pattern, no stack, nothing on stdout. */
function expectUsageError(run: Run, pattern: RegExp): void {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe("");
  expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(run.stderr).toMatch(/^clade: error: /);
  expect(run.stderr).toMatch(pattern);
}

const between = (value: unknown) => {
  expect(typeof value).toBe("number");
  expect(value).toBeGreaterThanOrEqual(0);
  expect(value).toBeLessThanOrEqual(1);
};

describe("clade eval --env blade, then clade blade report", () => {
  it("reports BLADE's scores of the reference solver's run, as a table and as JSON", async () => {
    const evaluated = await clade(
      ...["eval", "--env", "blade", "--agent", "reference", "--tasks", "0-1"],
      ...["--run-id", "ref", "--db", db, "--quiet"],
    );
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect(evaluated.stdout).toMatch(/blade v1\.0\.0, agent reference/);
    expect(evaluated.stdout).toMatch(/^success rate\s+1\.000/m);

    const table = await clade("blade", "report", "ref", "--db", db);
    expect(table.code, table.stderr).toBe(0);
    const text = table.stdout;
    expect(text).toMatch(/^BLADE report of run ref$/m);
    expect(text).toMatch(/^weighted\s+\d\.\d{3}\s/m);
    expect(text).toMatch(/^unweighted\s+\d\.\d{3}\s/m);
    expect(text).toMatch(/^unweighted \(BLADE's code\)\s+\d\.\d{3}\s/m);
    expect(text).toMatch(/^conceptual variables\s+1\.000/m);
    // One row per dataset played: coffee and crashes, one analysis each, none missing.
    expect(text).toMatch(/^coffee\s+1\s+0\s+1\.000\s+1\.000\s+1\.000\s/m);
    expect(text).toMatch(/^crashes\s+1\s+0\s+1\.000\s+1\.000\s+1\.000\s/m);
    expect(text).not.toMatch(/^tutoring\s+\d/m);
    expect(text).toMatch(/^direction right\s+1\.000\s.*2\/2$/m);
    expect(text).toMatch(/^Expert decisions of coffee, matched by how many analyses:$/m);
    expect(text).toMatch(/^Expert decisions of crashes, matched by how many analyses:$/m);

    const json = await clade("blade", "report", "ref", "--db", db, "--json");
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({
      schema: "clade.blade-report/1",
      run: "ref",
      k: 10,
      analyses: 2,
      notSubmitted: 0,
      errored: 0,
    });
    between(report.scores.weighted);
    between(report.scores.unweighted);
    expect(report.scores.weighted).toBeGreaterThan(0.5);
    expect(report.scores.datasets.map((d: { name: string }) => d.name)).toEqual([
      "coffee",
      "crashes",
    ]);
    for (const d of report.scores.datasets) {
      expect(d.runs).toBe(1);
      expect(d.hitRate).toEqual({
        cvar: 1,
        model: 1,
        modelCvar: 1,
        transformGraph: 1,
        transformValue: 1,
      });
    }
    // The table shows the JSON's numbers.
    expect(text).toMatch(
      new RegExp(`^weighted\\s+${report.scores.weighted.toFixed(3).replace(".", "\\.")}\\s`, "m"),
    );
    expect(report.conclusions.direction).toMatchObject({ count: 2, total: 2 });
  });

  it("refuses an unknown run and a run of another environment, in one line", async () => {
    expectUsageError(await clade("blade", "report", "nope", "--db", db), /no run "nope"/);
    const maze = await clade(
      ...["eval", "--env", "maze", "--tasks", "0", "--run-id", "m", "--db", db, "--quiet"],
    );
    expect(maze.code, maze.stderr).toBe(0);
    expectUsageError(
      await clade("blade", "report", "m", "--db", db),
      /run "m" is a maze run, not blade/,
    );
  });
});

describe("clade blade score", () => {
  const tutoring = readBladeDataset(join(OWN_DATASETS_DIR, "tutoring"));
  const submission = join(dir, "submission.json");
  writeFileSync(
    submission,
    JSON.stringify({
      dataset_name: "tutoring",
      analyses: [expertAnalysis(tutoring, "sql"), naiveAnalysis(tutoring, "sql")],
    }),
  );

  it("scores a DatasetSubmission's analyses against the experts", async () => {
    const run = await clade("blade", "score", submission, "--dataset", "tutoring", "--json");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/progress blade score: 1\/2 analyses scored/);
    expect(run.stderr).toMatch(/progress blade score: 2\/2 analyses scored/);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({
      schema: "clade.blade-report/1",
      file: submission,
      dataset: "tutoring",
      runtime: "sql",
      analyses: 2,
      errored: 0,
    });
    between(report.scores.weighted);
    expect(report.scores.datasets).toHaveLength(1);
    const [scored] = report.scores.datasets;
    expect(scored).toMatchObject({ name: "tutoring", runs: 2 });
    // The expert's analysis matches every model and variable; the naive one fewer variables.
    expect(scored.hitRate.model).toBe(1);
    expect(scored.hitRate.cvar).toBeGreaterThan(0.5);
    expect(scored.hitRate.cvar).toBeLessThan(1);
    expect(scored.coverage.cvar).toBe(1);
    // One of two analyses matches the model with its variables.
    expect(scored.hitRate.modelCvar).toBe(0.5);
    // One right conclusion, one wrong.
    expect(report.conclusions.direction).toMatchObject({ count: 1, total: 2 });
  });

  it("refuses a file that is not a submission, in one line", async () => {
    const broken = join(dir, "broken.json");
    writeFileSync(
      broken,
      JSON.stringify({
        dataset_name: "tutoring",
        analyses: [{ cvars: { ivs: [], dv: { description: "", columns: [] } }, m_code: "x" }],
      }),
    );
    expectUsageError(
      await clade("blade", "score", broken),
      /broken\.json: analyses\[0\]: cvars\.controls/,
    );
    expectUsageError(
      await clade("blade", "score", join(dir, "missing.json"), "--dataset", "tutoring"),
      /missing\.json: cannot read/,
    );
    const unnamed = join(dir, "unnamed.json");
    writeFileSync(unnamed, JSON.stringify({ dataset_name: "", analyses: [] }));
    expectUsageError(await clade("blade", "score", unnamed), /dataset_name must not be empty/);
  });

  it("refuses a file that is not JSON in one line, even when it ends in a newline", async () => {
    const text = join(dir, "text.json");
    writeFileSync(text, "not json\n");
    expectUsageError(
      await clade("blade", "score", text, "--dataset", "tutoring"),
      /text\.json: not JSON/,
    );
  });

  it("names the known datasets when the dataset is unknown", async () => {
    const list = join(dir, "list.json");
    writeFileSync(
      list,
      JSON.stringify([naiveAnalysis(readBladeDataset(join(OWN_DATASETS_DIR, "coffee")), "sql")]),
    );
    expectUsageError(
      await clade("blade", "score", list, "--dataset", "nope"),
      new RegExp(`unknown dataset "nope" .*\\(known: ${KNOWN}\\)`),
    );
    expectUsageError(await clade("blade", "score", list), /names no dataset: give --dataset NAME/);
    expectUsageError(
      await clade("blade", "score", submission, "--dataset", "coffee"),
      /is for dataset "tutoring", not "coffee"/,
    );
  });
});

describe("clade blade hash", () => {
  interface Hashes {
    schema: string;
    reader: string;
    rows: number;
    columns: { name: string; dtype: string; value: string; categorical: string }[];
  }

  it("gives one value and one categorical hash per column", async () => {
    const run = await clade("blade", "hash", TUTORING_CSV, "--json");
    expect(run.code, run.stderr).toBe(0);
    const hashes: Hashes = JSON.parse(run.stdout);
    expect(hashes).toMatchObject({ schema: "clade.blade-hash/1", reader: "clade", rows: 1500 });
    const tutoring = readBladeDataset(join(OWN_DATASETS_DIR, "tutoring"));
    expect(hashes.columns.map((c) => c.name)).toEqual(tutoring.fieldNames);
    for (const column of hashes.columns) {
      expect(column.value, column.name).toMatch(/^[0-9a-f]{64}$/);
      expect(column.categorical, column.name).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(new Set(hashes.columns.map((c) => c.value)).size).toBe(hashes.columns.length);
    const byName = Object.fromEntries(hashes.columns.map((c) => [c.name, c]));
    expect(byName.student_id?.dtype).toBe("int64");
    expect(byName.prior_score?.dtype).toBe("float64");
    expect(byName.school?.dtype).toBe("object");
    // Six schools in 1,500 rows: the categorical hash factorises; unique ids do not.
    expect(byName.school?.categorical).not.toBe(byName.school?.value);
    expect(byName.student_id?.categorical).toBe(byName.student_id?.value);

    const table = await clade("blade", "hash", TUTORING_CSV);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(byName.prior_score?.value as string);
    expect(table.stdout).toMatch(/^student_id\s+int64\s+[0-9a-f]{64}\s+\(same\)$/m);
    expect(table.stdout).toMatch(/^1500 rows, /m);

    expectUsageError(
      await clade("blade", "hash", join(dir, "nothing.csv")),
      /nothing\.csv: no such file/,
    );
  });

  it.skipIf(noPython !== undefined)(
    "gives the same hashes when pandas itself reads the file (--pandas)",
    async () => {
      const [ours, theirs] = await Promise.all([
        clade("blade", "hash", TUTORING_CSV, "--json"),
        clade("blade", "hash", TUTORING_CSV, "--json", "--pandas"),
      ]);
      expect(theirs.code, theirs.stderr).toBe(0);
      const pandas: Hashes = JSON.parse(theirs.stdout);
      const clade_: Hashes = JSON.parse(ours.stdout);
      expect(pandas.reader).toBe("pandas");
      expect(pandas.rows).toBe(1500);
      expect(pandas.columns).toEqual(clade_.columns);
    },
  );
});

describe("clade doctor", () => {
  it("reports the sandbox and both blade runtimes as JSON", async () => {
    const run = await clade("doctor", "--json");
    const doctor = JSON.parse(run.stdout);
    expect(doctor.schema).toBe("clade.doctor/1");
    const checks = new Map<string, { ok: boolean; required: boolean; detail: string }>(
      doctor.checks.map((c: { name: string }) => [c.name, c]),
    );
    for (const name of ["node", "sandbox", "blade sql", "blade python"]) {
      const check = checks.get(name);
      expect(check, name).toBeDefined();
      expect(typeof check?.ok).toBe("boolean");
      expect(check?.detail.length, name).toBeGreaterThan(0);
    }
    expect(checks.get("sandbox")?.required).toBe(true);
    expect(checks.get("blade sql")?.required).toBe(true);
    expect(checks.get("blade python")?.required).toBe(false);
    expect(checks.get("node")?.ok).toBe(true);
    // This machine ran the tests above: the engine is there.
    expect(checks.get("blade sql")?.ok).toBe(true);
    expect(checks.get("blade python")?.ok).toBe(noPython === undefined);
    const allRequired = [...checks.values()].every((c) => !c.required || c.ok);
    expect(doctor.ok).toBe(allRequired);
    expect(run.code).toBe(allRequired ? 0 : 1);
  });
});

describe("--runtime outside blade", () => {
  it("is refused with one line and exit 2, nothing stored", async () => {
    const store = join(dir, "maze.db");
    expectUsageError(
      await clade("eval", "--env", "maze", "--runtime", "python", "--db", store),
      /--blade-dir and --runtime apply to the blade environment only, not "maze"/,
    );
    expect(existsSync(store)).toBe(false);
    expectUsageError(
      await clade("eval", "--env", "blade", "--runtime", "ruby", "--db", store),
      /must be "sql" or "python"/,
    );
    expect(existsSync(store)).toBe(false);
  });
});

describe("BLADE's model judges (--judge) on the fake model server", () => {
  it("score and report --judge ask the judge for the variables and count its calls", async () => {
    const { startFakeModelServer, lastMessageText } = await import("../../src/testing/index.js");
    const asked: string[] = [];
    // Every question gets one related pair: A1 with B1, similarity 9 (matched at ≥ 8).
    const server = await startFakeModelServer({
      rule: (request) => {
        asked.push(lastMessageText(request));
        return {
          content:
            'Both name the same thing.\n```json\n{"A1-B1": {"rationale": "the same concept", "similarity": 9}}\n```',
        };
      },
    });
    try {
      const config = join(dir, "judge.config.json");
      writeFileSync(
        config,
        JSON.stringify({
          models: { judge: { model: `openai-compatible:${server.openaiBaseUrl}#judge` } },
        }),
      );
      const file = join(dir, "judged.json");
      const dataset = readBladeDataset(join(OWN_DATASETS_DIR, "coffee"));
      writeFileSync(
        file,
        JSON.stringify({ dataset_name: "coffee", analyses: [naiveAnalysis(dataset, "sql")] }),
      );
      const offline = JSON.parse((await clade("blade", "score", file, "--json")).stdout);
      const judged = await clade(
        "blade",
        "score",
        file,
        "--judge",
        "judge",
        "--config",
        config,
        "--json",
      );
      expect(judged.code, judged.stderr).toBe(0);
      const report = JSON.parse(judged.stdout);
      expect(report.judge).toBe("judge");
      // The naive analysis has an IV and a DV: one question for each of those roles.
      expect(report.judgeSpend.calls).toBe(2);
      expect(asked).toHaveLength(2);
      expect(asked.join("\n")).toMatch(/systolic|blood pressure/i);
      // The judge matched A1 with B1 in both roles; the offline rule matched them by columns.
      expect(report.scores.hitRate.cvar).toBe(1);
      expect(offline.judge).toBeNull();

      // A stored run's analyses scored again with the judge.
      const run = await clade(
        ...[
          "eval",
          "--env",
          "blade",
          "--agent",
          "naive",
          "--tasks",
          "0",
          "--run-id",
          "jr",
          "--db",
          db,
        ],
      );
      expect(run.code, run.stderr).toBe(0);
      const again = await clade(
        ...["blade", "report", "jr", "--db", db, "--judge", "judge", "--config", config],
      );
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/Judge judge: 2 calls/);
      expect(again.stderr).toMatch(/1 analyses scored again with judge/);
    } finally {
      await server.close();
    }
  }, 60_000);
});
