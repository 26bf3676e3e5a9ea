/**
 * The embedded policy (src/improve/rl/policy) as a CycleQD genome, and a genome store of weight
 * files.
 *
 *   crossover: task-vector merging of the parents' weights against the base (mergeParents);
 *   mutate:    "paper": SVD mutation along the quality task's expert task vector (each expert's
 *              SVDs computed once, on first use); "released": Gaussian mutation;
 *   evaluate:  greedy success rate on each task's evaluation tasks, K scores in task order;
 *   id:        sha256 of the weights as stored (names, shapes, F32 bytes), first 16 hex chars.
 *
 * Cross-environment play: nothing in-process refuses a policy on an environment other than its
 * provenance's. evaluatePolicy and embeddedPolicy never read `provenance.env`; the features are
 * generic hashed text, so a policy scores any environment that lists its actions. The refusal
 * ("was trained on … but --env is …") is the CLI's, for policy files (src/cli/user-modules.ts).
 * A CycleQD genome is scored on every task's environment by design, so none is enforced here;
 * children keep the base's provenance (childPolicy).
 */
import { createHash } from "node:crypto";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Rng } from "../../env/rng.js";
import type { EnvDefinition } from "../../env/types.js";
import { loadPolicy, type PolicyModel, savePolicy } from "../rl/policy/model.js";
import type { Tensor } from "../rl/policy/tensor.js";
import { evaluatePolicy } from "../rl/train/evaluate.js";
import { type Genome, type GenomeStore, VARIANTS, type Variant } from "./cycle.js";
import { childPolicy } from "./operators/child.js";
import { mergeParents } from "./operators/merge.js";
import { type ExpertSvds, expertSvds, gaussianMutation, svdMutation } from "./operators/mutate.js";
import { checkSameLayout, taskVector } from "./operators/task-vector.js";

/** Task k: an environment and the task indices it is evaluated on. */
export interface PolicyTask {
  readonly env: EnvDefinition;
  readonly tasks: readonly number[];
}

export interface PolicyGenomeOptions {
  /** θ_base: task vectors are taken against it, and children take its network and provenance. */
  readonly base: PolicyModel;
  /** One expert per task (index = task): the SVD mutation's directions. */
  readonly experts: readonly PolicyModel[];
  /** K tasks, in task order. */
  readonly tasks: readonly PolicyTask[];
  /** Which mutation to apply; default "paper". */
  readonly variant?: Variant;
  /** Agent turns per episode; each environment's maxSteps by default. */
  readonly horizon?: number;
}

/** Throws one line when the experts, tasks and base do not fit together. */
function checkOptions(options: PolicyGenomeOptions): void {
  const { base, experts, tasks } = options;
  if (tasks.length < 2)
    throw new Error(`policy genome: CycleQD needs ≥ 2 tasks, got ${tasks.length}`);
  if (experts.length !== tasks.length) {
    throw new Error(`policy genome: ${experts.length} expert(s) for ${tasks.length} task(s)`);
  }
  tasks.forEach((task, k) => {
    if (task.tasks.length === 0) throw new Error(`policy genome: task ${k} lists no task indices`);
  });
  experts.forEach((expert, k) => {
    checkSameLayout(base.params, expert.params, `policy genome: expert ${k}`);
    if (JSON.stringify(expert.features) !== JSON.stringify(base.features)) {
      throw new Error(`policy genome: expert ${k}'s feature settings differ from the base's`);
    }
  });
}

/** A policy genome, counting the environment steps its evaluations took (a budget counts them). */
export interface PolicyGenome extends Genome<PolicyModel> {
  readonly envSteps: number;
}

/** The embedded policy as a CycleQD genome. */
export function createPolicyGenome(options: PolicyGenomeOptions): PolicyGenome {
  checkOptions(options);
  const { base, experts, tasks, horizon } = options;
  const mutation = VARIANTS[options.variant ?? "paper"].mutation;
  const svds = new Map<number, ExpertSvds>();
  const svdsOf = (q: number): ExpertSvds => {
    const expert = experts[q];
    if (!expert) throw new Error(`policy genome: no expert for quality task ${q}`);
    let cached = svds.get(q);
    if (!cached) {
      cached = expertSvds(taskVector(expert.params, base.params));
      svds.set(q, cached);
    }
    return cached;
  };
  let envSteps = 0;
  return {
    get envSteps() {
      return envSteps;
    },
    crossover(parents: readonly PolicyModel[], rng: Rng): PolicyModel {
      const merged = mergeParents(
        base.params,
        parents.map((p) => p.params),
        rng,
      );
      return childPolicy(base, merged.params);
    },
    mutate(child: PolicyModel, q: number, rng: Rng): PolicyModel {
      const params =
        mutation.kind === "svd"
          ? svdMutation(child.params, svdsOf(q), rng, mutation.rate)
          : gaussianMutation(child.params, rng, mutation.std);
      return childPolicy(base, params);
    },
    async evaluate(genome: PolicyModel, signal?: AbortSignal): Promise<number[]> {
      const scores: number[] = [];
      for (const task of tasks) {
        const result = await evaluatePolicy({
          env: task.env,
          policy: genome,
          tasks: task.tasks,
          mode: "greedy",
          ...(horizon === undefined ? {} : { horizon }),
          ...(signal ? { signal } : {}),
        });
        envSteps += result.envSteps;
        if (result.errors > 0 && result.episodes === result.errors) {
          throw new Error(`every episode of ${task.env.info.name} errored`);
        }
        scores.push(result.successRate);
      }
      return scores;
    },
    id: policyId,
  };
}

/** sha256 of the weights as stored (name, shape, F32 bytes of each tensor by name), 16 hex chars. */
export function policyId(model: PolicyModel): string {
  const hash = createHash("sha256");
  // In name order: a file stores its tensors sorted, so a loaded policy's Map order may differ.
  for (const name of [...model.params.keys()].sort()) {
    const t = model.params.get(name) as Tensor;
    hash.update(`${name}[${t.shape.join(",")}]\n`);
    const f32 = t.data instanceof Float32Array ? t.data : Float32Array.from(t.data);
    hash.update(new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength));
  }
  return hash.digest("hex").slice(0, 16);
}

const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Elites' policies as DIR/<id>.safetensors (written to a temporary file, then renamed). */
export class FilePolicyStore implements GenomeStore<PolicyModel> {
  constructor(readonly dir: string) {}

  path(id: string): string {
    if (!ID_PATTERN.test(id)) throw new Error(`policy store: "${id}" is not a usable genome id`);
    return join(this.dir, `${id}.safetensors`);
  }

  async put(id: string, genome: PolicyModel): Promise<void> {
    const path = this.path(id);
    await mkdir(this.dir, { recursive: true });
    const temporary = `${path}.${process.pid}.put.tmp`;
    try {
      await savePolicy(temporary, genome);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async get(id: string): Promise<PolicyModel | undefined> {
    const path = this.path(id);
    try {
      await stat(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    return loadPolicy(path);
  }
}
