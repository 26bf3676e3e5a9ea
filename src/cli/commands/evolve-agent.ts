/**
 * `clade evolve --agent DIR --env ENV --tasks SPEC --method M --budget T --workers W --model SPEC
 * --modify-model SPEC --run-id ID [--budget-usd N]`: a self-modification search over a real
 * agent folder (src/improve/selfmod). Every agent runs in the sandbox; the models are served from
 * here with clade's retries, limits, cache and accounting. The same command resumes the search.
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { readAgentFolder } from "../../agent/folder/files.js";
import { findEnv } from "../../env/registry.js";
import { formatTaskRange, parseTaskRange } from "../../eval/task-range.js";
import { lowerQuantile } from "../../improve/search/policy.js";
import type { SearchTree } from "../../improve/search/tree.js";
import { nodeRunId } from "../../improve/selfmod/evaluator.js";
import { type ModelRole, runAgentEvolution } from "../../improve/selfmod/evolution.js";
import { createModelClient } from "../../model/client.js";
import { loadConfig } from "../../model/config.js";
import { assertPricedForBudget } from "../../model/pricing.js";
import { checkKey, publicModelSpec, resolveModel } from "../../model/resolve.js";
import { checkSandbox, defaultSandboxMode } from "../../sandbox/index.js";
import { RunStore } from "../../store/run-store.js";
import { type SearchEvent, workCost } from "../../store/search-log.js";
import { type CliIo, UsageError } from "../io.js";
import { formatCost } from "../report.js";
import {
  bestSoFar,
  type SearchRequestBase,
  searchExitCode,
  searchProgressJson,
  throttled,
} from "./evolve.js";

export interface AgentSearchRequest extends SearchRequestBase {
  agent: string;
  model?: string;
  modifyModel: string;
  budgetUsd?: number;
  maxTurns?: number;
  timeoutSeconds: number;
  config?: string;
}

const round = (value: number, digits = 6) => Number(value.toFixed(digits));

export async function agentSearch(
  request: AgentSearchRequest,
  signal: AbortSignal,
  io: CliIo,
): Promise<number> {
  // Everything is checked before the store is opened: bad input writes nothing.
  const env = findEnv(request.env);
  const tasks = [...new Set(parseTaskRange(request.tasks, env.info))].sort((a, b) => a - b);
  if (tasks.length === 0) throw new UsageError("--tasks selects no task");
  const agentPath = resolve(request.agent);
  let files: Map<string, string>;
  try {
    files = readAgentFolder(agentPath);
  } catch (error) {
    throw new UsageError(`--agent ${request.agent}: ${(error as Error).message}`);
  }
  const mode = defaultSandboxMode();
  if (mode === "bwrap") await checkSandbox();
  const { config } = await loadConfig(request.config);
  const resolveRole = (spec: string, flag: string) => {
    const resolved = resolveModel(spec, config);
    checkKey(resolved);
    if (request.budgetUsd !== undefined) {
      try {
        assertPricedForBudget(resolved);
      } catch (error) {
        throw new UsageError(`${flag}: ${(error as Error).message}`);
      }
    }
    return resolved;
  };
  const agentModel = request.model ? resolveRole(request.model, "--model") : undefined;
  const modifyModel = resolveRole(request.modifyModel, "--modify-model");

  mkdirSync(dirname(resolve(request.db)), { recursive: true });
  const store = RunStore.open(request.db);
  try {
    // No response cache: a search draws again where it asks again (a parent improved twice, an
    // unchanged prompt on a child), as the paper's samples do.
    const role = (resolved: typeof modifyModel): ModelRole => ({
      spec: publicModelSpec(resolved),
      client: createModelClient(resolved),
    });
    const { T, W, runId } = request;
    const { result } = await runAgentEvolution({
      searchId: runId,
      store,
      agent: { files, path: agentPath },
      env,
      tasks,
      taskSpec: formatTaskRange(tasks),
      method: request.method,
      T,
      W,
      seed: request.seed,
      ...(agentModel ? { model: role(agentModel) } : {}),
      modifyModel: role(modifyModel),
      ...(request.budgetUsd !== undefined ? { budgetUsd: request.budgetUsd } : {}),
      episode: {
        maxTurns: request.maxTurns ?? env.info.maxSteps,
        timeoutMs: request.timeoutSeconds * 1000,
        seed: 0,
      },
      mode,
      signal,
      onEvent: throttled(request.progress, (_event: SearchEvent, tree: SearchTree) =>
        io.stderr(`${progressLine(runId, tree, T)}\n`),
      ),
    });
    const { tree, chosen, stopReason } = result;
    if (request.progress) io.stderr(`${progressLine(runId, tree, T)}\n`);
    const exitCode = searchExitCode(stopReason, signal);
    const choice =
      chosen === null
        ? null
        : {
            node: chosen,
            s: tree.node(chosen).s,
            f: tree.node(chosen).f,
            lowerQuantile: round(lowerQuantile(tree.node(chosen), 1), 4),
            run: nodeRunId(runId, chosen),
          };
    const failures = improvementFailures(result.log.read());
    // Unpriced, never $0, when some work's models had no price (a local server).
    const cost = workCost(tree.usage);
    if (request.json) {
      const progress = searchProgressJson(result);
      io.stdout(
        `${JSON.stringify({
          schema: "clade.evolve-agent/1",
          runId,
          method: request.method,
          env: env.info.name,
          tasks: formatTaskRange(tasks),
          agent: agentPath,
          sandbox: mode,
          seed: request.seed,
          budget: T,
          workers: W,
          ...progress,
          improvements: { ...(progress.improvements as object), failureReasons: failures },
          costUsd: cost.costUsd === null ? null : round(cost.costUsd),
          ...(cost.unpriced ? { unpriced: true } : {}),
          chosen: choice,
          exitCode,
        })}\n`,
      );
      return exitCode;
    }
    const finished = stopReason === "budget" || stopReason === "exhausted";
    const lines = [
      `search ${runId}: ${request.method} on ${env.info.name} (tasks ${formatTaskRange(tasks)})` +
        (mode === "none" ? ", sandbox none (agents ran unsandboxed)" : "") +
        (result.resumed ? ` (resumed; ${result.redispatched} in flight dispatched again)` : ""),
      `  ${tree.t}/${T} evaluations (${tree.passes} passed, ${tree.fails} failed, ` +
        `${tree.errors} errored: not counted as fails), ${tree.size - 1} agents made; ` +
        `${tree.improvementsStarted} improvements, ${tree.improvementsFailed} gave no child`,
      ...Object.entries(failures).map(([reason, count]) => `    no child x${count}: ${reason}`),
      choice
        ? `  final choice: node ${choice.node} (${choice.s} passed, ${choice.f} failed); ` +
          `its episodes: clade show ${choice.run}; its folder: clade best ${runId} --out DIR`
        : "  final choice: none (no agent has a finished evaluation)",
      `  cost ${formatCost(cost)}` +
        (finished ? "" : `; stopped: ${stopReason} (run the same command to resume)`),
    ];
    io.stdout(`${lines.join("\n")}\n`);
    return exitCode;
  } finally {
    store.close();
  }
}

/** Why improvements gave no child, counted by reason (its first words: the check that failed). */
function improvementFailures(events: readonly SearchEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) {
    if (event.type !== "improvement_failed") continue;
    const reason = event.reason.split(":")[0]?.trim() || "unknown";
    counts[reason] = (counts[reason] ?? 0) + 1;
  }
  return counts;
}

function progressLine(runId: string, tree: SearchTree, T: number): string {
  return (
    `evolve ${runId}: ${tree.t}/${T} evaluations, ${tree.size - 1} agents, ` +
    `${tree.pendingImprovements} improving, best so far ${bestSoFar(tree)}, ${formatCost(workCost(tree.usage))}`
  );
}
