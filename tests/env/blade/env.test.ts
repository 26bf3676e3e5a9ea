/**
 * The blade environment (src/env/blade/env.ts, index.ts): what reset shows (and never shows: the
 * experts' analyses, the true effect behind clade's data), exploration cells that keep their
 * state, errors and invalid actions that leave the episode going, invalid and valid
 * submissions, the step limit, the task range, and the version that names the data and the
 * runtime. SQL sessions start in about 0.3 s; the one Python episode is skipped, saying why,
 * where no python3 with pandas and statsmodels is installed.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { naiveAnalysis } from "../../../src/agent/reference/blade-naive.js";
import {
  BLADE_INFO,
  BladeEnv,
  bladeEnvDefinition,
  bladeSourceOf,
  builtinBladeEnv,
  OWN_DATASETS_DIR,
  parseBladeAction,
  taskDataset,
} from "../../../src/env/blade/index.js";
import { findPython } from "../../../src/env/blade/runtime/index.js";
import type { BladeRecord } from "../../../src/env/blade/score.js";
import { BladeTaskError } from "../../../src/env/blade/tasks.js";
import { MAX_STEPS, OUT_OF_STEPS_TEXT } from "../../../src/env/blade/text.js";
import { EpisodeDoneError, NotResetError, UnknownTaskError } from "../../../src/env/types.js";

const python = await findPython().catch((error: Error) => error);
const noPython = python instanceof Error ? python.message : undefined;
if (noPython) console.warn(`skipping the blade env's Python episode: ${noPython}`);

const def = builtinBladeEnv();
const source = bladeSourceOf(def.info);
if (!source) throw new Error("the built-in blade env has no task source");
const TUTORING = source.datasets.indexOf("tutoring");
const scratch = mkdtempSync(join(tmpdir(), "clade-blade-env-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh env reset on `task`; closed by the caller. */
async function episodeOn(task: number, env = def.create()) {
  const observation = await env.reset(task);
  return { env, observation };
}

describe("blade env info", () => {
  it("serves clade's six datasets as the test split, version 1.0.0", () => {
    expect(source.datasets).toEqual([
      "coffee",
      "crashes",
      "icecream",
      "readmit",
      "stress",
      "tutoring",
    ]);
    expect(source.runtime).toBe("sql");
    expect(def.info).toMatchObject({
      name: "blade",
      version: "1.0.0",
      splits: { train: { start: 6, end: 6 }, test: { start: 0, end: 6 } },
      maxSteps: MAX_STEPS,
    });
    expect(def.info.successThreshold).toBeGreaterThan(0);
    expect(def.info.successThreshold).toBeLessThanOrEqual(1);
    expect(def.info.instruction).toContain("run: <code>");
    expect(def.info.instruction).toContain("submit: <analysis as JSON>");
    expect(builtinBladeEnv()).toBe(def);
  });

  it("refuses task indices outside the split", async () => {
    const env = def.create();
    for (const task of [-1, 6, 1.5, Number.NaN, 1e9]) {
      await expect(env.reset(task), String(task)).rejects.toBeInstanceOf(UnknownTaskError);
    }
    await expect(env.step("run: SELECT 1")).rejects.toBeInstanceOf(NotResetError);
    await env.close?.();
  });
});

describe("reset", () => {
  it("shows the question, the dataset, every column and the language", async () => {
    for (let task = 0; task < source.datasets.length; task++) {
      const dataset = taskDataset(source, task);
      const { env, observation } = await episodeOn(task);
      const text = observation.text;
      expect(text).toContain(`Research question: ${dataset.questions[0]}`);
      expect(text).toContain(dataset.description);
      expect(text).toContain(`(${dataset.rowCount} rows)`);
      for (const field of dataset.fields) {
        expect(text).toContain(`- ${field.column} (${field.dtype}): ${field.description}`);
      }
      expect(text).toMatch(/^Language: SQL \(DuckDB; the data as table df\)\.$/m);
      await env.close?.();
    }
  });

  it("never shows the true effect, the experts' rationales, code or models", async () => {
    for (let task = 0; task < source.datasets.length; task++) {
      const dataset = taskDataset(source, task);
      const { env, observation } = await episodeOn(task);
      const shown = `${def.info.instruction}\n${observation.text}`;
      const truth = dataset.trueEffect;
      expect(truth, dataset.name).toBeDefined();
      expect(shown).not.toContain(truth?.process as string);
      expect(shown).not.toMatch(/true_effect|runtime_note|"clade"/);
      const gt = dataset.groundTruth;
      const secrets = [
        ...gt.transforms.flatMap((t) => [t.rationale, t.code, t.codeSql ?? ""]),
        ...gt.models.flatMap((m) => [m.rationale, m.code, m.codeSql ?? "", m.specName]),
        ...gt.cvars.map((c) => c.rationale),
        ...gt.transforms.map((t) => t.specId).filter((id) => id !== "ROOT_SPEC_ID"),
      ].filter((s) => s.trim().length >= 12);
      expect(secrets.length, dataset.name).toBeGreaterThan(5);
      for (const secret of secrets) expect(shown, dataset.name).not.toContain(secret);
      await env.close?.();
    }
  });
});

describe("run: on the SQL engine", () => {
  it("returns result tables, keeps state, and survives errors and invalid actions", async () => {
    const { env } = await episodeOn(TUTORING);
    try {
      const created = await env.step(
        "run: CREATE TABLE means AS SELECT tutoring, avg(final_score) AS mean FROM df GROUP BY tutoring",
      );
      expect(created).toMatchObject({ done: false, reward: 0, info: { ok: true } });

      const table = await env.step(
        "Action: run: ```sql\nSELECT tutoring, round(mean, 2) AS mean FROM means ORDER BY tutoring\n```",
      );
      expect(table.done).toBe(false);
      expect(table.info).toEqual({ ok: true });
      const lines = table.observation.text.split("\n");
      expect(lines[0]).toMatch(/^tutoring\s*\|\s*mean$/);
      expect(lines.filter((l) => /^[01]\s*\|\s*\d+\.\d+$/.test(l))).toHaveLength(2);
      expect(table.observation.text).toContain("(2 rows)");

      const bad = await env.step("run: SELECT no_such_column FROM df");
      expect(bad).toMatchObject({ done: false, reward: 0, info: { ok: false } });
      expect(bad.observation.text).toMatch(/^Error: .*no_such_column/m);

      const invalid = await env.step("let me think about it");
      expect(invalid).toMatchObject({ done: false, reward: 0 });
      expect(invalid.observation.text).toMatch(/^Invalid action: /);
      const empty = await env.step("run:   ");
      expect(empty.done).toBe(false);
      expect(empty.observation.text).toMatch(/^Invalid action: run: needs code/);

      // The state survived the error: the table is still there.
      const count = await env.step("run: SELECT count(*) AS n FROM means");
      expect(count.info).toEqual({ ok: true });
      expect(count.observation.text).toMatch(/^2$/m);
    } finally {
      await env.close?.();
    }
  });

  it("cannot read the dataset's ground truth next to data.csv", async () => {
    const { env } = await episodeOn(TUTORING);
    const dataset = taskDataset(source, TUTORING);
    try {
      for (const file of ["annotations.csv", "info.json"]) {
        const path = join(dataset.dir, file);
        const result = await env.step(`run: SELECT * FROM read_text('${path}')`);
        expect(result.info, file).toEqual({ ok: false });
        expect(result.observation.text).toMatch(/^Error: /m);
        expect(result.observation.text).not.toContain("true_effect");
        expect(result.observation.text).not.toContain(dataset.groundTruth.transforms[1]?.specId);
      }
    } finally {
      await env.close?.();
    }
  });

  it("resets the session state with the episode", async () => {
    const env = def.create();
    try {
      await env.reset(TUTORING);
      expect((await env.step("run: CREATE TABLE kept AS SELECT 1 AS one")).info).toEqual({
        ok: true,
      });
      await env.reset(TUTORING);
      const after = await env.step("run: SELECT * FROM kept");
      expect(after.info).toEqual({ ok: false });
    } finally {
      await env.close?.();
    }
  });
});

describe("submit:", () => {
  it("refuses invalid submissions and goes on; a valid one ends the episode with its score", async () => {
    const { env } = await episodeOn(TUTORING);
    try {
      const notJson = await env.step("submit: {cvars: ...}");
      expect(notJson).toMatchObject({ done: false, reward: 0 });
      expect(notJson.observation.text).toMatch(/^Invalid submission: submission: not JSON/);
      expect(notJson.info.submissionError).toMatch(/not JSON/);

      const analysis = naiveAnalysis(taskDataset(source, TUTORING), "sql");
      const { controls: _dropped, ...cvars } = analysis.cvars as Record<string, unknown>;
      const incomplete = await env.step(`submit: ${JSON.stringify({ ...analysis, cvars })}`);
      expect(incomplete.done).toBe(false);
      expect(incomplete.observation.text).toMatch(
        /^Invalid submission: submission: cvars\.controls: .*Fix it and submit again\./,
      );

      // Still going: a cell runs.
      expect((await env.step("run: SELECT 1 AS one")).info).toEqual({ ok: true });

      const done = await env.step(`Action: submit: ${JSON.stringify(analysis)}`);
      expect(done.done).toBe(true);
      const record = done.info.blade as BladeRecord;
      expect(record.dataset).toBe("tutoring");
      expect(record.runtime).toBe("sql");
      expect(done.reward).toBe(record.score);
      expect(done.reward).toBeGreaterThanOrEqual(0);
      expect(done.reward).toBeLessThanOrEqual(1);
      expect(done.observation.text).toBe(`Analysis submitted. Score ${record.score.toFixed(3)}.`);
      // The naive analysis picks a model the experts also fit, and no transforms.
      expect(record.run.matchedModels.length).toBe(1);
      expect(record.transforms.status).toBe("LM_SUBMISSION_TRANSFORM_CODE_EMPTY");

      await expect(env.step("run: SELECT 1")).rejects.toBeInstanceOf(EpisodeDoneError);
      await expect(env.step(`submit: ${JSON.stringify(analysis)}`)).rejects.toBeInstanceOf(
        EpisodeDoneError,
      );
    } finally {
      await env.close?.();
    }
  });
});

describe("the step limit", () => {
  it(`ends the episode after ${MAX_STEPS} steps with reward 0, warning before`, async () => {
    const { env } = await episodeOn(0);
    try {
      for (let step = 1; step < MAX_STEPS - 1; step++) {
        const result = await env.step("thinking...");
        expect(result.done, `step ${step}`).toBe(false);
        if (step === MAX_STEPS - 3) expect(result.observation.text).toMatch(/3 steps left\.$/);
      }
      const last = await env.step("run: SELECT count(*) FROM df");
      expect(last.done).toBe(false);
      expect(last.observation.text).toMatch(/1 step left: submit your analysis now\.$/);
      const out = await env.step("run: SELECT 1");
      expect(out).toMatchObject({
        done: true,
        reward: 0,
        observation: { text: OUT_OF_STEPS_TEXT },
      });
      await expect(env.step("thinking...")).rejects.toBeInstanceOf(EpisodeDoneError);
    } finally {
      await env.close?.();
    }
  });
});

describe("parseBladeAction", () => {
  it("reads run: and submit: with an optional Action: prefix and code fences", () => {
    expect(parseBladeAction("run: SELECT 1")).toEqual({ kind: "run", payload: "SELECT 1" });
    expect(parseBladeAction("  Action: RUN:\n```python\ndf.head()\n```  ")).toEqual({
      kind: "run",
      payload: "df.head()",
    });
    expect(parseBladeAction('submit: ```json\n{"a": 1}\n```')).toEqual({
      kind: "submit",
      payload: '{"a": 1}',
    });
    expect(parseBladeAction("answer: 42")).toBeUndefined();
    expect(parseBladeAction("I will run: SELECT 1")).toBeUndefined();
  });
});

describe("versions: the data and the runtime", () => {
  /** A folder of datasets holding a copy of the toy fixture as "mini". */
  function toyFolder(name: string, annotationsSuffix = ""): string {
    const root = join(scratch, name);
    mkdirSync(root, { recursive: true });
    const dir = join(root, "mini");
    cpSync(join(import.meta.dirname, "../../fixtures/blade/toy"), dir, { recursive: true });
    rmSync(join(dir, "fake-runtime.ts"));
    if (annotationsSuffix) {
      writeFileSync(join(dir, "annotations.csv"), annotationsSuffix, { flag: "a" });
    }
    return root;
  }

  it("plain for own data on SQL, +python for own data on Python, +data.<digest> elsewhere", () => {
    expect(bladeEnvDefinition().info.version).toBe("1.0.0");
    expect(bladeEnvDefinition({ runtime: "sql" }).info.version).toBe("1.0.0");
    const onPython = bladeEnvDefinition({ runtime: "python" });
    expect(onPython.info.version).toBe("1.0.0+python");
    expect(onPython.info.splits).toEqual(def.info.splits);
    expect(bladeSourceOf(onPython.info)?.runtime).toBe("python");
    expect(bladeEnvDefinition({ dir: OWN_DATASETS_DIR }).info.version).toBe("1.0.0");

    const root = toyFolder("a");
    const other = bladeEnvDefinition({ dir: root });
    expect(other.info.version).toMatch(/^1\.0\.0\+python\+data\.[0-9a-f]{12}$/);
    expect(other.info.splits.test).toEqual({ start: 0, end: 1 });
    expect(bladeSourceOf(other.info)).toMatchObject({
      root,
      runtime: "python",
      datasets: ["mini"],
    });
    const digest = other.info.version.split("+data.")[1];
    expect(bladeEnvDefinition({ dir: root, runtime: "sql" }).info.version).toBe(
      `1.0.0+sql+data.${digest}`,
    );
    // The same content elsewhere is the same version; changed ground truth is another.
    expect(bladeEnvDefinition({ dir: toyFolder("b") }).info.version).toBe(other.info.version);
    expect(bladeEnvDefinition({ dir: toyFolder("c", "\n") }).info.version).not.toBe(
      other.info.version,
    );
    expect(BLADE_INFO.version).toBe("1.0.0");
  });

  it("refuses a folder without datasets", () => {
    const empty = join(scratch, "empty");
    mkdirSync(empty, { recursive: true });
    expect(() => bladeEnvDefinition({ dir: empty })).toThrow(BladeTaskError);
    expect(() => bladeEnvDefinition({ dir: empty })).toThrow(/no BLADE datasets/);
  });
});

describe.skipIf(noPython !== undefined)("run: on Python", () => {
  it("shows Python as the language, keeps state across cells and reports errors", async () => {
    const onPython = bladeEnvDefinition({ runtime: "python" });
    const env = onPython.create();
    expect(env).toBeInstanceOf(BladeEnv);
    try {
      const observation = await env.reset(TUTORING);
      expect(observation.text).toMatch(/^Language: Python \(pandas, numpy, statsmodels/m);
      expect((await env.step("run: df.shape")).observation.text).toBe("(1500, 8)");
      expect((await env.step("run: k = int(df['tutoring'].sum())")).info).toEqual({ ok: true });
      const sum = await env.step("run: k + 1");
      expect(sum.info).toEqual({ ok: true });
      expect(Number(sum.observation.text)).toBeGreaterThan(1);
      const bad = await env.step("run: df['no_such_column']");
      expect(bad.info).toEqual({ ok: false });
      expect(bad.observation.text).toMatch(/^Error: KeyError/m);
      expect((await env.step("run: k")).observation.text).toBe(
        String(Number(sum.observation.text) - 1),
      );
    } finally {
      await env.close?.();
    }
  });
});
