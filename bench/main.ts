/**
 * `npm run bench`: runner + store throughput on maze with a zero-latency (random) agent.
 * Each figure prints as one JSON line with its absolute value and its ratio to a baseline
 * measured in the same run (the same loop with storage off). Targets (issue 2):
 * ≥ 20,000 stored steps/s on one core; storage costing ≤ 30 % of the loop.
 *
 * Two storage paths are measured: commits on the loop's own thread (one core), and commits on a
 * writer thread (what `clade eval` uses), which overlaps SQLite with the loop on a second core.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveAgent } from "../src/agent/registry.js";
import { findEnv } from "../src/env/registry.js";
import type { EpisodeRecord } from "../src/rollout/episode.js";
import { type EpisodeSpec, runEpisodes } from "../src/rollout/runner.js";
import { EpisodeWriter } from "../src/store/episode-writer.js";
import { RunStore } from "../src/store/run-store.js";

const ENV = "maze";
const EPISODES = 3_000;
const CONCURRENCY = 8;
const REPEATS = 5;
const TARGET_STEPS_PER_SECOND = 20_000;
const TARGET_STORAGE_SHARE = 0.3;

const env = findEnv(ENV);
const agent = resolveAgent("random", env);
const plan: EpisodeSpec[] = Array.from({ length: EPISODES }, (_, i) => ({
  taskIndex: i % 100,
  sampleIndex: Math.floor(i / 100),
  seed: 0,
}));

/**
 * Steps per second of one pass over the plan; `finish` (the final commit) runs inside the timed
 * span, opening the store and starting the writer thread (set-up) before it.
 */
async function throughput(
  sink: (record: EpisodeRecord) => void,
  finish: () => Promise<void> = async () => {},
): Promise<number> {
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
  await finish();
  return steps / ((performance.now() - start) / 1000);
}

async function stored(dir: string, name: string, thread: boolean): Promise<number> {
  const store = RunStore.open(join(dir, `${name}.db`));
  store.startRun({ id: name, env: ENV, envVersion: env.info.version, agent: "random", config: {} });
  const writer = new EpisodeWriter(store, name, { thread });
  const value = await throughput(
    (record) => writer.write(record),
    () => writer.close(),
  );
  store.close();
  return value;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function report(name: string, value: number, baseline: number, thread: boolean): void {
  const ratio = value / baseline;
  const common = {
    unit: "steps/s",
    baseline: Math.round(baseline),
    baseline_name: "same loop, storage off (steps/s)",
    commits: thread ? "writer thread" : "loop thread (one core)",
  };
  const line = (figure: Record<string, unknown>) =>
    process.stdout.write(`${JSON.stringify(figure)}\n`);
  line({
    name: `${name}_steps_per_second`,
    value: Math.round(value),
    ratio: Number(ratio.toFixed(3)),
    ...common,
    target: `>= ${TARGET_STEPS_PER_SECOND}`,
    pass: value >= TARGET_STEPS_PER_SECOND,
  });
  line({
    name: `${name}_storage_share`,
    value: Number((1 - ratio).toFixed(3)),
    ratio: Number(ratio.toFixed(3)),
    ...common,
    unit: "fraction of loop time",
    target: `<= ${TARGET_STORAGE_SHARE}`,
    pass: 1 - ratio <= TARGET_STORAGE_SHARE,
  });
}

const dir = mkdtempSync(join(tmpdir(), "clade-bench-"));
try {
  const samples = { off: [] as number[], sync: [] as number[], thread: [] as number[] };
  // Interleave the variants so drift in machine load affects all alike.
  for (let r = 0; r < REPEATS; r++) {
    samples.off.push(await throughput(() => {}));
    samples.sync.push(await stored(dir, `sync-${r}`, false));
    samples.thread.push(await stored(dir, `thread-${r}`, true));
  }
  const baseline = median(samples.off);
  report("maze_stored_one_core", median(samples.sync), baseline, false);
  report("maze_stored_writer_thread", median(samples.thread), baseline, true);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
