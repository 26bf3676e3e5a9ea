/**
 * The SQL runtime of the blade environment (DuckDB in the sandbox): the dataset frame becomes
 * table `df` with matching types, exploration cells keep their tables and show results as text,
 * transform scripts chain SELECTs over a fresh copy of the data and come back as frames typed as
 * pandas would hold the same data, models are fitted on the host, and a cell past its time limit
 * restarts the session.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Column, Frame } from "../../../src/env/blade/frame.js";
import {
  type AnalysisSession,
  openSession,
  type ScriptOutcome,
} from "../../../src/env/blade/runtime/index.js";

const scratch = mkdtempSync(join(tmpdir(), "clade-blade-sql-"));
const dataset = { dir: scratch, dataPath: join(scratch, "data.csv") };

const ROWS = 30;

/** A frame with every dtype, gaps where pandas allows them, and a binary outcome. */
function datasetFrame(): Frame {
  const range = [...Array(ROWS).keys()];
  return {
    rowCount: ROWS,
    columns: [
      { name: "id", dtype: "int64", values: range },
      { name: "age", dtype: "int64", values: range.map((i) => 18 + ((i * 13) % 50)) },
      {
        name: "income",
        dtype: "float64",
        values: range.map((i) => (i % 7 === 3 ? Number.NaN : 1000 + i * 37.5)),
      },
      { name: "flag", dtype: "bool", values: range.map((i) => i % 3 === 0) },
      { name: "name", dtype: "object", values: range.map((i) => (i % 9 === 4 ? null : `p${i}`)) },
      {
        name: "when",
        dtype: "datetime64",
        values: range.map((i) => (i === 5 ? null : `2020-0${1 + (i % 9)}-1${i % 10} 12:30:00`)),
      },
      { name: "y", dtype: "int64", values: range.map((i) => ((i * 7) % 10 < 4 + (i % 3) ? 1 : 0)) },
    ],
  };
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
  writeFileSync(dataset.dataPath, "a,b\n1,2\n");
  session = await openSession({
    runtime: "sql",
    dataset,
    frame: datasetFrame(),
    limits: { cellMs: 15_000 },
  });
}, 60_000);

afterAll(async () => {
  await session?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the SQL runtime: exploration cells", () => {
  it("loads the frame as df with matching column types", async () => {
    const outcome = await session.execute(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'df' ORDER BY ordinal_position",
    );
    expect(outcome.ok).toBe(true);
    const lines = outcome.output
      .split("\n")
      .slice(2, 9)
      .map((line) => line.split("|").map((s) => s.trim()));
    expect(lines).toEqual([
      ["id", "BIGINT"],
      ["age", "BIGINT"],
      ["income", "DOUBLE"],
      ["flag", "BOOLEAN"],
      ["name", "VARCHAR"],
      ["when", "TIMESTAMP"],
      ["y", "BIGINT"],
    ]);
    const gaps = await session.execute(
      'SELECT count(*) - count(income) AS no_income, count(*) - count(name) AS no_name, min("when") AS first FROM df',
    );
    expect(gaps.output).toContain("2020-01-10 12:30:00");
    expect(gaps.output.split("\n")[2]).toMatch(/^4\s+\| 3\s+\| 2020-01-10 12:30:00$/);
  });

  it("runs several statements, keeps what they create, and shows the last result", async () => {
    const created = await session.execute(
      "CREATE TABLE adults AS SELECT * FROM df WHERE age >= 30; SELECT count(*) AS n FROM adults",
    );
    const adults = datasetFrame().columns[1]?.values.filter((age) => (age as number) >= 30).length;
    expect(adults).toBe(23);
    expect(created).toEqual({ ok: true, output: "n\n--\n23\n(1 row)" });
    const later = await session.execute("SELECT id FROM adults ORDER BY id LIMIT 2");
    expect(later.output).toBe("id\n--\n1\n2\n(2 rows)");
    const changed = await session.execute("DELETE FROM adults WHERE id = 1");
    expect(changed).toEqual({ ok: true, output: "1 rows changed" });
  });

  it("shows the first 20 rows and the row count", async () => {
    const outcome = await session.execute("SELECT id, name FROM df ORDER BY id");
    const lines = outcome.output.split("\n");
    expect(lines).toHaveLength(2 + 20 + 1);
    expect(lines.at(-1)).toBe(`(${ROWS} rows, first 20 shown)`);
    expect(lines[6]).toMatch(/^4\s+\| NULL$/);
  });

  it("answers an error with its first line", async () => {
    const outcome = await session.execute("SELECT nope FROM df");
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/^Binder Error: Referenced column "nope" not found/);
    expect(outcome.output).toContain("LINE 1");
    expect((await session.execute("SELECT 1 AS one")).ok).toBe(true);
  });
});

describe("the SQL runtime: transform scripts", () => {
  it("chains SELECTs over df, each result becoming df, from a fresh copy each time", async () => {
    await session.execute("DELETE FROM df WHERE id > 2");
    const [chained, fresh] = await session.runScripts([
      "SELECT *, ln(income) AS log_income FROM df; SELECT * FROM df WHERE age >= 40 -- adults; only",
      "SELECT * FROM df",
    ]);
    const frame = frameOf(chained);
    const ages = datasetFrame().columns[1]?.values as number[];
    expect(frame.rowCount).toBe(ages.filter((age) => age >= 40).length);
    expect(frame.columns.map((c) => c.name)).toEqual([
      "id",
      "age",
      "income",
      "flag",
      "name",
      "when",
      "y",
      "log_income",
    ]);
    // Exploration deleted rows of its own df; scripts start from the data as read.
    expect(frameOf(fresh).rowCount).toBe(ROWS);
  });

  it("types each result column as pandas would hold the same data", async () => {
    const [outcome] = await session.runScripts([
      [
        'SELECT id, income, flag, name, "when",',
        " CASE WHEN age > 30 THEN age END AS age_gaps,",
        " CASE WHEN id % 2 = 0 THEN flag END AS flag_gaps,",
        ' CAST("when" AS DATE) AS day,',
        " CAST(income AS DECIMAL(10, 2)) AS money,",
        " [id, id] AS pair,",
        " CAST(id AS HUGEINT) * 1000000000000000000 AS huge,",
        " CASE WHEN id = 1 THEN CAST('inf' AS DOUBLE) ELSE CAST('-0.0' AS DOUBLE) END AS odd",
        "FROM df ORDER BY id",
      ].join("\n"),
    ]);
    const frame = frameOf(outcome);
    const dtypes = Object.fromEntries(frame.columns.map((c) => [c.name, c.dtype]));
    expect(dtypes).toEqual({
      id: "int64",
      income: "float64",
      flag: "bool",
      name: "object",
      when: "datetime64",
      age_gaps: "float64",
      flag_gaps: "object",
      day: "datetime64",
      money: "float64",
      pair: "other",
      huge: "other",
      odd: "float64",
    });
    expect(column(frame, "id").values.slice(0, 3)).toEqual([0, 1, 2]);
    expect(Number.isNaN(column(frame, "income").values[3])).toBe(true);
    expect(column(frame, "flag").values.slice(0, 3)).toEqual([true, false, false]);
    expect(column(frame, "name").values.slice(3, 5)).toEqual(["p3", null]);
    expect(column(frame, "when").values.slice(4, 6)).toEqual(["2020-05-14 12:30:00", null]);
    expect(Number.isNaN(column(frame, "age_gaps").values[0])).toBe(true);
    expect(column(frame, "age_gaps").values[1]).toBe(31);
    expect(column(frame, "flag_gaps").values.slice(0, 3)).toEqual(["True", null, "False"]);
    expect(column(frame, "day").values[4]).toBe("2020-05-14 00:00:00");
    expect(column(frame, "money").values[1]).toBe(1037.5);
    expect(column(frame, "pair").values[2]).toBe("[2, 2]");
    expect(column(frame, "huge").values[3]).toBe("3000000000000000000");
    expect(column(frame, "odd").values[1]).toBe(Number.POSITIVE_INFINITY);
    expect(Object.is(column(frame, "odd").values[0], -0)).toBe(true);
    // The engine's frames carry no parse of pandas: hashing emulates it.
    expect(column(frame, "name").datetimeParse).toBeUndefined();
  });

  it("refuses anything but SELECT in a script, and reports errors per script", async () => {
    const outcomes = await session.runScripts([
      "DROP TABLE df",
      "SELECT * FROM df; INSERT INTO df SELECT * FROM df",
      "SELECT nope FROM df",
      "SELECT count(*) AS n FROM df",
    ]);
    expect(outcomes[0]).toEqual({
      ok: false,
      error: "a transform script runs SELECT statements only, got DROP",
    });
    expect(outcomes[1]).toEqual({
      ok: false,
      error: "a transform script runs SELECT statements only, got INSERT",
    });
    expect(outcomes[2]).toMatchObject({ ok: false, error: expect.stringMatching(/^Binder Error/) });
    expect(column(frameOf(outcomes[3]), "n").values).toEqual([ROWS]);
  });

  it("sends a column once per batch: unchanged columns share their values", async () => {
    const [a, b] = await session.runScripts(["SELECT * FROM df", "SELECT *, 1 AS k FROM df"]);
    expect(column(frameOf(b), "age").values).toBe(column(frameOf(a), "age").values);
  });
});

describe("the SQL runtime: models and limits", () => {
  it("fits the model code on the transform's result, on the host", async () => {
    const outcome = await session.fitModel(
      "SELECT *, age > 40 AS older FROM df",
      "smf.logit('y ~ age', data=df)",
    );
    expect(outcome).toMatchObject({
      ok: true,
      model: { family: "binomial", link: "logit", dv: "y", terms: ["Intercept", "age"] },
    });
    if (outcome.ok) expect(outcome.model.observations).toBe(ROWS);
    expect(
      await session.fitModel("SELECT nope FROM df", "smf.ols('y ~ age', data=df)"),
    ).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^the transform failed: Binder Error/),
    });
  });

  it("stops a cell past its limit, says the state was lost, and starts afresh", async () => {
    const short = await openSession({
      runtime: "sql",
      dataset,
      frame: datasetFrame(),
      limits: { cellMs: 1500 },
    });
    try {
      await short.execute("CREATE TABLE kept AS SELECT 1 AS one");
      const stuck = await short.execute("SELECT count(*) FROM range(100000000000) a");
      expect(stuck).toMatchObject({ ok: false, timedOut: true });
      expect(stuck.error).toMatch(/1\.5 s limit.*state .* was lost/);
      const after = await short.execute("SELECT * FROM kept");
      expect(after.error).toMatch(/^Catalog Error: Table with name kept does not exist/);
      expect((await short.execute("SELECT count(*) AS n FROM df")).output).toContain(String(ROWS));
    } finally {
      await short.close();
    }
  }, 30_000);

  it("reads the dataset with read_csv when no frame is given", async () => {
    const own = await openSession({ runtime: "sql", dataset });
    try {
      expect((await own.execute("SELECT a + b AS s FROM df")).output).toBe("s\n-\n3\n(1 row)");
    } finally {
      await own.close();
    }
  });
});
