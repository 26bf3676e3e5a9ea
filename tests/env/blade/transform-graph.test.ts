import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBladeDataset } from "../../../src/env/blade/dataset.js";
import {
  ROOT_SPEC_ID,
  type TransformSpec,
  type TransformUnit,
  type TransformVerb,
} from "../../../src/env/blade/specs.js";
import {
  agentTransforms,
  type ColumnGraph,
  graphKey,
  groundTruthTransforms,
  isIsomorphic,
} from "../../../src/env/blade/transform-graph.js";
import {
  BladeTransformError,
  type BranchChoice,
  conditionHolds,
  DiGraph,
  leafSpecIds,
  pathScripts,
  processGroupbyCode,
  rewritePostGroupby,
  transformPaths,
} from "../../../src/env/blade/transform-paths.js";
import { fakeHash, fakeRun, keepRows, withColumn } from "../../fixtures/blade/toy/fake-runtime.js";

const TOY = join(import.meta.dirname, "../../fixtures/blade/toy");
const dataset = readBladeDataset(TOY);
const transforms = dataset.groundTruth.transforms;
const ID = {
  F1: "a1f0c2d4e6b8409a9c1d2e3f40516273",
  D1: "b2e1d3c5f7a9418b8d2e3f4051627384",
  I1: "c3d2e4f6a8b0429c9e3f405162738495",
  D2: "d4c3f5a7b9c1430d8f40516273849506",
  G1: "e5b4a6c8d0e2441e9051627384950617",
  R1: "f6a5b7d9e1f3452f8162738495061728",
  DD: "0a7b6c8e0f2446308273849506172839",
};
const nameOf = new Map(transforms.map((t) => [t.specId, t.specName]));
const names = (ids: string[]) => ids.map((id) => nameOf.get(id) ?? id);

function spec(
  id: string,
  verb: TransformVerb | undefined,
  branches: string[][],
  extra: Partial<TransformSpec> = {},
): TransformSpec {
  return {
    specId: id,
    specName: id,
    specification: "",
    verb,
    code: `# ${id}`,
    rationale: "",
    mapping: [],
    branches: branches.map((dependencies) => ({ dependencies, condition: "" })),
    annotator: "",
    ...extra,
  };
}
const root = spec(ROOT_SPEC_ID, undefined, [], { specName: "ROOT", code: "" });

describe("paths through the ground truth's spec DAG", () => {
  const paths = transformPaths(transforms);

  it("finds the leaf specs in graph order", () => {
    expect(names(leafSpecIds(transforms))).toEqual([
      "score_features",
      "mean_score_by_group",
      "drop_duplicate_rows",
    ]);
  });

  it("makes one path per leaf and branch choice, alternatives first, serialising joins", () => {
    expect(paths.map((p) => names(p.order))).toEqual([
      ["ROOT", "adults_only", "log_income", "impute_income", "score_features"],
      ["ROOT", "log_income", "impute_income", "score_features"],
      ["ROOT", "adults_only", "by_group", "mean_score_by_group"],
      ["ROOT", "drop_duplicate_rows"],
    ]);
    expect(paths[0]?.branchChoices).toEqual(new Map([[ID.D1, 1]]));
    expect(paths[1]?.branchChoices).toEqual(new Map([[ID.D1, 0]]));
    // score_features has two parents; BLADE chains them (sorted by id): impute now follows log_income.
    const serial = paths[1]?.graph;
    expect(serial?.predecessors(ID.D2)).toEqual([ID.I1]);
    expect(serial?.predecessors(ID.I1)).toEqual([ID.D1]);
    expect(serial?.predecessors(ID.D1)).toEqual([ROOT_SPEC_ID]);
  });

  it("drops paths that end in a groupby", () => {
    const specs = [
      root,
      spec("g", "groupby", [[ROOT_SPEC_ID]]),
      spec("d", "derive", [[ROOT_SPEC_ID]]),
    ];
    expect(transformPaths(specs).map((p) => p.leafId)).toEqual(["d"]);
  });

  it("truncates a path at a branch whose condition fails", () => {
    // x picks one of two parents; y may follow x only where x took parent b.
    const specs = [
      root,
      spec("a", "derive", [[ROOT_SPEC_ID]]),
      spec("b", "derive", [[ROOT_SPEC_ID]]),
      spec("x", "derive", [["a"], ["b"]]),
      {
        ...spec("y", "derive", [["x"]]),
        branches: [{ dependencies: ["x"], condition: "'b' in x" }],
      },
    ];
    const orders = transformPaths(specs).map((p) => p.order);
    expect(orders).toEqual([
      [ROOT_SPEC_ID, "b", "x", "y"],
      [ROOT_SPEC_ID, "a", "x"],
    ]);
  });

  it("rewrites the children of a groupby to post_groupby, carrying over to later paths", () => {
    const verbs = new Map(transforms.map((t) => [t.specId, t.verb]));
    rewritePostGroupby(paths[0] as (typeof paths)[0], verbs);
    expect(verbs.get(ID.R1)).toBe("rollup");
    rewritePostGroupby(paths[2] as (typeof paths)[0], verbs);
    expect(verbs.get(ID.R1)).toBe("post_groupby");
    expect(verbs.get(ID.G1)).toBe("groupby");
    expect([...verbs.values()].filter((v) => v === "post_groupby")).toHaveLength(1);
  });

  it("builds cumulative scripts, renaming earlier groupby assignments", () => {
    const scripts = pathScripts(paths[2] as (typeof paths)[0], transforms);
    expect(scripts.map((s) => nameOf.get(s.specId))).toEqual([
      "adults_only",
      "by_group",
      "mean_score_by_group",
    ]);
    expect(scripts[1]?.script).toBe("df = df[df['age'] >= 18]\ndf_g = df.groupby('group')");
    expect(scripts[2]?.script).toBe(
      "df = df[df['age'] >= 18]\ndf_g_grp = df.groupby('group')\ndf = df_g_grp.agg(mean_score=('score', 'mean')).reset_index()",
    );
  });

  it("builds SQL scripts from code_sql, joined by semicolons", () => {
    const specs = [
      root,
      spec("f", "filter", [[ROOT_SPEC_ID]], { codeSql: "SELECT * FROM df WHERE age >= 18;" }),
      spec("d", "derive", [["f"]], { codeSql: "SELECT *, ln(income) AS li FROM df" }),
    ];
    const [path] = transformPaths(specs);
    expect(
      pathScripts(path as NonNullable<typeof path>, specs, "sql").map((s) => s.script),
    ).toEqual([
      "SELECT * FROM df WHERE age >= 18",
      "SELECT * FROM df WHERE age >= 18;\nSELECT *, ln(income) AS li FROM df",
    ]);
    const missing = [root, spec("f", "filter", [[ROOT_SPEC_ID]])];
    const [other] = transformPaths(missing);
    expect(() => pathScripts(other as NonNullable<typeof other>, missing, "sql")).toThrow(
      "transform spec f (f) has no code_sql",
    );
  });
});

describe("BLADE's branch conditions", () => {
  const history = new Map<string, BranchChoice>([
    ["pick", { deps: ["alpha", "beta"], index: 1 }],
    ["other", { deps: ["gamma"], index: 0 }],
  ]);
  it.each([
    ["'alpha' in pick", true],
    ["'gamma' in pick", false],
    ["'gamma' not in pick and 'gamma' in other", true],
    ["pick.index == 1", true],
    ["pick.index == 0 or other.index == 0", true],
    ["not (pick.index == 1)", false],
    ["pick.index >= 1 and pick.index < 2", true],
    // A list never equals a string in Python.
    ["pick == 'alpha'", false],
    // A spec name that is not a multi-branch spec chosen so far: satisfied.
    ["'alpha' in later_spec", true],
    // Parse and evaluation errors: not satisfied.
    ["'alpha' in pick and", false],
    ["pick == 1", false], // a number on the right needs `.index` on the left
    ["pick < 'x'", false], // list < str raises TypeError
    ["'alpha in pick", false],
    ["pick.size == 1", false],
    ["pick & other", false],
  ])("%s → %s", (condition, expected) => {
    expect(conditionHolds(condition, history)).toBe(expected);
  });

  it("replaces spec ids by names first", () => {
    const specs = [spec("3fa0", "derive", [], { specName: "pick" })];
    expect(conditionHolds("'beta' in 3fa0", history, specs)).toBe(true);
  });
});

describe("processGroupbyCode", () => {
  it.each([
    ["df_g = df.groupby('group')", "df_g_grp = df.groupby('group')"],
    [
      "df = df.groupby(['a', 'b'], as_index=False)",
      "df_grp = df.groupby(['a', 'b'], as_index=False)",
    ],
    ["df_grp = df.groupby('a')", "df_grp = df.groupby('a')"],
    ["x = df.groupby('a')", "x = df.groupby('a')"],
    ["df_a = df.groupby('a').mean()", "df_a = df.groupby('a').mean()"],
    ["a = 1; df_b = df[df.x > 0].groupby('y')", "a = 1; df_b_grp = df[df.x > 0].groupby('y')"],
    [
      "if c:\n    df_c = df.groupby(\n        'x')\n",
      "if c:\n    df_c_grp = df.groupby(\n        'x')\n",
    ],
    ["df_d = x = df.groupby('a')  # note", "df_d_grp = x = df.groupby('a')  # note"],
    ["s = \"df_e = df.groupby('a')\"", "s = \"df_e = df.groupby('a')\""],
    [
      "df['m'] = df.groupby('a')['b'].transform('mean')",
      "df['m'] = df.groupby('a')['b'].transform('mean')",
    ],
  ])("%j", (code, expected) => {
    expect(processGroupbyCode(code)).toBe(expected);
  });
});

describe("the ground truth's transform states", () => {
  it("expands specs into one unit per output column, named as BLADE names them", async () => {
    const { run, calls } = fakeRun();
    const gt = await groundTruthTransforms(dataset, run, fakeHash);
    expect(calls).toHaveLength(1); // one batch, identical scripts once
    expect(new Set(calls[0]).size).toBe(calls[0]?.length);
    expect([...gt.expanded.values()].map((e) => [e.name, e.verb])).toEqual([
      ["ROOT", undefined],
      ["adults_only", "filter"],
      ["derive_log_income", "derive"],
      ["impute_", "impute"], // named before the empty output becomes "income"
      ["derive_score_z", "derive"],
      ["derive_high_score", "derive"],
      ["by_group", "groupby"],
      ["post_groupby_mean_score", "post_groupby"],
    ]);
    // The deduplicate spec maps nothing: no expanded node, its path has no states.
    expect([...gt.expanded.values()].some((e) => e.specId === ID.DD)).toBe(false);
    expect(gt.paths[3]?.states.size).toBe(0);
    expect(gt.expanded.get(`${ID.I1}__impute_`)?.mapping).toEqual([[["income"], "income"]]);
  });

  it("hangs a unit off a filter that is its only parent and hashes the column after it", async () => {
    const gt = await groundTruthTransforms(dataset, fakeRun().run, fakeHash);
    const [afterFilter, withoutFilter] = gt.paths;
    const viaFilter = `log_income__${ID.D1}__derive_log_income`;
    expect(afterFilter?.graph.predecessors(viaFilter)).toEqual([`income__${ID.F1}`]);
    expect(withoutFilter?.graph.predecessors(viaFilter)).toEqual([`income__${ROOT_SPEC_ID}`]);
    // Seven adults vs eight people: different values, different hashes.
    const a = afterFilter?.states.get(viaFilter)?.value;
    const b = withoutFilter?.states.get(viaFilter)?.value;
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(a).not.toBe(b);
    expect(gt.valueHashes.get(a as string)?.map((s) => s.pathIndex)).toEqual([0]);
    // ROOT columns carry no state; the filter's columns do.
    expect(afterFilter?.states.has(`age__${ROOT_SPEC_ID}`)).toBe(false);
    expect(afterFilter?.states.get(`age__${ID.F1}`)?.specId).toBe(ID.F1);
  });

  it("adds input edges from a filter's input columns to all its columns", async () => {
    const gt = await groundTruthTransforms(dataset, fakeRun().run, fakeHash);
    const path = gt.paths[0];
    const g = path?.graphWithInput as ColumnGraph;
    expect(g.edge(`age__${ROOT_SPEC_ID}`, `age__${ID.F1}`)).toBe("input + data");
    expect(g.edge(`age__${ROOT_SPEC_ID}`, `score__${ID.F1}`)).toBe("input");
    expect(g.edge(`score__${ROOT_SPEC_ID}`, `score__${ID.F1}`)).toBe("data");
    expect(path?.graph.hasEdge(`age__${ROOT_SPEC_ID}`, `score__${ID.F1}`)).toBe(false);
    expect(path?.graph.edge(`age__${ROOT_SPEC_ID}`, `age__${ID.F1}`)).toBe("data");
  });

  it("keeps a groupby's frame columns minus its keys, and starts post_groupby columns after it", async () => {
    const gt = await groundTruthTransforms(dataset, fakeRun().run, fakeHash);
    const path = gt.paths[2];
    const groupby = [...(path?.graph.nodes() ?? [])].filter((n) => n.endsWith(`__${ID.G1}`));
    expect(groupby.sort()).toEqual([
      `age__${ID.G1}`,
      `id__${ID.G1}`,
      `income__${ID.G1}`,
      `score__${ID.G1}`,
    ]);
    const mean = `mean_score__${ID.R1}__post_groupby_mean_score`;
    expect(path?.graph.predecessors(mean)).toEqual([`score__${ID.G1}`]);
    expect(path?.states.get(mean)?.col).toBe("mean_score");
  });

  it("groups isomorphic ancestor subgraphs under one key", async () => {
    const gt = await groundTruthTransforms(dataset, fakeRun().run, fakeHash);
    // score_z and high_score derive from score after the same steps: one group, two columns.
    const key = gt.paths[0]?.states.get(`score_z__${ID.D2}__derive_score_z`)?.graphKey as string;
    expect(gt.paths[0]?.states.get(`high_score__${ID.D2}__derive_high_score`)?.graphKey).toBe(key);
    expect(gt.graphGroups.get(key)?.states.map((s) => s.col)).toEqual(["score_z", "high_score"]);
  });

  it("names the spec whose script fails", async () => {
    const broken = readBladeDataset(TOY);
    const filter = broken.groundTruth.transforms.find((t) => t.specId === ID.F1) as TransformSpec;
    filter.code = "raise ValueError('boom')";
    await expect(groundTruthTransforms(broken, fakeRun().run, fakeHash)).rejects.toThrow(
      new BladeTransformError(
        `ground-truth transform spec adults_only (${ID.F1}) failed: NameError: cannot run "raise ValueError('boom')"`,
      ),
    );
  });

  it("fails as BLADE does when a derive spec leaves no frame", async () => {
    const broken = readBladeDataset(TOY);
    const derive = broken.groundTruth.transforms.find((t) => t.specId === ID.D1) as TransformSpec;
    derive.code = "df = df['score']";
    await expect(groundTruthTransforms(broken, fakeRun().run, fakeHash)).rejects.toThrow(
      /transform spec log_income \(b2e1.*\) left no data frame/,
    );
  });
});

describe("the agent's transform states", () => {
  const unit = (
    verb: TransformUnit["verb"],
    code: string,
    mapping: [string[], string][],
    groupbyCols: string[] = [],
  ) => ({ verb, code, mapping, groupbyCols }) as TransformUnit;
  const steps = {
    "df = df.sort_values('age')": (f: Parameters<ReturnType<typeof keepRows>>[0]) => ({
      ...f,
      rows: [...f.rows].sort((a, b) => (a.age as number) - (b.age as number)),
    }),
    "df['li'] = np.log(df['income'])": withColumn("li", (r) =>
      r.income === null ? null : Math.log(r.income as number),
    ),
    "df = df[df['income'].notna()]": keepRows((r) => r.income !== null),
  };

  it("chains the units after ROOT as node_<i>_<verb>, hashing each unit's whole frame", async () => {
    const { run, calls } = fakeRun(steps);
    const result = await agentTransforms(
      [
        unit("filter", "df = df[df['age'] >= 18]", [[["age"], "ALL"]]),
        unit("derive", "df['li'] = np.log(df['income'])", [
          [["income"], "li"],
          [["income"], "li"],
        ]),
        unit("orderby", "df = df.sort_values('age')", [[["age"], "ALL"]]),
      ],
      run,
      fakeHash,
      dataset.fieldNames,
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(calls[0]).toEqual([
      "df = df[df['age'] >= 18]",
      "df = df[df['age'] >= 18]\ndf['li'] = np.log(df['income'])",
      "df = df[df['age'] >= 18]\ndf['li'] = np.log(df['income'])\ndf = df.sort_values('age')",
    ]);
    const expanded = [...result.states.expanded.keys()];
    expect(expanded.slice(0, 3)).toEqual([
      "ROOT_SPEC_ID",
      "node_0_filter",
      "node_1_derive__derive_li",
    ]);
    // orderby → ALL: one unit per column of the unit's frame.
    expect(expanded.slice(3)).toEqual(
      ["id", "age", "income", "group", "score", "li"].map((c) => `node_2_orderby__orderby_${c}`),
    );
    // The filter's ALL output became "" and the filter stays one node.
    expect(result.specs[1]?.mapping).toEqual([[["age"], ""]]);
    // The derive unit hangs off the filter, its only parent.
    const g = result.states.paths[0]?.graph;
    expect(g?.predecessors("li__node_1_derive__derive_li")).toEqual(["income__node_0_filter"]);
    expect(result.states.paths).toHaveLength(1);
  });

  it("splits a groupby unit into node_<i>_groupby and node_<i>_post_groupby", async () => {
    const { run } = fakeRun();
    const result = await agentTransforms(
      [
        unit("filter", "df = df[df['age'] >= 18]", [[["age"], "ALL"]]),
        unit(
          "rollup",
          "df_g_grp = df.groupby('group')\ndf = df_g_grp.agg(mean_score=('score', 'mean')).reset_index()",
          [[["score"], "mean_score"]],
          ["group"],
        ),
      ],
      run,
      fakeHash,
      dataset.fieldNames,
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.specs.map((s) => [s.specId, s.verb, s.code === "" ? "" : "code"])).toEqual([
      [ROOT_SPEC_ID, undefined, ""],
      ["node_0_filter", "filter", "code"],
      ["node_1_groupby", "groupby", ""],
      ["node_1_post_groupby", "post_groupby", "code"],
    ]);
    expect([...result.states.expanded.values()].map((e) => e.name)).toEqual([
      "ROOT",
      "node_0_filter",
      "node_1_groupby",
      "post_groupby_mean_score",
    ]);
    const path = result.states.paths[0];
    expect(
      path?.graph.predecessors("mean_score__node_1_post_groupby__post_groupby_mean_score"),
    ).toEqual(["score__node_1_groupby"]);
    // The groupby node has no code and so no state.
    expect(path?.states.has("score__node_1_groupby")).toBe(false);
    expect(path?.states.has("mean_score__node_1_post_groupby__post_groupby_mean_score")).toBe(true);
  });

  it("joins SQL units with semicolons", async () => {
    const sqlCalls: string[][] = [];
    const run = async (scripts: readonly string[]) => {
      sqlCalls.push([...scripts]);
      return fakeRun().run(["df = df[df['age'] >= 18]"]);
    };
    await agentTransforms(
      [unit("filter", "SELECT * FROM df WHERE age >= 18;", [[["age"], "ALL"]])],
      run,
      fakeHash,
      dataset.fieldNames,
      {
        language: "sql",
      },
    );
    const two = await agentTransforms(
      [
        unit("filter", "SELECT 1;", [[["age"], "ALL"]]),
        unit("filter", "SELECT 2", [[["age"], "ALL"]]),
      ],
      async (scripts) => {
        sqlCalls.push([...scripts]);
        return await fakeRun().run(["df = df[df['age'] >= 18]", "df = df[df['age'] >= 18]"]);
      },
      fakeHash,
      dataset.fieldNames,
      { language: "sql" },
    );
    expect(two.ok).toBe(true);
    expect(sqlCalls).toEqual([
      ["SELECT * FROM df WHERE age >= 18"],
      ["SELECT 1", "SELECT 1;\nSELECT 2"],
    ]);
  });

  it.each([
    [
      "a unit that fails",
      [unit("derive", "df['x'] = boom()", [[["age"], "x"]])],
      "LM_SUBMISSION_EXECUTION_FAILED",
      /^transform unit 0 \(derive\) failed: NameError/,
    ],
    [
      "a unit that leaves a grouped object",
      [unit("derive", "df = df.groupby('group')", [[["age"], "age"]])],
      "LM_SUBMISSION_EXECUTION_FAILED",
      /^transform unit 0 \(derive\) leaves a grouped object, not a data frame$/,
    ],
    [
      "a mapped output missing from the frame",
      [unit("derive", "df = df[df['age'] >= 18]", [[["age"], "adult"]])],
      "LM_SUBMISSION_CONVERSION_FAILED",
      /maps to column "adult", which is not in the frame it leaves$/,
    ],
    [
      "an input column nothing holds",
      [unit("derive", "df['li'] = np.log(df['income'])", [[["wealth"], "li"]])],
      "LM_SUBMISSION_CONVERSION_FAILED",
      /reads column "wealth", which no earlier step holds$/,
    ],
    ["no units", [], "LM_SUBMISSION_TRANSFORM_CODE_EMPTY", /no transform units/],
  ] as [string, TransformUnit[], string, RegExp][])(
    "reports %s",
    async (_what, units, status, error) => {
      const result = await agentTransforms(units, fakeRun(steps).run, fakeHash, dataset.fieldNames);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.status).toBe(status);
      expect(result.error).toMatch(error);
    },
  );
});

describe("graph keys and isomorphism", () => {
  const graph = (nodes: [string, string][], edges: [string, string, string][]): ColumnGraph => {
    const g: ColumnGraph = new DiGraph();
    for (const [id, val] of nodes)
      g.addNode(id, { col: id, expandedId: id, expandedName: id, val });
    for (const [a, b, type] of edges) g.addEdge(a, b, type);
    return g;
  };
  const base = graph(
    [
      ["x__ROOT_SPEC_ID", "x__ROOT_SPEC_ID"],
      ["x__f", "filter"],
      ["d", "derive"],
    ],
    [
      ["x__ROOT_SPEC_ID", "x__f", "input + data"],
      ["x__f", "d", "data"],
    ],
  );

  it("gives isomorphic graphs one key, whatever their node ids and order", () => {
    const renamed = graph(
      [
        ["other_name", "derive"],
        ["x__ROOT_SPEC_ID", "x__ROOT_SPEC_ID"],
        ["flt", "filter"],
      ],
      [
        ["flt", "other_name", "data"],
        ["x__ROOT_SPEC_ID", "flt", "input + data"],
      ],
    );
    expect(isIsomorphic(base, renamed)).toBe(true);
    expect(graphKey(renamed)).toBe(graphKey(base));
  });

  it("tells apart other verbs, edge types and original columns", () => {
    const impute = graph(
      [
        ["x__ROOT_SPEC_ID", "x__ROOT_SPEC_ID"],
        ["x__f", "filter"],
        ["d", "impute"],
      ],
      [
        ["x__ROOT_SPEC_ID", "x__f", "input + data"],
        ["x__f", "d", "data"],
      ],
    );
    const dataOnly = graph(
      [
        ["x__ROOT_SPEC_ID", "x__ROOT_SPEC_ID"],
        ["x__f", "filter"],
        ["d", "derive"],
      ],
      [
        ["x__ROOT_SPEC_ID", "x__f", "data"],
        ["x__f", "d", "data"],
      ],
    );
    for (const other of [impute, dataOnly]) {
      expect(isIsomorphic(base, other)).toBe(false);
      expect(graphKey(other)).not.toBe(graphKey(base));
    }
  });

  it("counts a search past its step budget as not isomorphic", () => {
    // Two 7-node graphs of identical, unconnected nodes except for one edge placement: only
    // a search can tell, and a budget of one step cannot.
    const nodes = Array.from({ length: 7 }, (_, i) => [`n${i}`, "derive"] as [string, string]);
    const a = graph(nodes, [["n0", "n1", "data"]]);
    const b = graph(nodes, [["n5", "n6", "data"]]);
    expect(isIsomorphic(a, b)).toBe(true);
    expect(isIsomorphic(a, b, 1)).toBe(false);
  });
});
