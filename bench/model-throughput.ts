/**
 * Model-client throughput: one-turn episodes of a zero-cost environment, each one model call to
 * the fake server (in a child process, so it does not share the client's thread) at a fixed
 * 200 ms latency. Episodes/s at each concurrency is printed as a ratio of the ideal
 * (concurrency ÷ latency). Targets (issue 3): ≥ 0.9 of ideal at 64, ≥ 0.8 at 256.
 * The client's own cost per call is this process's CPU time per call, in microseconds: an upper
 * bound, since it also holds the runner, the agent and the environment.
 */
import {
  createModelClient,
  type Env,
  type EnvDefinition,
  type EpisodeSpec,
  parseModelSpec,
  resolveAgent,
  runEpisodes,
} from "../dist/index.js";
import { startFakeServerChild } from "./fake-server-child.js";

// tsx turns on source maps for stack traces; `clade eval` runs without them, so measure without.
process.setSourceMapsEnabled(false);

const LATENCY_MS = 200;
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? "1,8,64,256").split(",").map(Number);
/**
 * Episodes per worker. The ideal (concurrency ÷ latency) is a steady-state rate; the first round
 * (every request sent at once) and the last (a tail with fewer in flight) are not, so enough
 * rounds are run for them to matter little.
 */
const ROUNDS = 10;
const TARGETS: Record<number, number> = { 64: 0.9, 256: 0.8 };

/** An environment whose every episode ends after one action, at no cost. */
const oneTurnEnv: EnvDefinition = {
  info: {
    name: "one-turn",
    version: "1",
    description: "ends after one action",
    instruction: "Reply with any action.",
    splits: { test: { start: 0, end: 1_000_000 }, train: { start: 1_000_000, end: 1_000_001 } },
    successThreshold: 1,
    maxSteps: 1,
  },
  create: (): Env => ({
    info: oneTurnEnv.info,
    reset: async () => ({ text: "Say anything." }),
    step: async () => ({ observation: { text: "done" }, reward: 1, done: true, info: {} }),
  }),
  sampleAction: () => "go",
};

const { child, baseUrl } = await startFakeServerChild(
  LATENCY_MS,
  `() => ({ content: "Thought:\\nAnything will do.\\n\\nAction:\\ngo" })`,
);
try {
  const model = createModelClient({
    name: "fake",
    spec: parseModelSpec(`openai-compatible:${baseUrl}#fake-model`),
    params: {},
    stream: false,
  });
  const agent = resolveAgent("react", oneTurnEnv, { model });
  // Warm up connections and the JIT so the first measurement is not a cold start.
  const warm = (n: number): EpisodeSpec[] =>
    Array.from({ length: n }, (_, i) => ({ taskIndex: i, sampleIndex: 0, seed: 0 }));
  const run = (episodes: EpisodeSpec[], concurrency: number) =>
    runEpisodes({
      episodes,
      envInfo: oneTurnEnv.info,
      createEnv: oneTurnEnv.create,
      createAgent: agent.create,
      limits: { maxTurns: 1, timeoutMs: 60_000 },
      concurrency,
      onEpisode: (record) => {
        if (record.outcome === "error") throw new Error(`episode failed: ${record.error}`);
      },
    });
  await run(warm(256), 256);
  for (const concurrency of CONCURRENCIES) {
    const episodes = warm(concurrency * ROUNDS);
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    await run(episodes, concurrency);
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const value = episodes.length / seconds;
    const ideal = concurrency / (LATENCY_MS / 1000);
    const target = TARGETS[concurrency];
    const line = (figure: Record<string, unknown>) =>
      process.stdout.write(`${JSON.stringify(figure)}\n`);
    line({
      name: `model_episodes_per_second_c${concurrency}`,
      value: Number(value.toFixed(1)),
      unit: "episodes/s",
      ratio: Number((value / ideal).toFixed(3)),
      baseline: ideal,
      baseline_unit: "ideal episodes/s (concurrency / 200 ms)",
      ...(target ? { target: `ratio >= ${target}`, pass: value / ideal >= target } : {}),
    });
    line({
      name: `model_client_cpu_per_call_c${concurrency}`,
      value: Math.round((cpu.user + cpu.system) / episodes.length),
      unit: "µs CPU per call",
      ratio: Number(((cpu.user + cpu.system) / 1e6 / seconds).toFixed(3)),
      baseline: 1,
      baseline_unit: "ratio = CPU seconds per wall second (1 = one core busy)",
    });
  }
} finally {
  child.kill("SIGTERM");
}
