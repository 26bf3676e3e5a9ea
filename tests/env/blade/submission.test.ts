/**
 * Reading submitted analyses (src/env/blade/submission.ts): BLADE's EntireAnalysis and
 * DatasetSubmission JSON, a bare list of analyses, clade's transform_units and m_spec; malformed
 * input as one SubmissionError line naming the analysis and the field; the snake_case round
 * trip; and BLADE's reading of code wrapped in a function (docs/blade-spec.md §5).
 */
import { describe, expect, it } from "vitest";
import type { Analysis } from "../../../src/env/blade/specs.js";
import {
  analysisJson,
  codeInsideFunction,
  parseAnalysis,
  parseAnalysisText,
  parseSubmissionFile,
  SubmissionError,
} from "../../../src/env/blade/submission.js";

/** A complete EntireAnalysis as BLADE's example submission writes it. */
function bladeAnalysis(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cvars: {
      ivs: [{ description: "Tutoring", columns: ["tutoring"] }],
      dv: { description: "Final score", columns: ["final_score"] },
      controls: [
        { description: "Prior score", columns: ["prior_score"], is_moderator: false },
        {
          description: "Income",
          columns: ["household_income"],
          is_moderator: true,
          moderator_on: "tutoring",
        },
      ],
    },
    transform_code: "df = df.dropna(subset=['prior_score'])",
    m_code: "smf.ols('final_score ~ tutoring + prior_score', data=df).fit()",
    ...over,
  };
}

const units = [
  {
    verb: "filter",
    code: "SELECT * FROM df WHERE prior_score IS NOT NULL",
    mapping: [[["prior_score"], "ALL"]],
    groupby_cols: [],
  },
  {
    verb: "derive",
    code: "SELECT *, ln(household_income) AS log_income FROM df",
    mapping: [[["household_income"], "log_income"]],
  },
];

/** The SubmissionError a call throws (fails the test when it throws nothing or something else). */
function submissionError(call: () => unknown): SubmissionError {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(SubmissionError);
    return error as SubmissionError;
  }
  throw new Error("expected a SubmissionError, nothing was thrown");
}

/** A one-line error message that names every given fragment. */
function expectOneLine(error: SubmissionError, ...fragments: string[]): void {
  expect(error.message).not.toMatch(/[\r\n]/);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
}

describe("parseAnalysis / parseAnalysisText", () => {
  it("reads BLADE's EntireAnalysis into clade's camelCase form", () => {
    const analysis = parseAnalysisText(JSON.stringify(bladeAnalysis()), "a.json");
    expect(analysis).toEqual({
      cvars: {
        ivs: [{ description: "Tutoring", columns: ["tutoring"] }],
        dv: { description: "Final score", columns: ["final_score"] },
        controls: [
          // moderator_on defaults to "" (BLADE's default), also when absent.
          {
            description: "Prior score",
            columns: ["prior_score"],
            isModerator: false,
            moderatorOn: "",
          },
          {
            description: "Income",
            columns: ["household_income"],
            isModerator: true,
            moderatorOn: "tutoring",
          },
        ],
      },
      transformCode: "df = df.dropna(subset=['prior_score'])",
      modelCode: "smf.ols('final_score ~ tutoring + prior_score', data=df).fit()",
    } satisfies Analysis);
  });

  it("takes a null moderator_on as empty", () => {
    const value = bladeAnalysis();
    const cvars = value.cvars as { controls: Record<string, unknown>[] };
    (cvars.controls[1] as Record<string, unknown>).moderator_on = null;
    expect(parseAnalysis(value, "a").cvars.controls[1]?.moderatorOn).toBe("");
  });

  it("reads clade's transform_units (groupby_cols defaults to []) and m_spec", () => {
    const analysis = parseAnalysis(
      bladeAnalysis({ transform_code: "", transform_units: units, m_spec: "Linear regression" }),
      "a",
    );
    expect(analysis.transformCode).toBe("");
    expect(analysis.transformUnits).toEqual([
      {
        verb: "filter",
        code: "SELECT * FROM df WHERE prior_score IS NOT NULL",
        mapping: [[["prior_score"], "ALL"]],
        groupbyCols: [],
      },
      {
        verb: "derive",
        code: "SELECT *, ln(household_income) AS log_income FROM df",
        mapping: [[["household_income"], "log_income"]],
        groupbyCols: [],
      },
    ]);
    expect(analysis.modelSpecification).toBe("Linear regression");
  });

  it("allows transform_units without any transform_code, and no transform at all", () => {
    const value = bladeAnalysis({ transform_units: units });
    delete value.transform_code;
    expect(parseAnalysis(value, "a").transformUnits).toHaveLength(2);
    const none = bladeAnalysis();
    delete none.transform_code;
    const analysis = parseAnalysis(none, "a");
    expect(analysis.transformCode).toBe("");
    expect(analysis.transformUnits).toBeUndefined();
  });

  it("accepts ALL as the output of filter and orderby units only", () => {
    const orderby = {
      verb: "orderby",
      code: "SELECT * FROM df ORDER BY x",
      mapping: [[["x"], "ALL"]],
    };
    expect(
      parseAnalysis(bladeAnalysis({ transform_code: "", transform_units: [orderby] }), "a")
        .transformUnits?.[0]?.verb,
    ).toBe("orderby");
    for (const verb of ["derive", "impute", "groupby"]) {
      const bad = { verb, code: "SELECT * FROM df", mapping: [[["x"], "ALL"]] };
      const error = submissionError(() =>
        parseAnalysis(bladeAnalysis({ transform_code: "", transform_units: [units[0], bad] }), "s"),
      );
      expectOneLine(error, "s: ", "transform_units[1].mapping[0][1]", '"ALL"', verb);
    }
  });

  it("refuses both transform_code and transform_units, naming the field", () => {
    const error = submissionError(() =>
      parseAnalysis(bladeAnalysis({ transform_units: units }), "sub"),
    );
    expectOneLine(error, "sub: transform_units", "either");
  });

  it("names the missing field: cvars.controls, cvars.dv, m_code", () => {
    const noControls = bladeAnalysis();
    delete (noControls.cvars as Record<string, unknown>).controls;
    expectOneLine(
      submissionError(() => parseAnalysis(noControls, "x")),
      "x: cvars.controls",
    );
    const noDv = bladeAnalysis();
    delete (noDv.cvars as Record<string, unknown>).dv;
    expectOneLine(
      submissionError(() => parseAnalysis(noDv, "x")),
      "x: cvars.dv",
    );
    const noModel = bladeAnalysis();
    delete noModel.m_code;
    expectOneLine(
      submissionError(() => parseAnalysis(noModel, "x")),
      "x: m_code",
    );
  });

  it("refuses a control without is_moderator, an unknown verb, empty unit code or column", () => {
    const value = bladeAnalysis();
    const controls = (value.cvars as { controls: Record<string, unknown>[] }).controls;
    delete (controls[0] as Record<string, unknown>).is_moderator;
    expectOneLine(
      submissionError(() => parseAnalysis(value, "x")),
      "cvars.controls[0].is_moderator",
    );
    const unknownVerb = { verb: "pivot", code: "SELECT 1", mapping: [] };
    expectOneLine(
      submissionError(() =>
        parseAnalysis(bladeAnalysis({ transform_code: "", transform_units: [unknownVerb] }), "x"),
      ),
      "transform_units[0].verb",
    );
    const emptyCode = { verb: "derive", code: "", mapping: [] };
    expectOneLine(
      submissionError(() =>
        parseAnalysis(bladeAnalysis({ transform_code: "", transform_units: [emptyCode] }), "x"),
      ),
      "transform_units[0].code",
    );
    const emptyColumn = bladeAnalysis();
    (emptyColumn.cvars as { ivs: Record<string, unknown>[] }).ivs[0] = {
      description: "d",
      columns: [""],
    };
    expectOneLine(
      submissionError(() => parseAnalysis(emptyColumn, "x")),
      "cvars.ivs[0].columns[0]",
    );
  });

  it("says non-JSON text is not JSON, in one line", () => {
    expectOneLine(
      submissionError(() => parseAnalysisText("{cvars: oops}", "submission")),
      "submission: not JSON",
    );
  });

  it("keeps the not-JSON message to one line when the text near the error has a newline", () => {
    // JSON.parse quotes the text near the error; a newline there must not split the line.
    expectOneLine(
      submissionError(() => parseAnalysisText("not json\n{", "submission")),
      "submission: not JSON",
    );
  });
});

describe("parseSubmissionFile", () => {
  it("reads BLADE's DatasetSubmission: dataset name and one analysis per run", () => {
    const file = JSON.stringify({
      dataset_name: "tutoring",
      analyses: [bladeAnalysis(), bladeAnalysis({ transform_code: "", transform_units: units })],
    });
    const submission = parseSubmissionFile(file, "sub.json");
    expect(submission.datasetName).toBe("tutoring");
    expect(submission.analyses).toHaveLength(2);
    expect(submission.analyses[0]?.transformUnits).toBeUndefined();
    expect(submission.analyses[1]?.transformUnits).toHaveLength(2);
    expect(submission.analyses[0]).toEqual(parseAnalysis(bladeAnalysis(), "x"));
  });

  it("reads a bare list of analyses with an empty dataset name", () => {
    const submission = parseSubmissionFile(JSON.stringify([bladeAnalysis()]), "list.json");
    expect(submission).toEqual({
      datasetName: "",
      analyses: [parseAnalysis(bladeAnalysis(), "x")],
    });
    expect(parseSubmissionFile("[]", "list.json")).toEqual({ datasetName: "", analyses: [] });
  });

  it("names the analysis by its index and the field, in a bare list too", () => {
    const broken = bladeAnalysis();
    delete (broken.cvars as Record<string, unknown>).controls;
    const file = JSON.stringify({ dataset_name: "tutoring", analyses: [bladeAnalysis(), broken] });
    expectOneLine(
      submissionError(() => parseSubmissionFile(file, "sub.json")),
      "sub.json: analyses[1]: cvars.controls",
    );
    const list = JSON.stringify([broken]);
    expectOneLine(
      submissionError(() => parseSubmissionFile(list, "l.json")),
      "l.json: analyses[0]: cvars.controls",
    );
    const allOnDerive = bladeAnalysis({
      transform_code: "",
      transform_units: [{ verb: "derive", code: "SELECT * FROM df", mapping: [[["x"], "ALL"]] }],
    });
    const withAll = JSON.stringify({ dataset_name: "t", analyses: [allOnDerive] });
    expectOneLine(
      submissionError(() => parseSubmissionFile(withAll, "s.json")),
      "s.json: analyses[0]: transform_units[0].mapping[0][1]",
      "not derive",
    );
    const both = JSON.stringify({
      dataset_name: "t",
      analyses: [bladeAnalysis(), bladeAnalysis(), bladeAnalysis({ transform_units: units })],
    });
    expectOneLine(
      submissionError(() => parseSubmissionFile(both, "s.json")),
      "s.json: analyses[2]: transform_units",
    );
  });

  it("refuses an empty or missing dataset_name, missing analyses, and other JSON", () => {
    const empty = JSON.stringify({ dataset_name: "", analyses: [bladeAnalysis()] });
    expectOneLine(
      submissionError(() => parseSubmissionFile(empty, "s.json")),
      "s.json: dataset_name must not be empty",
    );
    expectOneLine(
      submissionError(() =>
        parseSubmissionFile(JSON.stringify({ analyses: [bladeAnalysis()] }), "s.json"),
      ),
      "s.json: dataset_name",
    );
    expectOneLine(
      submissionError(() => parseSubmissionFile(JSON.stringify({ dataset_name: "t" }), "s.json")),
      "s.json: analyses",
    );
    expectOneLine(
      submissionError(() => parseSubmissionFile('"just a string"', "s.json")),
      "s.json: ",
    );
  });

  it("refuses a file that is not JSON, in one line", () => {
    expectOneLine(
      submissionError(() => parseSubmissionFile("dataset_name: tutoring", "s.json")),
      "s.json: not JSON",
    );
  });

  it("keeps the not-JSON message of a file ending in a newline to one line", () => {
    // A file's text has newlines; JSON.parse's message quotes it.
    expectOneLine(
      submissionError(() => parseSubmissionFile("not json\n", "s.json")),
      "s.json: not JSON",
    );
  });
});

describe("analysisJson", () => {
  it("round-trips an analysis with code through BLADE's JSON", () => {
    const analysis = parseAnalysis(bladeAnalysis(), "a");
    const json = analysisJson(analysis);
    expect(json).not.toHaveProperty("transform_units");
    expect(json).not.toHaveProperty("m_spec");
    expect(json.transform_code).toBe(analysis.transformCode);
    expect(parseAnalysisText(JSON.stringify(json), "again")).toEqual(analysis);
  });

  it("round-trips units, m_spec and moderators, writing snake_case keys", () => {
    const analysis = parseAnalysis(
      bladeAnalysis({ transform_code: "", transform_units: units, m_spec: "OLS" }),
      "a",
    );
    const json = analysisJson(analysis);
    expect(json.m_spec).toBe("OLS");
    expect((json.transform_units as Record<string, unknown>[])[0]).toEqual({
      verb: "filter",
      code: "SELECT * FROM df WHERE prior_score IS NOT NULL",
      mapping: [[["prior_score"], "ALL"]],
      groupby_cols: [],
    });
    const controls = (json.cvars as { controls: Record<string, unknown>[] }).controls;
    expect(controls[1]).toEqual({
      description: "Income",
      columns: ["household_income"],
      is_moderator: true,
      moderator_on: "tutoring",
    });
    expect(parseAnalysis(JSON.parse(JSON.stringify(json)), "again")).toEqual(analysis);
  });
});

describe("codeInsideFunction (BLADE §5)", () => {
  it("takes the transform function's body up to its first top-level return, df as parameter", () => {
    const code = [
      "import numpy as np",
      "",
      "def transform(data):",
      "    data = data.dropna(subset=['x'])",
      "    if len(data) > 10:",
      "        return data.head(10)",
      "    data['y'] = np.log(data['x'])",
      "    return data",
      "    data['z'] = 1",
      "",
      "result = transform(df)",
    ].join("\n");
    expect(codeInsideFunction(code, "transform", true)).toBe(
      [
        "df = df.dropna(subset=['x'])",
        "if len(df) > 10:",
        "    return df.head(10)",
        "df['y'] = np.log(df['x'])",
      ].join("\n"),
    );
  });

  it("renames only the parameter, not names that merely contain it", () => {
    const code = "def transform(d):\n    d['dd'] = d['x'] * 2\n    dx = d.shape\n    return d\n";
    expect(codeInsideFunction(code, "transform", true)).toBe(
      "df['dd'] = df['x'] * 2\ndx = df.shape",
    );
  });

  it("keeps the code as is when no function's name contains the word", () => {
    const plain = "df = df.dropna()\ndf['z'] = df['x'] + 1\n";
    expect(codeInsideFunction(plain, "transform", true)).toBe(plain);
    const helperOnly = "def clean(data):\n    return data.dropna()\n\ndf = clean(df)\n";
    expect(codeInsideFunction(helperOnly, "transform", true)).toBe(helperOnly);
    // A transform function is not a model function, and the other way round.
    const transform = "def transform(data):\n    data = data.dropna()\n    return data\n";
    expect(codeInsideFunction(transform, "model", false)).toBe(transform);
    const model = "def fit_model(d):\n    m = smf.ols('y ~ x', data=d).fit()\n    return m\n";
    expect(codeInsideFunction(model, "transform", true)).toBe(model);
  });

  it("matches names that contain the word, and keeps the model's parameter name", () => {
    const model = "def fit_model(d):\n    m = smf.ols('y ~ x', data=d).fit()\n    return m\n";
    expect(codeInsideFunction(model, "model", false)).toBe("m = smf.ols('y ~ x', data=d).fit()");
    const named = "def my_transform_step(df):\n    df = df.dropna()\n    return df\n";
    expect(codeInsideFunction(named, "transform", true)).toBe("df = df.dropna()");
  });

  it("uses the first function defined, as BLADE does, even when it is a helper", () => {
    const code = [
      "def helper(frame):",
      "    frame = frame.fillna(0)",
      "    return frame",
      "",
      "def transform(df):",
      "    df = helper(df)",
      "    return df",
    ].join("\n");
    const body = codeInsideFunction(code, "transform", true);
    expect(body).toMatch(/^\w+ = \w+\.fillna\(0\)$/);
    expect(body).not.toContain("helper");
  });

  it("reads a signature spread over lines, with annotations", () => {
    const annotated = [
      "def transform(data: pd.DataFrame,",
      "              k: int = 3) -> pd.DataFrame:",
      "    data = data.head(k)",
      "    return data",
    ].join("\n");
    expect(codeInsideFunction(annotated, "transform", true)).toBe("df = df.head(k)");
  });

  it("renames the parameter of a signature whose parameters start on the next line", () => {
    const code = [
      "def transform(",
      "    data,",
      "    extra=1,",
      "):",
      "    data = data.dropna()",
      "    return data",
    ].join("\n");
    expect(codeInsideFunction(code, "transform", true)).toBe("df = df.dropna()");
  });

  it("leaves string literals alone when renaming (BLADE renames Name nodes only)", () => {
    const code = "def transform(data):\n    data['source'] = 'data'\n    return data\n";
    expect(codeInsideFunction(code, "transform", true)).toBe("df['source'] = 'data'");
  });

  it("reads a body with a comment at column 0 (Python ignores a comment's indentation)", () => {
    const code = [
      "def transform(data):",
      "# keep rows with a score",
      "    data = data.dropna(subset=['score'])",
      "    return data",
    ].join("\n");
    expect(codeInsideFunction(code, "transform", true)).toBe("df = df.dropna(subset=['score'])");
  });
});
