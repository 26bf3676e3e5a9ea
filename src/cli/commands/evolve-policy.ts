/**
 * `clade evolve --policy FILE --env ENV [--method M] [--budget T] [--workers W] [--seed S]
 * [--tasks SPEC] --run-id ID [--dir DIR]`: the search engine over training branches of an
 * embedded policy (src/improve/rl/branches.ts). A child is its parent's weights trained further
 * with a recipe drawn for it (algorithm, learning rate, horizon schedule, steps); an evaluation
 * plays one task greedily. Everything runs here, offline, with no model and no sandbox (a policy
 * file is data, never code).
 *
 * The search is stored in the store's event log like any other (`clade tree`, `clade best`), its
 * branches' weights in `DIR` (by default `.clade/evolve/<ID>` beside the store), one safetensors
 * file per node, written before the node is recorded. The same command resumes a stopped or
 * killed search: the tree is rebuilt from the log, work in flight is done again.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { findEnv } from "../../env/registry.js";
import { formatTaskRange, parseTaskRange } from "../../eval/task-range.js";
import {
  BRANCH_BATCH,
  branchFileOf,
  createTrainingBranches,
  RECIPE_SPACE,
  recipeOf,
  recipeText,
  trainingRoot,
} from "../../improve/rl/branches.js";
import { runSearch } from "../../improve/search/engine.js";
import { createPolicy } from "../../improve/search/policies/index.js";
import { lowerQuantile } from "../../improve/search/policy.js";
import { TRAINING_ROOT_FILE } from "../../improve/search/stored.js";
import { type NodeId, ROOT, type SearchTree } from "../../improve/search/tree.js";
import { type JsonValue, type SearchEvent, SearchStore } from "../../store/search-log.js";
import { type CliIo, UsageError } from "../io.js";
import { type Cell, renderTable } from "../table.js";
import { loadPolicyAgent, POLICY_PREFIX } from "../user-modules.js";
import {
  bestSoFar,
  type SearchRequestBase,
  searchExitCode,
  searchProgressJson,
  storedSearchConfig,
  throttled,
} from "./evolve.js";

export interface PolicySearchRequest extends SearchRequestBase {
  /** The starting policy's safetensors file (`--policy`). */
  policy: string;
  /** Where the branches' weights go (default: `<the store's folder>/evolve/<runId>`). */
  dir?: string;
}

const round = (value: number, digits = 4) => Number(value.toFixed(digits));
const branches = (n: number) => `${n} branch${n === 1 ? "" : "es"}`;
const rate = (s: number, f: number) => (s + f === 0 ? null : round(s / (s + f)));

export async function policySearch(
  request: PolicySearchRequest,
  signal: AbortSignal,
  io: CliIo,
): Promise<number> {
  // Everything is checked before the store is opened: bad input writes nothing.
  const env = findEnv(request.env);
  const tasks = parseTaskRange(request.tasks, env.info);
  if (tasks.length === 0) throw new UsageError("--tasks selects no task");
  // loadPolicyAgent's checks: a readable safetensors file of a policy trained on this
  // environment at this version, else one line.
  const loaded = await loadPolicyAgent(`${POLICY_PREFIX}${request.policy}`, env.info);
  const { runId, T, W, method, seed } = request;
  const dbPath = resolve(request.db);
  const dir = resolve(request.dir ?? join(dirname(dbPath), "evolve", runId));
  const taskSpec = formatTaskRange(tasks);
  const config: Record<string, JsonValue> = {
    ...storedSearchConfig("policy", request),
    env: env.info.name,
    envVersion: env.info.version,
    tasks: taskSpec,
    policy: { ...loaded.identity },
    dir,
    // What improvements draw from and train with: a clade whose recipes differ does not resume.
    recipeSpace: {
      algo: [...RECIPE_SPACE.algo],
      lr: [...RECIPE_SPACE.lr],
      schedule: [...RECIPE_SPACE.schedule],
      steps: [...RECIPE_SPACE.steps],
    },
    branchBatch: { ...BRANCH_BATCH },
  };

  // A new search's files go to a folder of its own: never over another search's weights. Checked
  // before the store is opened for writing, so the refusal leaves nothing behind.
  if (!searchExists(dbPath, runId) && existsSync(dir) && readdirSync(dir).length > 0) {
    throw new UsageError(
      `--dir ${dir} already holds files (another search's?): give an empty or new --dir, or another --run-id`,
    );
  }
  mkdirSync(dirname(dbPath), { recursive: true });
  const store = SearchStore.open(request.db);
  try {
    const { log } = store.beginSearch(runId, config);
    let rootData: JsonValue;
    try {
      // On resume every recorded branch must still have its weights.
      for (const event of log.read()) {
        if (event.type !== "improvement_finished") continue;
        const file = branchFileOf(event.data, dir);
        if (file === null || !existsSync(file)) {
          throw new UsageError(
            `search "${runId}": the weights of node ${event.node} (${file ?? "no file named"}) ` +
              `are missing from ${dir}; the search cannot go on without them`,
          );
        }
      }
      rootData = existsSync(join(dir, TRAINING_ROOT_FILE))
        ? { file: TRAINING_ROOT_FILE, recipe: null }
        : await trainingRoot(dir, loaded.model);
    } catch (error) {
      store.setStatus(runId, "stopped", "error");
      throw error;
    }

    const { improver, evaluator } = createTrainingBranches({ env, dir, seed });
    const result = await runSearch({
      policy: createPolicy(method),
      improver,
      evaluator,
      tasks,
      T,
      W,
      seed,
      rootData,
      log,
      signal,
      onEvent: throttled(request.progress, (_event: SearchEvent, tree: SearchTree) =>
        io.stderr(`${progressLine(runId, tree, T)}\n`),
      ),
    }).catch((error: unknown) => {
      store.setStatus(runId, "stopped", "error");
      throw error;
    });
    const { tree, chosen, stopReason } = result;
    const finished = stopReason === "budget" || stopReason === "exhausted";
    store.setStatus(runId, finished ? "complete" : "stopped", finished ? null : stopReason);
    if (request.progress) io.stderr(`${progressLine(runId, tree, T)}\n`);
    const exitCode = searchExitCode(stopReason, signal);
    const root = tree.node(ROOT);
    const epsilon = Number(createPolicy(method).hyperparameters.epsilon);
    const choice = chosen === null ? null : nodeSummary(tree, chosen, dir, epsilon);

    if (request.json) {
      io.stdout(
        `${JSON.stringify({
          schema: "clade.evolve-policy/1",
          runId,
          method,
          env: env.info.name,
          envVersion: env.info.version,
          tasks: taskSpec,
          policy: loaded.identity.path,
          dir,
          seed,
          budget: T,
          workers: W,
          ...searchProgressJson(result),
          root: { s: root.s, f: root.f, successRate: rate(root.s, root.f) },
          chosen: choice,
          exitCode,
        })}\n`,
      );
      return exitCode;
    }

    const lines = [
      `search ${runId}: ${method} over training branches of ${basename(loaded.identity.path)} ` +
        `on ${env.info.name} (tasks ${taskSpec}), seed ${seed}` +
        (result.resumed ? ` (resumed; ${result.redispatched} in flight done again)` : ""),
      `  ${tree.t}/${T} evaluations of branches, ${branches(tree.size - 1)} trained ` +
        `(${tree.improvementsStarted} improvements, ${tree.improvementsFailed} gave no child); ` +
        `all nodes, the starting policy's included: ${tree.passes} passed, ${tree.fails} failed, ` +
        `${tree.errors} errored (not counted as fails)`,
    ];
    if (choice === null) {
      lines.push("  final choice: none (no node has a finished evaluation)");
    } else {
      lines.push(
        "",
        "  path to the final choice (each node is its parent trained further with its recipe):",
        renderTable(
          ["node", "recipe", "passed", "success"],
          pathTo(tree, choice.node).map((id): Cell[] => {
            const node = tree.node(id);
            return [
              id,
              recipeText(recipeOf(node.data)),
              `${node.s}/${node.s + node.f}`,
              rate(node.s, node.f)?.toFixed(2) ?? "n/a",
            ];
          }),
        )
          .trimEnd()
          .replace(/^/gm, "  "),
        `  final choice: node ${choice.node} (${choice.s} passed, ${choice.f} failed; ` +
          `${epsilon} % quantile ${choice.lowerQuantile.toFixed(3)}); ` +
          `its weights: clade best ${runId} --out FILE`,
      );
    }
    lines.push(
      `  branch weights in ${dir}` +
        (finished ? "" : `; stopped: ${stopReason} (run the same command to resume)`),
    );
    io.stdout(`${lines.join("\n")}\n`);
    return exitCode;
  } finally {
    store.close();
  }
}

/** Node ids from the root to `id`, both included. */
function pathTo(tree: SearchTree, id: NodeId): NodeId[] {
  const path: NodeId[] = [];
  for (let at: NodeId | null = id; at !== null; at = tree.node(at).parent) path.unshift(at);
  return path;
}

function nodeSummary(tree: SearchTree, id: NodeId, dir: string, epsilon: number) {
  const node = tree.node(id);
  return {
    node: id,
    depth: node.depth,
    s: node.s,
    f: node.f,
    lowerQuantile: round(lowerQuantile(node, epsilon)),
    successRate: rate(node.s, node.f),
    recipe: recipeOf(node.data) as JsonValue,
    file: branchFileOf(node.data, dir),
  };
}

function progressLine(runId: string, tree: SearchTree, T: number): string {
  return (
    `evolve ${runId}: ${tree.t}/${T} evaluations, ${branches(tree.size - 1)}, ` +
    `${tree.pendingImprovements} training, best so far ${bestSoFar(tree)}`
  );
}

/** Whether the store at `path` holds a search with this id (false when there is no store yet). */
function searchExists(path: string, id: string): boolean {
  if (!existsSync(path)) return false;
  let store: SearchStore;
  try {
    store = SearchStore.open(path, { readonly: true });
  } catch {
    return false; // a store without searches yet
  }
  try {
    return store.getSearch(id) !== undefined;
  } finally {
    store.close();
  }
}
