/**
 * `npm run bench`: runner + store throughput on maze with a zero-latency (random) agent.
 * Each figure prints as one JSON line with its absolute value and its ratio to a baseline
 * measured in the same run. Targets (issue 2): ≥ 20,000 stored steps/s on one core, and
 * storage costing ≤ 30 % of the loop (stored / unstored throughput ≥ 0.7).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveAgent } from "../src/agent/registry.js";
import { findEnv } from "../src/env/registry.js";
import type { EpisodeRecord } from "../src/rollout/episode.js";
import { type EpisodeSpec, runEpisodes } from "../src/rollout/runner.js";
import { RunStore } from "../src/store/run-store.js";

const ENV = "maze";
const EPISODES = 3_000;
const CONCURRENCY = 8;
const REPEATS = 5;
const TARGET_STEPS_PER_SECOND = 20_000;
const TARGET_STORED_RATIO = 0.7;

const env = findEnv(ENV);
const agent = resolveAgent("random", env);
const plan: EpisodeSpec[] = Array.from({ length: EPISODES }, (_, i) => ({
  taskIndex: i % 100,
  sampleIndex: Math.floor(i / 100),
  seed: 0,
}));

/** Steps per second of one pass over the plan, with the given per-episode sink. */
async function throughput(sink: (record: EpisodeRecord) => void): Promise<number> {
  let steps = 0;
  const start = performance.now();
  await runEpisodes({
    episodes: plan,
    envInfo: env.info,
    createEnv: env.create,
    createAgent: agent.create,
    limits: { maxTurns: env.info.maxSteps, timeoutMs: 60_000 },
    concurrency: CONCURRENCY,
    onEpisode: (record) => {
      steps += record.steps.length;
      sink(record);
    },
  });
  return steps / ((performance.now() - start) / 1000);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function print(figure: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}

const dir = mkdtempSync(join(tmpdir(), "clade-bench-"));
try {
  const unstored: number[] = [];
  const stored: number[] = [];
  // Interleave the two variants so drift in machine load affects both alike.
  for (let r = 0; r < REPEATS; r++) {
    unstored.push(await throughput(() => {}));
    const store = RunStore.open(join(dir, `bench-${r}.db`));
    const runId = `bench-${r}`;
    store.startRun({
      id: runId,
      env: ENV,
      envVersion: env.info.version,
      agent: "random",
      config: {},
    });
    stored.push(await throughput((record) => store.saveEpisode(runId, record)));
    store.close();
  }
  const baseline = median(unstored);
  const value = median(stored);
  const ratio = value / baseline;
  print({
    name: "maze_stored_steps_per_second",
    value: Math.round(value),
    unit: "steps/s",
    ratio: Number(ratio.toFixed(3)),
    baseline: Math.round(baseline),
    baseline_name: "same loop, storage off (steps/s)",
    target: `>= ${TARGET_STEPS_PER_SECOND} steps/s`,
    pass: value >= TARGET_STEPS_PER_SECOND,
  });
  print({
    name: "maze_storage_share_of_loop",
    value: Number((1 - ratio).toFixed(3)),
    unit: "fraction of loop time",
    ratio: Number(ratio.toFixed(3)),
    baseline: Math.round(baseline),
    baseline_name: "same loop, storage off (steps/s)",
    target: `<= ${1 - TARGET_STORED_RATIO}`,
    pass: ratio >= TARGET_STORED_RATIO,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
