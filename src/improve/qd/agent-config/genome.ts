/**
 * LLM agent configurations as a CycleQD genome:
 *
 *   crossover: gene by gene (crossover.ts);
 *   mutate:    one operator by its rate, the model-driven rewrite among them (mutate.ts);
 *   evaluate:  the configured agent's success rate on each task's episodes (evaluate.ts);
 *   id:        sha256 of the configuration's canonical JSON, 16 hex characters.
 *
 * Two model roles, as `clade evolve-agent` has `--model` and `--modify-model`: the agent's model,
 * which every episode calls, and the mutator, which rewrites prompt parts. A failed rewrite
 * never fails the generation: the child goes on as the crossover made it, and the failure is
 * counted in `stats` and reported to `onMutation`.
 */
import type { Rng } from "../../../env/rng.js";
import type { Model } from "../../../model/types.js";
import type { AsyncGenome } from "../cycle.js";
import {
  type AgentConfig,
  type AgentConfigPool,
  agentConfigId,
  EMPTY_POOL,
  parseAgentConfigPool,
} from "./config.js";
import { crossoverConfigs } from "./crossover.js";
import {
  type AgentConfigTask,
  checkEpisodeOptions,
  type EpisodeOptions,
  type EvaluateConfigOptions,
  evaluateConfig,
} from "./evaluate.js";
import {
  MUTATION_NAMES,
  type MutationEvent,
  type MutationName,
  type MutationRates,
  mutateConfig,
  mutationRates,
} from "./mutate.js";
import { describeEnvTask, REWRITE_ATTEMPTS } from "./rewrite.js";

/**
 * A model in a role: the client, and the spec a run's stored configuration names it by (no
 * credentials). The same shape as selfmod's ModelRole, which qd does not import (design.md's
 * import order).
 */
export interface MutatorRole {
  readonly spec: string;
  readonly client: Model;
}

export interface AgentConfigGenomeOptions {
  /** The agent's model: every episode's react or tools agent calls it. */
  readonly model: Model;
  /** K ≥ 2 tasks, in task order. */
  readonly tasks: readonly AgentConfigTask[];
  /** What mutations may add: few-shot examples and tools. Default: none. */
  readonly pool?: AgentConfigPool;
  /** The "mutator" role: rewrites prompt parts. Without it the rewrite never applies. */
  readonly mutator?: MutatorRole;
  /** Over MUTATION_RATES. */
  readonly rates?: Partial<MutationRates>;
  /** Model calls per rewrite; default REWRITE_ATTEMPTS. */
  readonly rewriteAttempts?: number;
  readonly episode?: EpisodeOptions;
  /** After each mutation, with what it did (a failed rewrite included). */
  readonly onMutation?: (event: MutationEvent) => void;
  readonly onEpisode?: EvaluateConfigOptions["onEpisode"];
}

/** Mutations since the genome was made. */
export interface MutationStats {
  readonly applied: Record<MutationName | "none", number>;
  readonly rewrites: { succeeded: number; failed: number };
  /** The latest failed rewrite's reason. */
  readonly lastRewriteFailure: string | null;
}

export interface AgentConfigGenome extends AsyncGenome<AgentConfig> {
  /** Counts of what mutate did (failed rewrites among them). */
  readonly stats: MutationStats;
  /** What identifies the genome's settings, for a run's stored configuration (JSON). */
  readonly settings: {
    readonly mutator: string | null;
    readonly rates: MutationRates;
    readonly rewriteAttempts: number;
    readonly pool: AgentConfigPool;
  };
}

function checkOptions(options: AgentConfigGenomeOptions): void {
  const { tasks } = options;
  if (tasks.length < 2) {
    throw new Error(`agent config genome: CycleQD needs ≥ 2 tasks, got ${tasks.length}`);
  }
  tasks.forEach((task, k) => {
    if (task.tasks.length === 0) {
      throw new Error(`agent config genome: task ${k} lists no task indices`);
    }
  });
  const attempts = options.rewriteAttempts ?? REWRITE_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new Error(`agent config genome: rewriteAttempts must be an integer ≥ 1, got ${attempts}`);
  }
  checkEpisodeOptions(options.episode ?? {}, "agent config genome");
}

export function createAgentConfigGenome(options: AgentConfigGenomeOptions): AgentConfigGenome {
  checkOptions(options);
  const rates = mutationRates(options.rates);
  // A pool built in code gets the same checks as a pool file.
  const pool = parseAgentConfigPool(options.pool ?? EMPTY_POOL, "agent config genome: pool");
  const rewriteAttempts = options.rewriteAttempts ?? REWRITE_ATTEMPTS;
  const descriptions = options.tasks.map((task) => describeEnvTask(task.env));
  const applied = Object.fromEntries(
    [...MUTATION_NAMES, "none"].map((name) => [name, 0]),
  ) as Record<MutationName | "none", number>;
  const stats = {
    applied,
    rewrites: { succeeded: 0, failed: 0 },
    lastRewriteFailure: null as string | null,
  };
  const context = {
    pool,
    rates,
    tasks: descriptions,
    rewriteAttempts,
    ...(options.mutator ? { mutator: options.mutator.client } : {}),
  };
  return {
    stats,
    settings: { mutator: options.mutator?.spec ?? null, rates, rewriteAttempts, pool },
    crossover(parents: readonly AgentConfig[], rng: Rng): AgentConfig {
      return crossoverConfigs(parents, rng);
    },
    async mutate(child: AgentConfig, q: number, rng: Rng, signal?: AbortSignal) {
      const { config, event } = await mutateConfig(child, q, rng, context, signal);
      stats.applied[event.mutation]++;
      if (event.rewrite?.ok === true) stats.rewrites.succeeded++;
      if (event.rewrite?.ok === false) {
        stats.rewrites.failed++;
        stats.lastRewriteFailure = event.rewrite.reason;
      }
      options.onMutation?.(event);
      return config;
    },
    evaluate(genome: AgentConfig, signal?: AbortSignal): Promise<number[]> {
      return evaluateConfig(genome, {
        model: options.model,
        tasks: options.tasks,
        ...(options.episode ? { episode: options.episode } : {}),
        ...(options.onEpisode ? { onEpisode: options.onEpisode } : {}),
        ...(signal ? { signal } : {}),
      });
    },
    id: agentConfigId,
  };
}
