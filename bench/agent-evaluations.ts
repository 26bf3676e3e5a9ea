/**
 * `npm run bench`: how many evaluations a self-modification search finishes per second (issue 10:
 * "evaluations per second with a zero-latency scripted model at W = 8, against the same loop
 * without the sandbox"). Each figure prints as one JSON line with its absolute value and its
 * ratio to the baseline measured in the same run: the same loop with mode "none" (the agent
 * folder's harness as a plain child process) instead of "bwrap".
 *
 * The loop is the search's evaluation path as `clade evolve` runs it, less the improver: runSearch
 * (HGM policy, W = 8 workers) with createAgentEvaluator over a node lineage tracked from the
 * search's log, the log and each node's episodes in one SQLite file; each evaluation is one
 * episode of the template agent (agentTemplate()) on gridworld. The model answers at once with
 * a fixed valid action and episodes stop after MAX_TURNS turns, so the figure is the overhead of
 * an evaluation (a workspace, the sandbox, node + tsx starting the harness, the channel, the
 * store), not the agent's work. The improver is a stub that returns, at once, a child with an
 * empty patch (AgentLineage applies "" as no change): every node is the template agent, and the
 * search's wall clock goes to evaluations. Each search evaluates the root on every task first,
 * then T evaluations of the policy's choosing.
 *
 * Rounds alternate between the two modes so that drift in machine load affects both alike; a
 * warm-up search of each (one wave of W evaluations) comes first. agent_evaluations_per_s is the
 * median over rounds of evaluations / the search's wall clock (ramp-up and drain included), and
 * ms_per_evaluation its inverse; agent_evaluation_ms is the median latency of one evaluation as
 * the engine records it (dispatch to finish), at W = 8: with fewer cores than W, it includes the
 * wait for a core. Both depend on what else the machine runs: the first line says how loaded it
 * was at the start.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { agentTemplate } from "../src/agent/folder/template.js";
import { findEnv } from "../src/env/registry.js";
import { type Improver, runSearch } from "../src/improve/search/engine.js";
import { createPolicy } from "../src/improve/search/policies/index.js";
import { createAgentEvaluator } from "../src/improve/selfmod/evaluator.js";
import { AgentLineage } from "../src/improve/selfmod/lineage.js";
import type { Model, ModelResponse } from "../src/model/types.js";
import { checkSandbox, type SandboxMode } from "../src/sandbox/index.js";
import { RunStore } from "../src/store/run-store.js";
import { SearchStore } from "../src/store/search-log.js";

const ENV = "gridworld";
const W = 8;
const MAX_TURNS = 4;
/**
 * Tasks of the search (gridworld's train split starts at 100): the root's wave is one evaluation
 * of each. Enough that the policy never runs out of open tasks: the scripted agent fails every
 * episode, and HGM expands only nodes with a pass, so the search has the root and its initial
 * expansions (3 at W = 8) to evaluate, TASKS.length evaluations each.
 */
const TASKS = Array.from({ length: 16 }, (_, i) => 100 + i);
/** Evaluations of non-root nodes per round (the search's T): a round is TASKS.length + T. */
const T = 8;
const ROUNDS = 3;
const MODES: SandboxMode[] = ["bwrap", "none"];
const REPLY = "Thought: turning costs nothing.\n\nAction:\nturn left";

const response: ModelResponse = {
  content: REPLY,
  toolCalls: [],
  usage: { inputTokens: 0, outputTokens: 0 },
  finishReason: "stop",
  model: "scripted",
};
/** The zero-latency scripted model: the same valid reply, at once. */
const model: Model = { id: "bench:scripted", complete: async () => response };

/** Makes every child at once, with no change: the search's time goes to evaluations. */
const improver: Improver = { improve: async () => ({ child: { data: { patch: "" } } }) };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

try {
  await checkSandbox();
} catch (error) {
  process.stderr.write(`bench/agent-evaluations: ${(error as Error).message}\n`);
  process.exit(1);
}

const env = findEnv(ENV);
const files = agentTemplate();
const dir = mkdtempSync(join(tmpdir(), "clade-bench-evaluations-"));
const store = RunStore.open(join(dir, "search.sqlite"));
const searches = new SearchStore(store.db);
let searchCount = 0;

interface Round {
  evaluations: number;
  seconds: number;
  /** Milliseconds of each evaluation, dispatch to finish. */
  latencies: number[];
}

/** One search in `mode`: the root's wave over `tasks`, then `budget` evaluations of its children. */
async function search(mode: SandboxMode, tasks: readonly number[], budget: number): Promise<Round> {
  const searchId = `bench-${mode}-${searchCount++}`;
  const { log } = searches.beginSearch(searchId, { kind: "agent", bench: true, sandbox: mode });
  const lineage = new AgentLineage(files);
  const evaluator = createAgentEvaluator({
    searchId,
    store,
    env,
    lineage,
    mode,
    model,
    episode: { maxTurns: MAX_TURNS, timeoutMs: 60_000, seed: 0 },
    identity: { tasks: "bench" },
  });
  const latencies: number[] = [];
  const errors: string[] = [];
  const start = performance.now();
  const result = await runSearch({
    policy: createPolicy("hgm"),
    improver,
    evaluator,
    tasks,
    T: budget,
    W,
    seed: searchCount,
    log: lineage.track(log),
    onEvent: (event) => {
      if (event.type !== "evaluation_finished") return;
      latencies.push(event.durationMs);
      if (event.outcome === "error") errors.push(event.reason ?? "error");
    },
  });
  const seconds = (performance.now() - start) / 1000;
  searches.setStatus(searchId, "complete");
  if (errors.length > 0) {
    throw new Error(`${errors.length} evaluations in mode ${mode} errored: ${errors[0]}`);
  }
  if (result.stopReason !== "budget" || latencies.length !== tasks.length + budget) {
    throw new Error(
      `the search in mode ${mode} stopped (${result.stopReason}) after ${latencies.length} evaluations, not ${tasks.length + budget}`,
    );
  }
  return { evaluations: latencies.length, seconds, latencies };
}

const rounds: Record<SandboxMode, Round[]> = { bwrap: [], none: [] };
const load = loadavg()[0] as number;
try {
  for (const mode of MODES) await search(mode, TASKS.slice(0, W), 0); // warm-up: one wave
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
      rounds[mode].push(await search(mode, TASKS, T));
    }
  }
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}

const rate = (mode: SandboxMode) =>
  median(rounds[mode].map((round) => round.evaluations / round.seconds));
const latency = (mode: SandboxMode) => median(rounds[mode].flatMap((round) => round.latencies));
const evaluations = (mode: SandboxMode) =>
  rounds[mode].reduce((sum, round) => sum + round.evaluations, 0);

const loop = `runSearch (hgm, W = ${W}) + createAgentEvaluator, template agent on ${ENV}, ${MAX_TURNS} turns, zero-latency model`;
const bwrapRate = rate("bwrap");
const noneRate = rate("none");
const lines = [
  {
    name: "agent_evaluations_per_s",
    loop,
    value: Number(bwrapRate.toFixed(2)),
    unit: "evaluations/s, sandbox (bwrap), median over rounds",
    ratio: Number((bwrapRate / noneRate).toFixed(2)),
    baseline: Number(noneRate.toFixed(2)),
    baseline_unit: 'evaluations/s, the same loop with mode "none" (plain child process)',
    ms_per_evaluation: Number((1000 / bwrapRate).toFixed(1)),
    baseline_ms_per_evaluation: Number((1000 / noneRate).toFixed(1)),
    evaluations: evaluations("bwrap"),
    baseline_evaluations: evaluations("none"),
    rounds: ROUNDS,
    cpus: availableParallelism(),
    load_1m_at_start: Number(load.toFixed(2)),
  },
  {
    name: "agent_evaluation_ms",
    loop,
    value: Number(latency("bwrap").toFixed(1)),
    unit: `ms, median latency of one evaluation (dispatch to finish) at W = ${W}, sandbox (bwrap)`,
    ratio: Number((latency("bwrap") / latency("none")).toFixed(2)),
    baseline: Number(latency("none").toFixed(1)),
    baseline_unit: 'ms, the same with mode "none"',
    overhead_ms: Number((latency("bwrap") - latency("none")).toFixed(1)),
    evaluations: evaluations("bwrap"),
  },
];
for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
