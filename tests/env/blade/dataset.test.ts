import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  parseAnnotations,
  specNameFromSpecification,
  stripColumnPrefix,
} from "../../../src/env/blade/annotations.js";
import {
  BladeDatasetError,
  listBladeDatasets,
  readBladeDataset,
} from "../../../src/env/blade/dataset.js";
import { ROOT_SPEC_ID } from "../../../src/env/blade/specs.js";

const TOY = join(import.meta.dirname, "../../fixtures/blade/toy");
const ID = {
  F1: "a1f0c2d4e6b8409a9c1d2e3f40516273",
  D1: "b2e1d3c5f7a9418b8d2e3f4051627384",
  D2: "d4c3f5a7b9c1430d8f40516273849506",
  DD: "0a7b6c8e0f2446308273849506172839",
  CVAR_IV: "3d4e5f60718293a4b5c6d7e8f9011223",
};

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the toy dataset with one file's text changed. */
function brokenCopy(file: string, change: (text: string) => string | undefined): string {
  const root = mkdtempSync(join(tmpdir(), "blade-dataset-"));
  temps.push(root);
  const dir = join(root, "toy-copy");
  cpSync(TOY, dir, { recursive: true });
  const text = readFileSync(join(dir, file), "utf8");
  const changed = change(text);
  if (changed === undefined) rmSync(join(dir, file));
  else writeFileSync(join(dir, file), changed);
  return dir;
}

/** Replaces exactly one occurrence (so the tests notice a fixture that changed under them). */
function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from).length - 1).toBe(1);
  return text.replace(from, to);
}

function errorOf(dir: string): string {
  try {
    readBladeDataset(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(BladeDatasetError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("expected a BladeDatasetError");
}

describe("reading a BLADE dataset folder", () => {
  const dataset = readBladeDataset(TOY);

  it("reads info.json and data.csv's header", () => {
    expect(dataset.name).toBe("toy");
    expect(dataset.dataPath).toBe(join(TOY, "data.csv"));
    expect(dataset.questions).toEqual(["Does income raise test scores?", "Second question"]);
    expect(dataset.description).toBe("A toy dataset of eight people.");
    expect(dataset.fieldNames).toEqual(["id", "age", "income", "group", "score"]);
    expect(dataset.rowCount).toBe(8);
    expect(dataset.fields[3]).toEqual({
      column: "group",
      description: "treatment group",
      dtype: "category",
      properties: { samples: ["a", "b"], num_unique_values: 2 },
    });
    expect(dataset.trueEffect).toBeUndefined();
  });

  it("reads every transform spec with its branches, mapping and verb", () => {
    const { transforms } = dataset.groundTruth;
    expect(transforms.map((t) => t.specName)).toEqual([
      "ROOT",
      "adults_only",
      "log_income",
      "impute_income",
      "score_features",
      "by_group",
      "mean_score_by_group",
      "drop_duplicate_rows", // spec_name "" → from the specification, punctuation dropped
    ]);
    const root = transforms[0];
    expect(root).toMatchObject({
      specId: ROOT_SPEC_ID,
      verb: undefined,
      code: "",
      branches: [],
      mapping: [],
    });
    const logIncome = transforms.find((t) => t.specId === ID.D1);
    expect(logIncome?.branches).toEqual([
      { dependencies: [ROOT_SPEC_ID], condition: "" },
      { dependencies: [ID.F1], condition: "" },
    ]);
    expect(logIncome?.mapping).toEqual([[["income"], "log_income"]]);
    const scores = transforms.find((t) => t.specId === ID.D2);
    expect(scores?.verb).toBe("derive");
    expect(scores?.code).toContain("\n");
    expect(scores?.mapping.map(([, out]) => out)).toEqual(["score_z", "high_score"]);
    expect(transforms.find((t) => t.specId === ID.DD)?.mapping).toEqual([]);
  });

  it("strips the 🟨/🟩 prefixes from variable and model columns", () => {
    const { cvars, models } = dataset.groundTruth;
    // The annotate_cvar_spec_json row is ignored.
    expect(cvars).toHaveLength(3);
    const iv = cvars.find((c) => c.specId === ID.CVAR_IV);
    expect(iv).toMatchObject({
      role: "IV",
      concept: "income",
      columnsOrig: ["income"],
      columnsDerived: ["log_income"],
    });
    expect(iv?.columnsDerivedSpecIds).toEqual([ROOT_SPEC_ID, ID.D1]);
    expect(cvars.find((c) => c.role === "Control")).toMatchObject({
      interaction: true,
      on: "income",
      columnsDerived: [],
    });
    expect(models).toHaveLength(1);
    expect(models[0]).toMatchObject({
      specification: "Linear Regression",
      specName: "linear_regression",
      columnsOrig: ["age", "score"],
      columnsDerived: ["log_income"],
    });
  });

  it("names a spec from its specification the way BLADE does", () => {
    expect(specNameFromSpecification("Drop duplicate rows!")).toBe("drop_duplicate_rows");
    expect(
      specNameFromSpecification("one two three four five six seven eight nine ten eleven"),
    ).toBe("one_two_three_four_five_six_seven_eight_nine_ten_etc");
    expect(specNameFromSpecification("keep snake_case")).toBe("keep_snakecase");
    expect(stripColumnPrefix("\u{1F7E8} age")).toBe("age");
    expect(stripColumnPrefix("\u{1F7E9} log income")).toBe("log income");
    expect(stripColumnPrefix("age \u{1F7E8}")).toBe("age \u{1F7E8}");
  });

  it("reads clade's extensions: a true effect and code_sql", () => {
    const dir = brokenCopy("info.json", (text) => {
      const info = JSON.parse(text);
      info.clade = {
        true_effect: {
          iv: "income",
          dv: "score",
          direction: "positive",
          sizes: [{ family: "gaussian", link: "identity", value: 0.00004, tolerance: 0.00001 }],
          process: "score rises with income",
        },
      };
      return JSON.stringify(info);
    });
    const annotations = join(dir, "annotations.csv");
    writeFileSync(
      annotations,
      replaceOnce(
        readFileSync(annotations, "utf8"),
        `""code"": ""df = df[df['age'] >= 18]"",`,
        `""code"": ""df = df[df['age'] >= 18]"", ""code_sql"": ""SELECT * FROM df WHERE age >= 18"",`,
      ),
    );
    const read = readBladeDataset(dir);
    expect(read.trueEffect).toEqual({
      iv: "income",
      dv: "score",
      direction: "positive",
      sizes: [{ family: "gaussian", link: "identity", value: 0.00004, tolerance: 0.00001 }],
      process: "score rises with income",
    });
    const filter = read.groundTruth.transforms.find((t) => t.specId === ID.F1);
    expect(filter?.codeSql).toBe("SELECT * FROM df WHERE age >= 18");
    expect(read.groundTruth.transforms.find((t) => t.specId === ID.D1)?.codeSql).toBeUndefined();
  });

  it("names header fields the way pandas does", () => {
    const dir = brokenCopy("data.csv", (t) =>
      t.replace("id,age,income,group,score", ",age,income,age,score"),
    );
    const info = join(dir, "info.json");
    const json = JSON.parse(readFileSync(info, "utf8"));
    json.data_desc.field_names = ["Unnamed: 0", "age", "income", "age.1", "score"];
    writeFileSync(info, JSON.stringify(json));
    expect(readBladeDataset(dir).fieldNames).toEqual([
      "Unnamed: 0",
      "age",
      "income",
      "age.1",
      "score",
    ]);
  });

  it("converts BLADE's old list-of-lists branches", () => {
    const dir = brokenCopy("annotations.csv", (text) =>
      replaceOnce(
        text,
        `""branches"": [{""dependencies"": [""ROOT_SPEC_ID""], ""condition"": """"}, {""dependencies"": [""${ID.F1}""], ""condition"": """"}]`,
        `""branches"": [[""ROOT_SPEC_ID""], [""${ID.F1}""]]`,
      ),
    );
    const spec = readBladeDataset(dir).groundTruth.transforms.find((t) => t.specId === ID.D1);
    expect(spec?.branches).toEqual([
      { dependencies: [ROOT_SPEC_ID], condition: "" },
      { dependencies: [ID.F1], condition: "" },
    ]);
  });
});

describe("listing datasets", () => {
  it("lists folders other than toy that hold an annotations.csv, sorted", () => {
    const root = mkdtempSync(join(tmpdir(), "blade-root-"));
    temps.push(root);
    for (const name of ["zeta", "alpha", "toy", "no-annotations"]) {
      mkdirSync(join(root, name));
      if (name !== "no-annotations")
        writeFileSync(join(root, name, "annotations.csv"), "spec_id\n");
    }
    writeFileSync(join(root, "annotations.csv"), "a stray file\n");
    expect(listBladeDatasets(root)).toEqual(["alpha", "zeta"]);
  });

  it("names a folder it cannot list", () => {
    expect(() => listBladeDatasets("/nonexistent/blade")).toThrow(
      /\/nonexistent\/blade: cannot list/,
    );
  });
});

describe("bad dataset folders", () => {
  it.each(["info.json", "data.csv", "annotations.csv"])("names a missing %s", (file) => {
    const dir = brokenCopy(file, () => undefined);
    expect(errorOf(dir)).toBe(`${join(dir, file)}: no such file`);
  });

  it("names info.json that is not JSON or has a field of the wrong type", () => {
    expect(errorOf(brokenCopy("info.json", (t) => t.slice(0, 40)))).toMatch(/info\.json: not JSON/);
    expect(
      errorOf(
        brokenCopy("info.json", (t) =>
          replaceOnce(t, `"research_questions": [`, `"research_questions": "x", "r": [`),
        ),
      ),
    ).toMatch(/info\.json: research_questions: must be a list of questions$/);
    expect(
      errorOf(
        brokenCopy("info.json", (t) => replaceOnce(t, `"num_rows": 8`, `"num_rows": "eight"`)),
      ),
    ).toMatch(/info\.json: data_desc\.num_rows: must be a number$/);
  });

  it("names a header that disagrees with info.json", () => {
    const dir = brokenCopy("data.csv", (t) => t.replace("id,age", "id,years"));
    expect(errorOf(dir)).toMatch(
      /info\.json: data_desc\.field_names \(id, age, .*\) differ from the header of data\.csv \(id, years,/,
    );
  });

  it("names a true effect on an unknown column", () => {
    const dir = brokenCopy("info.json", (text) => {
      const info = JSON.parse(text);
      info.clade = { true_effect: { iv: "wealth", dv: "score", direction: "none" } };
      return JSON.stringify(info);
    });
    expect(errorOf(dir)).toMatch(
      /info\.json: clade\.true_effect\.iv: "wealth" is not a column of data\.csv$/,
    );
  });

  // Row numbers count data rows (the header is not a row): F1 is row 4, D1 row 5.
  const cases: [string, (text: string) => string, RegExp][] = [
    [
      "a cell that is not JSON",
      (t) => replaceOnce(t, `""spec_name"": ""adults_only""`, `""spec_name"": adults_only`),
      new RegExp(`annotations\\.csv row 4 \\(spec ${ID.F1}\\): transform_spec_json: not JSON`),
    ],
    [
      "dependencies that are not a list",
      (t) =>
        replaceOnce(
          t,
          `}, {""dependencies"": [""${ID.F1}""]`,
          `}, {""dependencies"": ""${ID.F1}""`,
        ),
      new RegExp(
        `annotations\\.csv row 5 \\(spec ${ID.D1}\\): transform_spec_json: branches\\[1\\]\\.dependencies: must be a list of spec ids$`,
      ),
    ],
    [
      "a dependency on an unknown spec id",
      (t) =>
        replaceOnce(t, `}, {""dependencies"": [""${ID.F1}""]`, `}, {""dependencies"": [""nope""]`),
      new RegExp(
        `row 5 \\(spec ${ID.D1}\\): transform_spec_json: branches\\[1\\]\\.dependencies\\[0\\]: no transform spec has the id "nope"$`,
      ),
    ],
    [
      "a verb outside BLADE's vocabulary",
      (t) => replaceOnce(t, `""trans_verb"": [""filter""]`, `""trans_verb"": [""join""]`),
      /row 4 \(spec a1f0c2d4e6b8409a9c1d2e3f40516273\): transform_spec_json: trans_verb\[0\]: "join" is not one of derive, filter,/,
    ],
    [
      "a spec without a verb",
      (t) => replaceOnce(t, `""trans_verb"": [""filter""]`, `""trans_verb"": []`),
      /row 4 .*: transform_spec_json: trans_verb must name at least one verb$/,
    ],
    [
      "a mapping of the wrong shape",
      (t) => replaceOnce(t, `[[[""age""], """"]]`, `[[""age"", """"]]`),
      /row 4 .*: transform_spec_json: input_cols_to_output_col_mapping\[0\]\[0\]: must be a list of column names$/,
    ],
    [
      "dependencies that form a cycle",
      (t) =>
        replaceOnce(
          t,
          `""branches"": [{""dependencies"": [""ROOT_SPEC_ID""], ""condition"": """"}]}",,,,\n${ID.D1}`,
          `""branches"": [{""dependencies"": [""${ID.D2}""], ""condition"": """"}]}",,,,\n${ID.D1}`,
        ),
      /transform_spec_json: branches: the dependencies form a cycle$/,
    ],
    [
      "a variable without a role",
      (t) =>
        replaceOnce(
          t,
          `""variable_type"": ""IV"", ""concept"": ""income""`,
          `""concept"": ""income""`,
        ),
      new RegExp(
        `row 12 \\(spec ${ID.CVAR_IV}\\): conceptual_spec_json: variable_type: must be IV, DV or Control$`,
      ),
    ],
    [
      "no ROOT spec",
      (t) => replaceOnce(t, `ROOT_SPEC_ID,,,"{""spec_name"": ""ROOT""}",,,,\n`, ""),
      /annotations\.csv: no row holds the ROOT_SPEC_ID transform spec$/,
    ],
    [
      "a row without a spec id",
      (t) => replaceOnce(t, `\n${ID.DD},`, `\n,`),
      /annotations\.csv row 10: spec_id: missing$/,
    ],
    [
      "two transform specs with one id",
      (t) => replaceOnce(t, `\n${ID.DD},`, `\n${ID.F1},`),
      new RegExp(
        `row 10 \\(spec ${ID.F1}\\): spec_id: another row already holds a transform spec with this id$`,
      ),
    ],
    [
      "a row with too many cells",
      (t) =>
        replaceOnce(
          t,
          `ROOT_SPEC_ID,,,"{""spec_name"": ""ROOT""}",,,,`,
          `ROOT_SPEC_ID,,,"{""spec_name"": ""ROOT""}",,,,,,`,
        ),
      /annotations\.csv: not a readable CSV/,
    ],
  ];
  it.each(cases)("names %s in annotations.csv", (_what, change, expected) => {
    expect(errorOf(brokenCopy("annotations.csv", change))).toMatch(expected);
  });

  it("parses annotations text on its own, naming the file given", () => {
    const text = readFileSync(join(TOY, "annotations.csv"), "utf8");
    expect(parseAnnotations(text).transforms).toHaveLength(8);
    expect(() => parseAnnotations("spec_id,transform_spec_json\nx,{}\n", "mine.csv")).toThrow(
      "mine.csv row 1 (spec x): transform_spec_json: trans_verb must name at least one verb",
    );
  });
});
