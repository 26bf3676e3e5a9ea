/**
 * Judging throughput (issue 13): a stored judging job (runGoalJob: the ensemble, the vote, every
 * judgement and verdict written to SQLite) with three judges on the fake model server (in a
 * child process, so it does not share the job's thread) at a fixed 200 ms latency. The job's
 * concurrency is judge calls in flight; each conversation asks its three judges at once, so
 * concurrency 64 judges 21 conversations at a time and the ideal is 21 ÷ 200 ms = 105
 * conversations per second. Target: ≥ 0.9 of ideal at concurrency 64.
 *
 * For information, the same at 192 calls in flight (64 conversations at once): on two cores the
 * client's CPU per call (about 1.5 ms: the SDK, HTTP, the checks, the store) caps it below its
 * ideal, as bench/model-throughput.ts shows for single calls at 256.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  builtinTaxonomy,
  type Conversation,
  conversationsAtOnce,
  createModelClient,
  GoalStore,
  type Judge,
  parseModelSpec,
  resolveRubric,
  runGoalJob,
} from "../dist/index.js";
import { startFakeServerChild } from "./fake-server-child.js";

process.setSourceMapsEnabled(false);

const LATENCY_MS = 200;
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? "64,192").split(",").map(Number);
const JUDGES = 3;
/** Conversations per slot: enough rounds that the first burst and the tail matter little. */
const ROUNDS = 10;
const TURNS = 3;
const TARGETS: Record<number, number> = { 64: 0.9 };

/** The fake server answers every judge with reasoning and labels for the turns asked for. */
const JUDGE_RULE = `(request) => {
        const text = JSON.stringify(request.body ?? "");
        const n = Number(/covering turns 1\\.\\.(\\d+)/.exec(text)?.[1] ?? 1);
        const turns = Array.from({ length: n }, (_, i) => ({
          turn_number: i + 1,
          is_new_goal: i === 0,
          quality: i === n - 1 ? "failure" : "success",
          rcof: i === n - 1 ? "E3" : null,
          rationale: "as the standards say",
        }));
        return { content: "The user asks one thing; the last answer cites the wrong passage.\\n\\n\`\`\`json\\n" + JSON.stringify({ turns }) + "\\n\`\`\`" };
      }`;

function conversation(i: number): Conversation {
  return {
    id: `c${i}`,
    source: { format: "chat", record: `line ${i + 1}` },
    turns: Array.from({ length: TURNS }, (_, t) => ({
      turn_number: t + 1,
      user: `Question ${t + 1} of session ${i} about the leave policy?`,
      assistant: `An answer to question ${t + 1}.`,
    })),
  };
}

const { child, baseUrl } = await startFakeServerChild(LATENCY_MS, JUDGE_RULE);
const dir = mkdtempSync(join(tmpdir(), "clade-bench-goals-"));
try {
  const judges: Judge[] = ["judge-a", "judge-b", "judge-c"].map((name, i) => ({
    label: `judge ${i + 1}`,
    model: name,
    client: createModelClient({
      name,
      spec: parseModelSpec(`openai-compatible:${baseUrl}#${name}`),
      params: {},
      stream: false,
    }),
  }));
  const settings = { rubric: resolveRubric("helpdesk"), taxonomy: builtinTaxonomy("rcof") };
  const store = GoalStore.open(join(dir, "bench.db"));
  let cpuSeconds = 0;
  const job = async (runId: string, count: number, concurrency: number) => {
    store.beginRun(
      runId,
      { bench: runId },
      Array.from({ length: count }, (_, i) => ({
        id: `c${i}`,
        conversation: conversation(i) as never,
      })),
    );
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const result = await runGoalJob({ store, runId, judges, settings, concurrency });
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    cpuSeconds = (cpu.user + cpu.system) / 1e6;
    if (result.counts.judged !== count) {
      throw new Error(`${runId}: ${result.counts.judged} of ${count} judged`);
    }
    return seconds;
  };
  // Warm up connections and the JIT.
  await job("warm", 128, 64);
  for (const concurrency of CONCURRENCIES) {
    const atOnce = conversationsAtOnce(concurrency, JUDGES);
    const count = atOnce * ROUNDS;
    const seconds = await job(`measured-${concurrency}`, count, concurrency);
    const value = count / seconds;
    const ideal = atOnce / (LATENCY_MS / 1000);
    const target = TARGETS[concurrency];
    const line = (figure: Record<string, unknown>) =>
      process.stdout.write(`${JSON.stringify(figure)}\n`);
    line({
      name: `goals_judging_conversations_per_second_c${concurrency}`,
      value: Number(value.toFixed(1)),
      unit: `conversations/s (3 judges each, ${atOnce} conversations at once)`,
      ratio: Number((value / ideal).toFixed(3)),
      baseline: ideal,
      baseline_unit: `ideal conversations/s (${atOnce} conversations / 200 ms)`,
      ...(target ? { target: `ratio >= ${target}`, pass: value / ideal >= target } : {}),
    });
    line({
      name: `goals_judging_cpu_per_conversation_c${concurrency}`,
      value: Math.round((cpuSeconds * 1e6) / count),
      unit: "µs CPU per conversation (3 judge calls, their checks, the vote and 4 store writes)",
      ratio: Number((cpuSeconds / seconds).toFixed(3)),
      baseline: 1,
      baseline_unit: "ratio = CPU seconds per wall second (1 = one core busy)",
    });
  }
  store.close();
} finally {
  child.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
