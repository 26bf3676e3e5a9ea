/**
 * Standard normal draws from clade's seeded Rng (never Math.random), so that a seed fixes every
 * merge weight and mutation. Box–Muller, one draw per two uniforms: simple and reproducible, and
 * far cheaper than the evaluation of the child it perturbs.
 */
import type { Rng } from "../../../env/rng.js";

export function standardNormal(rng: Rng): number {
  const u = 1 - rng.next(); // in (0, 1]: log(u) is finite
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}
