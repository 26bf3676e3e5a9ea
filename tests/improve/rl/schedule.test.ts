import { describe, expect, it } from "vitest";
import {
  type HorizonSchedule,
  horizonAt,
  parseSchedule,
  stageAt,
} from "../../../src/improve/rl/schedule.js";

/**
 * The reference's scheduler, transcribed to show the off-by-one this module avoids: a counter that
 * starts at 1 and advances the stage when counter % S == 0, and a resume that sets the counter to
 * the checkpoint's step k while the trainer goes on with step k + 1.
 */
class ReferenceRoundsScheduler {
  private stage = 0;
  private counter = 1;
  constructor(
    private readonly stepsPerStage: number,
    private readonly rounds: number[],
  ) {}
  setGlobalSteps(k: number): void {
    this.counter = k;
    this.stage = Math.min(Math.floor(k / this.stepsPerStage), this.rounds.length - 1);
  }
  step(): void {
    if (this.stage + 1 < this.rounds.length && this.counter % this.stepsPerStage === 0)
      this.stage++;
    this.counter++;
  }
  rounds_(): number {
    return this.rounds[this.stage] as number;
  }
}

describe("parseSchedule", () => {
  it("reads fixed, scaling and custom schedules into stages", () => {
    expect(parseSchedule("fixed:15")).toEqual({
      kind: "fixed",
      spec: "fixed:15",
      stages: [{ index: 0, horizon: 15, startStep: 0, endStep: null }],
    });
    expect(parseSchedule("scaling:10,20,30@100").stages).toEqual([
      { index: 0, horizon: 10, startStep: 0, endStep: 100 },
      { index: 1, horizon: 20, startStep: 100, endStep: 200 },
      { index: 2, horizon: 30, startStep: 200, endStep: null },
    ]);
    expect(parseSchedule("custom:5x40,10x60,20").stages).toEqual([
      { index: 0, horizon: 5, startStep: 0, endStep: 40 },
      { index: 1, horizon: 10, startStep: 40, endStep: 100 },
      { index: 2, horizon: 20, startStep: 100, endStep: null },
    ]);
  });

  it("tolerates spaces and records the schedule without them", () => {
    const schedule = parseSchedule(" scaling: 8, 12 ,15 @ 80 ");
    expect(schedule.spec).toBe("scaling:8,12,15@80");
    expect(schedule.stages.map((s) => s.horizon)).toEqual([8, 12, 15]);
  });

  it("a one-horizon scaling or custom schedule is a fixed one", () => {
    expect(horizonAt(parseSchedule("scaling:20@100"), 1_000)).toBe(20);
    expect(horizonAt(parseSchedule("custom:20"), 1_000)).toBe(20);
  });

  it.each([
    ["15", /no kind: start with "fixed:", "scaling:" or "custom:"/],
    ["linear:1,2", /unknown schedule kind "linear"/],
    ["fixed:", /horizon "" is not a whole number/],
    ["fixed:0", /horizon must be at least 1, got 0/],
    ["fixed:-3", /horizon "-3" is not a whole number/],
    ["fixed:1.5", /horizon "1.5" is not a whole number/],
    ["fixed:99999999999999999999", /horizon is too large/],
    ["scaling:10,20,30", /one "@", then the steps per stage/],
    ["scaling:10@100@3", /one "@", then the steps per stage/],
    ["scaling:10,,30@100", /horizon "" is not a whole number/],
    ["scaling:10,20@0", /steps per stage must be at least 1, got 0/],
    ["custom:5,10", /stage 1 \(5\) needs its number of steps, e\.g\. 5x100/],
    [
      "custom:5x40,10x60,20x5",
      /the last stage is open-ended: write its horizon alone \(20, not 20x5\)/,
    ],
    ["custom:5x4x3,2", /stage "5x4x3" is not HxS or H/],
    ["custom:5x0,2", /steps must be at least 1, got 0/],
  ])("rejects %j with one clear line", (spec, message) => {
    let error: unknown;
    try {
      parseSchedule(spec);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    const text = (error as Error).message;
    expect(text).toMatch(message);
    expect(text).toContain(`invalid horizon schedule ${JSON.stringify(spec)}`);
    expect(text).toContain("forms: fixed:H, scaling:H1,H2,...@S or custom:H1xS1,H2xS2,...,Hn");
    expect(text).not.toContain("\n");
  });
});

describe("horizonAt and stageAt", () => {
  const scaling = parseSchedule("scaling:10,20,30@100");

  it("uses 0-based global steps: 0..99 → 10, 100..199 → 20, 200.. → 30", () => {
    expect(horizonAt(scaling, 0)).toBe(10);
    expect(horizonAt(scaling, 99)).toBe(10);
    expect(horizonAt(scaling, 100)).toBe(20);
    expect(horizonAt(scaling, 199)).toBe(20);
    expect(horizonAt(scaling, 200)).toBe(30);
    expect(horizonAt(scaling, 1_000_000)).toBe(30);
    expect(stageAt(scaling, 150)).toEqual({ index: 1, horizon: 20, startStep: 100, endStep: 200 });
  });

  it("custom stages have their own lengths", () => {
    const custom = parseSchedule("custom:5x40,10x60,20");
    expect([0, 39, 40, 99, 100, 5000].map((k) => horizonAt(custom, k))).toEqual([
      5, 5, 10, 10, 20, 20,
    ]);
  });

  it("refuses a negative or fractional step", () => {
    expect(() => horizonAt(scaling, -1)).toThrow(
      /global step must be a whole number ≥ 0 \(0-based\), got -1/,
    );
    expect(() => horizonAt(scaling, 1.5)).toThrow(RangeError);
    expect(() => horizonAt(scaling, Number.NaN)).toThrow(RangeError);
  });

  it("is pure: a resumed run is in the same stage as an uninterrupted one at every step", () => {
    const specs = [
      "scaling:10,20,30@100",
      "custom:5x40,10x60,20",
      "scaling:8,12,15@80",
      "fixed:15",
    ];
    const total = 400;
    for (const spec of specs) {
      const uninterrupted = Array.from({ length: total }, (_, k) =>
        horizonAt(parseSchedule(spec), k),
      );
      // Resume from a checkpoint taken after k steps, boundaries included: a fresh parse of the
      // same spec (as a restarted process does) asked for steps k, k + 1, ...
      for (const k of [1, 39, 40, 41, 79, 80, 99, 100, 101, 199, 200, 201, 399]) {
        const resumed: HorizonSchedule = parseSchedule(spec);
        const after = Array.from({ length: total - k }, (_, j) => horizonAt(resumed, k + j));
        expect(after).toEqual(uninterrupted.slice(k));
      }
    }
  });

  it("the reference's counter agrees uninterrupted but not after a resume (what we avoid)", () => {
    const horizons = [10, 20, 30];
    // Uninterrupted: trainer steps 1, 2, ... (1-based) each read the rounds, then step().
    const reference = new ReferenceRoundsScheduler(100, horizons);
    const straight: number[] = [];
    for (let step = 1; step <= 300; step++) {
      straight.push(reference.rounds_());
      reference.step();
    }
    // 1-based step s is our 0-based step s − 1: the uninterrupted runs agree.
    straight.forEach((h, i) => {
      expect(h).toBe(horizonAt(scaling, i));
    });

    // Resumed from the checkpoint of step 100 (the end of stage 0): the trainer runs step 101.
    const resumed = new ReferenceRoundsScheduler(100, horizons);
    resumed.setGlobalSteps(100);
    const after: number[] = [];
    for (let step = 101; step <= 103; step++) {
      after.push(resumed.rounds_());
      resumed.step();
    }
    // Step 101 should be 20 and 102 too; the reference jumps to 30 at step 102.
    expect(after).toEqual([20, 30, 30]);
    expect([100, 101, 102].map((k) => horizonAt(scaling, k))).toEqual([20, 20, 20]);

    // Resumed from step 50: every later stage change comes one step late.
    const late = new ReferenceRoundsScheduler(100, horizons);
    late.setGlobalSteps(50);
    const seen: number[] = [];
    for (let step = 51; step <= 102; step++) {
      seen.push(late.rounds_());
      late.step();
    }
    expect(seen[101 - 51]).toBe(10); // trainer step 101 (our 100) should already be 20
    expect(horizonAt(scaling, 100)).toBe(20);
  });
});
