/**
 * HGM over training branches: the search engine (src/improve/search) where an agent is an
 * embedded-policy checkpoint, an improvement trains the parent's weights further with a recipe
 * drawn for it (algorithm, learning rate, horizon schedule, steps), and an evaluation plays one
 * task greedily. Everything runs offline, for real: the search decides which checkpoint to train
 * on and which to evaluate, by its clade's productivity, as it would over self-modifying agents.
 *
 * A node's record (`data`) is its recipe and the path of its safetensors file; the root is the
 * starting policy. Files live in `dir`, one per node, written before the node is recorded.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createRng } from "../../env/rng.js";
import type { EnvDefinition } from "../../env/types.js";
import type { JsonValue } from "../../store/search-log.js";
import type { Evaluator, Improver } from "../search/engine.js";
import { TRAINING_ROOT_FILE } from "../search/stored.js";
import type { SearchNode } from "../search/tree.js";
import { loadPolicy, type PolicyModel, savePolicy } from "./policy/index.js";
import { type Algorithm, evaluatePolicy, train } from "./train/index.js";

/** What an improvement may draw, each uniformly. */
export const RECIPE_SPACE = {
  algo: ["grpo", "rloo", "reinforce++", "ppo"] as Algorithm[],
  lr: [1e-3, 3e-3, 1e-2],
  schedule: ["fixed:8", "fixed:16", "scaling:6,12@2"],
  steps: [2, 4],
} as const;

/** Per improvement: tasks × samples collected per training step (small: branches are many). */
export const BRANCH_BATCH = { groupSize: 4, batchTasks: 4 } as const;

export interface Recipe {
  algo: Algorithm;
  lr: number;
  schedule: string;
  steps: number;
  seed: number;
}

/** The recipe of the parent's `ordinal`-th improvement: fixed by (seed, parent, ordinal). */
export function drawRecipe(seed: number, parent: number, ordinal: number): Recipe {
  const rng = createRng(seed, parent, ordinal, 0x7ec1);
  return {
    algo: rng.pick(RECIPE_SPACE.algo),
    lr: rng.pick(RECIPE_SPACE.lr),
    schedule: rng.pick(RECIPE_SPACE.schedule),
    steps: rng.pick(RECIPE_SPACE.steps),
    seed: rng.int(2 ** 31 - 1),
  };
}

function policyPathOf(data: JsonValue, dir: string): string {
  const file =
    data !== null && typeof data === "object" && !Array.isArray(data) ? data.file : undefined;
  if (typeof file !== "string") throw new Error("the node's record names no policy file");
  return join(dir, file);
}

export interface TrainingBranchesOptions {
  env: EnvDefinition;
  /** Where every node's policy file goes; the root's must be there as `rootFile`. */
  dir: string;
  /** The search's seed (recipes are drawn from it). */
  seed: number;
  /** Tasks improvements train on (the environment's train split by default). */
  trainTasks?: readonly number[];
  /** Turn limit of an evaluation episode (the environment's own by default). */
  horizon?: number;
}

/** The root's record: the starting policy, saved as TRAINING_ROOT_FILE in `dir`. */
export async function trainingRoot(dir: string, model: PolicyModel): Promise<JsonValue> {
  mkdirSync(dir, { recursive: true });
  await savePolicy(join(dir, TRAINING_ROOT_FILE), model);
  return { file: TRAINING_ROOT_FILE, recipe: null };
}

const isRecord = (value: unknown): value is Record<string, JsonValue> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The recipe in a training branch's record; null for the root or any other kind of node. */
export function recipeOf(data: JsonValue): Recipe | null {
  const recipe = isRecord(data) ? data.recipe : undefined;
  return isRecord(recipe) ? (recipe as unknown as Recipe) : null;
}

/** The absolute path of a training branch's policy file; null when its record names none. */
export function branchFileOf(data: JsonValue, dir: string): string | null {
  const file = isRecord(data) ? data.file : undefined;
  return typeof file === "string" ? join(dir, file) : null;
}

/** "ppo lr 0.003, fixed:8 x 2 steps"; the root: "the starting policy". */
export function recipeText(recipe: Recipe | null): string {
  if (recipe === null) return "the starting policy";
  return `${recipe.algo} lr ${recipe.lr}, ${recipe.schedule} x ${recipe.steps} steps`;
}

export function createTrainingBranches(options: TrainingBranchesOptions): {
  improver: Improver;
  evaluator: Evaluator;
} {
  const { env, dir } = options;
  const loaded = new Map<number, Promise<PolicyModel>>();
  const modelOf = (node: SearchNode) => {
    let model = loaded.get(node.id);
    if (!model) {
      model = loadPolicy(policyPathOf(node.data, dir));
      loaded.set(node.id, model);
    }
    return model;
  };
  const improver: Improver = {
    async improve(parent, { work, ordinal, signal }) {
      const recipe = drawRecipe(options.seed, parent.id, ordinal);
      const result = await train({
        env,
        model: await modelOf(parent),
        ...BRANCH_BATCH,
        algo: recipe.algo,
        lr: recipe.lr,
        schedule: recipe.schedule,
        steps: recipe.steps,
        seed: recipe.seed,
        checkpointEvery: 0,
        signal,
        ...(options.trainTasks ? { trainTasks: options.trainTasks } : {}),
      });
      if (result.stopped) throw new Error("interrupted");
      // Named by the work number: unique, and the same when a killed improvement is redone.
      const file = `work-${work}.safetensors`;
      await savePolicy(join(dir, file), result.model);
      const last = result.metrics.at(-1);
      return {
        child: {
          data: {
            file,
            recipe: { ...recipe },
            trainSuccessRate: last && Number.isFinite(last.successRate) ? last.successRate : null,
          },
        },
      };
    },
  };
  const evaluator: Evaluator = {
    async evaluate(node, task, { signal }) {
      const result = await evaluatePolicy({
        env,
        policy: await modelOf(node),
        tasks: [task],
        signal,
        ...(options.horizon ? { horizon: options.horizon } : {}),
      });
      if (result.errors > 0) return { outcome: "error", reason: "the episode ended in an error" };
      return { outcome: result.successes > 0 ? "pass" : "fail" };
    },
  };
  return { improver, evaluator };
}
