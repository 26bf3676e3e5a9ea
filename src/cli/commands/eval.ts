/** `clade eval`: run an agent on tasks of an environment, storing every step; resumable. */
import { z } from "zod";
import { resolveAgent } from "../../agent/registry.js";
import { findEnv } from "../../env/registry.js";
import { type EvalResult, runEvaluation } from "../../eval/evaluation.js";
import { runMetrics } from "../../eval/report.js";
import { parseTaskRange } from "../../eval/task-range.js";
import { RunStore } from "../../store/run-store.js";
import type { CliIo } from "../io.js";
import { integerOption, parseOptions, runIdSchema } from "../options.js";
import { createProgress } from "../progress.js";
import { renderMetrics } from "../report.js";

export const evalOptionsSchema = z.object({
  env: z.string({ error: "is required" }).min(1, "is required"),
  agent: z.string().min(1),
  tasks: z.string().min(1),
  samples: integerOption(1, 10_000),
  concurrency: integerOption(1, 1024),
  maxTurns: integerOption(1, 100_000).optional(),
  timeout: integerOption(1, 86_400),
  seed: integerOption(0, 2 ** 31 - 1),
  runId: runIdSchema.optional(),
  db: z.string().min(1),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
});

export type RawEvalOptions = z.input<typeof evalOptionsSchema>;

function defaultRunId(env: string, agent: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${env}-${agent}-${stamp}`;
}

export async function evalCommand(raw: RawEvalOptions, io: CliIo): Promise<number> {
  const options = parseOptions(evalOptionsSchema, raw);
  // Everything is validated before the store is opened: bad input writes nothing.
  const env = findEnv(options.env);
  const agent = resolveAgent(options.agent, env);
  const tasks = parseTaskRange(options.tasks, env.info);
  const runId = options.runId ?? defaultRunId(env.info.name, agent.name);
  const store = RunStore.open(options.db);
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Error("interrupted"));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const progress = createProgress(
    io,
    `${env.info.name}/${agent.name}`,
    !options.json && !options.quiet,
  );
  let result: EvalResult;
  try {
    result = await runEvaluation({
      store,
      env,
      agent,
      settings: {
        runId,
        tasks,
        taskSpec: options.tasks,
        samples: options.samples,
        maxTurns: options.maxTurns ?? env.info.maxSteps,
        timeoutMs: options.timeout * 1000,
        seed: options.seed,
        concurrency: options.concurrency,
      },
      onProgress: (p) => progress.update(p),
      signal: controller.signal,
      writerThread: true,
    });
  } finally {
    progress.stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  const report = runMetrics(store.episodes(runId), { seed: options.seed });
  store.close();
  if (options.json) {
    io.stdout(`${JSON.stringify({ ...result, metrics: report })}\n`);
  } else {
    const resumedNote = result.resumed
      ? ` (resumed: ${result.skipped} episodes already stored)`
      : "";
    io.stdout(
      `run ${runId}: ${env.info.name} v${env.info.version}, agent ${agent.name}${resumedNote}\n\n`,
    );
    io.stdout(renderMetrics(report));
  }
  if (result.interrupted) {
    io.stderr(`interrupted: ${result.ran} new episodes stored; run the same command to resume\n`);
    return 130;
  }
  return 0;
}
