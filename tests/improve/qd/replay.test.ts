/**
 * Replaying stored generation records rebuilds the archives exactly, on the synthetic vector
 * genome of cycle.test.ts's kind (K = 3, scores clamp01(x_k − 0.25·x_{k+1})), with a child that
 * errors now and then so that the errored count is replayed too.
 */
import { describe, expect, it } from "vitest";
import {
  cycleStateToJSON,
  type GenerationRecord,
  initCycle,
  MemoryGenomeStore,
  runCycle,
} from "../../../src/improve/qd/cycle.js";
import { type CycleRecord, parseCycleRecord, replayCycle } from "../../../src/improve/qd/replay.js";
import { EXPERTS, RANGES, type Vec, vectorGenome } from "./vector-genome.js";

// Every child whose first coordinate lands in a thin band errors: never scored.
const genome = vectorGenome((x) => {
  if ((x[0] as number) > 0.4 && (x[0] as number) < 0.45) throw new Error("flaky evaluation");
});

async function liveRun(generations: number) {
  const setup = {
    genome,
    store: new MemoryGenomeStore<Vec>(),
    seed: 11,
    variant: "paper" as const,
  };
  const init = await initCycle(setup, { experts: EXPERTS, ranges: RANGES });
  // Through JSON, as the store keeps them.
  const records: CycleRecord[] = [JSON.parse(JSON.stringify(init.record))];
  await runCycle(setup, init.state, {
    generations,
    onGeneration: (record: GenerationRecord) => {
      records.push(JSON.parse(JSON.stringify(record)));
    },
  });
  return { state: init.state, records };
}

describe("replayCycle", () => {
  it("rebuilds the live state after every generation, errored children included", async () => {
    const { state, records } = await liveRun(60);
    expect(state.errored).toBeGreaterThan(0);
    const replayed = replayCycle(
      { ranges: RANGES },
      records.map((r, g) => parseCycleRecord(r, g)),
    );
    expect(cycleStateToJSON(replayed)).toEqual(cycleStateToJSON(state));
    // An earlier generation replays to that generation's recorded statistics.
    const at = replayCycle({ ranges: RANGES }, records.slice(0, 21));
    expect(at.generation).toBe(20);
    expect(at.archives.stats().map((s) => s.elites)).toEqual(
      (records[20] as GenerationRecord).stats.map((s) => s.elites),
    );
  });

  it("refuses records that are missing, out of order or do not replay to what was recorded", async () => {
    const { records } = await liveRun(10);
    expect(() => replayCycle({ ranges: RANGES }, [])).toThrow(/no generation/);
    expect(() =>
      replayCycle({ ranges: RANGES }, [records[0] as CycleRecord, records[2] as CycleRecord]),
    ).toThrow(/generation 1 is missing/);
    // The same records under other bins land elsewhere: the recorded statuses no longer hold.
    expect(() => replayCycle({ ranges: RANGES, bins: 2 }, records)).toThrow(/does not replay/);
  });

  it("parses a stored record and names the bad field in one line", async () => {
    const { records } = await liveRun(2);
    expect(parseCycleRecord(records[1], 1)).toEqual(records[1]);
    expect(() => parseCycleRecord(records[1], 2)).toThrow(
      /generation 2's record says generation 1/,
    );
    const broken = { ...(records[1] as GenerationRecord), child: { id: "x", scores: "high" } };
    expect(() => parseCycleRecord(broken, 1)).toThrow(/^generation 1's record is invalid: child/);
  });
});
