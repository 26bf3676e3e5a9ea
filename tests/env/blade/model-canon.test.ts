import { describe, expect, it } from "vitest";
import {
  canonicalFromCall,
  canonicalFromFitted,
  canonicalModel,
  compareModels,
  compareModelTexts,
  ModelVocabularyError,
  modelVocabulary,
  parseModelVocabulary,
} from "../../../src/env/blade/model-canon.js";
import { parseModelCall } from "../../../src/env/blade/model-formula.js";
import type { FittedModel } from "../../../src/env/blade/runtime/types.js";

describe("canonicalModel", () => {
  it("reduces common specifications to family, link and kind", () => {
    expect(canonicalModel("Logistic regression")).toEqual({
      kind: "glm",
      family: "binomial",
      link: "logit",
    });
    expect(canonicalModel("Binomial GLM with logit link")).toEqual({
      kind: "glm",
      family: "binomial",
      link: "logit",
    });
    expect(canonicalModel("OLS")).toEqual({ kind: "glm", family: "gaussian", link: "identity" });
    expect(canonicalModel("Multiple linear regression")).toEqual({
      kind: "glm",
      family: "gaussian",
      link: "identity",
    });
    expect(canonicalModel("Poisson regression")).toEqual({
      kind: "glm",
      family: "poisson",
      link: "log",
    });
    expect(canonicalModel("Negative binomial regression")).toEqual({
      kind: "glm",
      family: "negativebinomial",
      link: "log",
    });
    expect(canonicalModel("Linear mixed effects model")).toEqual({
      kind: "mixed",
      family: "gaussian",
      link: "identity",
    });
    expect(canonicalModel("Mixed-effects logistic regression")).toEqual({
      kind: "mixed",
      family: "binomial",
      link: "logit",
    });
    expect(canonicalModel("Ordinal logistic regression")).toEqual({
      kind: "ordinal",
      family: "ordinal",
      link: "logit",
    });
    expect(canonicalModel("Chi-squared test")).toEqual({ kind: "test", test: "chi-squared" });
    expect(canonicalModel("χ² test")).toEqual({ kind: "test", test: "chi-squared" });
    expect(canonicalModel("t-test")).toEqual({ kind: "test", test: "t-test" });
    expect(canonicalModel("Spearman rank correlation")).toEqual({
      kind: "test",
      test: "correlation/spearman",
    });
    expect(canonicalModel("Welch's t-test")).toEqual({ kind: "test", test: "t-test/welch" });
  });

  it("leaves anything not fully understood to the judge", () => {
    for (const text of [
      "",
      "Regression",
      "GLM",
      "Logistic regression with robust standard errors",
      "Linear regression with fixed effects for region",
      "Weighted least squares",
      "Quasi-Poisson regression",
      "Zero-inflated Poisson model",
      "Log-linear regression",
      "Ordinal regression",
      "Logistic regression and probit regression",
      "Logistic regression with identity link",
    ]) {
      // (the last two contradict themselves: an undecided, not a guess)
      expect(canonicalModel(text), text).toBeUndefined();
    }
  });
});

describe("compareModels on specifications", () => {
  it("says same for equivalent wordings", () => {
    expect(compareModelTexts("Logistic regression", "Binomial GLM with logit link")).toBe("same");
    expect(compareModelTexts("Logistic regression", "binomial generalized linear model")).toBe(
      "same",
    );
    expect(compareModelTexts("OLS", "Linear regression")).toBe("same");
    expect(compareModelTexts("Gaussian GLM with identity link", "Multiple linear regression")).toBe(
      "same",
    );
    expect(compareModelTexts("Probit regression", "Binomial GLM with probit link")).toBe("same");
    expect(compareModelTexts("Spearman correlation", "Spearman's rho")).toBe("same");
  });

  it("says different for decided, different models", () => {
    expect(compareModelTexts("Logistic regression", "Linear regression")).toBe("different");
    expect(compareModelTexts("Logistic regression", "Probit regression")).toBe("different");
    expect(compareModelTexts("Poisson regression", "Negative binomial regression")).toBe(
      "different",
    );
    expect(compareModelTexts("Linear mixed effects model", "Linear regression")).toBe("different");
    expect(compareModelTexts("Ordinal logistic regression", "Logistic regression")).toBe(
      "different",
    );
    expect(compareModelTexts("Chi-squared test", "t-test")).toBe("different");
    expect(compareModelTexts("Spearman correlation", "Pearson correlation")).toBe("different");
  });

  it("stays undecided where equivalences cross kinds or names are general", () => {
    expect(compareModelTexts("t-test", "Linear regression")).toBe("undecided");
    expect(compareModelTexts("Chi-squared test", "Logistic regression")).toBe("undecided");
    expect(compareModelTexts("t-test", "Paired t-test")).toBe("undecided");
    expect(compareModelTexts("Correlation", "Spearman correlation")).toBe("undecided");
    expect(compareModelTexts("Logistic regression", "Regression")).toBe("undecided");
  });
});

describe("code-derived forms", () => {
  const fitted = (over: Partial<FittedModel>): FittedModel => ({
    family: "binomial",
    link: "logit",
    dv: "y",
    terms: ["Intercept", "C(g)[T.b]", "C(g)[T.c]", "x", "x:z"],
    params: {},
    stdErrors: {},
    pValues: {},
    observations: 10,
    ...over,
  });

  it("matches a call with its fitted model and with the words", () => {
    const call = canonicalFromCall(parseModelCall("logit(y ~ x + C(g) + z:x)"));
    const model = canonicalFromFitted(fitted({}));
    expect(model.terms).toEqual(["C(g)", "x", "x:z"]);
    expect(compareModels(call, model)).toBe("same");
    expect(compareModels(call, canonicalModel("Logistic regression"))).toBe("same");
    expect(compareModels(call, canonicalModel("Linear regression"))).toBe("different");
    expect(
      compareModels(
        canonicalFromCall(parseModelCall("ols(y ~ x)")),
        canonicalFromCall(parseModelCall("glm(y ~ x)")),
      ),
    ).toBe("same");
  });

  it("leaves different variables, and a fixed-alpha negative binomial, undecided", () => {
    const call = canonicalFromCall(parseModelCall("logit(y ~ x + C(g))"));
    expect(compareModels(call, canonicalFromFitted(fitted({})))).toBe("undecided");
    expect(compareModels(call, canonicalFromFitted(fitted({ dv: "w" })))).toBe("undecided");
    const glmNb = canonicalFromCall(parseModelCall("glm(n ~ x, family = negativebinomial)"));
    expect(compareModels(glmNb, canonicalModel("Negative binomial regression"))).toBe("undecided");
    expect(compareModels(glmNb, canonicalModel("Poisson regression"))).toBe("different");
  });
});

describe("vocabulary", () => {
  it("loads the shipped file", () => {
    expect(modelVocabulary().phrases.length).toBeGreaterThan(20);
  });

  it("rejects a malformed vocabulary with one line naming the field", () => {
    expect(() =>
      parseModelVocabulary(
        { fillers: [], phrases: [{ phrase: "Logistic", family: "binomial" }] },
        "v.json",
      ),
    ).toThrow(/^v\.json: phrases\.0\.phrase: must be lower-case/);
    expect(() =>
      parseModelVocabulary(
        {
          fillers: [],
          phrases: [
            { phrase: "ols", kind: "glm" },
            { phrase: "ols", kind: "glm" },
          ],
        },
        "v.json",
      ),
    ).toThrow(ModelVocabularyError);
    expect(() =>
      parseModelVocabulary({ fillers: [], phrases: [{ phrase: "x" }] }, "v.json"),
    ).toThrow(/say something/);
  });
});
