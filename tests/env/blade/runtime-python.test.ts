/**
 * The Python runtime of the blade environment, in the sandbox: exploration cells keep their
 * state, errors come back as one line, transform scripts return frames whose dtypes are what
 * pandas holds (the tricky ones included), groupby and other results, a logit read off
 * statsmodels, and a cell past its time limit restarts the session. Skipped, saying why, where
 * no python3 with pandas and statsmodels is installed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Column, Frame } from "../../../src/env/blade/frame.js";
import {
  type AnalysisSession,
  findPython,
  openSession,
  RuntimeUnavailableError,
  requirePythonRuntime,
  resetPythonSearch,
  runtimeAvailability,
  type ScriptOutcome,
} from "../../../src/env/blade/runtime/index.js";
import { PYTHON_VARIABLE } from "../../../src/env/blade/runtime/python.js";

const python = await findPython().catch((error: Error) => error);
const missing = python instanceof Error ? python.message : undefined;
if (missing) console.warn(`skipping the Python runtime tests: ${missing}`);

const scratch = mkdtempSync(join(tmpdir(), "clade-blade-py-"));
const dataset = { dir: scratch, dataPath: join(scratch, "data.csv") };

/** 40 rows: an id, an age, an income with gaps, a bool, text with gaps, dates with a gap, an
 * object column of booleans with a gap (pandas keeps it object), and a binary outcome. */
function datasetCsv(): string {
  const lines = ["id,age,income,flag,name,when,maybe,y"];
  for (let i = 0; i < 40; i++) {
    const income = i % 7 === 3 ? "" : String(1000 + i * 37.5);
    const name = i % 9 === 4 ? "" : `p${i}`;
    const when = i === 5 ? "" : `20${10 + (i % 10)}-0${1 + (i % 9)}-1${i % 10}`;
    const maybe = i % 4 === 1 ? "" : i % 2 === 0 ? "True" : "False";
    const y = (i * 7) % 10 < 4 + (i % 3) ? 1 : 0;
    lines.push(
      `${i},${18 + ((i * 13) % 50)},${income},${i % 3 === 0},${name},${when},${maybe},${y}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function frameOf(outcome: ScriptOutcome | undefined): Frame {
  if (!outcome?.ok || outcome.kind !== "frame") {
    throw new Error(`expected a frame, got ${JSON.stringify(outcome)}`);
  }
  return outcome.frame;
}

function column(frame: Frame, name: string): Column {
  const found = frame.columns.find((c) => c.name === name);
  if (!found) throw new Error(`no column ${name}`);
  return found;
}

let session: AnalysisSession;

beforeAll(async () => {
  writeFileSync(dataset.dataPath, datasetCsv());
  if (missing) return;
  session = await openSession({ runtime: "python", dataset, limits: { cellMs: 15_000 } });
}, 60_000);

afterAll(async () => {
  await session?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)("the Python runtime: exploration cells", () => {
  it("keeps state across cells and shows a final expression like a notebook", async () => {
    const first = await session.execute("total = df['age'].sum()\nprint('rows', len(df))");
    expect(first).toEqual({ ok: true, output: "rows 40\n" });
    const second = await session.execute("total + 1");
    const expected = [...Array(40).keys()].reduce((sum, i) => sum + 18 + ((i * 13) % 50), 0) + 1;
    expect(second).toEqual({ ok: true, output: String(expected) });
    // A trailing semicolon hides the value, as in Jupyter.
    expect(await session.execute("total;")).toEqual({ ok: true, output: "" });
    const table = await session.execute("df.head(3)");
    expect(table.ok).toBe(true);
    expect(table.output).toContain("income");
    expect(table.output.split("\n")).toHaveLength(4);
  });

  it("has pd, np, scipy, sm and smf loaded", async () => {
    const outcome = await session.execute("[m.__name__ for m in (pd, np, scipy, sm, smf)]");
    expect(outcome).toEqual({
      ok: true,
      output: "['pandas', 'numpy', 'scipy', 'statsmodels.api', 'statsmodels.formula.api']",
    });
  });

  it("has plt (matplotlib, imported on first use) drawing to files in the sandbox", async () => {
    const outcome = await session.execute(
      "fig, ax = plt.subplots(); ax.plot([1, 2], [3, 4]); ax.set_title('t'); fig.savefig('/tmp/f.png'); import os; os.path.getsize('/tmp/f.png') > 0",
    );
    expect(outcome).toEqual({ ok: true, output: "True" });
  });

  it("answers an error with its last line and a short traceback of the cell", async () => {
    const outcome = await session.execute("x = 1\ndf['no_such_column']");
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toBe("KeyError: 'no_such_column'");
    expect(outcome.output).toContain("line 2");
    expect(outcome.output).not.toContain("pandas/core");
    const syntax = await session.execute("def broken(:\n  pass");
    expect(syntax.error).toMatch(/^SyntaxError: /);
    // The session survives its errors.
    expect((await session.execute("x")).output).toBe("1");
  });

  it("caps a cell's output at outputChars", async () => {
    const outcome = await session.execute("for i in range(2000): print('line', i)");
    expect(outcome.ok).toBe(true);
    expect(outcome.output.length).toBeLessThan(4000 + 100);
    expect(outcome.output).toMatch(/more characters not shown\]$/);
  });
});

describe.skipIf(missing !== undefined)("the Python runtime: transform scripts", () => {
  it("runs each script on a fresh copy of the data as BLADE's transform(df)", async () => {
    await session.execute("df = df.head(2)");
    const [filtered, untouched, early] = await session.runScripts([
      "df = df[df['age'] > 40]",
      "",
      "return df[['id']]",
    ]);
    const rows = frameOf(filtered).rowCount;
    expect(rows).toBe([...Array(40).keys()].filter((i) => 18 + ((i * 13) % 50) > 40).length);
    // Exploration changed the session's df, not the data scripts start from.
    expect(frameOf(untouched).rowCount).toBe(40);
    // A script may return early, as the body of a function.
    expect(frameOf(early).columns.map((c) => c.name)).toEqual(["id"]);
  });

  it("gives each column its pandas dtype, the tricky ones included", async () => {
    const [outcome] = await session.runScripts([
      [
        "df['age_gaps'] = df['age'].where(df['age'] > 30)",
        "df['when_dt'] = pd.to_datetime(df['when'])",
        "df['ratio'] = df['age'] / (df['id'] - 1)",
        "df['neg_zero'] = -0.0 * df['age']",
        "df['big'] = df['id'] + 2**60",
        "df['cat'] = df['name'].astype('category')",
      ].join("\n"),
    ]);
    const frame = frameOf(outcome);
    expect(frame.rowCount).toBe(40);
    const dtypes = Object.fromEntries(frame.columns.map((c) => [c.name, c.dtype]));
    expect(dtypes).toEqual({
      id: "int64",
      age: "int64",
      income: "float64",
      flag: "bool",
      name: "object",
      when: "object",
      maybe: "object",
      y: "int64",
      age_gaps: "float64",
      when_dt: "datetime64",
      ratio: "float64",
      neg_zero: "float64",
      big: "other",
      cat: "other",
    });
    expect(column(frame, "id").values.slice(0, 3)).toEqual([0, 1, 2]);
    expect(column(frame, "flag").values.slice(0, 4)).toEqual([true, false, false, true]);
    expect(Number.isNaN(column(frame, "income").values[3])).toBe(true);
    expect(column(frame, "income").values[1]).toBe(1037.5);
    expect(Number.isNaN(column(frame, "age_gaps").values[0])).toBe(true); // age 18
    expect(column(frame, "name").values.slice(3, 5)).toEqual(["p3", null]);
    expect(column(frame, "maybe").values.slice(0, 4)).toEqual(["True", null, "True", "False"]);
    expect(column(frame, "when_dt").values.slice(4, 6)).toEqual(["2014-05-14 00:00:00", null]);
    expect(column(frame, "ratio").values.slice(0, 3)).toEqual([-18, Number.POSITIVE_INFINITY, 44]);
    expect(Object.is(column(frame, "neg_zero").values[0], -0)).toBe(true);
    expect(column(frame, "big").values[1]).toBe(String(2n ** 60n + 1n));
    // Missing categories print as pandas prints them; numeric-free "other" columns keep "nan".
    expect(column(frame, "cat").values.slice(3, 5)).toEqual(["p3", "nan"]);
    // pandas' own datetime parse of object columns travels with them.
    expect(column(frame, "when").datetimeParse?.slice(4, 6)).toEqual(["2014-05-14 00:00:00", null]);
    expect(column(frame, "name").datetimeParse).toBeNull();
  });

  it("returns a groupby's columns, another value's type, and an error's last line", async () => {
    const [grouped, series, failed, missingColumn] = await session.runScripts([
      "df = df.groupby('flag')",
      "df = df['age']",
      "raise ValueError('no good')",
      "df['z'] = df['nope'] + 1",
    ]);
    expect(grouped).toEqual({
      ok: true,
      kind: "groupby",
      columns: ["id", "age", "income", "name", "when", "maybe", "y"],
    });
    expect(series).toEqual({ ok: true, kind: "other", type: "Series" });
    expect(failed).toEqual({ ok: false, error: "ValueError: no good" });
    expect(missingColumn).toEqual({ ok: false, error: "KeyError: 'nope'" });
  });

  it("sends a column once per batch: unchanged columns share their values", async () => {
    const [a, b] = await session.runScripts(["df['k'] = 1", "df = df.sort_values('id')"]);
    const first = frameOf(a);
    const second = frameOf(b);
    expect(column(second, "age").values).toBe(column(first, "age").values);
    expect(column(first, "k").values).toEqual(new Array(40).fill(1));
  });

  it("moves a frame of 100k cells and more quickly", async () => {
    const started = performance.now();
    const outcomes = await session.runScripts([
      "df = pd.DataFrame({f'c{j}': np.arange(10_000) * (j + 0.5) for j in range(12)})",
      "df = pd.DataFrame({f'c{j}': np.arange(10_000) * (j + 0.5) for j in range(12)}).iloc[::-1]",
    ]);
    const elapsed = performance.now() - started;
    const frame = frameOf(outcomes[0]);
    expect(frame.rowCount).toBe(10_000);
    expect(frame.columns).toHaveLength(12);
    expect(column(frame, "c3").values[9_999]).toBe(9_999 * 3.5);
    expect(column(frameOf(outcomes[1]), "c3").values[0]).toBe(9_999 * 3.5);
    expect(elapsed).toBeLessThan(10_000);
  });
});

describe.skipIf(missing !== undefined)("the Python runtime: models", () => {
  it("reads a logit off statsmodels", async () => {
    const outcome = await session.fitModel(
      "df['older'] = df['age'] > 40",
      "model = smf.logit('y ~ age + older', data=df).fit(disp=0)",
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const { model } = outcome;
    expect(model).toMatchObject({ family: "binomial", link: "logit", dv: "y", observations: 40 });
    expect(model.terms).toEqual(["Intercept", "older[T.True]", "age"]);
    expect(Object.keys(model.params)).toEqual(model.terms);
    for (const term of model.terms) {
      expect(Number.isFinite(model.params[term])).toBe(true);
      expect(model.stdErrors[term]).toBeGreaterThan(0);
      expect(model.pValues[term]).toBeGreaterThanOrEqual(0);
      expect(model.pValues[term]).toBeLessThanOrEqual(1);
    }
  });

  it("follows BLADE's rule for model code in a function, and names GLM families", async () => {
    const outcome = await session.fitModel(
      "",
      [
        "def fit_model(data):",
        "    fitted = smf.glm('y ~ age', data=data, family=sm.families.Binomial()).fit()",
        "    return fitted",
      ].join("\n"),
    );
    expect(outcome).toMatchObject({
      ok: true,
      model: { family: "binomial", link: "logit", dv: "y", terms: ["Intercept", "age"] },
    });
    const ols = await session.fitModel("", "smf.ols('age ~ C(flag)', data=df).fit()");
    expect(ols).toMatchObject({ ok: true, model: { family: "gaussian", link: "identity" } });
  });

  it("says why when there is no fitted model or the transform fails", async () => {
    expect(await session.fitModel("", "x = 1")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/no fitted statsmodels model/),
    });
    expect(await session.fitModel("df = df['nope']", "x = 1")).toEqual({
      ok: false,
      error: "the transform failed: KeyError: 'nope'",
    });
  });
});

describe.skipIf(missing !== undefined)("the Python runtime: time limits", () => {
  it("stops a cell past its limit, says the state was lost, and starts afresh", async () => {
    const short = await openSession({ runtime: "python", dataset, limits: { cellMs: 1500 } });
    try {
      await short.execute("kept = 42");
      const stuck = await short.execute("while True: pass");
      expect(stuck).toMatchObject({ ok: false, timedOut: true });
      expect(stuck.error).toMatch(/1\.5 s limit.*state .* was lost/);
      const after = await short.execute("kept");
      expect(after.error).toBe("NameError: name 'kept' is not defined");
      // A script past its limit fails alone; the scripts after it still run.
      const outcomes = await short.runScripts(["while True: pass", "df = df.head(2)"]);
      expect(outcomes[0]).toMatchObject({ ok: false, timedOut: true });
      expect(frameOf(outcomes[1]).rowCount).toBe(2);
    } finally {
      await short.close();
    }
  }, 30_000);
});

describe("the Python runtime: availability", () => {
  it("reports the runtimes and the sandbox for clade doctor", async () => {
    const report = await runtimeAvailability();
    expect(report.sql).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/@duckdb\/node-api/),
    });
    expect(report.sandbox.ok).toBe(true);
    expect(report.python.ok).toBe(missing === undefined);
    if (missing === undefined) expect(report.python.detail).toMatch(/pandas \d+\.\d+/);
  });

  it("says in one line how to install Python's packages when none is found", async () => {
    const saved = process.env[PYTHON_VARIABLE];
    process.env[PYTHON_VARIABLE] = join(scratch, "no-such-python3");
    resetPythonSearch();
    try {
      const error = await requirePythonRuntime().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RuntimeUnavailableError);
      expect((error as Error).message).not.toContain("\n");
      expect((error as Error).message).toMatch(
        /pandas and statsmodels .*apt-get install python3-pandas python3-statsmodels/,
      );
    } finally {
      if (saved === undefined) delete process.env[PYTHON_VARIABLE];
      else process.env[PYTHON_VARIABLE] = saved;
      resetPythonSearch();
    }
  });
});
