/**
 * Evaluating nodes of a self-modification search: one task = one episode of the node's agent
 * folder, in the sandbox, on the search's environment, with the run's model served from here.
 * Each node's episodes are an ordinary stored run (`<search id>.n<node>`), so `clade show` reads
 * them, the improver diagnoses from them, and a search that was killed finds the episodes it
 * had already finished instead of running them again.
 */
import { folderAgentFactory } from "../../agent/folder/sandboxed-agent.js";
import type { EpisodeContext } from "../../agent/types.js";
import type { EnvDefinition } from "../../env/types.js";
import type { Model } from "../../model/types.js";
import { type EpisodeRecord, runEpisode } from "../../rollout/episode.js";
import type { SandboxMode } from "../../sandbox/index.js";
import type { RunStore, StoredEpisode } from "../../store/run-store.js";
import type { JsonValue, WorkUsage } from "../../store/search-log.js";
import type { EvaluationResult, Evaluator } from "../search/engine.js";
import type { SearchNode } from "../search/tree.js";
import type { AgentLineage } from "./lineage.js";
import type { NodeEvaluation } from "./target.js";

/** How much longer than its episode an agent's sandbox may live. */
const SANDBOX_GRACE_MS = 10_000;

/** The stored run holding a node's episodes. */
export function nodeRunId(searchId: string, node: number): string {
  return `${searchId}.n${node}`;
}

export interface EpisodeSettings {
  maxTurns: number;
  timeoutMs: number;
  /** Passed to env.reset. */
  seed: number;
}

export interface AgentEvaluatorOptions {
  searchId: string;
  store: RunStore;
  env: EnvDefinition;
  lineage: AgentLineage;
  /** The agent's model (`--model`), served to the sandboxed agent. */
  model?: Model;
  mode: SandboxMode;
  episode: EpisodeSettings;
  /** What every node's run records besides its node (the search's identity). */
  identity: Record<string, JsonValue>;
}

/** Dollars and tokens of an episode's model calls; `unpriced` when any call had no price. */
export function episodeUsage(record: Pick<EpisodeRecord, "calls">): WorkUsage {
  const usage: WorkUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  for (const call of record.calls ?? []) {
    usage.inputTokens += call.usage?.inputTokens ?? 0;
    usage.outputTokens += call.usage?.outputTokens ?? 0;
    usage.costUsd += call.costUsd;
    if (call.unpriced) usage.unpriced = true;
  }
  return usage;
}

/** Runs one episode of an agent folder's files (no store): the evaluator's and the smoke test's. */
export async function runFolderEpisode(options: {
  files: ReturnType<AgentLineage["files"]>;
  env: EnvDefinition;
  task: number;
  model?: Model;
  mode: SandboxMode;
  episode: EpisodeSettings;
  signal?: AbortSignal;
}): Promise<EpisodeRecord> {
  const factory = folderAgentFactory({
    files: options.files,
    mode: options.mode,
    // The episode's timeout ends it; the sandbox's own clocks back that up, close behind.
    limits: {
      wallMs: options.episode.timeoutMs + SANDBOX_GRACE_MS,
      cpuSeconds: Math.ceil((options.episode.timeoutMs + SANDBOX_GRACE_MS) / 1000),
    },
    ...(options.model ? { model: options.model } : {}),
  });
  const context: EpisodeContext = {
    env: options.env.info,
    taskIndex: options.task,
    seed: options.episode.seed,
    sampleIndex: 0,
  };
  const env = options.env.create();
  try {
    return await runEpisode({
      env,
      agent: factory.create(context),
      context,
      limits: { maxTurns: options.episode.maxTurns, timeoutMs: options.episode.timeoutMs },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } finally {
    await env.close?.().catch(() => {});
  }
}

function outcomeOf(outcome: StoredEpisode["outcome"] | EpisodeRecord["outcome"]) {
  return outcome === "success" ? "pass" : outcome === "failure" ? "fail" : "error";
}

export function createAgentEvaluator(options: AgentEvaluatorOptions): Evaluator {
  const { store, env, lineage, searchId } = options;
  const started = new Set<number>();
  const startRun = (node: SearchNode) => {
    if (started.has(node.id)) return;
    store.startRun({
      id: nodeRunId(searchId, node.id),
      env: env.info.name,
      envVersion: env.info.version,
      agent: `${searchId}/node-${node.id}`,
      config: {
        ...options.identity,
        search: searchId,
        node: node.id,
        parent: node.parent,
        maxTurns: options.episode.maxTurns,
        timeoutMs: options.episode.timeoutMs,
        seed: options.episode.seed,
        sandbox: options.mode,
      },
    });
    started.add(node.id);
  };
  return {
    async evaluate(node, task, context): Promise<EvaluationResult> {
      startRun(node);
      const runId = nodeRunId(searchId, node.id);
      // Finished before a kill, but not yet in the search's log: take it as it was.
      const stored = store
        .episodes(runId)
        .find((e) => e.taskIndex === task && (e.outcome === "success" || e.outcome === "failure"));
      if (stored) return { outcome: outcomeOf(stored.outcome), durationMs: stored.durationMs };
      const record = await runFolderEpisode({
        files: lineage.files(node.id),
        env,
        task,
        mode: options.mode,
        episode: options.episode,
        signal: context.signal,
        ...(options.model ? { model: options.model } : {}),
      });
      store.saveEpisodes(runId, [record]);
      const usage = episodeUsage(record);
      const outcome = outcomeOf(record.outcome);
      return outcome === "error"
        ? { outcome, reason: `${record.endReason}: ${record.error ?? "error"}`, usage }
        : { outcome, usage };
    },
  };
}

/** Characters of each part of an episode's log shown to the diagnosing model. */
const LOG_TURN_CHARS = 1500;

/** An episode as the diagnosing model reads it: instruction, then each turn's reply and result. */
export function episodeLog(store: RunStore, episode: StoredEpisode): string {
  const clip = (text: string) =>
    text.length > LOG_TURN_CHARS ? `${text.slice(0, LOG_TURN_CHARS)} [... clipped]` : text;
  const lines: string[] = [];
  const instruction = store.instruction(episode.id);
  if (instruction) lines.push(`## Instruction\n${clip(instruction)}`);
  if (episode.initialObservation) {
    lines.push(`## Observation 0\n${clip(episode.initialObservation.text)}`);
  }
  const calls = store.calls(episode.id);
  for (const step of store.steps(episode.id)) {
    const turnCalls = calls.filter((call) => call.turn === step.turn);
    for (const call of turnCalls) {
      if (call.error)
        lines.push(`## Model call failed (turn ${step.turn + 1})\n${clip(call.error)}`);
    }
    lines.push(`## Agent reply ${step.turn + 1}\n${clip(step.message)}`);
    if (step.message !== step.action) lines.push(`Action taken: ${clip(step.action)}`);
    lines.push(
      `## Observation ${step.turn + 1} (reward ${step.reward}${step.done ? ", done" : ""})\n` +
        clip(step.observation.text),
    );
  }
  const outcome =
    episode.outcome === "error"
      ? `error (${episode.endReason}): ${episode.error ?? ""}`
      : `${episode.outcome} (${episode.endReason}, final reward ${episode.reward})`;
  lines.push(`## Outcome\n${clip(outcome)}`);
  return lines.join("\n\n");
}

/** Context-length trouble, as providers word it. */
const CONTEXT_LENGTH =
  /context length|context window|maximum context|too many tokens|prompt is too long/i;

/** A node's finished evaluations as the improver reads them (episodes of its run). */
export function storedEvaluations(
  store: RunStore,
  searchId: string,
  node: number,
): NodeEvaluation[] {
  const runId = nodeRunId(searchId, node);
  if (!store.getRun(runId)) return [];
  return store
    .episodes(runId)
    .filter((e) => e.outcome === "success" || e.outcome === "failure" || e.outcome === "error")
    .map((episode) => {
      const calls = store.calls(episode.id);
      const contextLength =
        CONTEXT_LENGTH.test(episode.error ?? "") ||
        calls.some((call) => CONTEXT_LENGTH.test(call.error ?? ""));
      return {
        task: episode.taskIndex,
        outcome: outcomeOf(episode.outcome),
        log: episodeLog(store, episode),
        parseErrors: episode.parseErrors,
        error: episode.error,
        contextLength,
      };
    });
}
