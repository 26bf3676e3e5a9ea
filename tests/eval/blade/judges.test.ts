/**
 * BLADE's model roles on ScriptedModel: the conceptual-variable judge (one question per role
 * group of the ground truth, pairs mapped back to both lists, the ≥ 8 threshold, roles absent
 * from the ground truth not counted), the model judge (rules first, the judge only for what they
 * leave undecided, duplicates in the ground truth), the transform splitter and the model
 * describer; every role sends unusable answers back with the reason, errors when they stay
 * unusable or the provider fails, and sums its spend through the model layer.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type ModelComparator, uniqueModels } from "../../../src/env/blade/model-match.js";
import type { AgentCvars, ConceptualVarSpec, FieldInfo } from "../../../src/env/blade/specs.js";
import { checkPairs } from "../../../src/eval/blade/answer-loop.js";
import {
  cvarQuestionPrompt,
  type DatasetForJudging,
  datasetSchema,
  judgeCvars,
} from "../../../src/eval/blade/cvar-judge.js";
import { describeModel } from "../../../src/eval/blade/model-describer.js";
import { judgeModels, ModelMatchError } from "../../../src/eval/blade/model-judge.js";
import {
  loadPrompt,
  PROMPT_NAMES,
  PromptError,
  parsePromptTemplate,
  renderPrompt,
} from "../../../src/eval/blade/prompts.js";
import { splitTransformCodeByModel } from "../../../src/eval/blade/transform-splitter.js";
import { type Judge, JudgeError } from "../../../src/eval/goals/judge.js";
import { createModelClient } from "../../../src/model/client.js";
import type { ResolvedModel } from "../../../src/model/resolve.js";
import type { Model } from "../../../src/model/types.js";
import { ScriptedModel } from "../../../src/testing/scripted-model.js";

const judge = (client: Model): Judge => ({ label: "blade judge", model: client.id, client });

/** A reply: a line of reasoning, then the answer in a ```json block. */
const reply = (value: unknown, reasoning = "Looking at both lists."): string =>
  `${reasoning}\n\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\``;

async function judgeError(run: Promise<unknown>): Promise<JudgeError> {
  try {
    await run;
  } catch (error) {
    expect(error).toBeInstanceOf(JudgeError);
    return error as JudgeError;
  }
  throw new Error("expected a JudgeError, but the call succeeded");
}

const field = (column: string, description: string): FieldInfo => ({
  column,
  description,
  dtype: "number",
  properties: { samples: [1, 2, 3], num_unique_values: 3, semantic_type: "" },
});

const DATASET: DatasetForJudging = {
  questions: ["Does fertility change religiosity?", "A second question"],
  description: "A survey of women.",
  fields: [field("Cycle", "cycle day"), field("Rel1", "religiosity item 1")],
  fieldNames: ["Cycle", "Rel1"],
  rowCount: 275,
};

function gtVar(
  role: ConceptualVarSpec["role"],
  concept: string,
  extra: Partial<ConceptualVarSpec> = {},
): ConceptualVarSpec {
  return {
    specId: concept,
    role,
    concept,
    interaction: false,
    on: "",
    rationale: "",
    columnsOrig: [],
    columnsDerived: [],
    columnsDerivedSpecIds: [],
    annotator: "expert",
    ...extra,
  };
}

// Ground truth: IV ×2, DV, a moderator; no plain control.
const GT = [
  gtVar("IV", "fertility"),
  gtVar("DV", "religiosity"),
  gtVar("IV", "cycle length"),
  gtVar("Control", "relationship", { interaction: true, on: "fertility" }),
];

const AGENT: AgentCvars = {
  ivs: [
    { description: "fertility window", columns: ["high_fertility"] },
    { description: "days since period", columns: ["Cycle"] },
  ],
  dv: { description: "mean religiosity", columns: ["rel_mean"] },
  controls: [
    { description: "age", columns: ["Age"], isModerator: false, moderatorOn: "" },
    { description: "partnered", columns: ["rel"], isModerator: true, moderatorOn: "fertility" },
  ],
};

describe("prompt templates", () => {
  it("every built-in template loads and has both parts", () => {
    for (const name of PROMPT_NAMES) {
      const template = loadPrompt(name);
      expect(template.system.length, name).toBeGreaterThan(50);
      expect(template.user).toMatch(/\{\{\w+\}\}/);
      // The editors' note above the markers is not sent.
      expect(template.system).not.toContain("Placeholders");
    }
  });

  it("fills placeholders once, and refuses a missing or unused value", () => {
    const template = parsePromptTemplate(
      "note\n<!-- system -->\nYou judge {{what}}.\n<!-- user -->\n{{code}}",
      "t.md",
    );
    expect(renderPrompt(template, { what: "models", code: "x = '{{what}}'" })).toEqual({
      system: "You judge models.",
      user: "x = '{{what}}'",
    });
    expect(() => renderPrompt(template, { what: "x" })).toThrow(
      new PromptError("t.md: no value for {{code}}"),
    );
    expect(() => renderPrompt(template, { what: "x", code: "", extra: "" })).toThrow(
      "t.md: no placeholder for extra",
    );
    expect(() => parsePromptTemplate("<!-- user -->\n<!-- system -->", "u.md")).toThrow(
      'u.md: needs a "<!-- system -->" line, then a "<!-- user -->" line',
    );
  });
});

describe("checkPairs", () => {
  const schema = z.object({ rationale: z.string() });
  it("reads keys leniently and rejects what names no listed pair", () => {
    expect(
      checkPairs(
        { " a2 - b1 ": { rationale: "r" }, "A1-B1": { rationale: "s" } },
        { a: 2, b: 1 },
        schema,
      ),
    ).toEqual([
      { a: 2, b: 1, key: " a2 - b1 ", value: { rationale: "r" } },
      { a: 1, b: 1, key: "A1-B1", value: { rationale: "s" } },
    ]);
    expect(() => checkPairs([], { a: 1, b: 1 }, schema)).toThrow("one JSON object of pairs");
    expect(() => checkPairs({ "1-2": {} }, { a: 1, b: 2 }, schema)).toThrow(
      'key "1-2": expected the form "A<number>-B<number>"',
    );
    expect(() => checkPairs({ "A0-B1": { rationale: "" } }, { a: 1, b: 1 }, schema)).toThrow(
      'key "A0-B1": A0 is not listed (A1..A1)',
    );
    expect(() => checkPairs({ "A1-B2": { rationale: "" } }, { a: 1, b: 1 }, schema)).toThrow(
      'key "A1-B2": B2 is not listed (B1 only)',
    );
    expect(() =>
      checkPairs(
        { "A1-B1": { rationale: "" }, "a1-b1": { rationale: "" } },
        { a: 1, b: 1 },
        schema,
      ),
    ).toThrow('key "a1-b1": the pair is named twice');
    expect(() => checkPairs({ "A1-B1": {} }, { a: 1, b: 1 }, schema)).toThrow(
      /^key "A1-B1": rationale: /,
    );
  });
});

describe("judgeCvars", () => {
  it("asks once per role group the agent has, maps pairs back and applies the threshold", async () => {
    const model = new ScriptedModel([
      // IV: A1 fertility, A2 cycle length; B1 fertility window, B2 days since period.
      reply({
        "A1-B1": { rationale: "both fertility", similarity: 9 },
        "A2-B2": { rationale: "related timing", similarity: 7 },
      }),
      // DV: A1 religiosity; B1 mean religiosity. A similarity given as text counts.
      reply({ "A1-B1": { rationale: "same construct", similarity: "8" } }),
      // Moderator.
      reply({}),
    ]);
    const got = await judgeCvars(judge(model), DATASET, GT, AGENT, {
      params: { temperature: 0 },
    });
    expect(got.pairs).toEqual([
      { gtIndex: 0, agentIndex: 0, role: "IV", similarity: 9, rationale: "both fertility" },
      { gtIndex: 2, agentIndex: 1, role: "IV", similarity: 7, rationale: "related timing" },
      { gtIndex: 1, agentIndex: 2, role: "DV", similarity: 8, rationale: "same construct" },
    ]);
    // 7 is below the threshold: cycle length is not matched.
    expect(got.matchedGt).toEqual(["IV: fertility", "DV: religiosity"]);
    expect(got.matchedAgent).toEqual(["IV: fertility window.", "DV: mean religiosity."]);
    // The plain control (age) is of a role absent from the ground truth: not counted.
    expect(got.agentJudgedCount).toBe(4);
    expect(got.gtCount).toBe(4);
    expect(got.roles).toEqual(["IV", "DV", "Moderator"]);
    expect(got.method).toBe("judge");
    expect(got.questions.map((q) => [q.role, q.gtIndices, q.agentIndices, q.answers])).toEqual([
      ["IV", [0, 2], [0, 1], 1],
      ["DV", [1], [2], 1],
      ["Moderator", [3], [4], 1],
    ]);
    expect(got.spend).toMatchObject({ calls: 3, unpriced: true });

    // What the IV question carried: the first research question, the schema without
    // semantic_type, ground-truth texts as A and agent texts as B.
    const [first] = model.requests;
    expect(first?.params).toEqual({ temperature: 0 });
    expect(first?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    const user = first?.messages[1]?.content ?? "";
    expect(user).toBe(
      cvarQuestionPrompt(
        DATASET,
        "IV",
        ["IV: fertility", "IV: cycle length"],
        ["IV: fertility window.", "IV: days since period."],
      ).user,
    );
    expect(user).toContain("Research question: Does fertility change religiosity?");
    expect(user).toContain('{\n  "1": "IV: fertility",\n  "2": "IV: cycle length"\n}');
    expect(user).toContain('"2": "IV: days since period."');
    expect(user).toContain(datasetSchema(DATASET));
    expect(user).not.toContain("semantic_type");
    expect(user).not.toContain("{{");
    const third = model.requests[2]?.messages[1]?.content ?? "";
    expect(third).toContain('"1": "Moderator: relationship interacting with fertility variable"');
    expect(third).toContain('"1": "Moderator: partnered interacting with fertility variable"');
    model.assertDone();
  });

  it("gives the schema as BLADE's data_desc without semantic_type", () => {
    expect(JSON.parse(datasetSchema(DATASET))).toEqual({
      dataset_description: "A survey of women.",
      fields: [
        {
          column: "Cycle",
          properties: {
            dtype: "number",
            samples: [1, 2, 3],
            num_unique_values: 3,
            description: "cycle day",
          },
        },
        {
          column: "Rel1",
          properties: {
            dtype: "number",
            samples: [1, 2, 3],
            num_unique_values: 3,
            description: "religiosity item 1",
          },
        },
      ],
      num_rows: 275,
      field_names: ["Cycle", "Rel1"],
    });
  });

  it("asks nothing for a role group where the agent has no variable", async () => {
    const gt = [gtVar("IV", "fertility"), gtVar("Control", "age")];
    const agent: AgentCvars = {
      ivs: [{ description: "fertility", columns: [] }],
      dv: { description: "religiosity", columns: [] },
      controls: [],
    };
    const model = new ScriptedModel([reply({ "A1-B1": { rationale: "same", similarity: 10 } })]);
    const got = await judgeCvars(judge(model), DATASET, gt, agent);
    expect(model.requests).toHaveLength(1);
    expect(got.roles).toEqual(["IV", "Control"]);
    // The dv's role is absent from the ground truth: one judged variable.
    expect(got.agentJudgedCount).toBe(1);
    expect(got.matchedGt).toEqual(["IV: fertility"]);
    model.assertDone();
  });

  it("sends bad answers back with the reason, then takes the corrected one", async () => {
    const gt = [gtVar("IV", "fertility")];
    const agent: AgentCvars = { ...AGENT, controls: [] };
    const model = new ScriptedModel([
      reply({ "A3-B1": { rationale: "x", similarity: 9 } }),
      reply({ "A1-B1": { rationale: "x", similarity: 4 } }),
      reply({ "A1-B2": { rationale: "x", similarity: 10 } }),
    ]);
    const got = await judgeCvars(judge(model), DATASET, gt, agent);
    expect(got.questions[0]?.answers).toBe(3);
    expect(got.questions[0]?.rejected).toEqual([
      'key "A3-B1": A3 is not listed (A1..A1)',
      'key "A1-B1": similarity must be an integer from 5 to 10, got 4',
    ]);
    expect(got.pairs).toEqual([
      { gtIndex: 0, agentIndex: 1, role: "IV", similarity: 10, rationale: "x" },
    ]);
    expect(got.spend.calls).toBe(3);
    const last = model.requests[2]?.messages ?? [];
    expect(last.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    expect(last[3]?.content).toMatch(
      /^Your answer could not be used: key "A3-B1": A3 is not listed \(A1\.\.A1\)\. .*one JSON object of related pairs/,
    );
    model.assertDone();
  });

  it("errors, never scores 0, when answers stay unusable", async () => {
    const gt = [gtVar("DV", "religiosity")];
    const model = new ScriptedModel([
      "no JSON at all",
      reply({ "A1-B1": { rationale: "x", similarity: 11 } }),
    ]);
    const error = await judgeError(
      judgeCvars(judge(model), DATASET, gt, AGENT, { answerAttempts: 2 }),
    );
    expect(error.message).toBe(
      'blade judge, DV variables: no usable answer in 2 attempts (last: key "A1-B1": similarity must be an integer from 5 to 10, got 11)',
    );
    expect(error.rejected).toEqual([
      "the reply has no JSON object",
      'key "A1-B1": similarity must be an integer from 5 to 10, got 11',
    ]);
    expect(error.spend.calls).toBe(2);
    model.assertDone();
  });

  it("makes a provider error an error, with the spend of the groups already judged", async () => {
    const model = new ScriptedModel([reply({}), new Error("connection reset")]);
    const error = await judgeError(judgeCvars(judge(model), DATASET, GT, AGENT));
    expect(error.message).toBe("blade judge, DV variables: model call failed: connection reset");
    // The IV question's call; a plain Model's failed call carries no accounting (as in the goal
    // judge; through the client a FailedCallError does).
    expect(error.spend.calls).toBe(1);
    model.assertDone();
  });
});

/** A comparator from a table of agent-independent verdicts, recording what it was asked. */
function table(verdicts: Record<string, "same" | "different" | "undecided">) {
  const asked: [string, string][] = [];
  const compare: ModelComparator = (a, b) => {
    asked.push([a, b]);
    const verdict = verdicts[a];
    if (!verdict) throw new Error(`no verdict for ${a}`);
    return verdict;
  };
  return { compare, asked };
}

const spec = (specification: string) => ({ specification });

describe("judgeModels", () => {
  const GT_MODELS = [
    spec("Logistic regression"),
    spec("  logistic REGRESSION "),
    spec("Linear regression"),
    spec("Binomial GLM with logit link"),
    spec("GEE with exchangeable correlation"),
  ];

  it("de-duplicates the ground truth by normalised text, first kept, file order", () => {
    expect(uniqueModels(GT_MODELS)).toEqual([
      { text: "logistic regression", gtIndices: [0, 1] },
      { text: "linear regression", gtIndices: [2] },
      { text: "binomial glm with logit link", gtIndices: [3] },
      { text: "gee with exchangeable correlation", gtIndices: [4] },
    ]);
  });

  it("lets the rules decide without any model call", async () => {
    const model = new ScriptedModel([]);
    const { compare, asked } = table({
      "logistic regression": "same",
      "linear regression": "different",
      "binomial glm with logit link": "same",
      "gee with exchangeable correlation": "different",
    });
    const got = await judgeModels(judge(model), GT_MODELS, " Logit model", compare);
    expect(model.requests).toHaveLength(0);
    model.assertDone();
    // Each unique text asked once, against the normalised agent text.
    expect(asked).toEqual([
      ["logistic regression", "logit model"],
      ["linear regression", "logit model"],
      ["binomial glm with logit link", "logit model"],
      ["gee with exchangeable correlation", "logit model"],
    ]);
    expect(got.decisions.map((d) => [d.text, d.matched, d.by])).toEqual([
      ["logistic regression", true, "rules"],
      ["linear regression", false, "rules"],
      ["binomial glm with logit link", true, "rules"],
      ["gee with exchangeable correlation", false, "rules"],
    ]);
    // The duplicate of a matched text matches too.
    expect(got.matchedGtIndices).toEqual([0, 1, 3]);
    expect(got.judged).toBeNull();
    expect(got.spend.calls).toBe(0);
  });

  it("asks the judge only about what the rules leave undecided", async () => {
    const model = new ScriptedModel([
      reply({ "A2-B2": { rationale: "x" } }),
      reply({ "A2-B1": { rationale: "GEE with a logit link fits the same marginal model." } }),
    ]);
    const { compare } = table({
      "logistic regression": "undecided",
      "linear regression": "different",
      "binomial glm with logit link": "same",
      "gee with exchangeable correlation": "undecided",
    });
    const got = await judgeModels(judge(model), GT_MODELS, "GEE logistic", compare);
    const user = model.requests[0]?.messages[1]?.content ?? "";
    expect(user).toContain(
      '{\n  "1": "logistic regression",\n  "2": "gee with exchangeable correlation"\n}',
    );
    expect(user).toContain('{\n  "1": "gee logistic"\n}');
    // The model the rules decided is not asked about.
    expect(user.split("Models A:")[1]).not.toContain("linear regression");
    expect(got.judged?.rejected).toEqual(['key "A2-B2": B2 is not listed (B1 only)']);
    expect(got.decisions.map((d) => [d.text, d.matched, d.by, d.rationale])).toEqual([
      ["logistic regression", false, "judge", "judge: not equivalent"],
      ["linear regression", false, "rules", "rules: different models"],
      ["binomial glm with logit link", true, "rules", "rules: the same model"],
      [
        "gee with exchangeable correlation",
        true,
        "judge",
        "judge: GEE with a logit link fits the same marginal model.",
      ],
    ]);
    expect(got.matchedGtIndices).toEqual([3, 4]);
    expect(got.spend.calls).toBe(2);
    model.assertDone();
  });

  it("without a judge leaves undecided models unmatched and says so", async () => {
    const { compare } = table({
      "logistic regression": "undecided",
      "linear regression": "different",
      "binomial glm with logit link": "undecided",
      "gee with exchangeable correlation": "undecided",
    });
    const got = await judgeModels(null, GT_MODELS, "probit", compare);
    expect(got.decisions.map((d) => d.by)).toEqual(["none", "rules", "none", "none"]);
    expect(got.matchedGtIndices).toEqual([]);
  });

  it("errors on a provider failure and on an empty specification", async () => {
    const model = new ScriptedModel([new Error("HTTP 500")]);
    const { compare } = table({ "linear regression": "undecided" });
    const error = await judgeError(
      judgeModels(judge(model), [spec("Linear regression")], "OLS", compare),
    );
    expect(error.message).toBe("blade judge, models: model call failed: HTTP 500");
    await expect(judgeModels(null, [spec("x")], "  ", compare)).rejects.toThrow(ModelMatchError);
  });
});

describe("splitTransformCodeByModel", () => {
  const COLUMNS = ["age", "income", "region"];
  const CODE = "df = df[df.age >= 18]\ndf['log_income'] = np.log(df.income)";
  const filter = {
    verb: "filter",
    code: "df = df[df.age >= 18]",
    mapping: [[["age"], "ALL"]],
    groupby_cols: [],
  };
  const derive = {
    verb: "derive",
    code: "df['log_income'] = np.log(df.income)",
    mapping: [[["income"], "log_income"]],
  };

  it("returns the units", async () => {
    const model = new ScriptedModel([reply({ units: [filter, derive] })]);
    const got = await splitTransformCodeByModel(judge(model), CODE, COLUMNS);
    expect(got.units).toEqual([
      { verb: "filter", code: filter.code, mapping: [[["age"], "ALL"]], groupbyCols: [] },
      {
        verb: "derive",
        code: derive.code,
        mapping: [[["income"], "log_income"]],
        groupbyCols: [],
      },
    ]);
    const user = model.requests[0]?.messages[1]?.content ?? "";
    expect(user).toContain(`\`\`\`python\n${CODE}\n\`\`\``);
    expect(user).toContain('["age","income","region"]');
    model.assertDone();
  });

  it("sends back ALL outside filter/orderby, unknown inputs, empty outputs and bad verbs", async () => {
    const model = new ScriptedModel([
      reply({ units: [{ ...derive, mapping: [[["income"], "ALL"]] }] }),
      reply({ units: [{ ...derive, mapping: [[["salary"], "log_income"]] }] }),
      reply({ units: [filter, { ...derive, mapping: [[["income"], " "]] }] }),
      reply({ units: [{ ...filter, verb: "select" }] }),
      reply({
        units: [
          filter,
          derive,
          {
            verb: "groupby",
            code: "df_grp = df.groupby('region')",
            mapping: [],
            groupby_cols: ["region"],
          },
          {
            verb: "rollup",
            code: "df = df_grp.agg(m=('log_income', 'mean')).reset_index()",
            mapping: [[["log_income"], "m"]],
          },
        ],
      }),
    ]);
    const got = await splitTransformCodeByModel(judge(model), CODE, COLUMNS, {
      answerAttempts: 5,
    });
    expect(got.rejected).toEqual([
      'units.0.mapping.0: output "ALL" is for filter and orderby units only, not derive',
      'units.0.mapping.0: input "salary" is neither a column of the data nor an output of an earlier unit',
      "units.1.mapping.0: the output column must not be empty",
      expect.stringMatching(/^units\.0\.verb: /),
    ]);
    expect(got.units.map((u) => u.verb)).toEqual(["filter", "derive", "groupby", "rollup"]);
    // A later unit may use an earlier unit's output.
    expect(got.units[3]?.mapping).toEqual([[["log_income"], "m"]]);
    expect(got.units[2]?.groupbyCols).toEqual(["region"]);
    model.assertDone();
  });

  it("errors when the answers stay unusable", async () => {
    const groupbyWithoutKeys = { verb: "groupby", code: "g = df.groupby('region')", mapping: [] };
    const model = new ScriptedModel([
      reply({ units: [groupbyWithoutKeys] }),
      reply({ units: [{ ...derive, code: "x = 1" }] }),
    ]);
    const error = await judgeError(
      splitTransformCodeByModel(judge(model), CODE, COLUMNS, { answerAttempts: 2 }),
    );
    expect(error.rejected).toEqual([
      "units.0.groupby_cols: a groupby unit names its key columns",
      "units.0.code: must work on `df`",
    ]);
    expect(error.message).toMatch(/^blade judge, transform units: no usable answer in 2 attempts/);
  });
});

describe("describeModel", () => {
  const CODE =
    "import statsmodels.formula.api as smf\nm = smf.logit('y ~ x + C(g)', data=df).fit()";

  it("returns the specification and the columns, names outside the frame apart", async () => {
    const model = new ScriptedModel([
      reply({ specification: "", columns: ["y"] }),
      reply({ specification: "Logistic regression", columns: ["y", "x", "g", "x", "const"] }),
    ]);
    const got = await describeModel(judge(model), CODE, ["y", "x", "g", "z"]);
    expect(got).toMatchObject({
      specification: "Logistic regression",
      columns: ["y", "x", "g"],
      unknownColumns: ["const"],
      answers: 2,
      rejected: ["specification: the specification must not be empty"],
    });
    expect(model.requests[0]?.messages[1]?.content).toContain('["y","x","g","z"]');
    model.assertDone();
  });

  it("takes every named column when the frame is not known", async () => {
    const model = new ScriptedModel([
      reply({ specification: "Logistic regression", columns: ["y", "x"] }),
    ]);
    const got = await describeModel(judge(model), CODE, []);
    expect(got.columns).toEqual(["y", "x"]);
    expect(got.unknownColumns).toEqual([]);
    expect(model.requests[0]?.messages[1]?.content).toContain('"(not known)"');
  });
});

/** $1 per input token and $2 per output token: costs are exact sums of usage. */
const PRICED: ResolvedModel = {
  name: "judge",
  spec: { provider: "openai", model: "judge" },
  params: {},
  price: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 },
  stream: false,
};

describe("through the model client", () => {
  it("sums priced usage over a judgement's questions and sent-back answers", async () => {
    const usage = { inputTokens: 10, outputTokens: 5 };
    const provider = new ScriptedModel([
      { content: "thinking", usage },
      { content: reply({}), usage },
      { content: reply({}), usage },
      { content: reply({}), usage },
    ]);
    const client = createModelClient(
      PRICED,
      { retry: { baseDelayMs: 1, maxDelayMs: 2 } },
      provider,
    );
    const got = await judgeCvars(judge(client), DATASET, GT, AGENT);
    expect(got.questions.map((q) => q.answers)).toEqual([2, 1, 1]);
    expect(got.spend).toMatchObject({
      calls: 4,
      usage: { inputTokens: 40, outputTokens: 20 },
      costUsd: 80,
      unpriced: false,
      providerAttempts: 4,
    });
    provider.assertDone();
  });
});
