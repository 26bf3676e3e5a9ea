/**
 * Adam (Kingma & Ba, 2015) over named tensors, with decoupled weight decay (AdamW) when asked,
 * and global-norm gradient clipping done in place.
 *
 * Clipping follows the estimators' clipGradNorm (src/improve/rl/estimators/losses.ts): the
 * factor min(1, maxNorm / (norm + 1e-6)) as torch's clip_grad_norm_, nothing scaled when the
 * norm is not finite, the default maximum from DEFAULTS.gradClip. That function copies plain
 * number arrays; the policy's gradients are typed arrays of millions of entries, so this one
 * scales them where they lie.
 */
import { DEFAULTS } from "../estimators/defaults.js";
import type { Params, Tensor } from "./tensor.js";

// ---- Hyperparameters ----
export interface AdamOptions {
  /** Step size. */
  lr: number;
  /** Decay of the first moment (mean of gradients). */
  beta1: number;
  /** Decay of the second moment (mean of squared gradients). */
  beta2: number;
  /** Added to √v̂ in the denominator. */
  eps: number;
  /** Decoupled weight decay (AdamW): θ ← θ − lr·wd·θ each step; 0 turns it off. */
  weightDecay: number;
}

export const ADAM_DEFAULTS: Readonly<AdamOptions> = Object.freeze({
  lr: 1e-3,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  weightDecay: 0,
});

/** The largest global gradient norm allowed (AgentGym-RL's actor grad_clip). */
export const MAX_GRAD_NORM = DEFAULTS.gradClip;

export interface ClipResult {
  /** L2 norm over every tensor together, before clipping. */
  totalNorm: number;
  /** The factor applied. */
  scale: number;
  /** False when the norm is NaN or infinite: nothing was scaled and the step should be skipped. */
  finite: boolean;
}

/** The L2 norm of all gradients together. */
export function globalNorm(grads: Params): number {
  let squares = 0;
  for (const t of grads.values()) {
    const d = t.data;
    for (let i = 0; i < d.length; i++) squares += (d[i] as number) * (d[i] as number);
  }
  return Math.sqrt(squares);
}

/** Scales every gradient in place so that their joint L2 norm is at most maxNorm. */
export function clipGradNorm(grads: Params, maxNorm: number = MAX_GRAD_NORM): ClipResult {
  if (!(maxNorm > 0)) throw new Error(`clipGradNorm: maxNorm must be positive, got ${maxNorm}`);
  const totalNorm = globalNorm(grads);
  const finite = Number.isFinite(totalNorm);
  const scale = finite ? Math.min(1, maxNorm / (totalNorm + 1e-6)) : 1;
  if (scale < 1) {
    for (const t of grads.values()) {
      const d = t.data;
      for (let i = 0; i < d.length; i++) d[i] = (d[i] as number) * scale;
    }
  }
  return { totalNorm, scale, finite };
}

/** Adam's state and update over a fixed set of named parameters. */
export class Adam {
  readonly options: AdamOptions;
  /** First and second moments, by parameter name (Float32Array, saved like weights if wanted). */
  readonly m: Params = new Map();
  readonly v: Params = new Map();
  /** Steps taken. */
  t = 0;

  constructor(
    readonly params: Params,
    options: Partial<AdamOptions> = {},
  ) {
    this.options = { ...ADAM_DEFAULTS, ...options };
    for (const [name, p] of params) {
      this.m.set(name, { shape: p.shape.slice(), data: new Float32Array(p.data.length) });
      this.v.set(name, { shape: p.shape.slice(), data: new Float32Array(p.data.length) });
    }
  }

  /** One update θ ← θ − lr · m̂ / (√v̂ + ε) from gradients of the loss being minimised. */
  step(grads: Params): void {
    const { lr, beta1, beta2, eps, weightDecay } = this.options;
    this.t++;
    const correction1 = 1 - beta1 ** this.t;
    const correction2 = 1 - beta2 ** this.t;
    const stepSize = lr / correction1;
    const sqrtCorrection2 = Math.sqrt(correction2);
    for (const [name, p] of this.params) {
      const g = grads.get(name);
      if (!g) throw new Error(`Adam: no gradient for "${name}"`);
      if (g.data.length !== p.data.length)
        throw new Error(`Adam: gradient of "${name}" has the wrong size`);
      const theta = p.data;
      const grad = g.data;
      const m = (this.m.get(name) as Tensor).data;
      const v = (this.v.get(name) as Tensor).data;
      const decay = 1 - lr * weightDecay;
      for (let i = 0; i < theta.length; i++) {
        const gi = grad[i] as number;
        // A never-touched entry (rows of unseen features): the update is exactly nothing.
        if (gi === 0 && m[i] === 0 && v[i] === 0 && weightDecay === 0) continue;
        const mi = beta1 * (m[i] as number) + (1 - beta1) * gi;
        const vi = beta2 * (v[i] as number) + (1 - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        theta[i] =
          (theta[i] as number) * decay - (stepSize * mi) / (Math.sqrt(vi) / sqrtCorrection2 + eps);
      }
    }
  }
}
