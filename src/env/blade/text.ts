/**
 * The blade environment's static texts. Kept free of the data files, the runtimes and zod, so
 * that `clade envs` and the readers of stored runs load it for nothing.
 */
import type { EnvInfo } from "../types.js";
import { listBladeDatasets, OWN_DATASETS_DIR } from "./folders.js";
import type { RuntimeName } from "./runtime/types.js";

export const MAX_STEPS = 24;
/**
 * A run's score at or above this counts as a success: BLADE's weighted score of this one analysis
 * (coverage over this run alone), which only analyses that match most expert decisions reach.
 */
export const SUCCESS_SCORE = 0.5;
/** Rows of a dataset's columns shown as samples in the task text. */
export const SAMPLE_VALUES = 3;

export const INSTRUCTION = `You are a data scientist. You get a research question and a dataset \
(a table called df, with a description of every column). Explore the data by running code, then \
submit one complete analysis that answers the question.

Take exactly one action per turn:
Action: run: <code>
  Runs code on the data; state is kept between runs. The task says which language: Python \
(pandas as pd, numpy as np, statsmodels.api as sm, statsmodels.formula.api as smf; the data as \
df) or SQL (DuckDB; the data as table df).
Action: submit: <analysis as JSON>
  Ends the episode. The JSON object has:
  "cvars": {"ivs": [{"description", "columns"}], "dv": {"description", "columns"},
            "controls": [{"description", "columns", "is_moderator", "moderator_on"}]}
     the conceptual variables: independent variables, the dependent variable and the controls \
(a moderator is a control with is_moderator true and moderator_on naming what it moderates), \
each with the columns of the final data that stand for it;
  "transform_code": the code that turns df into the data the model is fitted on (Python: \
statements on df; SQL: SELECT statements over df separated by ";", each result becoming the \
next df), or instead "transform_units": [{"verb", "code", "mapping", "groupby_cols"}] with verb \
one of derive, filter, groupby, deduplicate, impute, rollup, orderby and mapping a list of \
[[input columns], output column] ("ALL" as output for filter and orderby);
  "m_code": the model. Python: statsmodels code on df, e.g. \
smf.logit('y ~ x + z', data=df).fit(). SQL: one call such as logit(y ~ x + z), ols(y ~ x), \
poisson(y ~ x + C(group)) or glm(y ~ x, family = binomial, link = probit);
  "m_spec": optional, the model in words (e.g. "Logistic regression").

The analysis is matched decision by decision to several expert analyses: the variables you \
choose, each transformation (by the values it produces and by the shape of its data flow) and \
the model. The reward is BLADE's score of your one analysis (0 to 1).`;

export const BLADE_INFO: EnvInfo = {
  name: "blade",
  version: "1.0.0",
  description:
    "Data-driven science (after BLADE): answer a research question from a dataset by exploring " +
    "it with code (embedded SQL or Python with pandas), then submitting variables, transforms " +
    "and a statistical model, matched to expert analyses.",
  instruction: INSTRUCTION,
  splits: { train: { start: 0, end: 0 }, test: { start: 0, end: 0 } },
  successThreshold: SUCCESS_SCORE,
  maxSteps: MAX_STEPS,
};

const OWN_DATASET_COUNT = listBladeDatasets(OWN_DATASETS_DIR).length;

/** The built-in environment's metadata: clade's own datasets on the embedded SQL engine. */
export const OWN_BLADE_INFO: EnvInfo = {
  ...BLADE_INFO,
  splits: {
    train: { start: OWN_DATASET_COUNT, end: OWN_DATASET_COUNT },
    test: { start: 0, end: OWN_DATASET_COUNT },
  },
};

export const RUNTIME_LABEL: Record<RuntimeName, string> = {
  python: "Python (pandas, numpy, statsmodels; the data as df)",
  sql: "SQL (DuckDB; the data as table df)",
};

export const invalidActionText = (reason: string) =>
  `Invalid action: ${reason}. Use "run: <code>" or "submit: <analysis JSON>".`;

export const OUT_OF_STEPS_TEXT =
  "Out of steps: the episode ended without a submitted analysis (score 0).";

export const stepsLeftText = (left: number) =>
  left === 1
    ? "1 step left: submit your analysis now."
    : left <= 3
      ? `${left} steps left.`
      : undefined;
