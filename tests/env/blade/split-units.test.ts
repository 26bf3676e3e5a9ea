/**
 * Splitting monolithic transform code into units offline (src/env/blade/split-units.ts): SQL by
 * statement and Python by top-level statement, each unit's verb (derive, filter, impute,
 * deduplicate, orderby, groupby) and input → output mapping read off its shape; helper
 * statements carried into the next unit; quotes, comments and brackets that hide ';' or line
 * breaks. Last, the experts' own code of clade's datasets, joined as an agent would submit it,
 * must split back into the units the reference solver submits.
 */
import { describe, expect, it } from "vitest";
import { expertAnalysis } from "../../../src/agent/reference/blade.js";
import { readBladeDataset } from "../../../src/env/blade/dataset.js";
import { listBladeDatasets, OWN_DATASETS_DIR } from "../../../src/env/blade/folders.js";
import type { RuntimeName } from "../../../src/env/blade/runtime/types.js";
import type { TransformUnit } from "../../../src/env/blade/specs.js";
import {
  splitPythonStatements,
  splitSqlStatements,
  splitTransformCode,
} from "../../../src/env/blade/split-units.js";

const COLUMNS = ["id", "x", "g", "name"];

const sql = (code: string) => splitTransformCode(code, "sql", COLUMNS);
const py = (code: string) => splitTransformCode(code, "python", COLUMNS);
/** Each unit as [verb, mapping, groupby columns]. */
const shape = (units: TransformUnit[]) => units.map((u) => [u.verb, u.mapping, u.groupbyCols]);

describe("splitSqlStatements", () => {
  it("splits at ';' outside quotes, brackets and comments", () => {
    expect(
      splitSqlStatements(
        [
          "-- keep adults; drop the rest",
          "SELECT * FROM df WHERE name <> 'a;b' AND g <> 'it''s; fine';",
          'SELECT *, "x;y" FROM df;;',
          "SELECT * FROM df WHERE g IN (SELECT g FROM df WHERE x > 0; )",
          "",
        ].join("\n"),
      ),
    ).toEqual([
      "SELECT * FROM df WHERE name <> 'a;b' AND g <> 'it''s; fine'",
      'SELECT *, "x;y" FROM df',
      "SELECT * FROM df WHERE g IN (SELECT g FROM df WHERE x > 0; )",
    ]);
  });

  it("gives nothing for empty code or only comments", () => {
    expect(splitSqlStatements("")).toEqual([]);
    expect(splitSqlStatements("  ;\n-- nothing here;\n")).toEqual([]);
  });
});

describe("SQL units", () => {
  it("derive: one mapping entry per new column, inputs the known columns it names", () => {
    expect(shape(sql('SELECT *, ln(x) AS lx, x * 2 AS "x2" FROM df'))).toEqual([
      [
        "derive",
        [
          [["x"], "lx"],
          [["x"], "x2"],
        ],
        [],
      ],
    ]);
    // A string literal naming a column is no input; a CAST's type is no output.
    expect(shape(sql("SELECT *, CAST(g = 'a' AS BIGINT) AS ga FROM df"))).toEqual([
      ["derive", [[["g"], "ga"]], []],
    ]);
  });

  it("later statements see the columns earlier ones made", () => {
    const units = sql("SELECT *, x * 2 AS y FROM df; SELECT *, y + x AS z FROM df");
    expect(shape(units)).toEqual([
      ["derive", [[["x"], "y"]], []],
      ["derive", [[["x", "y"], "z"]], []],
    ]);
    expect(units.map((u) => u.code)).toEqual([
      "SELECT *, x * 2 AS y FROM df",
      "SELECT *, y + x AS z FROM df",
    ]);
  });

  it("filter: only a WHERE, mapped to ALL", () => {
    expect(shape(sql("SELECT * FROM df WHERE x > 0 AND g = 'a;b'"))).toEqual([
      ["filter", [[["g", "x"], "ALL"]], []],
    ]);
  });

  it("impute: a column replaced by coalesce or ifnull of itself", () => {
    expect(shape(sql("SELECT * REPLACE (coalesce(x, 0) AS x) FROM df"))).toEqual([
      ["impute", [[["x"], "x"]], []],
    ]);
    expect(shape(sql("SELECT id, g, ifnull(x, 0) AS x FROM df"))).toEqual([
      ["impute", [[["x"], "x"]], []],
    ]);
    // coalesce into a new column is a derive.
    expect(shape(sql("SELECT *, coalesce(x, 0) AS x0 FROM df"))).toEqual([
      ["derive", [[["x"], "x0"]], []],
    ]);
  });

  it("deduplicate: SELECT DISTINCT, mapping nothing (so BLADE adds no node)", () => {
    expect(shape(sql("SELECT DISTINCT * FROM df"))).toEqual([["deduplicate", [], []]]);
  });

  it("orderby: only an ORDER BY, mapped to ALL", () => {
    expect(shape(sql("SELECT * FROM df ORDER BY x DESC, id"))).toEqual([
      ["orderby", [[["id", "x"], "ALL"]], []],
    ]);
  });

  it("groupby: the GROUP BY columns, and one entry per aggregate", () => {
    expect(shape(sql("SELECT g, avg(x) AS mean_x, count(*) AS n FROM df GROUP BY g"))).toEqual([
      [
        "groupby",
        [
          [["x"], "mean_x"],
          [[], "n"],
        ],
        ["g"],
      ],
    ]);
  });

  it("selecting columns maps nothing", () => {
    expect(shape(sql("SELECT id, x FROM df"))).toEqual([["derive", [], []]]);
  });

  it("impute whose fill value is a subquery, as the experts write it, is still an impute", () => {
    // The FROM inside the subquery must not end the SELECT list.
    expect(
      shape(sql("SELECT * REPLACE (coalesce(x, (SELECT median(x) FROM df)) AS x) FROM df")),
    ).toEqual([["impute", [[["x"], "x"]], []]]);
  });

  it("a derive with a scalar subquery names its output column", () => {
    expect(shape(sql("SELECT *, x - (SELECT avg(x) FROM df) AS xc FROM df"))).toEqual([
      ["derive", [[["x"], "xc"]], []],
    ]);
  });

  it("a GROUP BY inside a WHERE subquery leaves the statement a filter", () => {
    expect(
      shape(sql("SELECT * FROM df WHERE g IN (SELECT g FROM df GROUP BY g HAVING count(*) > 1)")),
    ).toEqual([["filter", [[["g"], "ALL"]], []]]);
  });
});

describe("splitPythonStatements", () => {
  it("keeps bracketed spans and continuation lines together, and drops comment-only lines", () => {
    const code = [
      "# clean up",
      "df = df.assign(",
      "    y=df['x'] * 2,  # a ')' in a comment",
      ")",
      "df['s'] = df['name'] + ' (' \\",
      "    + df['g']",
      "",
      "def clip(s):",
      "    return s.clip(0, 10)",
      "df['t'] = '#[{'",
    ].join("\n");
    expect(splitPythonStatements(code)).toEqual([
      "df = df.assign(\n    y=df['x'] * 2,  # a ')' in a comment\n)",
      "df['s'] = df['name'] + ' (' \\\n    + df['g']",
      "def clip(s):\n    return s.clip(0, 10)",
      "df['t'] = '#[{'",
    ]);
  });
});

describe("Python units", () => {
  it("derive: a column assigned, or several through assign()", () => {
    expect(shape(py("df['y'] = df['x'] * 2"))).toEqual([["derive", [[["x"], "y"]], []]]);
    expect(shape(py("df = df.assign(\n    y=df['x'] * 2,\n    z=np.log(df.x),\n)"))).toEqual([
      [
        "derive",
        [
          [["x"], "y"],
          [["x"], "z"],
        ],
        [],
      ],
    ]);
    // The comparison inside is no assignment.
    expect(shape(py("df['flag'] = (df['g'] == 'a').astype(int)"))).toEqual([
      ["derive", [[["g"], "flag"]], []],
    ]);
  });

  it("filter: boolean indexing, loc, query and dropna, mapped to ALL", () => {
    expect(shape(py("df = df[df['x'] > 0]"))).toEqual([["filter", [[["x"], "ALL"]], []]]);
    expect(shape(py("df = df.loc[df['g'] == 'a']"))).toEqual([["filter", [[["g"], "ALL"]], []]]);
    expect(shape(py("df = df.dropna(subset=['x', 'name'])"))).toEqual([
      ["filter", [[["name", "x"], "ALL"]], []],
    ]);
    expect(py("df = df.query('x > 0')")[0]?.verb).toBe("filter");
  });

  it("impute: fillna on a column or on the frame", () => {
    expect(shape(py("df['x'] = df['x'].fillna(df['x'].median())"))).toEqual([
      ["impute", [[["x"], "x"]], []],
    ]);
    expect(shape(py("df = df.fillna({'x': 0, 'name': ''})"))).toEqual([
      [
        "impute",
        [
          [["name"], "name"],
          [["x"], "x"],
        ],
        [],
      ],
    ]);
    // fillna into a new column is a derive.
    expect(shape(py("df['x0'] = df['x'].fillna(0)"))).toEqual([["derive", [[["x"], "x0"]], []]]);
  });

  it("deduplicate, orderby and groupby", () => {
    expect(shape(py("df = df.drop_duplicates()"))).toEqual([["deduplicate", [], []]]);
    expect(shape(py("df = df.sort_values('x', ascending=False)"))).toEqual([
      ["orderby", [[["x"], "ALL"]], []],
    ]);
    expect(
      shape(py("df = df.groupby('g', as_index=False).agg(mean_x=('x', 'mean'), n=('id', 'size'))")),
    ).toEqual([
      [
        "groupby",
        [
          [["id", "x"], "mean_x"],
          [["id", "x"], "n"],
        ],
        ["g"],
      ],
    ]);
  });

  it("carries helper statements into the next unit's code, and ends with a unit of its own", () => {
    const code = [
      "import numpy as np",
      "threshold = 3",
      "df = df[df['x'] > threshold]",
      "df['y'] = np.log(df['x'])",
      "print(df.shape)",
    ].join("\n");
    const units = py(code);
    expect(shape(units)).toEqual([
      ["filter", [[["x"], "ALL"]], []],
      ["derive", [[["x"], "y"]], []],
      ["derive", [], []],
    ]);
    expect(units.map((u) => u.code)).toEqual([
      "import numpy as np\nthreshold = 3\ndf = df[df['x'] > threshold]",
      "df['y'] = np.log(df['x'])",
      "print(df.shape)",
    ]);
  });

  it("sees the columns earlier statements made", () => {
    expect(shape(py("df['y'] = df['x'] * 2\ndf['z'] = df['y'] + df['x']"))).toEqual([
      ["derive", [[["x"], "y"]], []],
      ["derive", [[["x", "y"], "z"]], []],
    ]);
  });

  it("gives no units for empty code", () => {
    expect(py("")).toEqual([]);
    expect(sql("")).toEqual([]);
    expect(py("# nothing\n\n")).toEqual([]);
  });

  it("selecting columns is not a filter (BLADE: selecting columns is not a unit), as in SQL", () => {
    const units = py("df = df[['id', 'x']]\ndf['y'] = df['x'] * 2");
    expect(units.some((u) => u.verb === "filter")).toBe(false);
    expect(units.flatMap((u) => u.mapping)).toEqual([[["x"], "y"]]);
  });
});

describe("the experts' code of clade's datasets splits back into the reference's units", () => {
  const datasets = listBladeDatasets(OWN_DATASETS_DIR);
  const cases = (["sql", "python"] as RuntimeName[]).flatMap((runtime) =>
    datasets.map((name) => [runtime, name] as const),
  );

  it.each(cases)("%s: %s", (runtime, name) => {
    const dataset = readBladeDataset(`${OWN_DATASETS_DIR}/${name}`);
    const units = expertAnalysis(dataset, runtime).transform_units as {
      verb: string;
      code: string;
      mapping: [string[], string][];
    }[];
    expect(units.length).toBeGreaterThan(0);
    const code = units.map((u) => u.code).join(runtime === "sql" ? ";\n" : "\n");
    const split = splitTransformCode(code, runtime, dataset.fieldNames);
    // A deduplication maps nothing when split (BLADE's conversion gives it no node), whatever
    // mapping the expert wrote for it.
    const expected = units.map((u) => [u.verb, u.verb === "deduplicate" ? [] : u.mapping]);
    expect(split.map((u) => [u.verb, u.mapping])).toEqual(expected);
  });
});
