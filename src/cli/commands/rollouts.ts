/**
 * `clade rollouts --env ENV --policy FILE --format agenttraj|chat --out FILE [--tasks SPEC]
 * [--group N] [--horizon H] [--algo A] [--seed S] [--item-ids STYLE] [--novelty-bonus X]
 * [--json]`: collects groups of samples with a policy, computes their advantages with the
 * algorithm's estimator as a training step would (rolloutAdvantages), and writes them for an
 * outside trainer (src/improve/rl/export, docs/formats.md). The file is written beside its path
 * and renamed into place: it is whole or absent.
 */
import { existsSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { findEnv } from "../../env/registry.js";
import type { EnvDefinition } from "../../env/types.js";
import { formatTaskRange, parseTaskRange } from "../../eval/task-range.js";
import {
  exportRollouts,
  ROLLOUT_FORMATS,
  type RolloutFormat,
} from "../../improve/rl/export/index.js";
import { Featurizer } from "../../improve/rl/policy/index.js";
import { collectGroups } from "../../improve/rl/rollout/collect.js";
import { embeddedPolicy } from "../../improve/rl/rollout/embedded.js";
import { createModelRolloutPolicy } from "../../improve/rl/rollout/model-policy.js";
import type { CollectResult, RolloutPolicy } from "../../improve/rl/rollout/types.js";
import {
  type Algorithm,
  ESTIMATOR_OF,
  rolloutAdvantages,
  TRAIN_DEFAULTS,
} from "../../improve/rl/train/index.js";
import { createModelClient } from "../../model/client.js";
import { loadConfig } from "../../model/config.js";
import { checkKey, resolveModel } from "../../model/resolve.js";
import { ITEM_ID_STYLES, type ItemIdStyle } from "../../store/export.js";
import { type CliIo, UsageError } from "../io.js";
import { integerOption, numberOption, parseOptions } from "../options.js";
import { renderTable } from "../table.js";
import { loadPolicyAgent, POLICY_PREFIX } from "../user-modules.js";

const ALGORITHMS = Object.keys(ESTIMATOR_OF) as [Algorithm, ...Algorithm[]];
/**
 * Samples one invocation may collect: every sample's environment instance lives until the
 * collection ends, and the file is built whole before it is written.
 */
const MAX_SAMPLES = 20_000;
/** Samples stepping at once. Each draws from its own stream, so this changes timing alone. */
const CONCURRENCY = 32;

const rolloutsOptionsSchema = z.object({
  env: z.string().min(1, "must not be empty"),
  policy: z.string().min(1, "must not be empty").optional(),
  model: z.string().min(1, "must not be empty").optional(),
  config: z.string().min(1, "must not be empty").optional(),
  temperature: numberOption(0, 2).optional(),
  tokenIds: z.boolean().optional(),
  tasks: z.string().min(1, "must not be empty").optional(),
  group: integerOption(1, 1024).optional(),
  horizon: integerOption(1, 100_000).optional(),
  algo: z.enum(ALGORITHMS, { error: `must be one of ${ALGORITHMS.join(", ")}` }).optional(),
  seed: integerOption(0, 2 ** 31 - 1).optional(),
  format: z.enum(ROLLOUT_FORMATS as [RolloutFormat, ...RolloutFormat[]], {
    error: 'must be "agenttraj" or "chat"',
  }),
  out: z.string().min(1, "must not be empty"),
  itemIds: z
    .enum(ITEM_ID_STYLES as [ItemIdStyle, ...ItemIdStyle[]], {
      error: 'must be "agentgym" or "clade"',
    })
    .optional(),
  noveltyBonus: numberOption(0, 1).optional(),
  json: z.boolean().optional(),
});

export type RawRolloutsOptions = z.input<typeof rolloutsOptionsSchema>;
type RolloutsOptions = z.output<typeof rolloutsOptionsSchema>;

/** What played the rollouts, as the summary names it. */
type PolicyIdentity =
  | {
      kind: "embedded";
      path: string;
      sha256: string;
      /** The optimiser step its weights were saved at. */
      step: number;
    }
  | {
      kind: "model";
      /** The resolved model, provider:name (the name in clade.config when one was given). */
      model: string;
      temperature: number;
    };

interface ChosenPolicy {
  policy: RolloutPolicy;
  identity: PolicyIdentity;
  /** One phrase for the text report. */
  label: string;
}

/**
 * The rollout policy the options ask for. Today the embedded policy of --policy FILE, refused
 * in one line when it was trained on another environment or version (as `clade eval --agent
 * policy:FILE`). An LLM policy (a `--model SPEC` over an OpenAI-compatible server) is another
 * branch here returning its own RolloutPolicy and identity; what follows does not change.
 */
async function policyFor(
  options: RolloutsOptions,
  env: EnvDefinition,
  algo: Algorithm,
): Promise<ChosenPolicy> {
  if ((options.policy === undefined) === (options.model === undefined)) {
    throw new UsageError(
      "give one of --policy FILE (a policy written by clade train) or --model SPEC (an LLM)",
    );
  }
  if (options.model !== undefined) return modelPolicy(options, options.model);
  if (options.temperature !== undefined || options.tokenIds) {
    throw new UsageError("--temperature and --token-ids apply to --model, not to --policy");
  }
  const loaded = await loadPolicyAgent(`${POLICY_PREFIX}${options.policy}`, env.info);
  const policy = embeddedPolicy(loaded.model, {
    temperature: TRAIN_DEFAULTS.temperature,
    // GAE (ppo) needs the critic's V(s) at every agent turn: the policy's value head.
    values: algo === "ppo",
    featurizer: new Featurizer(loaded.model.features),
    envName: env.info.name,
  });
  const { path, sha256, step } = loaded.identity;
  return {
    policy,
    identity: { kind: "embedded", path, sha256, step },
    label: `policy ${options.policy} (step ${step})`,
  };
}

/**
 * An LLM over the model layer (retries, rate limits, accounting), asked for log-probabilities:
 * a reply without them, or a model error after retries, ends its sample as an error. No response
 * cache: the served weights change between training steps while the model's name does not.
 */
async function modelPolicy(options: RolloutsOptions, spec: string): Promise<ChosenPolicy> {
  const { config } = await loadConfig(options.config);
  const resolved = resolveModel(spec, config);
  checkKey(resolved);
  const temperature = options.temperature ?? 1;
  if (!(temperature > 0)) throw new UsageError("--temperature must be > 0 for sampled rollouts");
  const policy = createModelRolloutPolicy({
    model: createModelClient(resolved),
    temperature,
    ...(options.tokenIds ? { tokenIds: true } : {}),
  });
  return {
    policy,
    identity: { kind: "model", model: resolved.name, temperature },
    label: `model ${resolved.name} at temperature ${temperature}`,
  };
}

/** --tasks, or the train split's first batch (as many tasks as a training step takes). */
function tasksOf(options: RolloutsOptions, env: EnvDefinition): number[] {
  if (options.tasks !== undefined) return parseTaskRange(options.tasks, env.info);
  const { start, end } = env.info.splits.train;
  const count = Math.min(TRAIN_DEFAULTS.batchTasks, end - start);
  return Array.from({ length: count }, (_, i) => start + i);
}

/** Writes beside the target, then renames: a reader never sees a half-written file. */
function writeAtomically(path: string, text: string): void {
  const partial = `${path}.partial-${process.pid}`;
  try {
    writeFileSync(partial, text);
    renameSync(partial, path);
  } catch (error) {
    throw new UsageError(`cannot write ${path}: ${(error as Error).message}`);
  } finally {
    rmSync(partial, { force: true });
  }
}

/** Mean reward and success rate over the samples that did not error (null when none). */
function outcomes(rollout: CollectResult): {
  meanReward: number | null;
  successRate: number | null;
} {
  const played = rollout.trajectories.filter((t) => t.error === undefined);
  if (played.length === 0) return { meanReward: null, successRate: null };
  const reward = played.reduce((sum, t) => sum + t.reward, 0);
  const successes = played.filter((t) => t.success).length;
  return { meanReward: reward / played.length, successRate: successes / played.length };
}

const fixed = (value: number | null) => (value === null ? "n/a" : value.toFixed(3));

export async function rolloutsCommand(raw: RawRolloutsOptions, io: CliIo): Promise<number> {
  const options = parseOptions(rolloutsOptionsSchema, raw);
  // Everything is checked before the collection starts: bad input costs nothing and writes nothing.
  const env = findEnv(options.env);
  const algo = options.algo ?? TRAIN_DEFAULTS.algo;
  const estimator = ESTIMATOR_OF[algo];
  const groupSize = options.group ?? TRAIN_DEFAULTS.groupSize;
  if ((algo === "grpo" || algo === "rloo") && groupSize < 2) {
    throw new UsageError(`--algo ${algo} compares samples within a group: --group must be ≥ 2`);
  }
  if (options.itemIds && options.format !== "agenttraj") {
    throw new UsageError("--item-ids applies to --format agenttraj (chat lines carry no item id)");
  }
  const tasks = tasksOf(options, env);
  if (tasks.length === 0) throw new UsageError(`${env.info.name} has no train tasks; give --tasks`);
  if (tasks.length * groupSize > MAX_SAMPLES) {
    throw new UsageError(
      `${tasks.length} tasks × ${groupSize} samples is more than ${MAX_SAMPLES} samples; split the collection`,
    );
  }
  if (existsSync(options.out) && statSync(options.out).isDirectory()) {
    throw new UsageError(`--out ${options.out} is a directory; give a file path`);
  }
  const horizon = options.horizon ?? env.info.maxSteps;
  const seed = options.seed ?? TRAIN_DEFAULTS.seed;
  const chosen = await policyFor(options, env, algo);

  const rollout = await collectGroups({
    env,
    policy: chosen.policy,
    tasks,
    groupSize,
    horizon,
    seed,
    greedyBaseline: algo === "remax",
    concurrency: CONCURRENCY,
  });
  const { advantages } = rolloutAdvantages(rollout, {
    ...TRAIN_DEFAULTS,
    algo,
    noveltyBonus: options.noveltyBonus ?? 0,
  });
  const written = exportRollouts(rollout.trajectories, advantages, {
    format: options.format,
    env: { name: env.info.name, version: env.info.version, instruction: env.info.instruction },
    estimator,
    ...(options.itemIds ? { itemIds: options.itemIds } : {}),
  });
  writeAtomically(options.out, written.text);

  const { meanReward, successRate } = outcomes(rollout);
  const baselines = rollout.groups.filter((g) => g.baseline !== undefined).length;
  const summary = {
    schema: "clade.rollouts/1",
    env: env.info.name,
    envVersion: env.info.version,
    policy: chosen.identity,
    algo,
    estimator,
    tasks: formatTaskRange(tasks),
    groups: rollout.groups.length,
    groupSize,
    horizon,
    seed,
    noveltyBonus: options.noveltyBonus ?? 0,
    samples: rollout.trajectories.length,
    errored: written.errored,
    excluded: written.excluded,
    exported: written.exported,
    baselines,
    meanReward,
    successRate,
    envSteps: rollout.envSteps,
    errorMessages: [...new Set(rollout.errors.map((e) => e.message))].slice(0, 5),
    format: options.format,
    out: resolve(options.out),
  };
  if (options.json) {
    io.stdout(`${JSON.stringify(summary)}\n`);
    return 0;
  }
  const table = renderTable(
    ["groups", "samples", "errored", "excluded", "exported", "mean reward", "success rate"],
    [
      [
        summary.groups,
        summary.samples,
        summary.errored,
        summary.excluded,
        summary.exported,
        fixed(meanReward),
        fixed(successRate),
      ],
    ],
  );
  const lines = [
    `rollouts: ${env.info.name} v${env.info.version}, ${chosen.label}, ${algo} (estimator ${estimator}), ` +
      `tasks ${summary.tasks}, group ${groupSize}, horizon ${horizon}, seed ${seed}`,
    table.trimEnd(),
    ...summary.errorMessages.map((message) => `error: ${message}`),
    `wrote ${options.out} (${options.format}, ${written.exported} trajectories` +
      (baselines > 0 ? `; ${baselines} greedy baselines not exported` : "") +
      ")",
  ];
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}
