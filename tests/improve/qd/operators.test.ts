/**
 * CycleQD's genome operators on embedded-policy weights: task vectors, merging with given and
 * drawn weights, SVD mutation against a hand-made SVD, Gaussian mutation statistics, and a
 * merged child through a safetensors file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRng } from "../../../src/env/rng.js";
import {
  applySvdMutation,
  applyTaskVector,
  childPolicy,
  drawMergeWeights,
  expertSvds,
  GAUSSIAN_MUTATION_STD,
  gaussianMutation,
  MERGE_WEIGHT_STD,
  mergeParents,
  mergeTaskVectors,
  scaledProduct,
  standardNormal,
  svdMutation,
  taskVector,
  thinSvd,
} from "../../../src/improve/qd/operators/index.js";
import { createPolicyModel, loadPolicy, savePolicy } from "../../../src/improve/rl/policy/index.js";
import type { Params, Tensor } from "../../../src/improve/rl/policy/tensor.js";

/** F64 parameters from plain arrays: name → [shape, values]. */
function params(spec: Record<string, [number[], number[]]>): Params {
  return new Map(
    Object.entries(spec).map(([name, [shape, values]]) => [
      name,
      { shape, data: Float64Array.from(values) },
    ]),
  );
}

function values(p: Params, name: string): number[] {
  return Array.from((p.get(name) as Tensor).data);
}

function expectClose(actual: ArrayLike<number>, expected: readonly number[], tol = 1e-12): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    expect(Math.abs((actual[i] as number) - (expected[i] as number))).toBeLessThan(tol);
  }
}

/** The thrown message, checked to be one line. */
function oneLineError(f: () => unknown): string {
  let message = "";
  try {
    f();
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).not.toBe("");
  expect(message).not.toContain("\n");
  return message;
}

function randomMatrix(rows: number, cols: number, seed: number): Tensor {
  const rng = createRng(seed);
  const data = new Float64Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = standardNormal(rng);
  return { shape: [rows, cols], data };
}

const base = params({
  w: [
    [2, 2],
    [1, 1, 1, 1],
  ],
  b: [[2], [0, 0]],
});
const tau1 = params({
  w: [
    [2, 2],
    [2, 0, 0, 2],
  ],
  b: [[2], [1, 0]],
});
const tau2 = params({
  w: [
    [2, 2],
    [0, 4, 4, 0],
  ],
  b: [[2], [0, -2]],
});

describe("task vectors", () => {
  it("τ = θ − θ_base, and θ_base + τ gives θ back", () => {
    const b = params({
      w: [
        [2, 2],
        [1, 2, 3, 4],
      ],
      b: [[2], [0.5, -0.5]],
    });
    const theta = params({
      w: [
        [2, 2],
        [2, 4, 3, 1],
      ],
      b: [[2], [1, 0]],
    });
    const tau = taskVector(theta, b);
    expect(values(tau, "w")).toEqual([1, 2, 0, -3]);
    expect(values(tau, "b")).toEqual([0.5, 0.5]);
    expect((tau.get("w") as Tensor).shape).toEqual([2, 2]);
    const back = applyTaskVector(b, tau);
    expect(values(back, "w")).toEqual([2, 4, 3, 1]);
    expect(values(back, "b")).toEqual([1, 0]);
    expect(values(b, "w")).toEqual([1, 2, 3, 4]); // inputs untouched
  });

  it("keeps F32 weights F32 and computes τ in F64", () => {
    const b32: Params = new Map([["w", { shape: [3], data: Float32Array.from([0.1, 0.2, 0.3]) }]]);
    const t32: Params = new Map([["w", { shape: [3], data: Float32Array.from([0.4, 0.2, 0.1]) }]]);
    const tau = taskVector(t32, b32);
    expect((tau.get("w") as Tensor).data).toBeInstanceOf(Float64Array);
    const back = applyTaskVector(b32, tau);
    expect((back.get("w") as Tensor).data).toBeInstanceOf(Float32Array);
    expect(values(back, "w")).toEqual(Array.from((t32.get("w") as Tensor).data));
  });

  it("mismatched names or shapes → one-line errors", () => {
    const missing = params({
      w: [
        [2, 2],
        [1, 1, 1, 1],
      ],
    });
    expect(oneLineError(() => taskVector(missing, base))).toMatch(/"b" is missing/);
    const extra = params({
      w: [
        [2, 2],
        [1, 1, 1, 1],
      ],
      b: [[2], [0, 0]],
      c: [[1], [0]],
    });
    expect(oneLineError(() => taskVector(extra, base))).toMatch(/unexpected tensor "c"/);
    const reshaped = params({
      w: [
        [4, 1],
        [1, 1, 1, 1],
      ],
      b: [[2], [0, 0]],
    });
    expect(oneLineError(() => taskVector(reshaped, base))).toMatch(/"w" has shape \[2,2\]/);
    expect(oneLineError(() => applyTaskVector(base, reshaped))).toMatch(/"w"/);
  });
});

describe("merge", () => {
  it("θ_base + Σ wᵢτᵢ / Σ wᵢ on every tensor, biases included (hand-computed)", () => {
    const child = mergeTaskVectors(base, [tau1, tau2], [1, 3]);
    expect(values(child, "w")).toEqual([1.5, 4, 4, 1.5]);
    expect(values(child, "b")).toEqual([0.25, -1.5]);
    const near = mergeTaskVectors(base, [tau1, tau2], [0.99, 1.01]);
    expectClose(values(near, "w"), [1.99, 3.02, 3.02, 1.99]);
    expectClose(values(near, "b"), [0.495, -1.01]);
  });

  it("merging one parent with itself gives that parent", () => {
    const theta = applyTaskVector(base, tau1);
    const child = mergeParents(base, [theta, theta], createRng(3)).params;
    expectClose(values(child, "w"), values(theta, "w"));
    expectClose(values(child, "b"), values(theta, "b"));
  });

  it("drawn weights are reproducible for a seed and agree with the plain merge", () => {
    const p1 = applyTaskVector(base, tau1);
    const p2 = applyTaskVector(base, tau2);
    const a = mergeParents(base, [p1, p2], createRng(7, 1));
    const b = mergeParents(base, [p1, p2], createRng(7, 1));
    const c = mergeParents(base, [p1, p2], createRng(8, 1));
    expect(a.weights).toHaveLength(2);
    expect(a.weights).toEqual(b.weights);
    expect(values(a.params, "w")).toEqual(values(b.params, "w"));
    expect(a.weights).not.toEqual(c.weights);
    for (const w of a.weights) expect(Math.abs(w - 1)).toBeLessThan(0.05);
    const plain = mergeTaskVectors(base, [tau1, tau2], a.weights);
    expectClose(values(a.params, "w"), values(plain, "w"));
    expectClose(values(a.params, "b"), values(plain, "b"));
  });

  it("weights ~ Normal(1, 0.01²): 0.01 is the standard deviation", () => {
    const w = drawMergeWeights(createRng(11), 20_000);
    const mean = w.reduce((s, x) => s + x, 0) / w.length;
    const std = Math.sqrt(w.reduce((s, x) => s + (x - mean) ** 2, 0) / (w.length - 1));
    expect(MERGE_WEIGHT_STD).toBe(0.01);
    expect(Math.abs(mean - 1)).toBeLessThan(3e-4);
    expect(Math.abs(std / 0.01 - 1)).toBeLessThan(0.03);
  });

  it("bad inputs → one-line errors", () => {
    const other = params({
      w: [
        [2, 2],
        [0, 0, 0, 0],
      ],
      b: [[3], [0, 0, 0]],
    });
    expect(oneLineError(() => mergeTaskVectors(base, [tau1, other], [1, 1]))).toMatch(/"b"/);
    expect(oneLineError(() => mergeTaskVectors(base, [tau1, tau2], [1]))).toMatch(/1 weights/);
    expect(oneLineError(() => mergeTaskVectors(base, [tau1, tau2], [1, -1]))).toMatch(/sum/);
    expect(oneLineError(() => mergeTaskVectors(base, [], []))).toMatch(/no task vectors/);
  });
});

describe("SVD mutation", () => {
  // A = s1·u1·v1ᵀ + s2·u2·v2ᵀ with u1 = (1,2,2)/3, u2 = (2,1,−2)/3, v1 = (1,1)/√2,
  // v2 = (1,−1)/√2, s1 = 6√2, s2 = 3√2:  s1·u1·v1ᵀ = [[2,2],[4,4],[4,4]],
  // s2·u2·v2ᵀ = [[2,−2],[1,−1],[−2,2]],  A = [[4,0],[5,3],[2,6]].
  const expertTau = params({
    w: [
      [3, 2],
      [4, 0, 5, 3, 2, 6],
    ],
    b: [[2], [7, 7]],
  });
  // With r = (0.1, 0.05): U·diag(s ⊙ r)·Vᵀ = 0.1·[[2,2],[4,4],[4,4]] + 0.05·[[2,−2],[1,−1],[−2,2]].
  const step = [0.3, 0.1, 0.45, 0.35, 0.3, 0.5];

  it("finds the hand-made SVD", () => {
    const svd = thinSvd(expertTau.get("w") as Tensor);
    expect(svd.rank).toBe(2);
    expectClose(svd.s, [6 * Math.SQRT2, 3 * Math.SQRT2], 1e-12);
  });

  it("θ += U·diag(s ⊙ r)·Vᵀ on matrices; 1-D tensors unchanged (hand-computed)", () => {
    const svds = expertSvds(expertTau);
    expect([...svds.keys()]).toEqual(["w"]);
    const theta = params({
      w: [
        [3, 2],
        [1, 1, 1, 1, 1, 1],
      ],
      b: [[2], [0.5, 0.5]],
    });
    const child = applySvdMutation(theta, svds, new Map([["w", [0.1, 0.05]]]));
    expectClose(
      values(child, "w"),
      step.map((x) => 1 + x),
    );
    expect(values(child, "b")).toEqual([0.5, 0.5]);
    expect(values(theta, "w")).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it("a wide matrix (the transpose) gives the transposed step", () => {
    const wide = params({
      w: [
        [2, 3],
        [4, 5, 2, 0, 3, 6],
      ],
    });
    const svds = expertSvds(wide);
    const zero = params({
      w: [
        [2, 3],
        [0, 0, 0, 0, 0, 0],
      ],
    });
    const child = applySvdMutation(zero, svds, new Map([["w", [0.1, 0.05]]]));
    const [a, b, c, d, e, f] = step as [number, number, number, number, number, number];
    expectClose(values(child, "w"), [a, c, e, b, d, f]);
  });

  it("the thin SVD reconstructs a random 50×8 matrix (and 8×50) within 1e-9", () => {
    for (const [rows, cols] of [
      [50, 8],
      [8, 50],
    ] as const) {
      const a = randomMatrix(rows, cols, rows * 100 + cols);
      const svd = thinSvd(a);
      expect(svd.rank).toBe(8);
      expect(svd.u).toHaveLength(rows * 8);
      expect(svd.v).toHaveLength(cols * 8);
      for (let k = 0; k + 1 < 8; k++)
        expect(svd.s[k]).toBeGreaterThanOrEqual(svd.s[k + 1] as number);
      expect(svd.s[7]).toBeGreaterThan(0);
      expectClose(scaledProduct(svd, svd.s), Array.from(a.data), 1e-9);
      // orthonormal columns of U
      for (let p = 0; p < 8; p++) {
        for (let q = 0; q < 8; q++) {
          let dot = 0;
          for (let i = 0; i < rows; i++)
            dot += (svd.u[i * 8 + p] as number) * (svd.u[i * 8 + q] as number);
          expect(Math.abs(dot - (p === q ? 1 : 0))).toBeLessThan(1e-9);
        }
      }
    }
  });

  it("drawn scales are reproducible for a seed and stay within (0, 0.1)·s", () => {
    const tau = new Map([["w", randomMatrix(20, 5, 1)]]) as Params;
    const svds = expertSvds(tau);
    const theta: Params = new Map([["w", { shape: [20, 5], data: new Float64Array(100) }]]);
    const a = svdMutation(theta, svds, createRng(5));
    const b = svdMutation(theta, svds, createRng(5));
    const c = svdMutation(theta, svds, createRng(6));
    expect(values(a, "w")).toEqual(values(b, "w"));
    expect(values(a, "w")).not.toEqual(values(c, "w"));
    // The step's Frobenius norm is ‖s ⊙ r‖ ≤ 0.1·‖s‖ = 0.1·‖τ‖.
    const norm = (x: number[]) => Math.sqrt(x.reduce((s, v) => s + v * v, 0));
    const stepNorm = norm(values(a, "w"));
    expect(stepNorm).toBeGreaterThan(0);
    expect(stepNorm).toBeLessThan(0.1 * norm(values(tau, "w")));
  });

  it("SVDs that do not fit the weights → one-line errors", () => {
    const svds = expertSvds(expertTau);
    const other = params({
      w: [
        [2, 3],
        [0, 0, 0, 0, 0, 0],
      ],
    });
    expect(oneLineError(() => svdMutation(other, svds, createRng(1)))).toMatch(/"w" has shape/);
    const noMatrix = params({
      v: [
        [3, 2],
        [0, 0, 0, 0, 0, 0],
      ],
    });
    expect(oneLineError(() => svdMutation(noMatrix, svds, createRng(1)))).toMatch(/no SVD/);
    const theta = params({
      w: [
        [3, 2],
        [0, 0, 0, 0, 0, 0],
      ],
    });
    expect(oneLineError(() => applySvdMutation(theta, svds, new Map([["w", [0.1]]])))).toMatch(
      /1 scales/,
    );
    expect(oneLineError(() => thinSvd({ shape: [3], data: new Float64Array(3) }))).toMatch(
      /not a matrix/,
    );
  });
});

describe("Gaussian mutation", () => {
  it("adds N(0, σ²) with σ = 0.0003 to every tensor, reproducibly", () => {
    const zeros = params({
      w: [[200, 100], new Array(20_000).fill(0)],
      b: [[50], new Array(50).fill(0)],
    });
    const a = gaussianMutation(zeros, createRng(2024));
    const b = gaussianMutation(zeros, createRng(2024));
    expect(values(a, "w")).toEqual(values(b, "w"));
    expect(values(zeros, "w").every((x) => x === 0)).toBe(true);
    const noise = values(a, "w");
    const mean = noise.reduce((s, x) => s + x, 0) / noise.length;
    const std = Math.sqrt(noise.reduce((s, x) => s + (x - mean) ** 2, 0) / (noise.length - 1));
    expect(GAUSSIAN_MUTATION_STD).toBe(0.0003);
    expect(Math.abs(mean)).toBeLessThan((4 * 0.0003) / Math.sqrt(noise.length));
    expect(Math.abs(std / 0.0003 - 1)).toBeLessThan(0.03);
    expect(values(a, "b").some((x) => x !== 0)).toBe(true); // biases too
  });
});

describe("a merged, mutated child as a policy file", () => {
  const dir = mkdtempSync(join(tmpdir(), "clade-qd-ops-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the base's network, features and provenance through savePolicy/loadPolicy", async () => {
    const model = createPolicyModel({
      env: "maze",
      envVersion: "1.0.0",
      seed: 9,
      hidden: 4,
      valueHidden: 3,
      features: { dim: 64 },
    });
    const baseModel = { ...model, provenance: { ...model.provenance, step: 120 } };
    // Two stand-in experts: the base moved by large noise.
    const e1 = gaussianMutation(baseModel.params, createRng(1), 0.05);
    const e2 = gaussianMutation(baseModel.params, createRng(2), 0.05);
    const { params: merged } = mergeParents(baseModel.params, [e1, e2], createRng(3));
    const svds = expertSvds(taskVector(e1, baseModel.params));
    expect([...svds.keys()].sort()).toEqual(["policy.w1", "value.w1"]);
    const mutated = svdMutation(merged, svds, createRng(4));
    for (const name of ["policy.b1", "policy.w2", "value.b2"]) {
      expect(values(mutated, name)).toEqual(values(merged, name));
    }
    expect(values(mutated, "policy.w1")).not.toEqual(values(merged, "policy.w1"));

    const child = childPolicy(baseModel, mutated);
    const path = join(dir, "child.safetensors");
    await savePolicy(path, child);
    const back = await loadPolicy(path);
    expect(back.provenance).toEqual({ env: "maze", envVersion: "1.0.0", seed: 9, step: 120 });
    expect(back.network).toEqual(baseModel.network);
    expect(back.features).toEqual(baseModel.features);
    for (const [name, t] of mutated) {
      expect(Array.from((back.params.get(name) as Tensor).data)).toEqual(
        Array.from(Float32Array.from(t.data)),
      );
    }
    const wrong = new Map(mutated);
    wrong.delete("value.b2");
    expect(oneLineError(() => childPolicy(baseModel, wrong))).toMatch(/value\.b2/);
  });
});
