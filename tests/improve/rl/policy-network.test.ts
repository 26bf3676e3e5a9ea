/**
 * The embedded policy's numerics: finite-difference checks of every parameter's gradient (in
 * double precision, where central differences with h = 1e-6 are accurate to about 1e-9, so a
 * 1e-7 tolerance is tight yet safe), softmax, log-probabilities and entropy, seeded
 * initialisation, Adam and gradient clipping.
 */
import { describe, expect, it } from "vitest";
import type { AgentState } from "../../../src/agent/types.js";
import {
  ADAM_DEFAULTS,
  Adam,
  clipGradNorm,
  globalNorm,
} from "../../../src/improve/rl/policy/adam.js";
import {
  defaultFeatureSettings,
  Featurizer,
  type TurnFeatures,
} from "../../../src/improve/rl/policy/features.js";
import {
  entropyGradToLogits,
  entropyOf,
  initParams,
  logProbGradToLogits,
  logSoftmax,
  type NetworkConfig,
  PARAM_NAMES,
  paramShapes,
  policyBackward,
  policyForward,
  policyGradientLogits,
  valueBackward,
  valueForward,
} from "../../../src/improve/rl/policy/network.js";
import {
  cloneParams,
  type Params,
  type Tensor,
  zerosLike,
} from "../../../src/improve/rl/policy/tensor.js";

const CONFIG: NetworkConfig = { inputDim: 257, hidden: 6, valueHidden: 5 };

function sampleState(): AgentState {
  const step = (action: string, text: string) => ({
    action,
    message: action,
    observation: { text, availableActions: ["go north", "go south", "take lamp", "wait"] },
    reward: 0,
  });
  return {
    instruction: "Find the lamp and carry it to the hall.",
    observation: {
      text: "You are in the cellar at 3, 4.\nA lamp lies here. Exits: north, south.",
      availableActions: ["go north", "go south", "take lamp", "wait"],
    },
    history: [
      step("go south", "You are in the kitchen at 2, 4.\nExits: north, south."),
      step("wait", "You are in the kitchen at 2, 4.\nExits: north, south."),
      step("go south", "You are in the cellar at 3, 4.\nA lamp lies here. Exits: north, south."),
    ],
  };
}

function sampleFeatures(): TurnFeatures {
  const state = sampleState();
  const featurizer = new Featurizer(defaultFeatureSettings({ dim: CONFIG.inputDim }));
  return featurizer.turn(state, state.observation.availableActions ?? []);
}

/** Loss = −(A·log π(a) + β·H(π)) + Σ_c u_c z_c + ½(v − R)²: every parameter gets a gradient. */
const ACTION = 2;
const ADVANTAGE = 0.8;
const ENTROPY_COEF = 0.3;
const LOGIT_WEIGHTS = [0.5, -1.2, 0.3, 0.9];
const RETURN = 0.7;

function loss(params: Params, features: TurnFeatures): number {
  const forward = policyForward(params, features);
  let l = -(ADVANTAGE * (forward.logProbs[ACTION] as number) + ENTROPY_COEF * forward.entropy);
  for (let c = 0; c < LOGIT_WEIGHTS.length; c++) {
    l += (LOGIT_WEIGHTS[c] as number) * (forward.logits[c] as number);
  }
  const v = valueForward(params, features.state).value;
  return l + 0.5 * (v - RETURN) ** 2;
}

function analyticGrads(params: Params, features: TurnFeatures): Params {
  const grads = zerosLike(params);
  const forward = policyForward(params, features);
  const dLogits = policyGradientLogits(forward, ACTION, ADVANTAGE, ENTROPY_COEF);
  for (let c = 0; c < dLogits.length; c++)
    dLogits[c] = (dLogits[c] as number) + (LOGIT_WEIGHTS[c] as number);
  policyBackward(params, grads, features, forward, dLogits);
  const value = valueForward(params, features.state);
  valueBackward(params, grads, features.state, value, value.value - RETURN);
  return grads;
}

describe("gradients against finite differences", () => {
  // Give biases and the output layers non-trivial values so no term vanishes by symmetry.
  const params = initParams(CONFIG, 11, { dtype: "F64" });
  for (const name of ["policy.b1", "policy.w2", "value.b1", "policy.b2", "value.b2"]) {
    const data = (params.get(name) as Tensor).data;
    for (let i = 0; i < data.length; i++) data[i] = 0.3 * Math.sin(7 * i + name.length);
  }
  const features = sampleFeatures();
  const grads = analyticGrads(params, features);
  const H = 1e-6;

  for (const name of PARAM_NAMES) {
    it(`${name}: every entry matches a central difference`, () => {
      const theta = (params.get(name) as Tensor).data;
      const g = (grads.get(name) as Tensor).data;
      let nonZero = 0;
      let worst = 0;
      for (let i = 0; i < theta.length; i++) {
        const saved = theta[i] as number;
        theta[i] = saved + H;
        const up = loss(params, features);
        theta[i] = saved - H;
        const down = loss(params, features);
        theta[i] = saved;
        const numeric = (up - down) / (2 * H);
        worst = Math.max(worst, Math.abs(numeric - (g[i] as number)));
        if (Math.abs(numeric) > 1e-6) nonZero++;
      }
      expect(worst).toBeLessThan(1e-7);
      expect(nonZero).toBeGreaterThan(0);
    });
  }

  it("single precision gives the same gradients to float32 accuracy", () => {
    const f32 = cloneParams(params, "F32");
    const roundedF64 = cloneParams(f32, "F64");
    const g32 = analyticGrads(f32, features);
    const g64 = analyticGrads(roundedF64, features);
    for (const name of PARAM_NAMES) {
      const a = (g32.get(name) as Tensor).data;
      const b = (g64.get(name) as Tensor).data;
      let scale = 0;
      for (const x of b) scale = Math.max(scale, Math.abs(x));
      for (let i = 0; i < a.length; i++) {
        // f32 storage of the accumulated gradient: relative error ~6e-8 per add.
        expect(Math.abs((a[i] as number) - (b[i] as number))).toBeLessThanOrEqual(
          1e-5 * scale + 1e-12,
        );
      }
    }
  });

  it("gradients accumulate and scale", () => {
    const twice = zerosLike(params);
    const forward = policyForward(params, features);
    const dLogits = policyGradientLogits(forward, ACTION, ADVANTAGE);
    policyBackward(params, twice, features, forward, dLogits, 0.5);
    policyBackward(params, twice, features, forward, dLogits, 1.5);
    const once = zerosLike(params);
    policyBackward(params, once, features, forward, dLogits, 2);
    for (const name of PARAM_NAMES) {
      const a = (twice.get(name) as Tensor).data;
      const b = (once.get(name) as Tensor).data;
      for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i] as number, 12);
    }
  });
});

describe("softmax, log-probabilities and entropy", () => {
  it("logSoftmax matches the definition and survives large logits", () => {
    const z = [1, 2, 3];
    const lp = logSoftmax(z);
    const denominator = Math.exp(1) + Math.exp(2) + Math.exp(3);
    for (let i = 0; i < 3; i++)
      expect(lp[i]).toBeCloseTo((z[i] as number) - Math.log(denominator), 14);
    const big = logSoftmax([1000, 1001, -1000]);
    expect(Number.isFinite(big[0])).toBe(true);
    expect(Math.exp(big[0] as number) + Math.exp(big[1] as number)).toBeCloseTo(1, 12);
    expect(big[1]).toBeCloseTo(-Math.log1p(Math.exp(-1)), 12);
  });

  it("entropy: log n for uniform, 0 for a certain choice", () => {
    expect(entropyOf(logSoftmax([0, 0, 0, 0]))).toBeCloseTo(Math.log(4), 14);
    expect(entropyOf([0, Number.NEGATIVE_INFINITY])).toBe(0);
    const lp = logSoftmax([0.2, -1, 0.5]);
    const p = Array.from(lp, Math.exp);
    expect(entropyOf(lp)).toBeCloseTo(-p.reduce((s, x) => s + x * Math.log(x), 0), 14);
  });

  it("the score-space gradients of log π(a) and H match finite differences", () => {
    const z = [0.3, -0.7, 1.1, 0.05];
    const forwardAt = (logits: number[]) => {
      const logProbs = logSoftmax(logits);
      return {
        logits: Float64Array.from(logits),
        logProbs,
        probs: logProbs.map(Math.exp),
        entropy: entropyOf(logProbs),
        hidden: new Float64Array(0),
      };
    };
    const base = forwardAt(z);
    const dLogProb = logProbGradToLogits(base, 1, 1);
    const dEntropy = entropyGradToLogits(base);
    const h = 1e-6;
    for (let c = 0; c < z.length; c++) {
      const up = z.slice();
      up[c] = (up[c] as number) + h;
      const down = z.slice();
      down[c] = (down[c] as number) - h;
      const a = forwardAt(up);
      const b = forwardAt(down);
      expect(((a.logProbs[1] as number) - (b.logProbs[1] as number)) / (2 * h)).toBeCloseTo(
        dLogProb[c] as number,
        8,
      );
      expect((a.entropy - b.entropy) / (2 * h)).toBeCloseTo(dEntropy[c] as number, 8);
    }
    // The policy-gradient helper is −A·dlogπ − β·dH.
    const pg = policyGradientLogits(base, 1, 2, 0.1);
    for (let c = 0; c < z.length; c++) {
      expect(pg[c]).toBeCloseTo(-2 * (dLogProb[c] as number) - 0.1 * (dEntropy[c] as number), 14);
    }
  });

  it("a turn's probabilities sum to one and the first policy is near uniform", () => {
    const params = initParams(CONFIG, 3);
    const forward = policyForward(params, sampleFeatures());
    expect(forward.probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    for (const p of forward.probs) expect(Math.abs(p - 0.25)).toBeLessThan(0.05);
    expect(forward.entropy).toBeGreaterThan(Math.log(4) - 0.01);
  });
});

describe("initialisation", () => {
  it("has the documented names and shapes", () => {
    const params = initParams(CONFIG, 1);
    expect([...params.keys()]).toEqual([...PARAM_NAMES]);
    const shapes = paramShapes(CONFIG);
    for (const [name, t] of params) {
      expect(t.shape).toEqual(shapes[name as keyof typeof shapes]);
      expect(t.data).toBeInstanceOf(Float32Array);
    }
    expect((params.get("policy.b1") as Tensor).data.every((x) => x === 0)).toBe(true);
  });

  it("same seed → identical weights and scores; another seed → different ones", () => {
    const a = initParams(CONFIG, 5);
    const b = initParams(CONFIG, 5);
    const c = initParams(CONFIG, 6);
    for (const name of PARAM_NAMES) {
      expect((a.get(name) as Tensor).data).toEqual((b.get(name) as Tensor).data);
    }
    expect((a.get("policy.w1") as Tensor).data).not.toEqual((c.get("policy.w1") as Tensor).data);
    const features = sampleFeatures();
    expect(policyForward(a, features).logits).toEqual(policyForward(b, features).logits);
    expect(policyForward(a, sampleFeatures()).logits).toEqual(policyForward(a, features).logits);
  });

  it("w1 entries have the scheme's spread", () => {
    const w1 = (
      initParams({ inputDim: 4096, hidden: 16, valueHidden: 2 }, 9).get("policy.w1") as Tensor
    ).data;
    let sum = 0;
    let squares = 0;
    for (const x of w1) {
      sum += x;
      squares += x * x;
    }
    const mean = sum / w1.length;
    expect(Math.abs(mean)).toBeLessThan(0.005);
    expect(Math.sqrt(squares / w1.length - mean * mean)).toBeCloseTo(0.2, 2);
  });
});

describe("Adam and clipping", () => {
  const make = (values: number[]): Params =>
    new Map([["x", { shape: [values.length], data: Float64Array.from(values) }]]);

  it("the first step moves each coordinate by lr against its gradient's sign", () => {
    const params = make([1, -2, 3]);
    const adam = new Adam(params, { lr: 0.1 });
    adam.step(make([0.5, -4, 0]));
    const x = (params.get("x") as Tensor).data;
    expect(x[0]).toBeCloseTo(0.9, 6);
    expect(x[1]).toBeCloseTo(-1.9, 6);
    expect(x[2]).toBe(3);
    expect(adam.t).toBe(1);
  });

  it("minimises a quadratic", () => {
    const target = [3, -1, 0.5];
    const params = make([0, 0, 0]);
    const grads = zerosLike(params);
    const adam = new Adam(params, { lr: 0.05 });
    const x = (params.get("x") as Tensor).data;
    const g = (grads.get("x") as Tensor).data;
    for (let step = 0; step < 2000; step++) {
      for (let i = 0; i < 3; i++) g[i] = 2 * ((x[i] as number) - (target[i] as number));
      adam.step(grads);
    }
    for (let i = 0; i < 3; i++) expect(x[i]).toBeCloseTo(target[i] as number, 3);
  });

  it("decoupled weight decay shrinks weights with zero gradient", () => {
    const params = make([2]);
    new Adam(params, { lr: 0.1, weightDecay: 0.5 }).step(make([0]));
    expect((params.get("x") as Tensor).data[0]).toBeCloseTo(2 * (1 - 0.05), 12);
  });

  it("defaults are the named ones", () => {
    expect(ADAM_DEFAULTS).toEqual({
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0,
    });
  });

  it("clips the global norm to at most 1 and leaves small or non-finite gradients alone", () => {
    const grads: Params = new Map([
      ["a", { shape: [2], data: Float64Array.from([3, 0]) }],
      ["b", { shape: [1], data: Float64Array.from([4]) }],
    ]);
    const result = clipGradNorm(grads);
    expect(result.totalNorm).toBeCloseTo(5, 12);
    expect(result.finite).toBe(true);
    expect(globalNorm(grads)).toBeCloseTo(1, 5);
    const small = make([0.3, 0.4]);
    expect(clipGradNorm(small).scale).toBe(1);
    expect(Array.from((small.get("x") as Tensor).data)).toEqual([0.3, 0.4]);
    const broken = make([Number.NaN, 1]);
    const r = clipGradNorm(broken);
    expect(r.finite).toBe(false);
    expect((broken.get("x") as Tensor).data[1]).toBe(1);
    expect(() => clipGradNorm(small, 0)).toThrow(/maxNorm/);
  });
});
