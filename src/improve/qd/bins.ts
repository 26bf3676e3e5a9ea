/**
 * The bin rule of CycleQD's reference code: a task's score range [min, max]
 * is cut into B equal bins by `edges = linspace(min, max, B + 1)`; a score's bin is right-closed
 * and clamped to 0..B−1, i.e. `clamp(digitize(score, edges, right=True) − 1, 0, B − 1)`.
 *
 * With min = 0, max = 1, B = 4 the edges are [0, 0.25, 0.5, 0.75, 1] and:
 *   score −0.3 (below min)  → bin 0 (clamped)
 *   score  0   (min)        → bin 0 (clamped: right-closed would put it in bin −1)
 *   score  0.1              → bin 0
 *   score  0.25 (an edge)   → bin 0 (an edge belongs to the bin below it)
 *   score  0.26             → bin 1
 *   score  0.75 (an edge)   → bin 2
 *   score  1   (max)        → bin 3
 *   score  1.7 (above max)  → bin 3 (clamped)
 *
 * The edges are computed as numpy's linspace computes them (min + i·step, the last one set to max
 * exactly) and a score is compared with those very edges, so a score equal to a printed edge lands
 * where numpy would put it, even when i·step is not exact in binary.
 */

/** The paper's bin count per task score (each archive of K = 3 tasks is a 15 × 15 grid). */
export const DEFAULT_BINS = 15;

/** One task's score range and how many bins it is cut into. */
export interface BinSpec {
  readonly min: number;
  readonly max: number;
  readonly bins: number;
}

/** Throws one line when the range or the bin count cannot define bins. */
export function validateBinSpec(spec: BinSpec): void {
  const { min, max, bins } = spec;
  if (!Number.isFinite(min) || !Number.isFinite(max)) {
    throw new RangeError(`bin range must be finite, got [${min}, ${max}]`);
  }
  if (!(min < max)) throw new RangeError(`bin range needs min < max, got [${min}, ${max}]`);
  if (!Number.isInteger(bins) || bins < 1) {
    throw new RangeError(`bin count must be an integer ≥ 1, got ${bins}`);
  }
}

/** `linspace(min, max, bins + 1)`: the bins + 1 edges, first = min, last = max exactly. */
export function binEdges(spec: BinSpec): number[] {
  validateBinSpec(spec);
  const { min, max, bins } = spec;
  const step = (max - min) / bins;
  const edges: number[] = [];
  for (let i = 0; i < bins; i++) edges.push(min + i * step);
  edges.push(max);
  return edges;
}

/** The bin (0..bins−1) of one score under the rule above. */
export function binIndex(score: number, spec: BinSpec): number {
  return binIndexInEdges(score, binEdges(spec));
}

/**
 * The bin of a score given edges already computed (archives bin every candidate; computing the
 * edges once per archive keeps that cheap). `edges` must be ascending with at least two entries.
 */
export function binIndexInEdges(score: number, edges: readonly number[]): number {
  if (Number.isNaN(score)) throw new RangeError("cannot bin a NaN score");
  const bins = edges.length - 1;
  // digitize(right=True) is the number of edges strictly below the score; binary search for it.
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((edges[mid] as number) < score) lo = mid + 1;
    else hi = mid;
  }
  return Math.min(Math.max(lo - 1, 0), bins - 1);
}
