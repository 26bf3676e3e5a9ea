/**
 * Rubrics: the built-ins load and validate, JSON files are checked field by field with one line
 * naming the file and the field, Markdown files are taken as prose, and renderRubric gives the
 * judge's Markdown sections (optional ones only when present).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  BUILTIN_RUBRICS,
  DEFAULT_RUBRIC,
  isBuiltinRubric,
  loadRubricFile,
  parseRubric,
  type Rubric,
  RubricError,
  renderRubric,
  resolveRubric,
} from "../../../src/eval/goals/rubric.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-rubric-"));
});

function write(name: string, content: string | object): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function rubricError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RubricError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("expected a RubricError");
}

const MINIMAL = {
  name: "shop",
  goals: [{ name: "order status", definition: "The user asks where an order is." }],
  quality_standards: ["Give the status the tool returned."],
};

describe("built-in rubrics", () => {
  it("load, validate and name themselves; generic is the default", () => {
    expect(BUILTIN_RUBRICS).toEqual(["generic", "helpdesk"]);
    expect(DEFAULT_RUBRIC).toBe("generic");
    for (const name of BUILTIN_RUBRICS) {
      const rubric = resolveRubric(name);
      expect(rubric.format).toBe("json");
      expect(rubric.name).toBe(name);
      if (rubric.format !== "json") throw new Error("unreachable");
      expect(rubric.goals.length).toBeGreaterThan(0);
      expect(rubric.quality_standards.length).toBeGreaterThan(0);
    }
    expect(resolveRubric()).toEqual(resolveRubric("generic"));
  });

  it("helpdesk names its sub-agents' goals and renders every section", () => {
    const rubric = resolveRubric("helpdesk");
    if (rubric.format !== "json") throw new Error("expected JSON");
    expect(rubric.goals.map((g) => g.name)).toEqual([
      "policy question",
      "leave balance",
      "leave request",
      "IT ticket",
      "out of domain",
    ]);
    const text = renderRubric(rubric);
    for (const heading of [
      "## The assistant",
      "## Goals users come with",
      "## When a new goal starts",
      "## Quality standards",
    ]) {
      expect(text).toContain(heading);
    }
    expect(text).toContain("- **leave request**: The employee wants to book leave.");
    expect(text).toContain(
      '  - e.g. "I\'d like to take annual leave from 2026-12-21 to 2026-12-24."',
    );
    expect(text).not.toContain("## Notes");
  });

  it("tells built-in names from paths", () => {
    expect(isBuiltinRubric("generic")).toBe(true);
    expect(isBuiltinRubric("helpdesk")).toBe(true);
    expect(isBuiltinRubric("generic.json")).toBe(false);
    expect(isBuiltinRubric("./helpdesk")).toBe(false);
  });
});

describe("JSON rubric files", () => {
  it("load with every optional field", () => {
    const path = write("shop.json", {
      ...MINIMAL,
      domain: "A shop's assistant.",
      segmentation: "A new order number starts a goal.",
      notes: "Be strict.",
      goals: [{ ...MINIMAL.goals[0], examples: ["Where is order 12?"] }],
    });
    const rubric = resolveRubric(path);
    expect(rubric).toEqual({
      format: "json",
      name: "shop",
      domain: "A shop's assistant.",
      goals: [
        {
          name: "order status",
          definition: "The user asks where an order is.",
          examples: ["Where is order 12?"],
        },
      ],
      segmentation: "A new order number starts a goal.",
      quality_standards: ["Give the status the tool returned."],
      notes: "Be strict.",
    });
    // Any extension other than Markdown's is read as JSON.
    expect(loadRubricFile(write("shop.rubric", MINIMAL)).name).toBe("shop");
  });

  it.each<[string, object, string]>([
    ["no goals", { ...MINIMAL, goals: [] }, "goals: a rubric needs at least one goal"],
    [
      "no standards",
      { ...MINIMAL, quality_standards: [] },
      "quality_standards: a rubric needs at least one standard",
    ],
    ["a blank name", { ...MINIMAL, name: "  " }, "name: name must not be empty"],
    [
      "a blank definition",
      { ...MINIMAL, goals: [{ name: "x", definition: "" }] },
      "goals.0.definition: definition must not be empty",
    ],
    [
      "a blank example",
      { ...MINIMAL, goals: [{ name: "x", definition: "y", examples: [" "] }] },
      "goals.0.examples.0: an example must not be empty",
    ],
    [
      "a blank standard",
      { ...MINIMAL, quality_standards: ["ok", ""] },
      "quality_standards.1: a standard must not be empty",
    ],
  ])("refuse %s, naming the file and the field", (_, value, expected) => {
    const path = write("bad.json", value);
    expect(rubricError(() => loadRubricFile(path))).toBe(`${path}: ${expected}`);
  });

  it("refuse unknown keys (a typo is not silently ignored)", () => {
    const path = write("typo.json", { ...MINIMAL, quality_standard: ["x"] });
    const message = rubricError(() => loadRubricFile(path));
    expect(message).toMatch(new RegExp(`^${path}: \\(top level\\): `));
    expect(message).toContain("quality_standard");
    const goalTypo = write("goal-typo.json", {
      ...MINIMAL,
      goals: [{ name: "x", definition: "y", example: ["z"] }],
    });
    expect(rubricError(() => loadRubricFile(goalTypo))).toMatch(/: goals\.0: .*example/);
  });

  it("refuse a file that is not JSON, pointing prose to .md", () => {
    const path = write("prose.json", "# My rubric\nBe nice.");
    const message = rubricError(() => loadRubricFile(path));
    expect(message).toMatch(new RegExp(`^${path}: not JSON \\(`));
    expect(message).toContain("a prose rubric needs a .md file");
  });

  it("refuse a missing file in one line", () => {
    const path = join(dir, "missing.json");
    expect(rubricError(() => resolveRubric(path))).toMatch(
      new RegExp(`^${path}: cannot read: .*ENOENT`),
    );
  });

  it("parseRubric names the source it is given", () => {
    expect(() => parseRubric({ name: "x" }, "config rubric")).toThrow(/^config rubric: goals: /);
    expect(parseRubric(MINIMAL, "x")).toEqual({ format: "json", ...MINIMAL });
  });
});

describe("Markdown rubric files", () => {
  it("are taken as prose, trimmed, named by the file", () => {
    for (const name of ["expert.md", "expert.markdown", "expert.txt"]) {
      const path = write(name, "\n\n# Expert rubric\n\nA goal is one need.\n\n");
      expect(loadRubricFile(path)).toEqual({
        format: "markdown",
        name: "expert",
        text: "# Expert rubric\n\nA goal is one need.",
      });
    }
  });

  it("are recognised whatever the extension's case, the name without it", () => {
    const path = write("Expert.MD", "Standards.");
    expect(loadRubricFile(path)).toEqual({
      format: "markdown",
      name: "Expert",
      text: "Standards.",
    });
  });

  it("render as they are", () => {
    const rubric = loadRubricFile(write("r.md", "## Goals\n- anything"));
    expect(renderRubric(rubric)).toBe("## Goals\n- anything");
  });

  it("refuse an empty file", () => {
    const path = write("empty.md", " \n\t\n");
    expect(rubricError(() => loadRubricFile(path))).toBe(`${path}: the rubric is empty`);
  });
});

describe("renderRubric", () => {
  it("gives the sections in order, examples under their goal", () => {
    const rubric: Rubric = {
      format: "json",
      name: "shop",
      domain: "  A shop's assistant.  ",
      goals: [
        { name: "status", definition: "Where is my order.", examples: ["Where is 12?", "And 13?"] },
        { name: "refund", definition: "Money back." },
      ],
      segmentation: "A new order starts a goal.",
      quality_standards: ["Be right.", "Be grounded."],
      notes: "Strict.",
    };
    expect(renderRubric(rubric)).toBe(
      [
        "## The assistant",
        "A shop's assistant.",
        "",
        "## Goals users come with",
        "- **status**: Where is my order.",
        '  - e.g. "Where is 12?"',
        '  - e.g. "And 13?"',
        "- **refund**: Money back.",
        "",
        "## When a new goal starts",
        "A new order starts a goal.",
        "",
        "## Quality standards",
        "- Be right.",
        "- Be grounded.",
        "",
        "## Notes",
        "Strict.",
      ].join("\n"),
    );
  });

  it("leaves out optional sections that are absent or blank", () => {
    const rubric: Rubric = {
      format: "json",
      ...MINIMAL,
      domain: "   ",
      segmentation: "",
      notes: " ",
    };
    expect(renderRubric(rubric)).toBe(
      [
        "## Goals users come with",
        "- **order status**: The user asks where an order is.",
        "",
        "## Quality standards",
        "- Give the status the tool returned.",
      ].join("\n"),
    );
  });
});
