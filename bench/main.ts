/**
 * `npm run bench`: runner + store throughput on maze with zero-latency agents. Each figure prints
 * as one JSON line with its absolute value and its ratio to a baseline measured in the same run:
 * the same loop with storage off. Targets (issue 2): ≥ 20,000 stored steps/s on one core; storage
 * costing ≤ 30 % of the loop (stored throughput ≥ 0.7 × the baseline).
 *
 * Two storage paths: commits on the loop's own thread (one core), and commits on a writer thread
 * (what `clade eval` uses), which overlaps SQLite with the loop on a second core.
 * Two agents: `reference` reads every observation, as a real agent does; `random` never reads
 * them, so the cost of materialising each observation string falls on storage instead.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// The compiled library, as `clade eval` runs it (npm run bench builds it first).
import {
  type AgentFactory,
  type EpisodeRecord,
  type EpisodeSpec,
  EpisodeWriter,
  findEnv,
  RunStore,
  resolveAgent,
  runEpisodes,
} from "../dist/index.js";
import { callStorageFigure } from "./call-storage.js";

const ENV = "maze";
const AGENTS = ["reference", "random"];
const EPISODES = 10_000;
const CONCURRENCY = 8;
const REPEATS = 3;
const TARGET_STEPS_PER_SECOND = 20_000;
const TARGET_STORAGE_SHARE = 0.3;

const env = findEnv(ENV);
const plan: EpisodeSpec[] = Array.from({ length: EPISODES }, (_, i) => ({
  taskIndex: i % 100,
  sampleIndex: Math.floor(i / 100),
  seed: 0,
}));

/**
 * Steps per second of one pass over the plan. `finish` (the final commit) is inside the timed
 * span; opening the store and starting the writer thread (set-up) are not.
 */
async function throughput(
  agent: AgentFactory,
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

async function stored(agent: AgentFactory, path: string, thread: boolean): Promise<number> {
  const store = RunStore.open(path);
  store.startRun({
    id: "bench",
    env: ENV,
    envVersion: env.info.version,
    agent: agent.name,
    config: {},
  });
  const writer = new EpisodeWriter(store, "bench", { thread });
  const value = await throughput(
    agent,
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

/**
 * Which figures carry the targets: stored throughput on one core; the storage share on
 * the path `clade eval` takes (writer thread) with the agent that, like any real agent, reads its
 * observations. The other figures are printed for diagnosis, without a target.
 */
function targetsOf(agent: string, commits: string) {
  return {
    throughput: commits === "one_core",
    share: commits === "writer_thread" && agent === "reference",
  };
}

function report(agent: string, commits: string, value: number, baseline: number): void {
  const targets = targetsOf(agent, commits);
  const ratio = Number((value / baseline).toFixed(3));
  const common = {
    agent,
    commits,
    baseline: Math.round(baseline),
    baseline_unit: "steps/s, storage off",
  };
  const line = (figure: Record<string, unknown>) =>
    process.stdout.write(`${JSON.stringify(figure)}\n`);
  line({
    name: `maze_${agent}_${commits}_stored_steps_per_second`,
    value: Math.round(value),
    unit: "steps/s",
    ratio,
    ...common,
    ...(targets.throughput
      ? { target: `>= ${TARGET_STEPS_PER_SECOND}`, pass: value >= TARGET_STEPS_PER_SECOND }
      : {}),
  });
  line({
    name: `maze_${agent}_${commits}_storage_share`,
    value: Number((1 - ratio).toFixed(3)),
    unit: "fraction of loop time",
    ratio,
    ...common,
    ...(targets.share
      ? { target: `<= ${TARGET_STORAGE_SHARE}`, pass: 1 - ratio <= TARGET_STORAGE_SHARE }
      : {}),
  });
}

await callStorageFigure();

const dir = mkdtempSync(join(tmpdir(), "clade-bench-"));
try {
  for (const name of AGENTS) {
    const agent = resolveAgent(name, env);
    const samples = { off: [] as number[], oneCore: [] as number[], thread: [] as number[] };
    // Interleave the variants so drift in machine load affects all alike.
    for (let r = 0; r < REPEATS; r++) {
      samples.off.push(await throughput(agent, () => {}));
      samples.oneCore.push(await stored(agent, join(dir, `${name}-one-${r}.db`), false));
      samples.thread.push(await stored(agent, join(dir, `${name}-thread-${r}.db`), true));
    }
    const baseline = median(samples.off);
    report(name, "one_core", median(samples.oneCore), baseline);
    report(name, "writer_thread", median(samples.thread), baseline);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
