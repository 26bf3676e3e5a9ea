/**
 * Task vectors (Ilharco et al.; CycleQD's genome arithmetic): τ = θ − θ_base per named tensor, and
 * back, θ = θ_base + τ. Task vectors are kept in double precision: the difference of two F32
 * weights is exact in F64, and merging and mutation then add small numbers to it.
 */
import { cloneParams, type Params, type Tensor } from "../../rl/policy/tensor.js";

/**
 * Throws one line unless `a` and `b` hold the same tensor names with the same shapes: the
 * operators add tensors elementwise, so any mismatch would be a silently wrong child.
 */
export function checkSameLayout(a: Params, b: Params, what = "weights"): void {
  for (const [name, t] of a) {
    const other = b.get(name);
    if (!other) throw new Error(`${what}: tensor "${name}" is missing from the other side`);
    if (!sameShape(t.shape, other.shape)) {
      throw new Error(`${what}: tensor "${name}" has shape [${t.shape}] against [${other.shape}]`);
    }
  }
  for (const name of b.keys()) {
    if (!a.has(name)) throw new Error(`${what}: unexpected tensor "${name}"`);
  }
}

/** τ = θ − θ_base for every named tensor (F64). */
export function taskVector(theta: Params, base: Params): Params {
  checkSameLayout(base, theta, "task vector");
  const out: Params = new Map();
  for (const [name, b] of base) {
    const t = (theta.get(name) as Tensor).data;
    const data = new Float64Array(b.data.length);
    for (let i = 0; i < data.length; i++) data[i] = (t[i] as number) - (b.data[i] as number);
    out.set(name, { shape: b.shape.slice(), data });
  }
  return out;
}

/** θ = θ_base + τ, in the base's element type (F32 weights stay F32, as on disk). */
export function applyTaskVector(base: Params, tau: Params): Params {
  checkSameLayout(base, tau, "apply task vector");
  const out = cloneParams(base);
  for (const [name, t] of out) addInto(t.data, (tau.get(name) as Tensor).data);
  return out;
}

/** target += source, elementwise. */
export function addInto(target: Float32Array | Float64Array, source: ArrayLike<number>): void {
  for (let i = 0; i < target.length; i++) target[i] = (target[i] as number) + (source[i] as number);
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
