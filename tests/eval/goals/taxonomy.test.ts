import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  BUILTIN_TAXONOMIES,
  builtinTaxonomy,
  findCode,
  loadTaxonomyFile,
  parseTaxonomy,
  resolveTaxonomy,
  TaxonomyError,
  taxonomyCodes,
} from "../../../src/eval/goals/taxonomy.js";

const dir = mkdtempSync(join(tmpdir(), "clade-taxonomy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The error a call throws, checked to be a TaxonomyError of one line. */
function errorOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(TaxonomyError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("expected a TaxonomyError");
}

describe("built-in taxonomies", () => {
  it("RCOF is E1–E7 in order, with the reference's names", () => {
    const rcof = builtinTaxonomy("rcof");
    expect(taxonomyCodes(rcof)).toEqual(["E1", "E2", "E3", "E4", "E5", "E6", "E7"]);
    expect(findCode(rcof, "E1")?.name).toBe("Language understanding failure");
    expect(findCode(rcof, "E5")?.name).toBe("System error (timeout, truncation)");
    expect(findCode(rcof, "E6")?.name).toBe("Incorrect routing (multi-agent: wrong sub-agent)");
    expect(findCode(rcof, "E7")?.name).toBe("Out-of-domain query");
    expect(resolveTaxonomy()).toBe(rcof);
  });

  it("τ-bench is author × type, coded author/type", () => {
    const tau = builtinTaxonomy("tau");
    expect(tau.codes).toHaveLength(12);
    const types = ["wrong_tool", "wrong_argument", "goal_partially_completed", "other"];
    for (const author of ["user", "agent", "environment"]) {
      for (const type of types) {
        expect(findCode(tau, `${author}/${type}`)?.group).toBe(author);
      }
    }
  });

  it("MAST has 14 modes in 3 groups of 5, 6 and 3", () => {
    const mast = builtinTaxonomy("mast");
    expect(mast.codes).toHaveLength(14);
    const groups = new Map<string, string[]>();
    for (const c of mast.codes) {
      groups.set(c.group ?? "", [...(groups.get(c.group ?? "") ?? []), c.code]);
    }
    expect([...groups.keys()]).toEqual([
      "specification",
      "inter-agent misalignment",
      "verification",
    ]);
    expect(groups.get("specification")).toEqual(["FM-1.1", "FM-1.2", "FM-1.3", "FM-1.4", "FM-1.5"]);
    expect(groups.get("verification")).toEqual(["FM-3.1", "FM-3.2", "FM-3.3"]);
    expect(findCode(mast, "FM-2.2")?.name).toBe("Fail to ask for clarification");
    expect(findCode(mast, "FM-3.2")?.name).toBe("No or incomplete verification");
  });

  it("every built-in code has a definition, and names resolve to the same objects", () => {
    for (const name of BUILTIN_TAXONOMIES) {
      const taxonomy = resolveTaxonomy(name);
      expect(taxonomy.name).toBe(name);
      expect(taxonomy).toBe(builtinTaxonomy(name));
      for (const c of taxonomy.codes) expect(c.definition.length).toBeGreaterThan(20);
    }
  });
});

describe("user-defined taxonomies", () => {
  it("load from a JSON file, by path", () => {
    const path = file(
      "mine.json",
      JSON.stringify({
        name: "billing",
        codes: [
          { code: "B1", name: "Wrong amount", definition: "The amount quoted was wrong." },
          { code: "B2", name: "Wrong account", definition: "The wrong account was changed." },
        ],
      }),
    );
    const taxonomy = resolveTaxonomy(path);
    expect(taxonomy.name).toBe("billing");
    expect(taxonomyCodes(taxonomy)).toEqual(["B1", "B2"]);
  });

  it("come from clade.config's taxonomies by name, checked, before any file of that name", () => {
    const configured = {
      support: {
        name: "support",
        codes: [{ code: "S1", name: "Slow", definition: "The answer came too late." }],
      },
      broken: { name: "broken", codes: [{ code: "two words", name: "x", definition: "y" }] },
    };
    expect(taxonomyCodes(resolveTaxonomy("support", configured))).toEqual(["S1"]);
    // A built-in name stays the built-in.
    expect(resolveTaxonomy("rcof", configured).name).toBe("rcof");
    expect(errorOf(() => resolveTaxonomy("broken", configured))).toBe(
      "clade.config: taxonomies.broken: codes.0.code: must be one token of letters, digits, _ . / -",
    );
    // Not configured: a path, and a missing file says so.
    expect(errorOf(() => resolveTaxonomy("nowhere", configured))).toMatch(/^nowhere: cannot read/);
  });

  it("reject malformed files with one line naming the file and field", () => {
    const valid = { code: "B1", name: "Wrong amount", definition: "The amount was wrong." };
    const notJson = file("bad.json", "{ name: ");
    expect(errorOf(() => loadTaxonomyFile(notJson))).toMatch(/bad\.json: not JSON: /);

    const duplicate = file("dup.json", JSON.stringify({ name: "x", codes: [valid, valid] }));
    expect(errorOf(() => loadTaxonomyFile(duplicate))).toBe(
      `${duplicate}: codes.1.code: duplicate code "B1"`,
    );

    const empty = file("empty.json", JSON.stringify({ name: "x", codes: [] }));
    expect(errorOf(() => loadTaxonomyFile(empty))).toBe(
      `${empty}: codes: a taxonomy needs at least one code`,
    );

    const noDefinition = file(
      "nodef.json",
      JSON.stringify({ name: "x", codes: [valid, { code: "B2", name: "n", definition: " " }] }),
    );
    expect(errorOf(() => loadTaxonomyFile(noDefinition))).toBe(
      `${noDefinition}: codes.1.definition: definition must not be empty`,
    );

    const typo = file(
      "typo.json",
      JSON.stringify({ name: "x", codes: [{ code: "B1", name: "n", defintion: "d" }] }),
    );
    expect(errorOf(() => loadTaxonomyFile(typo))).toMatch(/typo\.json: codes\.0\.definition: /);

    const spaced = file(
      "space.json",
      JSON.stringify({ name: "x", codes: [{ ...valid, code: "bad code" }] }),
    );
    expect(errorOf(() => loadTaxonomyFile(spaced))).toBe(
      `${spaced}: codes.0.code: must be one token of letters, digits, _ . / -`,
    );

    expect(errorOf(() => loadTaxonomyFile(join(dir, "missing.json")))).toMatch(
      /missing\.json: cannot read: /,
    );
    expect(errorOf(() => parseTaxonomy([], "clade.config.json goals.taxonomy"))).toMatch(
      /^clade\.config\.json goals\.taxonomy: \(top level\): /,
    );
  });
});
