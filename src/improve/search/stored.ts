/**
 * A stored search read back: its tasks and root record from its configuration, its policy from
 * its method, and the tree folded from its event log, exactly as the engine had them. One
 * reading for `clade tree`, `clade best`, `clade evolve --policy` resuming, and clade view.
 */
import type { EnvInfo } from "../../env/types.js";
import { parseTaskRange } from "../../eval/task-range.js";
import type { CostFields } from "../../store/run-store.js";
import {
  type JsonValue,
  type SearchEvent,
  type WorkUsage,
  workCost,
} from "../../store/search-log.js";
import { createPolicy, isMethod, type Method } from "./policies/index.js";
import type { SearchPolicy } from "./policy.js";
import { createSimulatedWork } from "./simulation/process.js";
import { parseScenario, type Scenario } from "./simulation/scenario.js";
import { type NodeId, SearchTree } from "./tree.js";

/** The starting policy's file in a search over training branches (improve/rl/branches.ts). */
export const TRAINING_ROOT_FILE = "root.safetensors";

/** The kinds of search the engine's callers store (configuration `kind`). */
export type StoredSearchKind = "simulation" | "agent" | "policy";

/**
 * Stored task lists are written as ranges ("0-59,70"), never as a split's name, and were checked
 * against their environment when the search started: read them against any task index.
 */
const ANY_TASK: EnvInfo = {
  name: "stored",
  version: "0",
  description: "",
  instruction: "",
  splits: { train: { start: 0, end: 0 }, test: { start: 0, end: 2 ** 31 } },
  successThreshold: 1,
  maxSteps: 1,
};

export function storedSearchKind(config: Record<string, JsonValue>): StoredSearchKind | null {
  const kind = config.kind;
  return kind === "simulation" || kind === "agent" || kind === "policy" ? kind : null;
}

/**
 * The search's tasks and root record. A configuration of an unknown kind, or without its task
 * list, gives the tasks its log evaluated: enough to count. Throws (zod, task ranges) when the
 * configuration does not parse.
 */
export function storedSearchStart(
  config: Record<string, JsonValue>,
  events: readonly SearchEvent[],
): { tasks: number[]; rootData: JsonValue; scenario: Scenario | null } {
  const kind = storedSearchKind(config);
  if (kind === "simulation") {
    const scenario = parseScenario(config.scenario);
    return {
      tasks: Array.from({ length: scenario.tasks }, (_, i) => i),
      rootData: { ...createSimulatedWork(scenario, Number(config.seed ?? 0)).root },
      scenario,
    };
  }
  const rootData: JsonValue = kind === "policy" ? { file: TRAINING_ROOT_FILE, recipe: null } : null;
  if (kind !== null && typeof config.tasks === "string") {
    return { tasks: parseTaskRange(config.tasks, ANY_TASK), rootData, scenario: null };
  }
  const seen = new Set<number>();
  for (const event of events) if ("task" in event) seen.add(event.task);
  return { tasks: seen.size > 0 ? [...seen].sort((a, b) => a - b) : [0], rootData, scenario: null };
}

/** The search's policy with its stored hyperparameters; null for an unknown method. */
export function storedSearchPolicy(
  config: Record<string, JsonValue>,
): { method: Method; policy: SearchPolicy } | null {
  const method = String(config.method);
  if (!isMethod(method)) return null;
  const hyperparameters = config.hyperparameters;
  const given =
    hyperparameters !== null &&
    typeof hyperparameters === "object" &&
    !Array.isArray(hyperparameters)
      ? hyperparameters
      : {};
  return { method, policy: createPolicy(method, { [method]: given }) };
}

export interface FoldedSearch {
  tasks: number[];
  scenario: Scenario | null;
  tree: SearchTree;
  /** The policy's final choice; null when it has none yet or the method is unknown. */
  chosen: NodeId | null;
  method: Method | null;
  policy: SearchPolicy | null;
}

/** The whole reading: start, policy, the fold of the log and the final choice. */
export function foldStoredSearch(
  config: Record<string, JsonValue>,
  events: readonly SearchEvent[],
): FoldedSearch {
  const { tasks, rootData, scenario } = storedSearchStart(config, events);
  const tree = SearchTree.fold(tasks, events, undefined, rootData);
  const found = storedSearchPolicy(config);
  return {
    tasks,
    scenario,
    tree,
    chosen: found ? found.policy.finalChoice(tree) : null,
    method: found?.method ?? null,
    policy: found?.policy ?? null,
  };
}

/** The dollars of a node's work: the summed price, and whether some of it had none. */
export type NodeCost = Pick<WorkUsage, "costUsd" | "unpriced">;

/**
 * What each node's work cost, by node id: its making and its evaluations, and the improvements
 * of it that gave no child (charged to the parent); and how many of those failed, per parent.
 */
export function nodeSpending(
  tree: SearchTree,
  events: readonly SearchEvent[],
): { spent: NodeCost[]; failed: number[] } {
  const spent = tree.nodes.map((): NodeCost => ({ costUsd: 0 }));
  const failed = new Array<number>(tree.size).fill(0);
  const spend = (id: number, usage: WorkUsage) => {
    const at = spent[id] as NodeCost;
    at.costUsd += usage.costUsd;
    if (usage.unpriced) at.unpriced = true;
  };
  for (const event of events) {
    if (event.type === "improvement_finished" || event.type === "evaluation_finished") {
      spend(event.node, event.usage);
    } else if (event.type === "improvement_failed") {
      spend(event.parent, event.usage);
      failed[event.parent] = (failed[event.parent] as number) + 1;
    }
  }
  return { spent, failed };
}

/** A cost as reports give it: the priced part rounded (null when nothing was priced), `unpriced`. */
export function costFields(usage: NodeCost): CostFields {
  const { costUsd, unpriced } = workCost(usage);
  return {
    costUsd: costUsd === null ? null : Number(costUsd.toFixed(6)),
    ...(unpriced ? { unpriced } : {}),
  };
}

/** The node ids from the root down to `id`. */
export function pathTo(tree: SearchTree, id: NodeId): NodeId[] {
  const path: NodeId[] = [];
  for (let at: NodeId | null = id; at !== null; at = tree.node(at).parent) path.unshift(at);
  return path;
}
