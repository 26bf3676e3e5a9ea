/**
 * HGM over training branches, offline and for real: the improver trains the parent's weights
 * further with a recipe drawn for it, the evaluator plays a task greedily, and the search picks
 * a checkpoint. Recipes are fixed by (seed, parent, ordinal); node files are named by work number.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findEnv } from "../../../src/env/registry.js";
import {
  createTrainingBranches,
  drawRecipe,
  RECIPE_SPACE,
  trainingRoot,
} from "../../../src/improve/rl/branches.js";
import { createPolicyModel } from "../../../src/improve/rl/policy/index.js";
import { memoryLog, runSearch } from "../../../src/improve/search/engine.js";
import { createPolicy } from "../../../src/improve/search/policies/index.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("training branches", () => {
  it("draws recipes from the space, fixed by (seed, parent, ordinal)", () => {
    const a = drawRecipe(3, 1, 0);
    expect(drawRecipe(3, 1, 0)).toEqual(a);
    expect(RECIPE_SPACE.algo).toContain(a.algo);
    expect(RECIPE_SPACE.lr).toContain(a.lr);
    const recipes = Array.from({ length: 20 }, (_, i) => JSON.stringify(drawRecipe(3, 1, i)));
    expect(new Set(recipes).size).toBeGreaterThan(10);
  });

  it("an HGM search trains branches of a policy and evaluates them", async () => {
    const env = findEnv("gridworld");
    const dir = mkdtempSync(join(tmpdir(), "clade-branches-"));
    dirs.push(dir);
    const model = createPolicyModel({
      env: env.info.name,
      envVersion: env.info.version,
      seed: 0,
      features: { dim: 1 << 12 },
      hidden: 16,
      valueHidden: 8,
    });
    const rootData = await trainingRoot(dir, model);
    const { improver, evaluator } = createTrainingBranches({ env, dir, seed: 0, horizon: 8 });
    const tasks = Array.from({ length: 6 }, (_, i) => env.info.splits.test.start + i);
    const result = await runSearch({
      policy: createPolicy("hgm"),
      improver,
      evaluator,
      tasks,
      T: 12,
      W: 2,
      seed: 0,
      rootData,
      log: memoryLog(),
    });
    expect(result.stopReason).toBe("budget");
    expect(result.tree.size).toBeGreaterThan(1);
    for (const node of result.tree.nodes.slice(1)) {
      const data = node.data as { file: string; recipe: { algo: string } };
      expect(existsSync(join(dir, data.file))).toBe(true);
      expect(RECIPE_SPACE.algo).toContain(data.recipe.algo);
    }
    expect(result.tree.passes + result.tree.fails).toBeGreaterThanOrEqual(12);
    expect(result.chosen).not.toBeNull();
  }, 120_000);
});
