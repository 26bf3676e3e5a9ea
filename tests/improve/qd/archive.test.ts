/**
 * One task's archive on hand-built grids: K = 3 tasks with scores in [0, 1] cut into B = 4 bins
 * (edges 0, 0.25, 0.5, 0.75, 1), so archive 0's cell is (bin of score 1, bin of score 2) on a
 * 4 × 4 grid. Scores are dyadic so the arithmetic written beside each expectation is exact.
 */
import { describe, expect, it } from "vitest";
import { createRng, type Rng } from "../../../src/env/rng.js";
import {
  type Candidate,
  eliteWeight,
  PAPER_ELITE_QUALITY_RANGE,
  RELEASED_ELITE_QUALITY_RANGE,
  TaskArchive,
  weightedIndex,
} from "../../../src/improve/qd/archive.js";

const UNIT = { min: 0, max: 1 };
const RANGES = [UNIT, UNIT, UNIT];

function archive0(): TaskArchive {
  return new TaskArchive({ task: 0, ranges: RANGES, bins: 4 });
}

function cand(id: string, scores: number[], generation = 1): Candidate {
  return { id, scores, generation };
}

/** An Rng whose next() returns the given numbers in turn. */
function scripted(values: number[]): Rng {
  let i = 0;
  const next = () => values[i++] as number;
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => items[Math.floor(next() * items.length)] as never,
    shuffle: (items) => items.slice(),
  };
}

describe("cells", () => {
  it("are the other tasks' bins, the first other task most significant", () => {
    const a = archive0();
    expect(a.cells).toBe(16); // 4^(3 − 1)
    expect(a.cellOf([0.9, 0.3, 0.8])).toEqual([1, 3]); // score 0 is the quality: ignored
    expect(a.cellIndex([1, 3])).toBe(7); // 1·4 + 3
    const a1 = new TaskArchive({ task: 1, ranges: RANGES, bins: 4 });
    expect(a1.cellOf([0.9, 0.3, 0.8])).toEqual([3, 3]); // tasks 0 and 2
  });

  it("use each task's own range", () => {
    const a = new TaskArchive({
      task: 2,
      ranges: [
        { min: 0, max: 0.45 },
        { min: 0, max: 0.75 },
        { min: 0, max: 0.45 },
      ],
    });
    expect(a.cells).toBe(225); // the paper's 15 × 15
    // task 0: 0.1 in (0.09, 0.12] → bin 3; task 1: step 0.05, 0.1 is an edge → bin 1.
    expect(a.cellOf([0.1, 0.1, 0.4])).toEqual([3, 1]);
  });
});

describe("add", () => {
  it("reports new, improved and not_added with their values", () => {
    const a = archive0();
    // Empty cell (0, 3): new, value = quality − offset = 0.5 − 0.
    expect(a.add(cand("a", [0.5, 0.125, 0.875]))).toEqual({ status: "new", value: 0.5 });
    // Same cell, higher quality: improved by 0.75 − 0.5.
    expect(a.add(cand("b", [0.75, 0.25, 1]))).toEqual({ status: "improved", value: 0.25 });
    // Same cell, equal quality: the incumbent stays (ties never replace), value 0.
    expect(a.add(cand("c", [0.75, 0, 0.9375]))).toEqual({ status: "not_added", value: 0 });
    // Same cell, lower quality: not added, value 0.25 − 0.75.
    expect(a.add(cand("d", [0.25, 0.0625, 0.8]))).toEqual({ status: "not_added", value: -0.5 });
    expect(a.size).toBe(1);
    const elite = a.get([0, 3]);
    expect(elite).toEqual({
      id: "b",
      scores: [0.75, 0.25, 1],
      quality: 0.75,
      generation: 1,
      cell: [0, 3],
    });
  });

  it("measures a new cell's value from the stated offset", () => {
    const a = new TaskArchive({ task: 0, ranges: RANGES, bins: 4, qdOffset: -0.5 });
    expect(a.add(cand("a", [0.25, 0, 0]))).toEqual({ status: "new", value: 0.75 }); // 0.25 + 0.5
  });

  it("keeps its own copy of the scores", () => {
    const a = archive0();
    const scores = [0.5, 0.5, 0.5];
    a.add(cand("a", scores));
    scores[0] = 9;
    expect(a.get([1, 1])?.scores).toEqual([0.5, 0.5, 0.5]);
  });

  it("counts statuses in total and per take", () => {
    const a = archive0();
    a.add(cand("a", [0.5, 0, 0]));
    a.add(cand("b", [0.75, 0, 0]));
    a.add(cand("c", [0.25, 0, 0]));
    expect(a.takeAddCounts()).toEqual({ new: 1, improved: 1, not_added: 1 });
    a.add(cand("d", [0.25, 1, 1]));
    expect(a.takeAddCounts()).toEqual({ new: 1, improved: 0, not_added: 0 });
    expect(a.takeAddCounts()).toEqual({ new: 0, improved: 0, not_added: 0 });
    expect(a.stats().adds).toEqual({ new: 2, improved: 1, not_added: 1 });
  });

  it("rejects malformed candidates in one line", () => {
    const a = archive0();
    expect(() => a.add(cand("a", [0.5, 0.5]))).toThrow("expected 3 task scores, got 2");
    expect(() => a.add(cand("a", [0.5, Number.NaN, 0]))).toThrow("task scores must be finite");
    expect(() => a.add(cand("a", [0.5, 0, 0], -1))).toThrow("generation must be an integer ≥ 0");
  });
});

describe("configuration", () => {
  it("rejects what cannot be an archive", () => {
    expect(() => new TaskArchive({ task: 0, ranges: [UNIT] })).toThrow("needs K ≥ 2 tasks, got 1");
    expect(() => new TaskArchive({ task: 3, ranges: RANGES })).toThrow(
      "quality task must be an integer in 0..2, got 3",
    );
    expect(() => new TaskArchive({ task: 0, ranges: RANGES, qdOffset: 1 })).toThrow(
      "qdOffset must be finite and < 1, got 1",
    );
    expect(() => new TaskArchive({ task: 0, ranges: [UNIT, { min: 1, max: 0 }, UNIT] })).toThrow(
      "bin range needs min < max, got [1, 0]",
    );
    expect(() => new TaskArchive({ task: 0, ranges: RANGES, bins: 0 })).toThrow("bin count");
  });

  it("defaults to 15 bins and the quality range's min as offset", () => {
    const a = new TaskArchive({ task: 1, ranges: [UNIT, { min: 0.25, max: 1 }] });
    expect(a.bins).toBe(15);
    expect(a.cells).toBe(15);
    expect(a.qdOffset).toBe(0.25);
  });
});

describe("stats", () => {
  it("are zero and null on an empty archive", () => {
    expect(archive0().stats()).toEqual({
      elites: 0,
      cells: 16,
      coverage: 0,
      qdOffset: 0,
      qdScore: 0,
      normQdScore: 0,
      objMax: null,
      objMean: null,
      adds: { new: 0, improved: 0, not_added: 0 },
    });
  });

  it("match a hand-computed archive", () => {
    const a = archive0();
    a.add(cand("a", [0.5, 0.125, 0.875])); // cell (0, 3)
    a.add(cand("b", [0.75, 0.5, 0.5])); // cell (1, 1)
    a.add(cand("c", [0.25, 1, 0])); // cell (3, 0)
    a.add(cand("d", [0.125, 0.5, 0.375])); // cell (1, 1): not added
    expect(a.stats()).toEqual({
      elites: 3,
      cells: 16,
      coverage: 3 / 16, // 0.1875
      qdOffset: 0,
      qdScore: 1.5, // 0.5 + 0.75 + 0.25
      normQdScore: 1.5 / 16, // 1.5 / (16 cells × (max 1 − offset 0)) = 0.09375
      objMax: 0.75,
      objMean: 0.5, // 1.5 / 3
      adds: { new: 3, improved: 0, not_added: 1 },
    });
  });

  it("state and use a non-zero offset", () => {
    // Quality task 0 scores in [−1, 1]: the default offset is −1.
    const a = new TaskArchive({ task: 0, ranges: [{ min: -1, max: 1 }, UNIT, UNIT], bins: 4 });
    a.add(cand("a", [0.5, 0.125, 0.875]));
    a.add(cand("b", [-0.5, 0.5, 0.5]));
    const stats = a.stats();
    expect(stats.qdOffset).toBe(-1);
    expect(stats.qdScore).toBe(2); // (0.5 + 1) + (−0.5 + 1)
    expect(stats.normQdScore).toBe(2 / 32); // 2 / (16 × (1 − (−1))) = 0.0625
    expect(stats.objMean).toBe(0); // (0.5 − 0.5) / 2
  });

  it("equal the sum of accepted add values", () => {
    const a = archive0();
    const rng = createRng(7);
    let gained = 0;
    for (let i = 0; i < 300; i++) {
      const r = a.add(cand(`c${i}`, [rng.next(), rng.next(), rng.next()]));
      if (r.status !== "not_added") gained += r.value;
      else expect(r.value).toBeLessThanOrEqual(0);
    }
    expect(a.stats().qdScore).toBeCloseTo(gained, 12);
    expect(a.stats().elites).toBe(16);
  });
});

describe("elite weights", () => {
  it("are normalised quality × normalised characteristic bins", () => {
    // (0.65 − 0.5) / (0.8 − 0.5) = 0.5; bins 3/3 and 2/3: 0.5 × 1 × 2/3 = 1/3.
    expect(eliteWeight({ quality: 0.65, cell: [3, 2] }, 4)).toBeCloseTo(1 / 3, 12);
    // Quality above 0.8 clamps to 1: 1 × 1/3 × 1.
    expect(eliteWeight({ quality: 0.9, cell: [1, 3] }, 4)).toBeCloseTo(1 / 3, 12);
    // Quality at or below 0.5 clamps to 0; a bin 0 characteristic gives 0.
    expect(eliteWeight({ quality: 0.4, cell: [3, 3] }, 4)).toBe(0);
    expect(eliteWeight({ quality: 0.8, cell: [0, 3] }, 4)).toBe(0);
    // The public code's range [0.5, 1.3]: (0.65 − 0.5) / 0.8 = 0.1875.
    expect(
      eliteWeight({ quality: 0.65, cell: [3, 3] }, 4, RELEASED_ELITE_QUALITY_RANGE),
    ).toBeCloseTo(0.1875, 12);
    // One bin per task: every characteristic normalises to 1.
    expect(eliteWeight({ quality: 0.8, cell: [0, 0] }, 1)).toBe(1);
    expect(PAPER_ELITE_QUALITY_RANGE).toEqual({ lo: 0.5, hi: 0.8 });
    expect(() => eliteWeight({ quality: 1, cell: [] }, 4, { lo: 1, hi: 1 })).toThrow(
      "quality range needs lo < hi",
    );
  });

  it("pick indices by cumulative weight, uniformly when all are 0", () => {
    // Weights [1, 0, 3] (total 4): u·4 < 1 → 0; otherwise 2; the zero weight is never hit.
    expect(weightedIndex([1, 0, 3], scripted([0.2]))).toBe(0); // 0.8
    expect(weightedIndex([1, 0, 3], scripted([0.25]))).toBe(2); // 1.0: not < 1
    expect(weightedIndex([1, 0, 3], scripted([0.999]))).toBe(2);
    expect(weightedIndex([0, 0, 0, 0], scripted([0.5]))).toBe(2); // ⌊0.5·4⌋
  });
});

describe("sampleElites", () => {
  /** Three elites: weights 1, 1/3 and 0 under the paper's range. */
  function weighted(): TaskArchive {
    const a = archive0();
    a.add(cand("top", [0.8, 1, 1])); // cell (3, 3): 1 × 1 × 1
    a.add(cand("mid", [0.65, 1, 0.6])); // cell (3, 2): 0.5 × 1 × 2/3 = 1/3
    a.add(cand("low", [0.5, 1, 0.3])); // cell (3, 1): 0
    return a;
  }

  it("need enough elites, with a clear error", () => {
    const a = archive0();
    expect(() => a.sampleElites(2, createRng(1))).toThrow(
      "archive of task 0 holds 0 elite(s); cannot draw 2 distinct",
    );
    a.add(cand("a", [0.5, 0, 0]));
    expect(() => a.sampleElites(2, createRng(1), "elite")).toThrow(
      "archive of task 0 holds 1 elite(s); cannot draw 2 distinct",
    );
    expect(() => a.sampleElites(0, createRng(1))).toThrow("sample size must be ≥ 1");
    expect(a.sampleElites(1, createRng(1)).map((e) => e.id)).toEqual(["a"]);
  });

  it("draw distinct cells uniformly", () => {
    const a = weighted();
    const rng = createRng(11);
    const firsts = new Map<string, number>();
    const draws = 30_000;
    let same = 0; // plain counting in the loop: an expect per draw is slow
    for (let i = 0; i < draws; i++) {
      const [p1, p2] = a.sampleElites(2, rng, "uniform");
      if (p1?.id === p2?.id) same++;
      firsts.set(p1?.id as string, (firsts.get(p1?.id as string) ?? 0) + 1);
    }
    expect(same).toBe(0);
    // Each 1/3; the standard error is √(1/3 · 2/3 / 30000) ≈ 0.0027.
    for (const id of ["top", "mid", "low"]) {
      expect((firsts.get(id) ?? 0) / draws).toBeGreaterThan(1 / 3 - 0.015);
      expect((firsts.get(id) ?? 0) / draws).toBeLessThan(1 / 3 + 0.015);
    }
  });

  it("draw elite cells in proportion to their weights", () => {
    const a = weighted();
    const rng = createRng(12);
    let topFirst = 0;
    const draws = 30_000;
    let lowDrawn = 0;
    for (let i = 0; i < draws; i++) {
      const pair = a.sampleElites(2, rng, "elite").map((e) => e.id);
      // "low" has weight 0: after "top" or "mid" the other positive one always wins.
      if (pair.includes("low")) lowDrawn++;
      if (pair[0] === "top") topFirst++;
    }
    expect(lowDrawn).toBe(0);
    // P(top first) = 1 / (1 + 1/3) = 0.75; standard error ≈ 0.0025.
    expect(topFirst / draws).toBeGreaterThan(0.735);
    expect(topFirst / draws).toBeLessThan(0.765);
    // Once only zero weights remain, the draw is uniform over them: "low" comes last.
    expect(a.sampleElites(3, createRng(3), "elite")[2]?.id).toBe("low");
  });

  it("fall back to uniform when every weight is 0", () => {
    const a = archive0();
    for (const [i, s] of [0.125, 0.375, 0.625, 0.875].entries()) a.add(cand(`e${i}`, [0.5, s, s]));
    const rng = createRng(13);
    const counts = [0, 0, 0, 0];
    const draws = 20_000;
    for (let i = 0; i < draws; i++) {
      const [first] = a.sampleElites(2, rng, "elite");
      const i = Number(first?.id.slice(1));
      counts[i] = (counts[i] ?? 0) + 1;
    }
    for (const c of counts) expect(Math.abs(c / draws - 0.25)).toBeLessThan(0.015);
  });

  it("depend on the contents and the seed, not on the order of arrival", () => {
    const candidates = [
      cand("top", [0.8, 1, 1]),
      cand("mid", [0.65, 1, 0.6]),
      cand("x", [0.7, 0.6, 0.9]),
      cand("y", [0.6, 0.3, 0.3]),
    ];
    const forward = archive0();
    const backward = archive0();
    for (const c of candidates) forward.add(c);
    for (const c of candidates.slice().reverse()) backward.add(c);
    for (const mode of ["uniform", "elite"] as const) {
      const ids = (a: TaskArchive) => a.sampleElites(3, createRng(5), mode).map((e) => e.id);
      expect(ids(forward)).toEqual(ids(backward));
    }
  });
});

describe("JSON", () => {
  function filled(): TaskArchive {
    const a = new TaskArchive({ task: 1, ranges: RANGES, bins: 4, qdOffset: -0.25 });
    const rng = createRng(21);
    for (let i = 0; i < 40; i++) a.add(cand(`c${i}`, [rng.next(), rng.next(), rng.next()], i));
    a.takeAddCounts();
    a.add(cand("late", [0.99, 0.99, 0.99], 41));
    return a;
  }

  it("round-trips exactly, counters included", () => {
    const a = filled();
    const b = TaskArchive.fromJSON(JSON.parse(JSON.stringify(a)));
    expect(b.toJSON()).toEqual(a.toJSON());
    expect(b.elites()).toEqual(a.elites());
    expect(b.stats()).toEqual(a.stats());
    expect(b.qdOffset).toBe(-0.25);
    expect(b.sampleElites(4, createRng(9), "elite")).toEqual(
      a.sampleElites(4, createRng(9), "elite"),
    );
    expect(b.takeAddCounts()).toEqual(a.takeAddCounts());
    // And it keeps working the same after the restore.
    const next = cand("next", [0.3, 0.7, 0.2], 42);
    expect(b.add(next)).toEqual(a.add(next));
    expect(b.toJSON()).toEqual(a.toJSON());
  });

  it("rejects bad JSON in one line naming the problem", () => {
    const good = filled().toJSON();
    const bad: [unknown, string][] = [
      [null, "invalid archive JSON: "],
      [{ ...good, version: 2 }, "invalid archive JSON: version: "],
      [{ ...good, bins: 0 }, "invalid archive JSON: bins: "],
      [{ ...good, extra: 1 }, "invalid archive JSON: "],
      [
        { ...good, task: 5 },
        "invalid archive JSON: quality task must be an integer in 0..2, got 5",
      ],
      [
        { ...good, elites: [{ ...good.elites[0], scores: [0.5, "x", 0.5] }] },
        "invalid archive JSON: elites.0.scores.1: ",
      ],
      [
        { ...good, elites: [{ ...good.elites[0], scores: [0.5, 0.5] }] },
        "invalid archive JSON: elites.0: expected 3 task scores, got 2",
      ],
      [
        { ...good, elites: [{ id: "a", scores: [0.5, 0.5, 0.5], generation: 0, cell: [0, 0] }] },
        "invalid archive JSON: elites.0: cell [0,0] but its scores bin to [1,1]",
      ],
      [
        {
          ...good,
          elites: [
            { id: "a", scores: [0.5, 0.5, 0.5], generation: 0, cell: [1, 1] },
            { id: "b", scores: [0.4, 0.6, 0.4], generation: 0, cell: [1, 1] },
          ],
        },
        "invalid archive JSON: elites.1: a second elite in cell [1,1]",
      ],
    ];
    for (const [json, message] of bad) {
      let thrown: Error | undefined;
      try {
        TaskArchive.fromJSON(json);
      } catch (error) {
        thrown = error as Error;
      }
      expect(thrown?.message).toContain(message);
      expect(thrown?.message).not.toContain("\n");
    }
  });
});
