/**
 * `clade tree` and `clade best` on a stored simulated search: the text lists every agent indented
 * by its depth, the JSON's counts add up to the log's (own counts to its finished evaluations,
 * clade counts to sums over subtrees), and `best` names the engine's own final choice.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SearchStore } from "../../src/store/search-log.js";
import { runCli } from "../fixtures/cli.js";

interface TreeNode {
  id: number;
  parent: number | null;
  depth: number;
  s: number;
  f: number;
  cladeS: number;
  cladeF: number;
  cmp: number | null;
  status: string;
  costUsd: number;
  quality: number | null;
}

let dir: string;
let db: string;
let evolved: { chosen: { node: number; s: number; f: number; lowerQuantile: number } | null };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-tree-"));
  db = join(dir, "clade.db");
  const result = await runCli(
    ...["evolve", "--simulate", "trap", "--method", "hgm", "--budget", "80", "--workers", "3"],
    ...["--run-id", "s1", "--db", db, "--json"],
  );
  expect(result.code).toBe(0);
  evolved = JSON.parse(result.stdout);
});

describe("clade tree", () => {
  it("the text lists every agent once, indented by its depth, and marks the final choice", async () => {
    const json = JSON.parse((await runCli("tree", "s1", "--db", db, "--json")).stdout);
    const nodes = json.nodes as TreeNode[];
    const text = await runCli("tree", "s1", "--db", db);
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^search s1: hgm on trap \(simulated\)/);
    const nodeLines = lines.filter((line) => /^\s+node \d+ /.test(line));
    expect(nodeLines).toHaveLength(nodes.length);
    const seen = new Set<number>();
    for (const line of nodeLines) {
      const [, indent, id] = /^( +)node (\d+) /.exec(line) ?? [];
      const node = nodes[Number(id)] as TreeNode;
      seen.add(node.id);
      expect(indent?.length).toBe(2 * (node.depth + 1));
      expect(line).toContain(`own ${node.s}/${node.f}`);
      expect(line).toContain(`clade ${node.cladeS}/${node.cladeF}`);
      expect(line.includes("<- final choice")).toBe(node.id === json.best);
    }
    expect(seen.size).toBe(nodes.length);
  });

  it("the JSON's counts add up to the log's", async () => {
    const result = await runCli("tree", "s1", "--db", db, "--json");
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({ schema: "clade.tree/1", run: "s1", method: "hgm" });
    const nodes = json.nodes as TreeNode[];
    const store = SearchStore.open(db, { readonly: true });
    const events = store.events("s1");
    store.close();
    const finished = events.filter((e) => e.type === "evaluation_finished");
    const passes = finished.filter((e) => e.outcome === "pass").length;
    const fails = finished.filter((e) => e.outcome === "fail").length;
    const made = events.filter((e) => e.type === "improvement_finished").length;
    expect(nodes).toHaveLength(made + 1);
    expect(nodes.reduce((sum, n) => sum + n.s, 0)).toBe(passes);
    expect(nodes.reduce((sum, n) => sum + n.f, 0)).toBe(fails);
    const cost = events.reduce((sum, e) => sum + ("usage" in e ? e.usage.costUsd : 0), 0);
    expect(nodes.reduce((sum, n) => sum + n.costUsd, 0)).toBeCloseTo(cost, 6);
    // Clade counts: the node's own plus its children's clade counts.
    for (const node of nodes) {
      const children = nodes.filter((n) => n.parent === node.id);
      expect(node.cladeS).toBe(node.s + children.reduce((sum, c) => sum + c.cladeS, 0));
      expect(node.cladeF).toBe(node.f + children.reduce((sum, c) => sum + c.cladeF, 0));
      const clade = node.cladeS + node.cladeF;
      expect(node.cmp).toBe(clade === 0 ? null : Number((node.cladeS / clade).toFixed(4)));
      expect(node.depth).toBe(node.parent === null ? 0 : (nodes[node.parent]?.depth ?? -2) + 1);
      expect(node.status).toBe(node.s + node.f > 0 ? "evaluated" : "unevaluated");
      expect(node.quality).toEqual(expect.any(Number));
    }
    expect(json.best).toBe(evolved.chosen?.node);
  });
});

describe("clade best", () => {
  it("agrees with the engine's final choice", async () => {
    const result = await runCli("best", "s1", "--db", db, "--json");
    expect(result.code).toBe(0);
    const { best } = JSON.parse(result.stdout);
    expect(evolved.chosen).not.toBeNull();
    expect(best).toMatchObject({
      node: evolved.chosen?.node,
      s: evolved.chosen?.s,
      f: evolved.chosen?.f,
    });
    expect(best.lowerQuantile).toBeCloseTo(evolved.chosen?.lowerQuantile as number, 4);
    expect(best.mean).toBeCloseTo((1 + best.s) / (2 + best.s + best.f), 4);
    expect(best.path[0]).toBe(0);
    expect(best.path.at(-1)).toBe(best.node);
    expect(best.path).toHaveLength(best.depth + 1);
    const text = await runCli("best", "s1", "--db", db);
    expect(text.stdout).toMatch(new RegExp(`final choice node ${best.node}\\n`));
    expect(text.stdout).toMatch(/path from the root: 0/);
  });

  it("--out is refused for a simulated search", async () => {
    const result = await runCli("best", "s1", "--db", db, "--out", join(dir, "agent"));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^clade: error: --out .* simulated and has no agent sources\n$/);
  });
});

describe("an unknown search: one line, exit 2", () => {
  it.each([["tree"], ["best"]])("%s", async (command) => {
    const result = await runCli(command, "nope", "--db", db);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`clade: error: no search "nope" in ${db}\n`);
    const missing = await runCli(command, "s1", "--db", join(dir, "none.db"), "--json");
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stderr)).toMatchObject({
      schema: "clade.error/1",
      error: { kind: "usage", message: expect.stringMatching(/no search "s1"/) },
    });
  });
});
