/**
 * A search over a real agent folder, end to end: the starting agent (clade init-agent's template)
 * fails every task; a scripted diagnosis and a scripted implementer patch its prompt; the patch
 * passes typecheck, the agent's own tests and a smoke episode in the sandbox; the child is
 * evaluated in the sandbox, solves the tasks, and the search selects it. A patch that breaks the
 * typecheck gives no child, with the reason stored.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentTemplate } from "../../../src/agent/folder/template.js";
import { findEnv } from "../../../src/env/registry.js";
import { nodeRunId } from "../../../src/improve/selfmod/evaluator.js";
import { runAgentEvolution } from "../../../src/improve/selfmod/evolution.js";
import { patchOf } from "../../../src/improve/selfmod/lineage.js";
import { RunStore } from "../../../src/store/run-store.js";
import {
  ENV,
  MARKER,
  type PatchKind,
  referenceActions,
  scriptedModels,
} from "./fixtures-evolution.js";

/** Gridworld tasks of two steps each. */
const TASKS = [0, 2, 6];
let actions: Map<string, string[]>;
const dirs: string[] = [];

beforeAll(async () => {
  actions = await referenceActions(TASKS);
});

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function evolve(
  kind: PatchKind,
  options: { T: number; W: number; method?: "hgm" | "greedy" },
) {
  const dir = mkdtempSync(join(tmpdir(), "clade-evolution-"));
  dirs.push(dir);
  const store = RunStore.open(join(dir, "clade.db"));
  const models = scriptedModels(actions, kind);
  try {
    const evolution = await runAgentEvolution({
      searchId: "e2e",
      store,
      agent: { files: agentTemplate("starter"), path: "(template)" },
      env: findEnv(ENV),
      tasks: TASKS,
      taskSpec: "0,2,6",
      method: options.method ?? "greedy",
      T: options.T,
      W: options.W,
      seed: 0,
      model: { spec: "scripted:agent", client: models.agent },
      modifyModel: { spec: "scripted:modify", client: models.modify },
      episode: { maxTurns: 4, timeoutMs: 30_000, seed: 0 },
      mode: "bwrap",
      maxFailedImprovementsInARow: 3,
    });
    const runs = new Map(
      evolution.result.tree.nodes.map((node) => [
        node.id,
        store.episodes(nodeRunId("e2e", node.id)),
      ]),
    );
    return { ...evolution, runs, agentRequests: models.agentRequests };
  } finally {
    store.close();
  }
}

describe("self-modification search over an agent folder", () => {
  it("a patch that changes the agent's behaviour is found, evaluated in the sandbox and chosen", async () => {
    const { result, lineage, runs } = await evolve("fix", { T: 6, W: 2 });
    const { tree, chosen } = result;
    // The starting agent fails every task: it repeats its first action.
    expect(tree.node(0)).toMatchObject({ s: 0, f: TASKS.length });
    expect(tree.size).toBeGreaterThan(1);
    const child = tree.node(1);
    expect(child.parent).toBe(0);
    const patch = patchOf(child.data);
    expect(patch).toContain("src/prompts.ts");
    expect(patch).toContain(MARKER);
    expect(lineage.files(1).get("src/prompts.ts")).toContain(MARKER);
    expect(child.data).toMatchObject({ target: { kind: "task" }, stopReason: "finished" });
    // The child solves what its parent failed, in episodes stored as its own run.
    expect(child.s).toBeGreaterThan(0);
    expect(child.f).toBe(0);
    const childEpisodes = runs.get(1) ?? [];
    expect(childEpisodes.length).toBe(child.s);
    expect(childEpisodes.every((e) => e.outcome === "success")).toBe(true);
    expect(chosen).not.toBe(0);
    expect(chosen === null ? "" : patchOf(tree.node(chosen).data)).toContain(MARKER);
  }, 180_000);

  it("a patch that breaks the typecheck gives no child, and the reason is stored", async () => {
    const { result } = await evolve("break-typecheck", { T: 3, W: 1 });
    const failures = result.log.read().filter((e) => e.type === "improvement_failed");
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure.type === "improvement_failed" && failure.reason).toMatch(
        /^typecheck failed: src\/.*prompts/,
      );
    }
    expect(failures).toHaveLength(3);
    expect(result.stopReason).toBe("improvements-failing");
    expect(result.tree.size).toBe(1);
    expect(result.chosen).toBe(0);
  }, 180_000);
});
