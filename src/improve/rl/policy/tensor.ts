/**
 * Named tensors: the one container every part of the embedded policy shares (network, Adam,
 * safetensors, the quality-diversity operators that merge and mutate weights).
 */

/** Element storage: F32 for weights on disk and in training, F64 for gradient checks. */
export type FloatArray = Float32Array | Float64Array;

/** A dense row-major tensor. */
export interface Tensor {
  shape: number[];
  data: FloatArray;
}

/** Parameters (or gradients, or optimiser moments) by name, e.g. "policy.w1". */
export type Params = Map<string, Tensor>;

export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** A same-shaped map of zeros; the element type follows the source unless `dtype` says. */
export function zerosLike(params: Params, dtype?: "F32" | "F64"): Params {
  const out: Params = new Map();
  for (const [name, t] of params) {
    const f64 = dtype === undefined ? t.data instanceof Float64Array : dtype === "F64";
    const data = f64 ? new Float64Array(t.data.length) : new Float32Array(t.data.length);
    out.set(name, { shape: t.shape.slice(), data });
  }
  return out;
}

/** A deep copy, optionally converting the element type. */
export function cloneParams(params: Params, dtype?: "F32" | "F64"): Params {
  const out = zerosLike(params, dtype);
  for (const [name, t] of params) (out.get(name) as Tensor).data.set(t.data);
  return out;
}

/** Sets every gradient to zero (before accumulating the next batch). */
export function zeroGrads(grads: Params): void {
  for (const t of grads.values()) t.data.fill(0);
}

/** The tensor called `name`; throws when absent (a wrong name is a programming error). */
export function tensor(params: Params, name: string): Tensor {
  const t = params.get(name);
  if (!t) throw new Error(`no parameter named "${name}"`);
  return t;
}
