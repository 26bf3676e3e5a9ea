/**
 * CycleQD's two mutations of a child's weights.
 *
 * SVD mutation (the paper's): for every 2-D weight matrix, with U·diag(s)·Vᵀ the thin SVD of the
 * quality task's expert task vector for that matrix,
 *
 *   θ += U · diag(s ⊙ r) · Vᵀ,   rᵢ ~ Uniform(0, SVD_MUTATION_RATE), k = min(rows, cols) of them
 *
 * so the child moves along the directions the expert's fine-tuning took, each scaled down by a
 * random factor below 0.1. The reference skips norm layers (names containing "norm"; every
 * other Llama tensor is a 2-D matrix and there are no biases). The embedded policy has no norms;
 * its 1-D tensors (the biases and the 1-D output rows policy.w2 and value.w2) are left unchanged,
 * since a vector has no SVD to move along: only policy.w1 and value.w1 are mutated. The reference
 * loads the experts' SVDs precomputed; `expertSvds` computes them once per expert.
 *
 * Gaussian mutation (the released code's default): θ += N(0, σ²) per element of every tensor,
 * biases and vectors included, as the released `GaussianMutator` does for every entry. The
 * reference's "N(0, 0.0003)" is σ = 0.0003: `torch.normal(0, std=mutation_rate)` with
 * `mutation_rate: 0.0003` in configs/qd/mutation/gaussian_noise.yaml.
 *
 * Both return new parameters in the input's element type and draw from the given Rng in the
 * parameters' name order, so that a seed fixes the child.
 */
import type { Rng } from "../../../env/rng.js";
import { cloneParams, type Params, type Tensor } from "../../rl/policy/tensor.js";
import { standardNormal } from "./normal.js";
import { scaledProduct, type ThinSvd, thinSvd } from "./svd.js";
import { addInto } from "./task-vector.js";

/** The upper end of the SVD mutation's uniform scales (the released svd_uniform_noise.yaml). */
export const SVD_MUTATION_RATE = 0.1;
/** σ of the Gaussian mutation (the released gaussian_noise.yaml). */
export const GAUSSIAN_MUTATION_STD = 0.0003;

/** One expert's thin SVDs, by matrix name. */
export type ExpertSvds = Map<string, ThinSvd>;

/** The thin SVD of every 2-D tensor of an expert's task vector (1-D tensors have none). */
export function expertSvds(taskVector: Params): ExpertSvds {
  const out: ExpertSvds = new Map();
  for (const [name, t] of taskVector) if (t.shape.length === 2) out.set(name, thinSvd(t));
  return out;
}

/**
 * θ + U·diag(s ⊙ r)·Vᵀ for every matrix, with the given r by matrix name (each of length
 * min(rows, cols)). Throws one line when a matrix has no SVD of its shape or the SVDs name a
 * tensor `params` lacks.
 */
export function applySvdMutation(
  params: Params,
  svds: ExpertSvds,
  scales: ReadonlyMap<string, ArrayLike<number>>,
): Params {
  checkSvds(params, svds);
  const out = cloneParams(params);
  for (const [name, svd] of svds) {
    const r = scales.get(name);
    if (!r) throw new Error(`svd mutation: no scales for "${name}"`);
    if (r.length !== svd.rank) {
      throw new Error(`svd mutation: ${r.length} scales for "${name}" of rank ${svd.rank}`);
    }
    const c = new Float64Array(svd.rank);
    for (let k = 0; k < svd.rank; k++) c[k] = (svd.s[k] as number) * (r[k] as number);
    addInto((out.get(name) as Tensor).data, scaledProduct(svd, c));
  }
  return out;
}

/** rᵢ ~ Uniform(0, rate) for every matrix, drawn in the parameters' name order. */
export function drawSvdScales(
  params: Params,
  svds: ExpertSvds,
  rng: Rng,
  rate = SVD_MUTATION_RATE,
): Map<string, Float64Array> {
  checkSvds(params, svds);
  const out = new Map<string, Float64Array>();
  for (const name of params.keys()) {
    const svd = svds.get(name);
    if (!svd) continue;
    const r = new Float64Array(svd.rank);
    for (let k = 0; k < r.length; k++) r[k] = rate * rng.next();
    out.set(name, r);
  }
  return out;
}

/** The paper's SVD mutation with scales drawn from `rng`. */
export function svdMutation(
  params: Params,
  svds: ExpertSvds,
  rng: Rng,
  rate = SVD_MUTATION_RATE,
): Params {
  return applySvdMutation(params, svds, drawSvdScales(params, svds, rng, rate));
}

/** θ += N(0, std²) per element of every tensor. */
export function gaussianMutation(params: Params, rng: Rng, std = GAUSSIAN_MUTATION_STD): Params {
  const out = cloneParams(params);
  for (const t of out.values()) {
    for (let i = 0; i < t.data.length; i++) {
      t.data[i] = (t.data[i] as number) + std * standardNormal(rng);
    }
  }
  return out;
}

/** Every matrix of `params` has an SVD of its shape, and every SVD a matrix. */
function checkSvds(params: Params, svds: ExpertSvds): void {
  for (const [name, t] of params) {
    if (t.shape.length !== 2) continue;
    const svd = svds.get(name);
    if (!svd) throw new Error(`svd mutation: no SVD for matrix "${name}"`);
    if (svd.rows !== t.shape[0] || svd.cols !== t.shape[1]) {
      throw new Error(
        `svd mutation: "${name}" has shape [${t.shape}] against an SVD of [${svd.rows},${svd.cols}]`,
      );
    }
  }
  for (const name of svds.keys()) {
    if (params.get(name)?.shape.length !== 2) {
      throw new Error(`svd mutation: SVD for "${name}", which is not a matrix of these weights`);
    }
  }
}
