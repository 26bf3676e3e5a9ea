/**
 * The thin singular value decomposition of a weight matrix, A = U·diag(s)·Vᵀ with
 * k = min(rows, cols) singular triplets, by ml-matrix (docs/design.md, Dependencies). Factors
 * are returned as plain row-major Float64Arrays so that nothing downstream depends on the
 * library's types, and the product U·diag(c)·Vᵀ is computed here in one pass.
 *
 * `autoTranspose` is always on: ml-matrix's decomposition (after JAMA/Accord) assumes
 * rows ≥ cols; for a wide matrix it decomposes Aᵀ and swaps U and V, which is also ten times
 * faster than decomposing the wide matrix directly.
 */
import { Matrix, SingularValueDecomposition } from "ml-matrix";
import type { Tensor } from "../../rl/policy/tensor.js";

export interface ThinSvd {
  rows: number;
  cols: number;
  /** k = min(rows, cols): the number of singular triplets kept, zeros included. */
  rank: number;
  /** [rows, k] row-major; orthonormal columns. */
  u: Float64Array;
  /** k singular values, non-negative, in decreasing order. */
  s: Float64Array;
  /** [cols, k] row-major; orthonormal columns. */
  v: Float64Array;
}

/** The thin SVD of a 2-D tensor; throws one line for any other shape. */
export function thinSvd(t: Tensor): ThinSvd {
  if (t.shape.length !== 2) throw new Error(`svd: shape [${t.shape}] is not a matrix`);
  const [rows, cols] = t.shape as [number, number];
  const a = new Matrix(rows, cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) a.set(i, j, t.data[i * cols + j] as number);
  }
  const svd = new SingularValueDecomposition(a, { autoTranspose: true });
  const rank = Math.min(rows, cols);
  const left = svd.leftSingularVectors;
  const right = svd.rightSingularVectors;
  const diagonal = svd.diagonal;
  if (left.rows !== rows || right.rows !== cols || left.columns < rank || right.columns < rank) {
    throw new Error(`svd: unexpected factor shapes for a ${rows}×${cols} matrix`);
  }
  const u = new Float64Array(rows * rank);
  const v = new Float64Array(cols * rank);
  const s = new Float64Array(rank);
  for (let k = 0; k < rank; k++) s[k] = diagonal[k] as number;
  for (let i = 0; i < rows; i++) for (let k = 0; k < rank; k++) u[i * rank + k] = left.get(i, k);
  for (let j = 0; j < cols; j++) for (let k = 0; k < rank; k++) v[j * rank + k] = right.get(j, k);
  return { rows, cols, rank, u, s, v };
}

/** U·diag(c)·Vᵀ as a row-major [rows, cols] array; `c` has `rank` entries. */
export function scaledProduct(svd: ThinSvd, c: ArrayLike<number>): Float64Array {
  const { rows, cols, rank, u, v } = svd;
  if (c.length !== rank) throw new Error(`svd: ${c.length} scales for rank ${rank}`);
  // W = diag(c)·Vᵀ, [rank, cols] row-major, so that the inner loop below runs over contiguous rows.
  const w = new Float64Array(rank * cols);
  for (let k = 0; k < rank; k++) {
    const ck = c[k] as number;
    for (let j = 0; j < cols; j++) w[k * cols + j] = ck * (v[j * rank + k] as number);
  }
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    for (let k = 0; k < rank; k++) {
      const a = u[i * rank + k] as number;
      const wk = k * cols;
      for (let j = 0; j < cols; j++) {
        out[row + j] = (out[row + j] as number) + a * (w[wk + j] as number);
      }
    }
  }
  return out;
}
