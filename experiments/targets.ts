/**
 * The embedded policy's learning targets (docs/experiments/scalinginter.md, "Targets"): clade
 * train's defaults (TRAIN_DEFAULTS, seed 0) on maze, gridworld and textcraft's tasks of crafting
 * depth ≤ 2, each stopped at 10 CPU-minutes of training (evaluations not counted) or its step
 * limit; greedy success on the held-out test tasks every few steps: the curve.
 *
 *   npx tsx experiments/targets.ts [--env maze,gridworld,textcraft] [--out FILE] [--report]
 *
 * Each finished environment is appended to FILE (JSON lines; default
 * experiments/results/targets.jsonl) and skipped when the script runs again. CPU time is the
 * process's own (user + system), so other work on the machine slows the wall clock, not the
 * budget, though sharing a core's caches makes it somewhat larger.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { findEnv } from "../src/env/registry.js";
import { depthForIndex } from "../src/env/textcraft/task.js";
import { parseTaskRange } from "../src/eval/task-range.js";
import { evaluatePolicy, TRAIN_DEFAULTS, train } from "../src/improve/rl/train/index.js";

/** The budget: training CPU seconds, on one core (the trainer is single-threaded). */
const CPU_BUDGET_S = 600;
/** Step limits, and greedy test evaluations every this many steps. */
const PLAN = {
  maze: { steps: 300, evalEvery: 20, target: 0.9 },
  gridworld: { steps: 200, evalEvery: 10, target: 0.8 },
  textcraft: { steps: 200, evalEvery: 10, target: 0.6 },
} as const;
type EnvName = keyof typeof PLAN;

interface CurvePoint {
  step: number;
  horizon: number;
  trainSuccess: number;
  testSuccess: number;
  cpuSeconds: number;
}

interface TargetResult {
  env: EnvName;
  trainTasks: number;
  testTasks: number;
  target: number;
  curve: CurvePoint[];
  best: CurvePoint | null;
  final: CurvePoint | null;
  stoppedBy: "budget" | "steps";
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

async function runTarget(name: EnvName): Promise<TargetResult> {
  const env = findEnv(name);
  const keep = name === "textcraft" ? (i: number) => depthForIndex(i) <= 2 : () => true;
  const trainTasks = parseTaskRange("train", env.info).filter(keep);
  const testTasks = parseTaskRange("test", env.info).filter(keep);
  const plan = PLAN[name];
  const started = process.cpuUsage();
  let evalCpu = 0;
  const curve: CurvePoint[] = [];
  const stop = new AbortController();
  await train({
    env,
    trainTasks,
    steps: plan.steps,
    seed: 0,
    signal: stop.signal,
    onStep: async (m, model) => {
      const trainCpu = cpuSeconds(started) - evalCpu;
      const last = trainCpu >= CPU_BUDGET_S || m.step + 1 === plan.steps;
      if (last) stop.abort("budget");
      if ((m.step + 1) % plan.evalEvery !== 0 && !last) return;
      const before = cpuSeconds(started);
      const test = await evaluatePolicy({ env, policy: model, tasks: testTasks });
      evalCpu += cpuSeconds(started) - before;
      const point = {
        step: m.step + 1,
        horizon: m.horizon,
        trainSuccess: m.successRate,
        testSuccess: test.successRate,
        cpuSeconds: Math.round(trainCpu),
      };
      curve.push(point);
      process.stderr.write(
        `${name} step ${point.step} (horizon ${point.horizon}): train ${point.trainSuccess.toFixed(2)}, ` +
          `test ${point.testSuccess.toFixed(3)}, ${point.cpuSeconds} CPU s\n`,
      );
    },
  });
  const final = curve.at(-1) ?? null;
  const best = curve.reduce<CurvePoint | null>(
    (b, p) => (b === null || p.testSuccess > b.testSuccess ? p : b),
    null,
  );
  return {
    env: name,
    trainTasks: trainTasks.length,
    testTasks: testTasks.length,
    target: plan.target,
    curve,
    best,
    final,
    stoppedBy: (final?.step ?? 0) < plan.steps ? "budget" : "steps",
  };
}

function report(results: readonly TargetResult[]): string {
  const lines = [
    `Defaults: ${TRAIN_DEFAULTS.algo}, ${TRAIN_DEFAULTS.schedule}, ${TRAIN_DEFAULTS.batchTasks} tasks × ${TRAIN_DEFAULTS.groupSize} samples, seed 0`,
    "| env | target | final test success (step, CPU s) | best | curve (step: test success) |",
    "|---|---|---|---|---|",
  ];
  for (const r of results) {
    const f = r.final;
    lines.push(
      `| ${r.env} | ${r.target} | ${f ? `${f.testSuccess.toFixed(2)} (${f.step}, ${f.cpuSeconds})` : "-"} | ` +
        `${r.best ? r.best.testSuccess.toFixed(2) : "-"} | ${r.curve.map((p) => `${p.step}: ${p.testSuccess.toFixed(2)}`).join(", ")} |`,
    );
  }
  return lines.join("\n");
}

const { values } = parseArgs({
  options: {
    env: { type: "string", default: Object.keys(PLAN).join(",") },
    out: { type: "string", default: "experiments/results/targets.jsonl" },
    report: { type: "boolean", default: false },
  },
});
const names = values.env.split(",") as EnvName[];
for (const name of names) {
  if (!(name in PLAN)) throw new Error(`--env: unknown "${name}" (maze, gridworld, textcraft)`);
}
const done: TargetResult[] = existsSync(values.out)
  ? readFileSync(values.out, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as TargetResult)
  : [];
if (!values.report) {
  mkdirSync(dirname(values.out), { recursive: true });
  for (const name of names) {
    if (done.some((r) => r.env === name)) continue;
    const result = await runTarget(name);
    appendFileSync(values.out, `${JSON.stringify(result)}\n`);
    done.push(result);
  }
}
console.log(report(done));
