import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBladeDataset } from "../../../src/env/blade/dataset.js";
import type { TransformUnit } from "../../../src/env/blade/specs.js";
import {
  agentTransforms,
  groundTruthTransforms,
  type TransformStates,
} from "../../../src/env/blade/transform-graph.js";
import { matchTransforms } from "../../../src/env/blade/transform-match.js";
import {
  fakeHash,
  fakeRun,
  keepRows,
  type Step,
  withColumn,
} from "../../fixtures/blade/toy/fake-runtime.js";

const dataset = readBladeDataset(join(import.meta.dirname, "../../fixtures/blade/toy"));
const STEPS: Record<string, Step> = {
  "df['li'] = np.log(df['income'])": withColumn("li", (r) =>
    r.income === null ? null : Math.log(r.income as number),
  ),
  "df['inc_log2'] = np.log2(df['income'])": withColumn("inc_log2", (r) =>
    r.income === null ? null : Math.log2(r.income as number),
  ),
  "df = df[df['score'] > 2]": keepRows((r) => (r.score as number) > 2),
};
const unit = (
  verb: TransformUnit["verb"],
  code: string,
  mapping: [string[], string][],
): TransformUnit => ({
  verb,
  code,
  mapping,
  groupbyCols: [],
});

async function states(
  units: TransformUnit[],
): Promise<{ gt: TransformStates; agent: TransformStates }> {
  const { run } = fakeRun(STEPS);
  const gt = await groundTruthTransforms(dataset, run, fakeHash);
  const agent = await agentTransforms(units, run, fakeHash, dataset.fieldNames);
  if (!agent.ok) throw new Error(agent.error);
  return { gt, agent: agent.states };
}

describe("matching transforms by value", () => {
  it("marks a matched derived column's spec and the filter it came through", async () => {
    // One unit that filters and derives: its only state is the derived column `li`, equal in
    // value to the ground truth's log_income after the adults filter.
    const { gt, agent } = await states([
      unit("derive", "df = df[df['age'] >= 18]\ndf['li'] = np.log(df['income'])", [
        [["income"], "li"],
      ]),
    ]);
    const match = matchTransforms(gt, agent);
    expect(match.matchedValueGt).toEqual(new Set(["derive_log_income", "adults_only"]));
    expect(match.matchedValueAgent).toEqual(["derive_li"]);
    const filter = match.gt.find((d) => d.name === "adults_only");
    const li = agent.paths[0]?.states.get("li__node_0_derive__derive_li");
    expect(filter?.matchedByValue).toBe(true);
    expect(filter?.valueHashes).toEqual([li?.value]);
    // The same column without the filter (the other path) has other values: not matched.
    expect(match.gt.find((d) => d.name === "impute_")?.matchedByValue).toBe(false);
    expect(match.gtCount).toBe(7);
    expect(match.agentCount).toBe(1);
    // ROOT is marked as an ancestor but never listed.
    expect(match.gt.find((d) => d.name === "ROOT")?.matchedByValue).toBe(true);
    expect([...match.matchedValueGt]).not.toContain("ROOT");
  });

  it("lists matched agent specs one per spec, names repeating", async () => {
    const { gt, agent } = await states([
      unit("filter", "df = df[df['age'] >= 18]", [[["age"], "ALL"]]),
      unit("derive", "df['li'] = np.log(df['income'])", [[["income"], "li"]]),
      unit("derive", "df['li'] = np.log(df['income'])", [[["income"], "li"]]),
    ]);
    const match = matchTransforms(gt, agent);
    expect(match.matchedValueAgent).toEqual(["node_0_filter", "derive_li", "derive_li"]);
    expect(match.agentCount).toBe(3);
    // The agent filter's columns equal the ground truth's filter (and the unchanged frame the
    // groupby spec leaves): both are matched directly.
    expect(match.matchedValueGt).toEqual(new Set(["adults_only", "derive_log_income", "by_group"]));
  });

  it("matches nothing when no column agrees", async () => {
    const { gt, agent } = await states([
      unit("filter", "df = df[df['score'] > 2]", [[["score"], "ALL"]]),
    ]);
    const match = matchTransforms(gt, agent);
    expect(match.matchedValueGt.size).toBe(0);
    expect(match.matchedValueAgent).toEqual([]);
    expect(match.agent.every((d) => !d.matchedByValue && d.valueHashes.length === 0)).toBe(true);
  });
});

describe("matching transforms by graph", () => {
  it("matches the same verbs on the same original columns, whatever the derived names and values", async () => {
    const { gt, agent } = await states([
      unit("derive", "df['inc_log2'] = np.log2(df['income'])", [[["income"], "inc_log2"]]),
    ]);
    const match = matchTransforms(gt, agent);
    expect(match.matchedValueGt.size).toBe(0);
    expect(match.matchedGraphGt).toEqual(new Set(["derive_log_income"]));
    expect(match.matchedGraphAgent).toEqual(["derive_inc_log2"]);
    const detail = match.agent.find((d) => d.name === "derive_inc_log2");
    expect(detail?.graphKeys).toHaveLength(1);
    expect(gt.graphGroups.get(detail?.graphKeys[0] as string)?.states.map((s) => s.col)).toContain(
      "log_income",
    );
  });

  it("does not match another verb", async () => {
    const { gt, agent } = await states([
      unit("rollup", "df['inc_log2'] = np.log2(df['income'])", [[["income"], "inc_log2"]]),
    ]);
    const match = matchTransforms(gt, agent);
    expect(match.matchedGraphGt.size).toBe(0);
    expect(match.matchedGraphAgent).toEqual([]);
  });

  it("matches a filter on the same input column and marks what hangs off it", async () => {
    const { gt, agent } = await states([
      unit("filter", "df = df[df['age'] >= 18]", [[["age"], "ALL"]]),
      unit("derive", "df['inc_log2'] = np.log2(df['income'])", [[["income"], "inc_log2"]]),
    ]);
    const match = matchTransforms(gt, agent);
    expect(match.matchedGraphGt).toEqual(new Set(["adults_only", "derive_log_income"]));
    expect(match.matchedGraphAgent).toEqual(["node_0_filter", "derive_inc_log2"]);
    // A filter on another column has other input edges: no graph match for it.
    const other = await states([unit("filter", "df = df[df['score'] > 2]", [[["score"], "ALL"]])]);
    expect(matchTransforms(other.gt, other.agent).matchedGraphGt.size).toBe(0);
  });

  it("counts an isomorphism test past its budget as no match", async () => {
    const { gt, agent } = await states([
      unit("derive", "df['inc_log2'] = np.log2(df['income'])", [[["income"], "inc_log2"]]),
    ]);
    expect(matchTransforms(gt, agent, { isomorphismStepBudget: 0 }).matchedGraphGt.size).toBe(0);
  });
});
