/**
 * `clade demo`: real work, offline. Evaluates the reference solver and the random baseline on
 * every built-in environment's test tasks and prints one table; compares the search methods on a
 * simulated self-improvement process; trains the embedded policy briefly on small mazes and runs
 * HGM over training branches of it (demo-rl.ts); runs CycleQD over experts of maze and gridworld
 * (demo-qd.ts); scores the helpdesk assistant's sessions by goal (demo-goals.ts); scores expert
 * and naive data analyses against BLADE-style ground truth (demo-blade.ts); checks the starting
 * agent folder in the sandbox.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAgentTests, runTypecheck } from "../../agent/folder/checks.js";
import { agentTemplate } from "../../agent/folder/template.js";
import { BUILTIN_ENVS } from "../../env/registry.js";
import { type Evaluation, runEvaluation } from "../../eval/evaluation.js";
import { METHODS } from "../../improve/search/policies/index.js";
import { runSimulation } from "../../improve/search/simulation/experiment.js";
import { builtinScenario } from "../../improve/search/simulation/index.js";
import type { Scenario } from "../../improve/search/simulation/scenario.js";
import { checkSandbox, defaultSandboxMode, type SandboxMode } from "../../sandbox/index.js";
import { RunStore } from "../../store/run-store.js";
import type { CliIo } from "../io.js";
import { createProgress } from "../progress.js";
import { formatInterval, formatRate, renderTable } from "../table.js";
import { type BladeDemo, bladeJson, bladeText, demoBlade } from "./demo-blade.js";
import { demoGoals, type GoalsDemo, goalsJson, goalsText } from "./demo-goals.js";
import { demoQd, qdText } from "./demo-qd.js";
import { branchesText, demoBranches, demoTraining, trainingText } from "./demo-rl.js";
import { demoView, type ViewDemo, viewText } from "./demo-view.js";
import { renderSimulation, simulationJson } from "./evolve.js";

/**
 * The reference solver runs every test task (proving each solvable); the random baseline runs
 * the first tasks with several samples, enough for its pass@k to mean something while the demo
 * stays quick (coding tasks run real test processes).
 */
const DEMO_PLAN = {
  reference: { samples: 1, tasks: Number.POSITIVE_INFINITY },
  random: { samples: 4, tasks: 20 },
} as const;

/** The simulated search of the demo: the reference's trap / stepping-stone tree, few seeds. */
const DEMO_SEARCH = { scenario: "trap", seeds: 20, budget: 800 } as const;

export async function demoCommand(
  options: { db?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  const scratch = options.db ? undefined : mkdtempSync(join(tmpdir(), "clade-demo-"));
  const dbPath = options.db ?? join(scratch as string, "demo.db");
  const store = RunStore.open(dbPath);
  const stamp = Date.now().toString(36);
  const rows = [];
  let goals: GoalsDemo;
  let blade: BladeDemo[];
  let viewer: ViewDemo;
  try {
    for (const env of BUILTIN_ENVS) {
      for (const agentName of ["reference", "random"] as const) {
        const runId = `demo-${env.info.name}-${agentName}-${stamp}`;
        const { samples, tasks: taskLimit } = DEMO_PLAN[agentName];
        const { start, end } = env.info.splits.test;
        const tasks = Array.from({ length: Math.min(end - start, taskLimit) }, (_, i) => start + i);
        const progress = createProgress(io, `${env.info.name}/${agentName}`, !options.json);
        const started = performance.now();
        let run: Evaluation;
        try {
          run = await runEvaluation({
            env,
            tasks,
            agent: agentName,
            store,
            runId,
            samples,
            timeoutMs: 60_000,
            concurrency: 4,
            failFast: false,
            onProgress: (p) => progress.update(p),
          });
        } finally {
          progress.stop();
        }
        const seconds = (performance.now() - started) / 1000;
        const { episodes, metrics } = run;
        const turns = episodes.reduce((s, e) => s + e.turns, 0);
        rows.push({
          env: env.info.name,
          agent: agentName,
          runId,
          samples,
          metrics,
          steps: turns,
          seconds,
        });
      }
    }
    // Goals: the faulty helpdesk assistant's sessions scored by goal (about a second).
    goals = await demoGoals(store, `demo-helpdesk-assistant-${stamp}`);
    // BLADE: the reference's analyses (run above) and the naive baseline's, scored (a few s).
    blade = [
      await demoBlade(store, "reference", `demo-blade-reference-${stamp}`),
      await demoBlade(store, "naive", `demo-blade-naive-${stamp}`),
    ];
    // The viewer's API over what the demo stored, before a temporary store is removed.
    viewer = await demoView(dbPath);
  } finally {
    store.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
  // A simulated self-improvement search (docs/search.md): about a second.
  const search = await runSimulation({
    scenario: builtinScenario(DEMO_SEARCH.scenario) as Scenario,
    methods: METHODS,
    seeds: DEMO_SEARCH.seeds,
    T: DEMO_SEARCH.budget,
    W: 1,
  });
  // RL: the embedded policy trained briefly (about 12 s), then HGM over branches of it (about 5 s).
  if (!options.json) io.stderr("demo: training the embedded policy on small mazes…\n");
  const training = await demoTraining();
  if (!options.json) io.stderr("demo: HGM over training branches of it…\n");
  const branches = await demoBranches(training.model, training.trainTasks, training.testTasks);
  // Quality-diversity: CycleQD over two experts of the embedded policy (about 15 s).
  if (!options.json) io.stderr("demo: CycleQD over experts of maze and gridworld…\n");
  const qd = await demoQd();
  const agentFolder = await checkStarterAgent();
  if (options.json) {
    // db: where the runs were kept, null when the store was a temporary one (now deleted).
    const { schema: _, ...searchJson } = simulationJson(search);
    io.stdout(
      `${JSON.stringify({ schema: "clade.demo/1", db: options.db ?? null, runs: rows, search: searchJson, goals: goalsJson(goals), blade: bladeJson(blade), training: training.result, branches, qd, agentFolder, view: viewer })}\n`,
    );
    return 0;
  }
  io.stdout(
    renderTable(
      [
        "env",
        "agent",
        "episodes",
        "success rate",
        "95% CI",
        "mean reward",
        "pass@k",
        "errors",
        "steps",
        "s",
      ],
      rows.map((r) => {
        const top = r.metrics.passAtK.at(-1);
        return [
          r.env,
          r.agent,
          r.metrics.episodes,
          formatRate(r.metrics.successRate),
          formatInterval(r.metrics.successRateInterval),
          formatRate(r.metrics.meanReward),
          top ? `${formatRate(top.value)} (k=${top.k})` : "n/a",
          r.metrics.errors,
          r.steps,
          r.seconds.toFixed(2),
        ];
      }),
    ),
  );
  io.stdout(
    "\nsuccess rate = successes / finished episodes (errors excluded); CI = 95 % bootstrap over tasks;\n" +
      "pass@k unbiased from n samples per task. Definitions: docs/metrics.md\n",
  );
  io.stdout(`\n${goalsText(goals)}\n`);
  io.stdout(`\n${bladeText(blade)}\n`);
  io.stdout(
    `\nSelf-improvement search, simulated (clade evolve --simulate ${DEMO_SEARCH.scenario} ` +
      `--seeds ${DEMO_SEARCH.seeds}):\n${renderSimulation(search)}`,
  );
  io.stdout(`\n${trainingText(training.result)}\n\n${branchesText(branches)}\n`);
  io.stdout(`\n${qdText(qd)}\n`);
  io.stdout(`\n${agentFolderText(agentFolder)}\n`);
  io.stdout(`\n${viewText(viewer, options.db)}\n`);
  return 0;
}

interface AgentFolderDemo {
  sandbox: SandboxMode;
  files: number;
  typecheck: { ok: boolean; seconds: number };
  tests: { ok: boolean; seconds: number };
}

/**
 * The starting agent of `clade init-agent`, checked as every self-modification is: its typecheck
 * and its own tests, in the sandbox. Null, with the reason, when the sandbox cannot run here.
 */
async function checkStarterAgent(): Promise<AgentFolderDemo | { unavailable: string }> {
  const mode = defaultSandboxMode();
  try {
    if (mode === "bwrap") await checkSandbox();
  } catch (error) {
    return { unavailable: (error as Error).message.split("\n")[0] ?? "the sandbox is unavailable" };
  }
  const files = agentTemplate("starter");
  const typecheck = await runTypecheck(files, { mode });
  const tests = await runAgentTests(files, { mode });
  const seconds = (ms: number) => Number((ms / 1000).toFixed(2));
  return {
    sandbox: mode,
    files: files.size,
    typecheck: { ok: typecheck.ok, seconds: seconds(typecheck.durationMs) },
    tests: { ok: tests.ok, seconds: seconds(tests.durationMs) },
  };
}

function agentFolderText(result: AgentFolderDemo | { unavailable: string }): string {
  if ("unavailable" in result) return `Agent folders: not checked here: ${result.unavailable}`;
  const verdict = (check: { ok: boolean; seconds: number }, what: string) =>
    `${what} ${check.ok ? "passed" : "FAILED"} (${check.seconds.toFixed(2)} s)`;
  return (
    `Agent folders (clade init-agent): the starting ReAct agent, ${result.files} files, checked ` +
    `as every self-modification is, in the sandbox (${result.sandbox}): ` +
    `${verdict(result.typecheck, "typecheck")}, ${verdict(result.tests, "its own tests")}.\n` +
    "Evolving it takes a model: clade evolve --agent DIR --model SPEC --modify-model SPEC " +
    "(docs/agents.md)."
  );
}
