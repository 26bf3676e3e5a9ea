/**
 * The embedded policy's network, hand-written: a one-hidden-layer scorer over sparse features
 * and a separate value head.
 *
 *   policy:  x_c = state ∪ candidate c's features (sparse, dimension D)
 *            h_c = tanh(x_c · policy.w1 + policy.b1)            (H units)
 *            z_c = policy.w2 · h_c + policy.b2                   (the candidate's score, a logit)
 *            π(c | s) = softmax_c(z)                             (temperature 1)
 *   value:   v(s) = value.w2 · tanh(x_state · value.w1 + value.b1) + value.b2
 *
 * w1 is stored [D, H] (one row per hashed feature) so that a sparse input reads whole rows. The
 * state's part of x·w1 is computed once per turn and shared by all candidates. Forward passes
 * compute in double precision whatever the parameters' element type; gradients accumulate into
 * a same-named map (see zerosLike) and are never reset here.
 */
import { createRng } from "../../../env/rng.js";
import type { SparseVector, TurnFeatures } from "./features.js";
import { type FloatArray, type Params, tensor } from "./tensor.js";

export const ARCHITECTURE = "clade.hashed-mlp.v1";

// ---- Hyperparameters ----
/** Hidden units of the policy scorer (H). */
export const DEFAULT_HIDDEN = 64;
/** Hidden units of the value head. */
export const DEFAULT_VALUE_HIDDEN = 32;
/**
 * Initialisation ("scaled-normal-v1"): w1 ~ N(0, W1_INIT_STD²), the inputs having about twenty
 * unit-norm feature blocks so that a hidden pre-activation starts with variance near 1; the
 * policy's output row ~ N(0, POLICY_OUT_INIT_STD²) so that the first policy is near uniform
 * (CleanRL's 0.01); the value's output row ~ N(0, VALUE_OUT_INIT_STD²) (CleanRL's 1, over √H).
 * Biases start at 0.
 */
export const INIT_SCHEME = "scaled-normal-v1";
export const W1_INIT_STD = 0.2;
export const POLICY_OUT_INIT_STD = 0.01;
export const VALUE_OUT_INIT_STD = 1;
/** Mixed into the seed so the initial weights differ from other streams drawn from one seed. */
const INIT_STREAM = 0x1417;

export interface NetworkConfig {
  /** D: must equal the feature settings' dim. */
  inputDim: number;
  hidden: number;
  valueHidden: number;
}

export const PARAM_NAMES = [
  "policy.w1",
  "policy.b1",
  "policy.w2",
  "policy.b2",
  "value.w1",
  "value.b1",
  "value.w2",
  "value.b2",
] as const;

/** Every parameter's shape for a configuration. */
export function paramShapes(config: NetworkConfig): Record<(typeof PARAM_NAMES)[number], number[]> {
  const { inputDim: d, hidden: h, valueHidden: hv } = config;
  return {
    "policy.w1": [d, h],
    "policy.b1": [h],
    "policy.w2": [h],
    "policy.b2": [1],
    "value.w1": [d, hv],
    "value.b1": [hv],
    "value.w2": [hv],
    "value.b2": [1],
  };
}

/** Fresh parameters drawn from the seed (same seed and config → identical weights). */
export function initParams(
  config: NetworkConfig,
  seed: number,
  options: { dtype?: "F32" | "F64" } = {},
): Params {
  const rng = createRng(seed, INIT_STREAM);
  // Box–Muller, one normal per pair of uniforms (simple and reproducible).
  const normal = (): number => {
    const u = 1 - rng.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
  };
  const stds: Record<(typeof PARAM_NAMES)[number], number> = {
    "policy.w1": W1_INIT_STD,
    "policy.b1": 0,
    "policy.w2": POLICY_OUT_INIT_STD,
    "policy.b2": 0,
    "value.w1": W1_INIT_STD,
    "value.b1": 0,
    "value.w2": VALUE_OUT_INIT_STD / Math.sqrt(config.valueHidden),
    "value.b2": 0,
  };
  const shapes = paramShapes(config);
  const params: Params = new Map();
  for (const name of PARAM_NAMES) {
    const shape = shapes[name];
    const size = shape.reduce((a, b) => a * b, 1);
    const data = options.dtype === "F64" ? new Float64Array(size) : new Float32Array(size);
    const std = stds[name];
    if (std > 0) for (let i = 0; i < size; i++) data[i] = std * normal();
    params.set(name, { shape, data });
  }
  return params;
}

/** Throws a one-line error unless `params` holds exactly the tensors `config` needs. */
export function checkParams(params: Params, config: NetworkConfig): void {
  const shapes = paramShapes(config);
  for (const name of PARAM_NAMES) {
    const t = params.get(name);
    if (!t) throw new Error(`policy weights: missing tensor "${name}"`);
    const want = shapes[name];
    if (t.shape.length !== want.length || t.shape.some((d, i) => d !== want[i])) {
      throw new Error(
        `policy weights: "${name}" has shape [${t.shape}], expected [${want}] for this network`,
      );
    }
  }
  for (const name of params.keys()) {
    if (!(PARAM_NAMES as readonly string[]).includes(name)) {
      throw new Error(`policy weights: unexpected tensor "${name}"`);
    }
  }
}

// ---- Shared pieces ----

// The two sparse kernels below are unrolled by four: it halves their time in V8, and they are
// nearly all of a turn's cost.

/** out[0..width) += Σ_k x_k · w[index_k, :], for a row-major [D, width] matrix. */
function addSparseRows(out: Float64Array, x: SparseVector, w: FloatArray, width: number): void {
  const { indices, values } = x;
  const tail = width - (width % 4);
  for (let k = 0; k < indices.length; k++) {
    const row = (indices[k] as number) * width;
    const v = values[k] as number;
    let j = 0;
    for (; j < tail; j += 4) {
      out[j] = (out[j] as number) + v * (w[row + j] as number);
      out[j + 1] = (out[j + 1] as number) + v * (w[row + j + 1] as number);
      out[j + 2] = (out[j + 2] as number) + v * (w[row + j + 2] as number);
      out[j + 3] = (out[j + 3] as number) + v * (w[row + j + 3] as number);
    }
    for (; j < width; j++) out[j] = (out[j] as number) + v * (w[row + j] as number);
  }
}

/** g[index_k, :] += x_k · d[dOffset..dOffset + width) for every k. */
function scatterSparseRows(
  g: FloatArray,
  x: SparseVector,
  d: Float64Array,
  dOffset: number,
  width: number,
): void {
  const { indices, values } = x;
  const tail = width - (width % 4);
  for (let k = 0; k < indices.length; k++) {
    const row = (indices[k] as number) * width;
    const v = values[k] as number;
    let j = 0;
    for (; j < tail; j += 4) {
      g[row + j] = (g[row + j] as number) + v * (d[dOffset + j] as number);
      g[row + j + 1] = (g[row + j + 1] as number) + v * (d[dOffset + j + 1] as number);
      g[row + j + 2] = (g[row + j + 2] as number) + v * (d[dOffset + j + 2] as number);
      g[row + j + 3] = (g[row + j + 3] as number) + v * (d[dOffset + j + 3] as number);
    }
    for (; j < width; j++) g[row + j] = (g[row + j] as number) + v * (d[dOffset + j] as number);
  }
}

/** Log-softmax of `logits` (stable: shifted by the maximum). */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  const n = logits.length;
  const out = new Float64Array(n);
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) max = Math.max(max, logits[i] as number);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp((logits[i] as number) - max);
  const lse = max + Math.log(sum);
  for (let i = 0; i < n; i++) out[i] = (logits[i] as number) - lse;
  return out;
}

/** Entropy −Σ p log p of a distribution given by its log-probabilities. */
export function entropyOf(logProbs: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < logProbs.length; i++) {
    const lp = logProbs[i] as number;
    if (lp > Number.NEGATIVE_INFINITY) h -= Math.exp(lp) * lp;
  }
  return h;
}

// ---- Policy ----

/** Everything a turn's forward pass computed (kept for its backward pass). */
export interface PolicyForward {
  /** Scores z_c, one per candidate. */
  logits: Float64Array;
  logProbs: Float64Array;
  probs: Float64Array;
  entropy: number;
  /** tanh activations, candidate-major: hidden[c * H + j]. */
  hidden: Float64Array;
}

/** Scores every candidate of a turn and the resulting distribution. */
export function policyForward(params: Params, features: TurnFeatures): PolicyForward {
  const w1 = tensor(params, "policy.w1");
  const b1 = tensor(params, "policy.b1").data;
  const w2 = tensor(params, "policy.w2").data;
  const b2 = tensor(params, "policy.b2").data[0] as number;
  const width = w1.shape[1] as number;
  const n = features.candidates.length;

  const shared = new Float64Array(width);
  for (let j = 0; j < width; j++) shared[j] = b1[j] as number;
  addSparseRows(shared, features.state, w1.data, width);

  const hidden = new Float64Array(n * width);
  const logits = new Float64Array(n);
  const pre = new Float64Array(width);
  for (let c = 0; c < n; c++) {
    pre.set(shared);
    addSparseRows(pre, features.candidates[c] as SparseVector, w1.data, width);
    let z = b2;
    for (let j = 0; j < width; j++) {
      const h = Math.tanh(pre[j] as number);
      hidden[c * width + j] = h;
      z += (w2[j] as number) * h;
    }
    logits[c] = z;
  }
  const logProbs = logSoftmax(logits);
  const probs = logProbs.map(Math.exp);
  return { logits, logProbs, probs, entropy: entropyOf(logProbs), hidden };
}

/**
 * Accumulates into `grads` the gradient of a loss given its derivative with respect to each
 * candidate's score (dLoss/dz_c), scaled by `scale` (e.g. 1 / batch size).
 */
export function policyBackward(
  params: Params,
  grads: Params,
  features: TurnFeatures,
  forward: PolicyForward,
  dLogits: ArrayLike<number>,
  scale = 1,
): void {
  const w2 = tensor(params, "policy.w2").data;
  const gW1 = tensor(grads, "policy.w1");
  const gB1 = tensor(grads, "policy.b1").data;
  const gW2 = tensor(grads, "policy.w2").data;
  const gB2 = tensor(grads, "policy.b2").data;
  const width = gW1.shape[1] as number;
  const n = features.candidates.length;
  const { hidden } = forward;

  const dPre = new Float64Array(n * width);
  const dShared = new Float64Array(width);
  let dB2 = 0;
  for (let c = 0; c < n; c++) {
    const g = (dLogits[c] as number) * scale;
    if (g === 0) continue;
    dB2 += g;
    for (let j = 0; j < width; j++) {
      const h = hidden[c * width + j] as number;
      gW2[j] = (gW2[j] as number) + g * h;
      const d = g * (w2[j] as number) * (1 - h * h);
      dPre[c * width + j] = d;
      dShared[j] = (dShared[j] as number) + d;
    }
    scatterSparseRows(gW1.data, features.candidates[c] as SparseVector, dPre, c * width, width);
  }
  gB2[0] = (gB2[0] as number) + dB2;
  for (let j = 0; j < width; j++) gB1[j] = (gB1[j] as number) + (dShared[j] as number);
  scatterSparseRows(gW1.data, features.state, dShared, 0, width);
}

/** dLoss/dz for a loss that depends on log π(a) only: g · (1[c = a] − π_c). */
export function logProbGradToLogits(
  forward: PolicyForward,
  action: number,
  gLogProb: number,
): Float64Array {
  const { probs } = forward;
  const out = new Float64Array(probs.length);
  for (let c = 0; c < probs.length; c++) out[c] = -gLogProb * (probs[c] as number);
  out[action] = (out[action] as number) + gLogProb;
  return out;
}

/** dH/dz_c = −π_c (log π_c + H): the entropy's gradient with respect to the scores. */
export function entropyGradToLogits(forward: PolicyForward): Float64Array {
  const { probs, logProbs, entropy } = forward;
  const out = new Float64Array(probs.length);
  for (let c = 0; c < probs.length; c++) {
    out[c] = -(probs[c] as number) * ((logProbs[c] as number) + entropy);
  }
  return out;
}

/**
 * dLoss/dz for the policy-gradient loss of one turn,
 *   loss = −(advantage · log π(action) + entropyCoef · H(π)),
 * i.e. minimising it ascends advantage-weighted log-likelihood plus an entropy bonus.
 */
export function policyGradientLogits(
  forward: PolicyForward,
  action: number,
  advantage: number,
  entropyCoef = 0,
): Float64Array {
  const out = logProbGradToLogits(forward, action, -advantage);
  if (entropyCoef !== 0) {
    const dH = entropyGradToLogits(forward);
    for (let c = 0; c < out.length; c++)
      out[c] = (out[c] as number) - entropyCoef * (dH[c] as number);
  }
  return out;
}

// ---- Value ----

export interface ValueForward {
  value: number;
  hidden: Float64Array;
}

/** v(s) from the state's features. */
export function valueForward(params: Params, state: SparseVector): ValueForward {
  const w1 = tensor(params, "value.w1");
  const b1 = tensor(params, "value.b1").data;
  const w2 = tensor(params, "value.w2").data;
  const width = w1.shape[1] as number;
  const hidden = new Float64Array(width);
  for (let j = 0; j < width; j++) hidden[j] = b1[j] as number;
  addSparseRows(hidden, state, w1.data, width);
  let value = tensor(params, "value.b2").data[0] as number;
  for (let j = 0; j < width; j++) {
    const h = Math.tanh(hidden[j] as number);
    hidden[j] = h;
    value += (w2[j] as number) * h;
  }
  return { value, hidden };
}

/** Accumulates dLoss/dθ for the value head given dLoss/dv (times `scale`). */
export function valueBackward(
  params: Params,
  grads: Params,
  state: SparseVector,
  forward: ValueForward,
  dValue: number,
  scale = 1,
): void {
  const g = dValue * scale;
  if (g === 0) return;
  const w2 = tensor(params, "value.w2").data;
  const gW1 = tensor(grads, "value.w1");
  const gB1 = tensor(grads, "value.b1").data;
  const gW2 = tensor(grads, "value.w2").data;
  const gB2 = tensor(grads, "value.b2").data;
  const width = gW1.shape[1] as number;
  const dPre = new Float64Array(width);
  for (let j = 0; j < width; j++) {
    const h = forward.hidden[j] as number;
    gW2[j] = (gW2[j] as number) + g * h;
    const d = g * (w2[j] as number) * (1 - h * h);
    dPre[j] = d;
    gB1[j] = (gB1[j] as number) + d;
  }
  gB2[0] = (gB2[0] as number) + g;
  scatterSparseRows(gW1.data, state, dPre, 0, width);
}
