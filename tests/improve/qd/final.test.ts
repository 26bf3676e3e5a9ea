/**
 * CycleQD's final selection: the best-mean elite over all archives (an elite in several archives
 * counted once, ties broken by the minimum score and then the id), the per-task best elites, and
 * their equal-weight merge against hand-computed weights.
 */
import { describe, expect, it } from "vitest";
import { CycleArchives } from "../../../src/improve/qd/archives.js";
import {
  bestMeanElite,
  distinctElites,
  mergeEqually,
  perTaskBest,
} from "../../../src/improve/qd/final.js";
import type { Params } from "../../../src/improve/rl/policy/tensor.js";

function archivesWith(candidates: { id: string; scores: number[] }[]): CycleArchives {
  const archives = CycleArchives.create({
    ranges: [
      { min: 0, max: 1 },
      { min: 0, max: 1 },
      { min: 0, max: 1 },
    ],
    bins: 4,
  });
  for (const c of candidates) archives.offerToAll({ ...c, generation: 0 });
  return archives;
}

describe("final selection", () => {
  const archives = archivesWith([
    { id: "a", scores: [0.9, 0.1, 0.1] }, // mean 0.367, best on task 0
    { id: "b", scores: [0.2, 0.8, 0.2] }, // mean 0.4, best on task 1
    { id: "c", scores: [0.5, 0.5, 0.5] }, // mean 0.5, best mean
    { id: "d", scores: [0.1, 0.2, 0.95] }, // mean 0.417, best on task 2
  ]);

  it("counts an elite held by several archives once", () => {
    expect(
      distinctElites(archives)
        .map((e) => e.id)
        .sort(),
    ).toEqual(["a", "b", "c", "d"]);
  });

  it("picks the best mean; ties go to the higher minimum, then the smaller id", () => {
    expect(bestMeanElite(archives).id).toBe("c");
    // All of mean 0.5. "z" has the highest minimum (0.45); "x" and "y" tie on mean and minimum
    // (0.4), so the smaller id wins between them.
    const z = { id: "z", scores: [0.45, 0.55, 0.5] };
    const y = { id: "y", scores: [0.6, 0.4, 0.5] };
    const x = { id: "x", scores: [0.4, 0.6, 0.5] };
    expect(bestMeanElite(archivesWith([y, x, z])).id).toBe("z");
    expect(bestMeanElite(archivesWith([y, x])).id).toBe("x");
  });

  it("takes each task's best from its own archive", () => {
    expect(perTaskBest(archives).map((e) => e.id)).toEqual(["a", "b", "d"]);
  });

  it("merges with equal weights: θ_base + mean of the task vectors", () => {
    const t = (values: number[]) => ({ shape: [values.length], data: Float64Array.from(values) });
    const base: Params = new Map([["w", t([1, 1])]]);
    const merged = mergeEqually(base, [
      new Map([["w", t([3, 1])]]), // τ = (2, 0)
      new Map([["w", t([1, 5])]]), // τ = (0, 4)
    ]);
    // 1 + (2 + 0) / 2 = 2; 1 + (0 + 4) / 2 = 3.
    expect([...(merged.get("w")?.data ?? [])]).toEqual([2, 3]);
  });

  it("an empty archive is one clear error", () => {
    const empty = archivesWith([]);
    expect(() => bestMeanElite(empty)).toThrow(/^final selection: the archives hold no elite$/);
    expect(() => perTaskBest(empty)).toThrow(/archive of task 0 is empty/);
  });
});
