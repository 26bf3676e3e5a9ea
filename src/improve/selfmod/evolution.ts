/**
 * A self-modification search over agent folders (the Huxley-Gödel Machine and its baselines on
 * real agents): the search engine (src/improve/search) with
 * - the improver of improver.ts (what to fix → diagnosis → implementation → validation), whose
 *   checks and smoke episode run in the sandbox,
 * - an evaluator that runs one episode of a node's agent, in the sandbox, per task,
 * - nodes stored as unified diffs from their parent (lineage.ts) in the search's event log, and
 *   each node's episodes as a stored run (evaluator.ts), all in one SQLite file.
 * Running the same search id again resumes it: the configuration must match, the root agent is
 * read back from it, and work that was in flight is dispatched again.
 */

import { runAgentTests, runTypecheck } from "../../agent/folder/checks.js";
import { type AgentFiles, agentFilesHash, agentManifest } from "../../agent/folder/files.js";
import type { EnvDefinition } from "../../env/types.js";
import type { Model } from "../../model/types.js";
import type { SandboxMode } from "../../sandbox/index.js";
import type { RunStore } from "../../store/run-store.js";
import { type JsonValue, type SearchEvent, SearchStore } from "../../store/search-log.js";
import { runSearch, type SearchResult } from "../search/engine.js";
import { createPolicy, type Method, type MethodHyperparameters } from "../search/policies/index.js";
import type { SearchTree } from "../search/tree.js";
import {
  createAgentEvaluator,
  type EpisodeSettings,
  episodeUsage,
  runFolderEpisode,
  storedEvaluations,
} from "./evaluator.js";
import { createAgentImprover, type ImproverChecks } from "./improver.js";
import { AgentLineage } from "./lineage.js";

export interface ModelRole {
  /** What the configuration stores (the public spec: no credentials). */
  spec: string;
  client: Model;
}

export interface AgentEvolutionOptions {
  /** The search's id; its nodes' runs are `<id>.n<node>`. */
  searchId: string;
  /** The store holding the search's log and its nodes' runs (one SQLite file). */
  store: RunStore;
  /** The starting agent: its files, and where they came from (kept in the configuration). */
  agent: { files: AgentFiles; path: string };
  env: EnvDefinition;
  tasks: readonly number[];
  /** The task selection as the user wrote it (kept in the configuration). */
  taskSpec: string;
  method: Method;
  hyperparameters?: MethodHyperparameters;
  /** T: the budget, in task evaluations of non-root nodes. */
  T: number;
  /** W: workers (improvements and evaluations in flight at once). */
  W: number;
  seed: number;
  /** The agent's model (`--model`). */
  model?: ModelRole;
  /** The model that diagnoses and implements self-modifications (`--modify-model`). */
  modifyModel: ModelRole;
  budgetUsd?: number;
  episode: EpisodeSettings;
  mode: SandboxMode;
  /** The improver's typecheck and tests; default: in the sandbox. */
  checks?: ImproverChecks;
  /** Failed improvements in a row that stop the search (the engine's default otherwise). */
  maxFailedImprovementsInARow?: number;
  onEvent?: (event: SearchEvent, tree: SearchTree) => void;
  signal?: AbortSignal;
}

export interface AgentEvolution {
  result: SearchResult;
  config: Record<string, JsonValue>;
  lineage: AgentLineage;
}

/** The search's stored configuration: what must match for a resume. */
export function evolutionConfig(options: AgentEvolutionOptions): Record<string, JsonValue> {
  const manifest = agentManifest(options.agent.files);
  return {
    kind: "agent",
    method: options.method,
    hyperparameters: createPolicy(options.method, options.hyperparameters).hyperparameters,
    seed: options.seed,
    budget: options.T,
    workers: options.W,
    env: options.env.info.name,
    envVersion: options.env.info.version,
    tasks: options.taskSpec,
    agent: {
      name: manifest.name,
      path: options.agent.path,
      sha256: agentFilesHash(options.agent.files),
      files: Object.fromEntries(options.agent.files),
    },
    model: options.model?.spec ?? null,
    modifyModel: options.modifyModel.spec,
    maxTurns: options.episode.maxTurns,
    timeoutMs: options.episode.timeoutMs,
    episodeSeed: options.episode.seed,
    sandbox: options.mode,
  };
}

/** The root agent's files as a stored configuration holds them. */
export function rootFilesOf(config: Record<string, JsonValue>): AgentFiles {
  const agent = config.agent as { files?: Record<string, string> } | null;
  return new Map(Object.entries(agent?.files ?? {}));
}

export async function runAgentEvolution(options: AgentEvolutionOptions): Promise<AgentEvolution> {
  const { store, searchId, env, mode } = options;
  const searches = new SearchStore(store.db);
  const config = evolutionConfig(options);
  const { log } = searches.beginSearch(searchId, config);
  const lineage = new AgentLineage(options.agent.files);
  const tracked = lineage.track(log);
  const checks: ImproverChecks = options.checks ?? {
    typecheck: (files, signal) => runTypecheck(files, { mode, signal }),
    tests: (files, signal) => runAgentTests(files, { mode, signal }),
  };
  const model = options.model?.client;
  const evaluator = createAgentEvaluator({
    searchId,
    store,
    env,
    lineage,
    mode,
    episode: options.episode,
    identity: { tasks: options.taskSpec },
    ...(model ? { model } : {}),
  });
  const improver = createAgentImprover({
    modifyModel: options.modifyModel.client,
    seed: options.seed,
    checks,
    nodeFiles: async (node) => lineage.files(node.id),
    evaluationsOf: async (node) => storedEvaluations(store, searchId, node.id),
    smoke: async (files, signal) => {
      const record = await runFolderEpisode({
        files,
        env,
        task: options.tasks[0] ?? 0,
        mode,
        episode: options.episode,
        signal,
        ...(model ? { model } : {}),
      });
      const usage = episodeUsage(record);
      return record.outcome === "error"
        ? { ok: false, reason: `${record.endReason}: ${record.error ?? "error"}`, usage }
        : { ok: true, usage };
    },
  });
  try {
    const result = await runSearch({
      policy: createPolicy(options.method, options.hyperparameters),
      improver,
      evaluator,
      tasks: options.tasks,
      T: options.T,
      W: options.W,
      seed: options.seed,
      log: tracked,
      ...(options.budgetUsd !== undefined ? { budgetUsd: options.budgetUsd } : {}),
      ...(options.maxFailedImprovementsInARow !== undefined
        ? { maxFailedImprovementsInARow: options.maxFailedImprovementsInARow }
        : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    const finished = result.stopReason === "budget" || result.stopReason === "exhausted";
    searches.setStatus(
      searchId,
      finished ? "complete" : "stopped",
      finished ? null : result.stopReason,
    );
    return { result, config, lineage };
  } catch (error) {
    searches.setStatus(searchId, "stopped", "error");
    throw error;
  }
}
