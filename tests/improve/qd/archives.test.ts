/**
 * The K archives together: the quality cycle (1-based generations, q = gen mod K, as the
 * reference's loop), offering a child to every archive and keeping it only when it entered one,
 * and the whole set's JSON.
 */
import { describe, expect, it } from "vitest";
import { createRng } from "../../../src/env/rng.js";
import { CycleArchives, qualityTask } from "../../../src/improve/qd/archives.js";

const UNIT = { min: 0, max: 1 };

describe("quality cycle", () => {
  it("is gen mod K over 1-based generations, starting at task 1", () => {
    const gens = [1, 2, 3, 4, 5, 6, 7];
    expect(gens.map((g) => qualityTask(g, 3))).toEqual([1, 2, 0, 1, 2, 0, 1]);
    expect(gens.map((g) => qualityTask(g, 2))).toEqual([1, 0, 1, 0, 1, 0, 1]);
  });

  it("visits every task equally often over whole cycles", () => {
    const seen = [0, 0, 0, 0];
    for (let g = 1; g <= 1200; g++) {
      const q = qualityTask(g, 4);
      seen[q] = (seen[q] ?? 0) + 1;
    }
    expect(seen).toEqual([300, 300, 300, 300]);
  });

  it("rejects generation 0 (the initialisation) and bad counts", () => {
    expect(() => qualityTask(0, 3)).toThrow("generations count from 1, got 0");
    expect(() => qualityTask(1.5, 3)).toThrow("generations count from 1, got 1.5");
    expect(() => qualityTask(1, 0)).toThrow("task count must be an integer ≥ 1, got 0");
  });

  it("picks the quality archive of a generation", () => {
    const set = CycleArchives.create({ ranges: [UNIT, UNIT, UNIT], bins: 4 });
    expect([1, 2, 3, 4].map((g) => set.qualityArchive(g).task)).toEqual([1, 2, 0, 1]);
  });
});

describe("offering to all archives", () => {
  it("returns each archive's status and keeps a child that entered one", () => {
    const set = CycleArchives.create({ ranges: [UNIT, UNIT, UNIT], bins: 4 });
    expect(set.taskCount).toBe(3);
    // The experts (generation 0): each takes an empty cell in every archive.
    const experts = [
      [0.875, 0.125, 0.125],
      [0.125, 0.875, 0.125],
      [0.125, 0.125, 0.875],
    ];
    experts.forEach((scores, i) => {
      const offer = set.offerToAll({ id: `expert${i}`, scores, generation: 0 });
      expect(offer.kept).toBe(true);
      expect(offer.results.map((r) => r.status)).toEqual(["new", "new", "new"]);
    });
    // Bins of [0, 1] in 4: 0.0625, 0.125, 0.25 → 0; 0.375 → 1; 0.875 → 3. The experts sit at
    //   archive 0 (cell = bins of tasks 1, 2): (0, 0) 0.875, (3, 0) 0.125, (0, 3) 0.125;
    //   archive 1 (cell = bins of tasks 0, 2): (3, 0) 0.125, (0, 0) 0.875, (0, 3) 0.125;
    //   archive 2 (cell = bins of tasks 0, 1): (3, 0) 0.125, (0, 3) 0.125, (0, 0) 0.875.
    // c1 lands in (0, 0), (3, 0), (3, 0): it ties 0.875 and 0.125, and loses 0.0625 − 0.125.
    const dropped = set.offerToAll({ id: "c1", scores: [0.875, 0.125, 0.0625], generation: 1 });
    expect(dropped).toEqual({
      kept: false,
      results: [
        { status: "not_added", value: 0 }, // a tie keeps the incumbent
        { status: "not_added", value: 0 },
        { status: "not_added", value: -0.0625 },
      ],
    });
    // c2 lands in (0, 1), (3, 1), (3, 0): two empty cells and one it improves.
    const kept = set.offerToAll({ id: "c2", scores: [0.875, 0.25, 0.375], generation: 1 });
    expect(kept).toEqual({
      kept: true,
      results: [
        { status: "new", value: 0.875 }, // quality 0.875 − offset 0
        { status: "new", value: 0.25 },
        { status: "improved", value: 0.25 }, // 0.375 − 0.125
      ],
    });
    expect(set.takeAddCounts()).toEqual([
      { new: 4, improved: 0, not_added: 1 },
      { new: 4, improved: 0, not_added: 1 },
      { new: 3, improved: 1, not_added: 1 },
    ]);
    expect(set.takeAddCounts()).toEqual([
      { new: 0, improved: 0, not_added: 0 },
      { new: 0, improved: 0, not_added: 0 },
      { new: 0, improved: 0, not_added: 0 },
    ]);
    expect(set.stats().map((s) => s.elites)).toEqual([4, 4, 3]);
    expect(set.archives[2]?.get([3, 0])?.id).toBe("c2");
  });
});

describe("JSON", () => {
  function filled(): CycleArchives {
    const set = CycleArchives.create({
      ranges: [UNIT, { min: 0, max: 0.75 }, UNIT],
      bins: 5,
      qdOffsets: [0, -0.5, 0.25],
    });
    const rng = createRng(31);
    for (let i = 0; i < 60; i++) {
      set.offerToAll({ id: `c${i}`, scores: [rng.next(), rng.next(), rng.next()], generation: i });
    }
    return set;
  }

  it("round-trips the whole set exactly", () => {
    const a = filled();
    const b = CycleArchives.fromJSON(JSON.parse(JSON.stringify(a)));
    expect(b.toJSON()).toEqual(a.toJSON());
    expect(b.stats()).toEqual(a.stats());
    expect(b.archives.map((x) => x.qdOffset)).toEqual([0, -0.5, 0.25]);
  });

  it("rejects bad JSON in one line", () => {
    const good = filled().toJSON();
    const swapped = { ...good, archives: [good.archives[1], good.archives[0], good.archives[2]] };
    const otherBins = {
      ...good,
      archives: [...good.archives.slice(0, 2), { ...good.archives[2], bins: 4, elites: [] }],
    };
    const broken = {
      ...good,
      archives: [good.archives[0], { ...good.archives[1], version: 3 }, good.archives[2]],
    };
    const cases: [unknown, string][] = [
      [[], "invalid archives JSON: "],
      [{ version: 1, archives: [good.archives[0]] }, "invalid archives JSON: archives: "],
      [swapped, "invalid archives JSON: archives.0 is the archive of task 1"],
      [otherBins, "invalid archives JSON: archives.2 has other ranges or bins than 0"],
      [broken, "invalid archives JSON: archives.1: version: "],
    ];
    for (const [json, message] of cases) {
      let thrown: Error | undefined;
      try {
        CycleArchives.fromJSON(json);
      } catch (error) {
        thrown = error as Error;
      }
      expect(thrown?.message).toContain(message);
      expect(thrown?.message).not.toContain("\n");
    }
  });

  it("rejects offsets that do not match K", () => {
    expect(() => CycleArchives.create({ ranges: [UNIT, UNIT], qdOffsets: [0] })).toThrow(
      "expected 2 qdOffsets, got 1",
    );
  });
});
