/**
 * The Beta distribution as the search needs it: draws for Thompson sampling (Gamma variates by
 * Marsaglia and Tsang's method, 2000, on ziggurat normals) and quantiles for the final choice (the inverse of the
 * regularized incomplete beta function, evaluated by its continued fraction). Written here rather
 * than taken from a package: none is installed, and these three functions are about 150 lines
 * (docs/design.md).
 */
import type { Rng } from "../../env/rng.js";
import { logBeta, logGamma, regularizedIncompleteBeta } from "../../stats/distributions.js";

export { logGamma, regularizedIncompleteBeta };

/** Gamma and Beta variates drawn from one seeded generator. */
export interface BetaSampler {
  /** A standard normal variate. */
  normal(): number;
  /** A Gamma(shape, 1) variate, shape > 0. */
  gamma(shape: number): number;
  /** A Beta(a, b) variate, a > 0 and b > 0. */
  beta(a: number, b: number): number;
}

// The normal ziggurat's 128 layers of equal area V, the base one ending at R (Doornik, 2005).
const ZIGGURAT_LAYERS = 128;
const ZIGGURAT_R = 3.442619855899;
const ZIGGURAT_V = 9.91256303526217e-3;
/** Right edges of the layers, X[0] (the base, with its tail) down to X[128] = 0. */
const ZIGGURAT_X = new Float64Array(ZIGGURAT_LAYERS + 1);
/** X[i + 1] / X[i]: a draw inside this fraction of layer i is accepted at once. */
const ZIGGURAT_RATIO = new Float64Array(ZIGGURAT_LAYERS);
{
  let f = Math.exp(-0.5 * ZIGGURAT_R * ZIGGURAT_R);
  ZIGGURAT_X[0] = ZIGGURAT_V / f;
  ZIGGURAT_X[1] = ZIGGURAT_R;
  for (let i = 2; i < ZIGGURAT_LAYERS; i++) {
    const previous = ZIGGURAT_X[i - 1] as number;
    const x = Math.sqrt(-2 * Math.log(ZIGGURAT_V / previous + f));
    ZIGGURAT_X[i] = x;
    f = Math.exp(-0.5 * x * x);
  }
  ZIGGURAT_X[ZIGGURAT_LAYERS] = 0;
  for (let i = 0; i < ZIGGURAT_LAYERS; i++) {
    ZIGGURAT_RATIO[i] = (ZIGGURAT_X[i + 1] as number) / (ZIGGURAT_X[i] as number);
  }
}

export function createBetaSampler(rng: Rng): BetaSampler {
  return new ZigguratBetaSampler(rng);
}

class ZigguratBetaSampler implements BetaSampler {
  constructor(private readonly rng: Rng) {}

  normal(): number {
    // The ziggurat (Marsaglia and Tsang, 2000, in Doornik's 2005 form): 98.8 % of draws are one
    // multiplication after one 32-bit draw, whose low 7 bits pick the layer and whose other 25
    // the position in it (disjoint bits, so the two are independent).
    const rng = this.rng;
    for (;;) {
      const bits = rng.next() * 4294967296; // the generator's 32 bits, as an integer
      const layer = bits & (ZIGGURAT_LAYERS - 1);
      const u = (Math.floor(bits / ZIGGURAT_LAYERS) + 0.5) / 16777216 - 1; // in (−1, 1)
      const outer = ZIGGURAT_X[layer] as number;
      if (Math.abs(u) < (ZIGGURAT_RATIO[layer] as number)) return u * outer;
      if (layer === 0) {
        // The base layer's tail beyond R (Marsaglia, 1964).
        let x: number;
        let y: number;
        do {
          x = Math.log(1 - rng.next()) / ZIGGURAT_R;
          y = Math.log(1 - rng.next());
        } while (-2 * y < x * x);
        return u < 0 ? x - ZIGGURAT_R : ZIGGURAT_R - x;
      }
      const x = u * outer;
      const inner = ZIGGURAT_X[layer + 1] as number;
      const f0 = Math.exp(-0.5 * (outer * outer - x * x));
      const f1 = Math.exp(-0.5 * (inner * inner - x * x));
      if (f1 + rng.next() * (f0 - f1) < 1) return x;
    }
  }

  gamma(shape: number): number {
    if (shape < 1) {
      // Gamma(a) = Gamma(a + 1) · U^(1/a) (Marsaglia and Tsang, section 6).
      return this.gamma(shape + 1) * (1 - this.rng.next()) ** (1 / shape);
    }
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.rng.next();
      const x2 = x * x;
      if (u < 1 - 0.0331 * x2 * x2) return d * v; // the squeeze: most draws stop here
      if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  beta(a: number, b: number): number {
    const x = this.gamma(a);
    const y = this.gamma(b);
    return x / (x + y);
  }
}

/**
 * The q-quantile of Beta(a, b): the x with I_x(a, b) = q. Newton steps on the CDF, kept inside
 * a bracket that bisection narrows whenever a step would leave it; exact to about 1e-12.
 */
export function betaQuantile(q: number, a: number, b: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile level must be in [0, 1], got ${q}`);
  if (!(a > 0 && b > 0)) throw new RangeError(`Beta parameters must be > 0, got ${a}, ${b}`);
  if (q === 0) return 0;
  if (q === 1) return 1;
  const logNorm = logBeta(a, b);
  let low = 0;
  let high = 1;
  let x = a / (a + b); // the mean: a start inside the bulk
  for (let i = 0; i < 200; i++) {
    const error = regularizedIncompleteBeta(x, a, b) - q;
    if (Math.abs(error) < 1e-14) return x;
    if (error > 0) high = x;
    else low = x;
    const density = Math.exp((a - 1) * Math.log(x) + (b - 1) * Math.log1p(-x) - logNorm);
    let next = x - error / density;
    if (!(next > low && next < high)) next = (low + high) / 2;
    if (Math.abs(next - x) < 1e-15 * Math.max(x, 1e-300)) return next;
    x = next;
  }
  return x;
}
