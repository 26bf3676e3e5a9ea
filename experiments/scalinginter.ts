/**
 * ScalingInter-RL at small scale (docs/experiments/scalinginter.md): the embedded policy trained
 * with a fixed short horizon, a fixed long horizon and ScalingInter's growing horizons, on maze
 * and on textcraft's tasks of crafting depth ≤ 2, five seeds each; final greedy success on the
 * held-out test tasks, and whether training collapsed.
 *
 *   npx tsx experiments/scalinginter.ts [--out FILE] [--shard I/N] [--seeds K] [--report]
 *
 * Every finished run is appended to FILE (JSON lines; default
 * experiments/results/scalinginter.jsonl) and skipped when the script runs again, so a killed
 * experiment resumes where it stopped; --shard I/N runs every N-th configuration (one process
 * per core); --report prints the tables from FILE alone.
 */

import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { findEnv } from "../src/env/registry.js";
import { depthForIndex } from "../src/env/textcraft/task.js";
import type { EnvDefinition } from "../src/env/types.js";
import { parseTaskRange } from "../src/eval/task-range.js";
import { evaluatePolicy, type StepMetrics, train } from "../src/improve/rl/train/index.js";
import { readResults } from "./results-file.js";

// ---- The design -----------------------------------------------------------------------------
/** Training steps per run, and the ScalingInter stage length (steps / 3). */
const STEPS = { maze: 60, textcraft: 45 } as const;
/** Horizons: short, the middle stage, long (maze and textcraft both allow at least 40 steps). */
const SHORT = 10;
const MIDDLE = 20;
const LONG = 40;
const SEEDS = 5;
/** A run collapsed when its last 5-step mean training success fell below half its best 5-step mean (best ≥ 0.1). */
const COLLAPSE_WINDOW = 5;
const COLLAPSE_FRACTION = 0.5;
const COLLAPSE_MIN_PEAK = 0.1;

type EnvName = keyof typeof STEPS;
type ScheduleName = "short" | "long" | "scalinginter";

function scheduleOf(name: ScheduleName, steps: number): string {
  if (name === "short") return `fixed:${SHORT}`;
  if (name === "long") return `fixed:${LONG}`;
  return `scaling:${SHORT},${MIDDLE},${LONG}@${Math.ceil(steps / 3)}`;
}

/** Train and test tasks: maze's whole splits; textcraft's tasks of depth ≤ 2. */
function tasksOf(env: EnvDefinition): { train: number[]; test: number[] } {
  const keep =
    env.info.name === "textcraft" ? (i: number) => depthForIndex(i) <= 2 : (_: number) => true;
  return {
    train: parseTaskRange("train", env.info).filter(keep),
    test: parseTaskRange("test", env.info).filter(keep),
  };
}

interface RunResult {
  env: EnvName;
  schedule: ScheduleName;
  seed: number;
  steps: number;
  testSuccess: number;
  testEpisodes: number;
  /** Training success per step (sampled play on the step's batch). */
  trainSuccess: number[];
  collapsed: boolean;
  envSteps: number;
  cpuSeconds: number;
}

function windowMeans(xs: readonly number[], w: number): number[] {
  const out: number[] = [];
  for (let i = 0; i + w <= xs.length; i++) {
    out.push(xs.slice(i, i + w).reduce((a, b) => a + b, 0) / w);
  }
  return out;
}

function collapsed(trainSuccess: readonly number[]): boolean {
  const means = windowMeans(trainSuccess, COLLAPSE_WINDOW);
  if (means.length === 0) return false;
  const peak = Math.max(...means);
  const last = means[means.length - 1] as number;
  return peak >= COLLAPSE_MIN_PEAK && last < COLLAPSE_FRACTION * peak;
}

async function runOne(envName: EnvName, schedule: ScheduleName, seed: number): Promise<RunResult> {
  const env = findEnv(envName);
  const tasks = tasksOf(env);
  const steps = STEPS[envName];
  const cpu0 = process.cpuUsage();
  const result = await train({
    env,
    trainTasks: tasks.train,
    steps,
    seed,
    schedule: scheduleOf(schedule, steps),
  });
  const used = process.cpuUsage(cpu0);
  // Greedy test episodes run to the environment's own step limit, whatever the training horizon.
  const test = await evaluatePolicy({ env, policy: result.model, tasks: tasks.test });
  const curve = result.metrics.map((m: StepMetrics) => m.successRate);
  return {
    env: envName,
    schedule,
    seed,
    steps,
    testSuccess: test.successRate,
    testEpisodes: test.episodes,
    trainSuccess: curve,
    collapsed: collapsed(curve),
    envSteps: result.metrics.at(-1)?.totalEnvSteps ?? 0,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

// ---- Report ---------------------------------------------------------------------------------
/** Student's t quantile (0.975) for n − 1 degrees of freedom, n ≤ 11. */
const T975 = [Number.NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

function meanInterval(xs: readonly number[]): { mean: number; half: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, half: Number.NaN };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  return { mean, half: ((T975[n - 1] ?? 1.96) * sd) / Math.sqrt(n) };
}

function report(results: readonly RunResult[]): string {
  const lines = [
    "| env | schedule | seeds | test success, mean ± 95 % t-interval | per seed | train success, first → last third | collapsed | CPU min per run |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const env of Object.keys(STEPS) as EnvName[]) {
    for (const schedule of ["short", "long", "scalinginter"] as ScheduleName[]) {
      const runs = results
        .filter((r) => r.env === env && r.schedule === schedule)
        .sort((a, b) => a.seed - b.seed);
      if (runs.length === 0) continue;
      const { mean, half } = meanInterval(runs.map((r) => r.testSuccess));
      const cpu = runs.reduce((a, r) => a + r.cpuSeconds, 0) / runs.length / 60;
      const third = (r: RunResult, which: 0 | 2) => {
        const n = Math.floor(r.trainSuccess.length / 3);
        const part = which === 0 ? r.trainSuccess.slice(0, n) : r.trainSuccess.slice(-n);
        return part.reduce((a, b) => a + b, 0) / part.length;
      };
      const early = runs.reduce((a, r) => a + third(r, 0), 0) / runs.length;
      const late = runs.reduce((a, r) => a + third(r, 2), 0) / runs.length;
      lines.push(
        `| ${env} | ${scheduleOf(schedule, STEPS[env])} | ${runs.length} | ` +
          `${mean.toFixed(3)} ± ${half.toFixed(3)} | ${runs.map((r) => r.testSuccess.toFixed(2)).join(", ")} | ` +
          `${early.toFixed(2)} → ${late.toFixed(2)} | ` +
          `${runs.filter((r) => r.collapsed).length} / ${runs.length} | ${cpu.toFixed(1)} |`,
      );
    }
  }
  return lines.join("\n");
}

// ---- Main -----------------------------------------------------------------------------------
const { values } = parseArgs({
  options: {
    out: { type: "string", default: "experiments/results/scalinginter.jsonl" },
    shard: { type: "string", default: "0/1" },
    seeds: { type: "string", default: String(SEEDS) },
    report: { type: "boolean", default: false },
  },
});
const out = values.out;
const [shard, shards] = values.shard.split("/").map(Number) as [number, number];
if (!(shards >= 1 && shard >= 0 && shard < shards)) {
  throw new Error(`--shard must be I/N with 0 ≤ I < N, got ${values.shard}`);
}
const seeds = Number(values.seeds);
const done = readResults<RunResult>(out);

if (!values.report) {
  mkdirSync(dirname(out), { recursive: true });
  const configs: [EnvName, ScheduleName, number][] = [];
  for (let seed = 0; seed < seeds; seed++) {
    for (const env of Object.keys(STEPS) as EnvName[]) {
      for (const schedule of ["short", "long", "scalinginter"] as ScheduleName[]) {
        configs.push([env, schedule, seed]);
      }
    }
  }
  const mine = configs.filter((_, i) => i % shards === shard);
  for (const [i, [env, schedule, seed]] of mine.entries()) {
    if (done.some((r) => r.env === env && r.schedule === schedule && r.seed === seed)) continue;
    const result = await runOne(env, schedule, seed);
    appendFileSync(out, `${JSON.stringify(result)}\n`);
    done.push(result);
    process.stderr.write(
      `[${i + 1}/${mine.length}] ${env} ${schedule} seed ${seed}: test ${result.testSuccess.toFixed(3)}` +
        `${result.collapsed ? " (collapsed)" : ""}, ${(result.cpuSeconds / 60).toFixed(1)} CPU min\n`,
    );
  }
}
console.log(report(done));
