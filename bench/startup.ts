/**
 * `npm run bench`: how fast the CLI starts. Light commands (`clade envs`, `clade --help`,
 * `clade runs`) load only what they use, so each must finish in under 300 ms (issue 8). Each
 * figure prints as one JSON line with the median wall-clock time of a whole process and its ratio
 * to a baseline measured in the same run: `node -e 0`, Node's own start-up.
 *
 * The commands run in interleaved rounds, so drift in machine load affects all alike; one
 * round first warms the file cache. Runs `bin/clade.js`, i.e. the compiled CLI (npm run bench
 * builds it first), or the clade.js given as the first argument (to compare with another build).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { findEnv, RunStore, resolveAgent, runEvaluation } from "../dist/index.js";

const ROUNDS = 15;
const TARGET_MS = 300;
const BIN = resolve(process.argv[2] ?? join(import.meta.dirname, "../bin/clade.js"));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Wall-clock milliseconds of one process, from spawn to exit. */
function time(args: readonly string[]): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  const ms = performance.now() - start;
  if (result.status !== 0) {
    throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  }
  return ms;
}

/** A store holding one finished run (maze, reference agent, 10 tasks), for `clade runs`. */
async function makeStore(path: string): Promise<void> {
  const env = findEnv("maze");
  const store = RunStore.open(path);
  try {
    const tasks = Array.from({ length: 10 }, (_, i) => i);
    await runEvaluation({
      store,
      env,
      agent: resolveAgent("reference", env),
      settings: {
        runId: "bench",
        tasks,
        taskSpec: "0-9",
        samples: 1,
        maxTurns: env.info.maxSteps,
        timeoutMs: 60_000,
        seed: 0,
        concurrency: 4,
      },
    });
  } finally {
    store.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "clade-bench-startup-"));
try {
  const db = join(dir, "clade.db");
  await makeStore(db);
  const commands: Record<string, readonly string[]> = {
    baseline: ["-e", "0"],
    envs: [BIN, "envs"],
    help: [BIN, "--help"],
    runs: [BIN, "runs", "--db", db],
  };
  const samples: Record<string, number[]> = {};
  for (const name of Object.keys(commands)) samples[name] = [];
  for (const args of Object.values(commands)) time(args); // warm the file cache
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, args] of Object.entries(commands)) samples[name]?.push(time(args));
  }
  const baseline = median(samples.baseline ?? []);
  for (const [name, args] of Object.entries(commands)) {
    if (name === "baseline") continue;
    const value = median(samples[name] ?? []);
    process.stdout.write(
      `${JSON.stringify({
        name: `startup_${name}_ms`,
        command: `clade ${args
          .slice(1)
          .map((a) => (a === db ? "<temp store>" : a))
          .join(" ")}`,
        value: Math.round(value),
        unit: "ms, median wall clock",
        ratio: Number((value / baseline).toFixed(2)),
        baseline: Math.round(baseline),
        baseline_unit: "ms, node -e 0",
        runs: ROUNDS,
        target: `< ${TARGET_MS}`,
        pass: value < TARGET_MS,
      })}\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
