import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { findEnv } from "../../env/registry.js";
import { parseSchedule } from "../../improve/rl/schedule.js";
import {
  type Algorithm,
  latestCheckpoint,
  type StepMetrics,
  TRAIN_DEFAULTS,
  type TrainHyperparameters,
  train,
} from "../../improve/rl/train/index.js";
import type { JsonValue } from "../../store/search-log.js";
import { TrainingStore } from "../../store/training-log.js";
import { type CliIo, sha256OfFile, UsageError } from "../io.js";
import { integerOption, numberOption, parseOptions, runIdSchema } from "../options.js";

const ALGORITHMS = ["grpo", "ppo", "rloo", "reinforce++", "remax"] as const;
/** How often the progress line is printed. */
const PROGRESS_INTERVAL_MS = 2000;

const trainOptionsSchema = z.object({
  env: z.string().min(1, "must not be empty"),
  algo: z.enum(ALGORITHMS, { error: `must be one of ${ALGORITHMS.join(", ")}` }).optional(),
  schedule: z.string().min(1, "must not be empty").optional(),
  steps: integerOption(1, 1_000_000).optional(),
  group: integerOption(1, 1024).optional(),
  batch: integerOption(1, 4096).optional(),
  epochs: integerOption(1, 100).optional(),
  lr: numberOption(0, 10).optional(),
  noveltyBonus: numberOption(0, 1).optional(),
  seed: integerOption(0, 2 ** 31 - 1).optional(),
  checkpointEvery: integerOption(0, 1_000_000).optional(),
  evalEvery: integerOption(0, 1_000_000).optional(),
  runId: runIdSchema,
  dir: z.string().min(1, "must not be empty").optional(),
  out: z.string().min(1, "must not be empty").optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
});

export type RawTrainOptions = z.input<typeof trainOptionsSchema>;

/** The hyperparameters the command sets; the rest keep TRAIN_DEFAULTS. */
function hyperparameters(
  options: z.output<typeof trainOptionsSchema>,
): Partial<TrainHyperparameters> {
  const given: Partial<TrainHyperparameters> = {
    ...(options.algo ? { algo: options.algo as Algorithm } : {}),
    ...(options.schedule ? { schedule: options.schedule } : {}),
    ...(options.steps !== undefined ? { steps: options.steps } : {}),
    ...(options.group !== undefined ? { groupSize: options.group } : {}),
    ...(options.batch !== undefined ? { batchTasks: options.batch } : {}),
    ...(options.epochs !== undefined ? { epochs: options.epochs } : {}),
    ...(options.lr !== undefined ? { lr: options.lr } : {}),
    ...(options.noveltyBonus !== undefined ? { noveltyBonus: options.noveltyBonus } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.checkpointEvery !== undefined ? { checkpointEvery: options.checkpointEvery } : {}),
    ...(options.evalEvery !== undefined ? { evalEvery: options.evalEvery } : {}),
  };
  return given;
}

/**
 * What identifies a training run: the environment and every hyperparameter that shapes the curve
 * (steps, checkpoint interval and rollout mode may change on resume).
 */
function runConfig(env: { name: string; version: string }, h: TrainHyperparameters) {
  const { steps: _s, checkpointEvery: _c, keepCheckpoints: _k, rolloutMode: _r, ...shaping } = h;
  return { env: env.name, envVersion: env.version, ...shaping } as Record<string, JsonValue>;
}

const fixed = (value: number, digits = 3) =>
  Number.isFinite(value) ? value.toFixed(digits) : "n/a";

function progressLine(runId: string, m: StepMetrics, steps: number): string {
  return (
    `train ${runId}: step ${m.step + 1}/${steps}, horizon ${m.horizon}, reward ${fixed(m.meanReward)}, ` +
    `success ${fixed(m.successRate)}, entropy ${fixed(m.entropy)}, ${m.totalEnvSteps} env steps` +
    (m.eval ? `, eval success ${fixed(m.eval.successRate)}` : "")
  );
}

export async function trainCommand(raw: RawTrainOptions, io: CliIo): Promise<number> {
  const options = parseOptions(trainOptionsSchema, raw);
  // Everything is checked before the store is opened: bad input writes nothing.
  const env = findEnv(options.env);
  const h: TrainHyperparameters = { ...TRAIN_DEFAULTS, ...hyperparameters(options) };
  try {
    parseSchedule(h.schedule);
  } catch (error) {
    throw new UsageError(`--schedule: ${(error as Error).message}`);
  }
  const dir = resolve(options.dir ?? join(dirname(resolve(options.db)), "train", options.runId));
  const progress = !options.json && !options.quiet;

  mkdirSync(dirname(resolve(options.db)), { recursive: true });
  const store = TrainingStore.open(options.db);
  const controller = new AbortController();
  let exitCode = 0;
  const onSignal = (name: NodeJS.Signals) => {
    exitCode = name === "SIGTERM" ? 143 : 130;
    controller.abort(name);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const { resumed } = store.beginRun(options.runId, runConfig(env.info, h));
    // Steps after the newest checkpoint are redone from it: forget their stored metrics.
    const checkpoint = resumed ? await latestCheckpoint(dir) : undefined;
    if (resumed) store.rewind(options.runId, (checkpoint?.step ?? 0) - 1);
    let last = performance.now();
    const result = await train({
      ...h,
      env,
      dir,
      resume: resumed,
      signal: controller.signal,
      onStep: async (m) => {
        // The columns, and everything else the trainer reports in the step's `extra`.
        const row = { ...m, envSteps: m.totalEnvSteps };
        store.appendStep(options.runId, row);
        const saved = await latestCheckpoint(dir);
        if (saved && saved.step === m.step + 1) {
          const file = join(saved.path, "policy.safetensors");
          store.addCheckpoint(options.runId, {
            step: saved.step,
            path: file,
            sha256: sha256OfFile(file),
          });
        }
        if (progress && performance.now() - last >= PROGRESS_INTERVAL_MS) {
          last = performance.now();
          io.stderr(`${progressLine(options.runId, m, h.steps)}\n`);
        }
      },
    });
    const final = result.metrics.at(-1);
    if (final && progress) io.stderr(`${progressLine(options.runId, final, h.steps)}\n`);
    const out = options.out ? resolve(options.out) : undefined;
    if (out && result.policyPath) {
      mkdirSync(dirname(out), { recursive: true });
      copyFileSync(result.policyPath, out);
    }
    store.setStatus(
      options.runId,
      result.stopped ? "stopped" : "complete",
      result.stopped ? "signal" : null,
    );
    if (result.stopped && exitCode === 0) exitCode = 130;
    const summary = {
      schema: "clade.train/1",
      runId: options.runId,
      env: env.info.name,
      envVersion: env.info.version,
      algo: h.algo,
      schedule: h.schedule,
      seed: h.seed,
      steps: result.steps,
      stopped: result.stopped,
      resumedFrom: result.resumedFrom ?? null,
      meanReward: final?.meanReward ?? null,
      successRate: final?.successRate ?? null,
      evalSuccessRate: [...result.metrics].reverse().find((m) => m.eval)?.eval?.successRate ?? null,
      envSteps: final?.totalEnvSteps ?? 0,
      dir,
      policy: out ?? result.policyPath ?? null,
      exitCode,
    };
    if (options.json) {
      io.stdout(`${JSON.stringify(summary)}\n`);
      return exitCode;
    }
    io.stdout(
      `${[
        `training ${options.runId}: ${h.algo} on ${env.info.name} v${env.info.version}, ` +
          `schedule ${h.schedule}, seed ${h.seed}` +
          (result.resumedFrom !== undefined ? ` (resumed from step ${result.resumedFrom})` : ""),
        `  ${result.steps}/${h.steps} steps, ${summary.envSteps} environment steps; last step: ` +
          `reward ${fixed(summary.meanReward ?? Number.NaN)}, success ${fixed(summary.successRate ?? Number.NaN)}` +
          (summary.evalSuccessRate !== null
            ? `; last evaluation: success ${fixed(summary.evalSuccessRate)}`
            : ""),
        `  policy: ${summary.policy ?? "(none written)"}; curves: clade curves ${options.runId}` +
          (result.stopped ? "; stopped: run the same command to resume" : ""),
      ].join("\n")}\n`,
    );
    return exitCode;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    store.close();
  }
}
