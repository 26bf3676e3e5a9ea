import { describe, expect, it } from "vitest";
import {
  canonicalLink,
  ModelFormulaError,
  parseModelCall,
} from "../../../src/env/blade/model-formula.js";

const parse = (code: string) => {
  const { method, family, link, dv, terms, intercept } = parseModelCall(code);
  return { method, family, link, dv, terms, intercept };
};

describe("parseModelCall", () => {
  it("reads the fixed-family calls", () => {
    expect(parse("ols(y ~ x + z)")).toEqual({
      method: "ols",
      family: "gaussian",
      link: "identity",
      dv: "y",
      terms: ["x", "z"],
      intercept: true,
    });
    expect(parse("logit(y ~ x + C(g) + x:z)")).toMatchObject({
      family: "binomial",
      link: "logit",
      terms: ["x", "C(g)", "x:z"],
    });
    expect(parse("probit(y ~ x)")).toMatchObject({ family: "binomial", link: "probit" });
    expect(parse("poisson(n ~ x)")).toMatchObject({ family: "poisson", link: "log" });
    expect(parse("negativebinomial(n ~ x)")).toMatchObject({
      family: "negativebinomial",
      link: "log",
    });
  });

  it("reads glm with family and link, defaulting to the canonical link", () => {
    expect(parse("glm(y ~ x + z, family = binomial, link = probit)")).toMatchObject({
      method: "glm",
      family: "binomial",
      link: "probit",
    });
    expect(parse("glm(y ~ x, family = Poisson())")).toMatchObject({
      family: "poisson",
      link: "log",
    });
    expect(parse("glm(y ~ x)")).toMatchObject({ family: "gaussian", link: "identity" });
  });

  it("expands * and parentheses like patsy, each term once", () => {
    expect(parse("ols(y ~ a*b)").terms).toEqual(["a", "b", "a:b"]);
    expect(parse("ols(y ~ a*b*c)").terms).toEqual(["a", "b", "a:b", "c", "a:c", "b:c", "a:b:c"]);
    expect(parse("ols(y ~ (a + b):c)").terms).toEqual(["a:c", "b:c"]);
    expect(parse("ols(y ~ x + z + x:z + z:x)").terms).toEqual(["x", "z", "x:z"]);
    expect(parse("ols(y ~ a*C(g) - a)").terms).toEqual(["C(g)", "a:C(g)"]);
    expect(parse("ols(y ~ a:a)").terms).toEqual(["a"]);
  });

  it("drops and restores the intercept", () => {
    expect(parse("ols(y ~ x - 1)").intercept).toBe(false);
    expect(parse("ols(y ~ x + 0)").intercept).toBe(false);
    expect(parse("ols(y ~ 0 + x)").intercept).toBe(false);
    expect(parse("ols(y ~ -1 + x)").intercept).toBe(false);
    expect(parse("ols(y ~ x - 1 + 1)").intercept).toBe(true);
    expect(parse("ols(y ~ x - 1)").terms).toEqual(["x"]);
  });

  it("takes backtick-quoted names, a quoted formula and statsmodels' spelling", () => {
    expect(parse("ols(`my y` ~ `a b` + C(`g 1`))")).toMatchObject({
      dv: "my y",
      terms: ["a b", "C(g 1)"],
    });
    expect(parse('smf.logit("y ~ x + C(g)", data=df)')).toMatchObject({
      method: "logit",
      terms: ["x", "C(g)"],
    });
  });

  it("refuses transforms with a pointer to transform units", () => {
    expect(() => parseModelCall("ols(y ~ log(x))")).toThrow(
      /unknown function log\(\).*transform unit/,
    );
    expect(() => parseModelCall("ols(y ~ I(x))")).toThrow(ModelFormulaError);
    expect(() => parseModelCall("ols(log(y) ~ x)")).toThrow(/dependent variable must be a column/);
  });

  it("gives one line naming where the problem is", () => {
    const messages = [
      "ols(y ~ x +)",
      "ols(y x)",
      "lm(y ~ x)",
      "glm(y ~ x, family = gamma)",
      "glm(y ~ x, family = poisson, link = probit)",
      "logit(y ~ x, family = binomial)",
      "ols(y ~ C(g, Sum))",
      "ols(y ~ x) extra",
      "ols(y ~ x + y)",
      "ols(y ~ x:1)",
      "ols(y ~ x**2)",
    ].map((code) => {
      try {
        parseModelCall(code);
        return "parsed";
      } catch (error) {
        expect(error).toBeInstanceOf(ModelFormulaError);
        return (error as Error).message;
      }
    });
    for (const message of messages) {
      expect(message).toMatch(/^model call (at column \d+|at the end): /);
      expect(message).not.toContain("\n");
    }
    expect(messages[0]).toContain("at column 12: expected a column name");
    expect(messages[2]).toContain('unknown model "lm"');
    expect(messages[3]).toContain('unknown family "gamma"');
    expect(messages[4]).toContain('link "probit" is not available for family poisson');
    expect(messages[5]).toContain("fixed family");
    expect(messages[6]).toContain("C() takes one column");
    expect(messages[8]).toContain("also appears on the right-hand side");
  });
});

describe("canonicalLink", () => {
  it("is statsmodels' default link", () => {
    expect(canonicalLink("gaussian")).toBe("identity");
    expect(canonicalLink("binomial")).toBe("logit");
    expect(canonicalLink("poisson")).toBe("log");
    expect(canonicalLink("negativebinomial")).toBe("log");
  });
});
