/**
 * A synthetic genome for the CycleQD loop's tests: a vector x of K = 3 numbers whose score on
 * task k is clamp01(x_k − 0.25·x_{k+1}), merged by a drawn convex combination and mutated by a
 * drawn uniform perturbation. `beforeEvaluate` runs first in every evaluation (to fail or abort).
 */
import type { Rng } from "../../../src/env/rng.js";
import type { Genome } from "../../../src/improve/qd/cycle.js";

export type Vec = readonly number[];
export const K = 3;
export const RANGES = [0, 1, 2].map(() => ({ min: 0, max: 1 }));
export const EXPERTS: Vec[] = [
  [0.9, 0.1, 0.1],
  [0.1, 0.9, 0.1],
  [0.1, 0.1, 0.9],
];
const clamp01 = (v: number) => Math.min(Math.max(v, 0), 1);

export function vectorGenome(
  beforeEvaluate: (x: Vec, signal?: AbortSignal) => void = () => {},
): Genome<Vec> {
  return {
    crossover: (parents: readonly Vec[], rng: Rng) => {
      const w = rng.next();
      return (parents[0] as Vec).map(
        (v, j) => w * v + (1 - w) * ((parents[1] as Vec)[j] as number),
      );
    },
    mutate: (child: Vec, _q: number, rng: Rng) => child.map((v) => v + (rng.next() - 0.5) * 0.3),
    async evaluate(x: Vec, signal?: AbortSignal) {
      beforeEvaluate(x, signal);
      return x.map((v, k) => clamp01(v - 0.25 * (x[(k + 1) % K] as number)));
    },
    id: (x: Vec) => `v:${x.map((v) => v.toFixed(12)).join(",")}`,
  };
}
