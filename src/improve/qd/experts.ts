/**
 * CycleQD's starting point on embedded policies: the base θ_base and one expert per task.
 *
 *   base:     a fresh policy trained briefly on the mixed train tasks of all K tasks;
 *   expert k: the base trained further on task k's train tasks alone.
 *
 * So every expert's task vector τ_k = θ_k − θ_base is what training on task k added to a policy
 * that already knows a little of every task, as the paper's experts are fine-tunes of one base.
 * Both are ordinary RL runs (src/improve/rl/train); given a directory, each keeps its checkpoints
 * in a folder of its own and a killed run resumes where it stopped.
 */
import { join } from "node:path";
import { createTaskMixture } from "../../env/mixture.js";
import type { EnvDefinition } from "../../env/types.js";
import type { PolicyModel } from "../rl/policy/model.js";
import { type StepMetrics, type TrainHyperparameters, train } from "../rl/train/train.js";

/** One CycleQD task on an embedded policy: an environment and its task sets. */
export interface QdTask {
  /** How the task is named in archives and tables ("maze", "textcraft:100-299"). */
  readonly label: string;
  readonly env: EnvDefinition;
  /** Tasks the base and the expert train on. */
  readonly train: readonly number[];
  /** Tasks a genome is scored on during the search (the archives' scores). */
  readonly search: readonly number[];
  /** Held-out tasks the finalists are compared on. */
  readonly test: readonly number[];
}

/** Which run a training step belongs to: "base" or the expert of task k. */
export type TrainingPhase =
  | { readonly kind: "base" }
  | { readonly kind: "expert"; readonly task: number };

export interface TrainExpertsOptions {
  readonly tasks: readonly QdTask[];
  /** Optimiser steps of the base on the mixed tasks. */
  readonly baseSteps: number;
  /** Optimiser steps of each expert on its task, from the base. */
  readonly expertSteps: number;
  readonly seed: number;
  /** Trainer settings besides steps and seed (TRAIN_DEFAULTS otherwise). */
  readonly hyperparameters?: Partial<Omit<TrainHyperparameters, "steps" | "seed">>;
  /** A base to start from instead of training one (experts are then trained from it). */
  readonly base?: PolicyModel;
  /** Experts given (index = task); the others are trained. Needs `base`. */
  readonly experts?: readonly (PolicyModel | undefined)[];
  /** DIR/base and DIR/expert-<k>: checkpoints, resumed when present. Nothing written without it. */
  readonly dir?: string;
  readonly signal?: AbortSignal;
  readonly onStep?: (phase: TrainingPhase, metrics: StepMetrics) => void | Promise<void>;
}

export interface TrainedExperts {
  readonly base: PolicyModel;
  readonly experts: PolicyModel[];
  /** Environment steps the training took: the base's, then each trained expert's (0 if given). */
  readonly envSteps: { readonly base: number; readonly experts: number[] };
  /** True when the signal stopped training: the models are then incomplete. */
  readonly stopped: boolean;
}

/**
 * The environment the base trains on and each task's train tasks in its index space: the one
 * environment when all tasks share it, else a mixture of the distinct environments.
 */
export function baseTrainingSet(tasks: readonly QdTask[]): {
  env: EnvDefinition;
  trainTasks: number[];
} {
  const envs: EnvDefinition[] = [];
  for (const task of tasks) if (!envs.includes(task.env)) envs.push(task.env);
  if (envs.length === 1) {
    const only = new Set(tasks.flatMap((t) => t.train));
    return { env: envs[0] as EnvDefinition, trainTasks: [...only].sort((a, b) => a - b) };
  }
  const mixture = createTaskMixture(envs);
  const indices = new Set<number>();
  for (const task of tasks) {
    const member = envs.indexOf(task.env);
    for (const t of task.train) indices.add(mixture.indexOf(member, t));
  }
  return { env: mixture, trainTasks: [...indices].sort((a, b) => a - b) };
}

export async function trainBaseAndExperts(options: TrainExpertsOptions): Promise<TrainedExperts> {
  const { tasks, seed, dir, signal } = options;
  const given = options.experts ?? [];
  if (given.some((e) => e !== undefined) && !options.base) {
    throw new Error("experts given without their base: task vectors are taken against the base");
  }
  const common = { ...options.hyperparameters, seed, ...(signal ? { signal } : {}) };
  const envStepsOf = (metrics: readonly StepMetrics[]) => metrics.at(-1)?.totalEnvSteps ?? 0;

  let base = options.base;
  let baseEnvSteps = 0;
  if (!base) {
    const set = baseTrainingSet(tasks);
    const result = await train({
      ...common,
      env: set.env,
      trainTasks: set.trainTasks,
      steps: options.baseSteps,
      ...(dir ? { dir: join(dir, "base"), resume: true } : {}),
      onStep: (m) => options.onStep?.({ kind: "base" }, m),
    });
    base = result.model;
    baseEnvSteps = envStepsOf(result.metrics);
    if (result.stopped) {
      return { base, experts: [], envSteps: { base: baseEnvSteps, experts: [] }, stopped: true };
    }
  }

  const experts: PolicyModel[] = [];
  const expertEnvSteps: number[] = [];
  for (const [k, task] of tasks.entries()) {
    const ready = given[k];
    if (ready) {
      experts.push(ready);
      expertEnvSteps.push(0);
      continue;
    }
    const result = await train({
      ...common,
      env: task.env,
      model: base,
      trainTasks: task.train,
      steps: options.expertSteps,
      ...(dir ? { dir: join(dir, `expert-${k}`), resume: true } : {}),
      onStep: (m) => options.onStep?.({ kind: "expert", task: k }, m),
    });
    experts.push(result.model);
    expertEnvSteps.push(envStepsOf(result.metrics));
    if (result.stopped) break;
  }
  return {
    base,
    experts,
    envSteps: { base: baseEnvSteps, experts: expertEnvSteps },
    stopped: experts.length < tasks.length || signal?.aborted === true,
  };
}
