/**
 * The offline conceptual-variable matcher: BLADE's role groups and text forms, identical column
 * sets scoring 10, overlapping ones (by name, or by the same original columns through lineage)
 * scoring 8, nothing else paired, agent variables of roles absent from the ground truth not
 * counted, and the ≥ 8 threshold in buildCvarMatch shared with the judge.
 */
import { describe, expect, it } from "vitest";
import {
  agentCvarEntries,
  agentCvarText,
  buildCvarMatch,
  gtCvarRole,
  gtCvarText,
  MATCH_THRESHOLD,
  matchCvarsOffline,
} from "../../../src/env/blade/cvar-match.js";
import type { AgentCvars, ConceptualVarSpec } from "../../../src/env/blade/specs.js";

function gtVar(
  role: ConceptualVarSpec["role"],
  concept: string,
  columnsOrig: string[],
  extra: Partial<ConceptualVarSpec> = {},
): ConceptualVarSpec {
  return {
    specId: concept,
    role,
    concept,
    interaction: false,
    on: "",
    rationale: "",
    columnsOrig,
    columnsDerived: [],
    columnsDerivedSpecIds: [],
    annotator: "expert",
    ...extra,
  };
}

const DATA = ["Age", "Income", "Rel1", "Rel2", "Rel3", "Relationship", "Cycle"];

describe("text forms and role groups", () => {
  it("writes BLADE's ground-truth and agent forms", () => {
    expect(gtCvarText(gtVar("IV", "fertility", []))).toBe("IV: fertility");
    expect(gtCvarText(gtVar("DV", "religiosity", []))).toBe("DV: religiosity");
    expect(gtCvarText(gtVar("Control", "age", []))).toBe("Control: age.");
    const moderator = gtVar("Control", "relationship", [], { interaction: true, on: "fertility" });
    expect(gtCvarText(moderator)).toBe(
      "Moderator: relationship interacting with fertility variable",
    );
    expect(gtCvarRole(moderator)).toBe("Moderator");
    // Only a control with interaction is a moderator.
    expect(gtCvarRole(gtVar("IV", "x", [], { interaction: true }))).toBe("IV");
    expect(agentCvarText("IV", "fertility")).toBe("IV: fertility.");
    expect(agentCvarText("DV", "religiosity")).toBe("DV: religiosity.");
    expect(agentCvarText("Control", "age")).toBe("Control: age.");
    expect(agentCvarText("Moderator", "status", "fertility")).toBe(
      "Moderator: status interacting with fertility variable",
    );
  });

  it("flattens the agent's variables: ivs, dv, controls split by isModerator", () => {
    const agent: AgentCvars = {
      ivs: [{ description: "a", columns: ["A"] }],
      dv: { description: "d", columns: ["D"] },
      controls: [
        { description: "m", columns: ["M"], isModerator: true, moderatorOn: "a" },
        { description: "c", columns: ["C"], isModerator: false, moderatorOn: "" },
      ],
    };
    expect(agentCvarEntries(agent).map((e) => [e.index, e.role, e.text])).toEqual([
      [0, "IV", "IV: a."],
      [1, "DV", "DV: d."],
      [2, "Moderator", "Moderator: m interacting with a variable"],
      [3, "Control", "Control: c."],
    ]);
  });
});

describe("matchCvarsOffline", () => {
  const gt = [
    gtVar("IV", "fertility", ["Cycle"]),
    gtVar("DV", "religiosity", ["Rel1", "Rel2", "Rel3"], {
      columnsDerived: ["rel_mean"],
    }),
    gtVar("Control", "relationship", ["Relationship"], { interaction: true, on: "fertility" }),
  ];

  it("scores identical column sets 10 and overlapping ones 8, within a role only", () => {
    const agent: AgentCvars = {
      ivs: [{ description: "cycle length", columns: ["cycle"] }],
      dv: { description: "religiosity", columns: ["Rel1", "Rel2"] },
      controls: [
        // Same column as the gt moderator, but a plain control: another role, never paired.
        { description: "status", columns: ["Relationship"], isModerator: false, moderatorOn: "" },
      ],
    };
    const match = matchCvarsOffline(gt, agent, DATA);
    expect(match.pairs).toEqual([
      {
        gtIndex: 0,
        agentIndex: 0,
        role: "IV",
        similarity: 10,
        rationale: "offline: the same columns (cycle)",
      },
      {
        gtIndex: 1,
        agentIndex: 1,
        role: "DV",
        similarity: 8,
        rationale: "offline: shared columns (rel1, rel2)",
      },
    ]);
    expect(match.matchedGt).toEqual(["IV: fertility", "DV: religiosity"]);
    expect(match.matchedAgent).toEqual(["IV: cycle length.", "DV: religiosity."]);
    // The plain control is not judged: the ground truth has no Control group, only Moderator.
    expect(match.roles).toEqual(["IV", "DV", "Moderator"]);
    expect(match.agentJudgedCount).toBe(2);
    expect(match.gtCount).toBe(3);
    expect(match.method).toBe("offline");
  });

  it("pairs nothing without shared columns, and nothing for a variable without columns", () => {
    const agent: AgentCvars = {
      ivs: [
        { description: "age", columns: ["Age"] },
        { description: "no columns", columns: [] },
      ],
      dv: { description: "income", columns: ["Income"] },
      controls: [
        { description: "status", columns: ["relationship"], isModerator: true, moderatorOn: "x" },
      ],
    };
    const match = matchCvarsOffline(gt, agent, DATA);
    expect(match.pairs.map((p) => [p.gtIndex, p.agentIndex, p.similarity])).toEqual([[2, 3, 10]]);
    expect(match.agentJudgedCount).toBe(4);
    expect(match.matchedAgent).toEqual(["Moderator: status interacting with x variable"]);
  });

  it("counts columns derived from the same data columns as overlapping, given lineage", () => {
    const agent: AgentCvars = {
      ivs: [{ description: "cycle (log)", columns: ["log_cycle"] }],
      dv: { description: "avg religiosity", columns: ["AvgRel"] },
      controls: [],
    };
    // Without lineage nothing is known of the derived columns.
    expect(matchCvarsOffline(gt, agent, DATA).pairs).toEqual([]);
    const match = matchCvarsOffline(gt, agent, DATA, {
      lineage: {
        gt: { rel_mean: ["Rel1", "Rel2", "Rel3"] },
        agent: { log_cycle: ["Cycle"], AvgRel: ["rel1", "REL2", "Rel3"] },
      },
    });
    expect(match.pairs.map((p) => [p.gtIndex, p.agentIndex, p.similarity, p.rationale])).toEqual([
      [0, 0, 8, "offline: columns from the same data columns: cycle ~ log_cycle (from cycle)"],
      [
        1,
        1,
        8,
        "offline: columns from the same data columns: rel_mean ~ avgrel (from rel1, rel2, rel3)",
      ],
    ]);
    // A column derived from one original column stands for it.
    const fromOne = matchCvarsOffline(gt, agent, DATA, {
      lineage: { agent: { AvgRel: ["Rel1"] } },
    });
    expect(fromOne.pairs.map((p) => p.rationale)).toEqual([
      "offline: columns from the same data columns: rel1 ~ avgrel (from rel1)",
    ]);
    // Other original columns do not count.
    const other = matchCvarsOffline(gt, agent, DATA, {
      lineage: {
        gt: { rel_mean: ["Rel1", "Rel2", "Rel3"] },
        agent: { AvgRel: ["Income", "Rel1", "Rel2"] },
      },
    });
    expect(other.pairs).toEqual([]);
  });

  it("is deterministic and many-to-many", () => {
    const twoIvs = [gtVar("IV", "a", ["Age"]), gtVar("IV", "b", ["Age", "Income"])];
    const agent: AgentCvars = {
      ivs: [
        { description: "x", columns: ["Age", "Income"] },
        { description: "y", columns: ["age"] },
      ],
      dv: { description: "d", columns: [] },
      controls: [],
    };
    const first = matchCvarsOffline(twoIvs, agent, DATA);
    expect(first).toEqual(matchCvarsOffline(twoIvs, agent, DATA));
    expect(first.pairs.map((p) => [p.gtIndex, p.agentIndex, p.similarity])).toEqual([
      [0, 0, 8],
      [0, 1, 10],
      [1, 0, 10],
      [1, 1, 8],
    ]);
    // The dv's role is absent from this ground truth: not counted.
    expect(first.agentJudgedCount).toBe(2);
  });
});

describe("buildCvarMatch", () => {
  it("counts a pair as matched at the threshold and not below it, each text once", () => {
    const gt = [gtVar("IV", "a", []), gtVar("IV", "b", [])];
    const agent: AgentCvars = {
      ivs: [{ description: "x", columns: [] }],
      dv: { description: "d", columns: [] },
      controls: [],
    };
    const match = buildCvarMatch(
      gt,
      agent,
      [
        { gtIndex: 1, agentIndex: 0, role: "IV", similarity: MATCH_THRESHOLD - 1, rationale: "" },
        { gtIndex: 0, agentIndex: 0, role: "IV", similarity: MATCH_THRESHOLD, rationale: "" },
      ],
      "judge",
    );
    expect(match.pairs.map((p) => p.gtIndex)).toEqual([0, 1]);
    expect(match.matchedGt).toEqual(["IV: a"]);
    expect(match.matchedAgent).toEqual(["IV: x."]);
    expect(match.agentJudgedCount).toBe(1);
    expect(match.gtCount).toBe(2);
  });
});
