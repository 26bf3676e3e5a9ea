/**
 * Crossover by task-vector merging (CycleQD; the released code's `ModelwiseLinearMerge`):
 *
 *   wᵢ ~ Normal(1, MERGE_WEIGHT_STD²), one scalar per parent
 *   θ_child = θ_base + Σᵢ wᵢ·τᵢ / Σᵢ wᵢ,   τᵢ = θ_pᵢ − θ_base
 *
 * The reference's "Normal(1, 0.01)": 0.01 is the standard deviation. The released code draws
 * `torch.normal(1, std)` with `std: 0.01` in configs/qd/crossover/model_linear.yaml.
 *
 * Every tensor is merged, biases and 1-D output rows included: the released code merges every
 * entry of the task vectors, and a weighted mean of task vectors needs no matrix structure.
 */
import type { Rng } from "../../../env/rng.js";
import type { Params, Tensor } from "../../rl/policy/tensor.js";
import { standardNormal } from "./normal.js";
import { applyTaskVector, checkSameLayout, taskVector } from "./task-vector.js";

/** The standard deviation of a merge weight around 1. */
export const MERGE_WEIGHT_STD = 0.01;

/** One merge weight per parent, ~ Normal(1, std²); `count` normals drawn in order from `rng`. */
export function drawMergeWeights(rng: Rng, count: number, std = MERGE_WEIGHT_STD): number[] {
  return Array.from({ length: count }, () => 1 + std * standardNormal(rng));
}

/**
 * θ_base + Σ wᵢτᵢ / Σ wᵢ with the given weights (in the base's element type). Throws one line on
 * mismatched layouts, a weight count that is not the parents', or a sum of weights that is not a
 * usable divisor (never the case with weights drawn near 1).
 */
export function mergeTaskVectors(
  base: Params,
  taskVectors: readonly Params[],
  weights: readonly number[],
): Params {
  if (taskVectors.length === 0) throw new Error("merge: no task vectors");
  if (weights.length !== taskVectors.length) {
    throw new Error(`merge: ${weights.length} weights for ${taskVectors.length} task vectors`);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  if (!Number.isFinite(total) || Math.abs(total) < 1e-12) {
    throw new Error(`merge: the weights sum to ${total}, which cannot be divided by`);
  }
  const merged: Params = new Map();
  for (const [name, b] of base)
    merged.set(name, { shape: b.shape.slice(), data: new Float64Array(b.data.length) });
  taskVectors.forEach((tau, i) => {
    checkSameLayout(base, tau, `merge: task vector ${i}`);
    const scale = (weights[i] as number) / total;
    for (const [name, m] of merged) {
      const source = (tau.get(name) as Tensor).data;
      const target = m.data;
      for (let j = 0; j < target.length; j++)
        target[j] = (target[j] as number) + scale * (source[j] as number);
    }
  });
  return applyTaskVector(base, merged);
}

export interface MergeResult {
  params: Params;
  /** The drawn weights, one per parent, for the generation's record. */
  weights: number[];
}

/** The crossover: parents' weights (θ, not τ) → the merged child, weights drawn from `rng`. */
export function mergeParents(
  base: Params,
  parents: readonly Params[],
  rng: Rng,
  std = MERGE_WEIGHT_STD,
): MergeResult {
  const taskVectors = parents.map((theta) => taskVector(theta, base));
  const weights = drawMergeWeights(rng, parents.length, std);
  return { params: mergeTaskVectors(base, taskVectors, weights), weights };
}
