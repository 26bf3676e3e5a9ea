/**
 * A CycleQD run kept in the store (src/store/qd-log.ts), for any genome: generation 0 (the
 * experts) or the state replayed from the stored records, then generations up to G, each record
 * written before the next generation starts. Killed at any point, the same call resumes: the
 * generation that was running when the kill came is redone with the same keyed draws, so the
 * run reaches the archives an uninterrupted run reaches.
 */

import type { QdStore } from "../../store/qd-log.js";
import type { JsonValue } from "../../store/search-log.js";
import type { ScoreRange } from "./archive.js";
import {
  type CycleSetup,
  type CycleState,
  type GenerationRecord,
  type InitRecord,
  initCycle,
  runCycle,
} from "./cycle.js";
import { parseCycleRecord, replayCycle } from "./replay.js";

/** Mean coverage over the archives and summed QD-score, after a generation. */
export function recordSummary(record: InitRecord | GenerationRecord): {
  coverage: number;
  qdScore: number;
} {
  const coverage = record.stats.reduce((a, s) => a + s.coverage, 0) / record.stats.length;
  const qdScore = record.stats.reduce((a, s) => a + s.qdScore, 0);
  return { coverage, qdScore };
}

export interface StoredCycleOptions<G> {
  readonly store: QdStore;
  /** A run begun with store.beginRun. */
  readonly runId: string;
  readonly setup: CycleSetup<G>;
  /** The seed genomes of generation 0 (evaluated only when the run has no record yet). */
  readonly experts: () => readonly G[] | Promise<readonly G[]>;
  readonly ranges: readonly ScoreRange[];
  readonly bins: number;
  /** G: the last generation to run. */
  readonly generations: number;
  readonly signal?: AbortSignal;
  /** After each generation's record is stored (generation 0 included). */
  readonly onRecord?: (record: InitRecord | GenerationRecord, state: CycleState) => void;
}

export interface StoredCycleResult {
  readonly state: CycleState;
  /** The generation the stored run was resumed after; undefined for a fresh start. */
  readonly resumedAfter: number | undefined;
  readonly stopped: "done" | "aborted";
}

function append(
  store: QdStore,
  runId: string,
  record: InitRecord | GenerationRecord,
  errored: boolean,
): void {
  const { coverage, qdScore } = recordSummary(record);
  store.appendGeneration(runId, {
    generation: record.generation,
    qualityTask: "qualityTask" in record ? record.qualityTask : null,
    coverage,
    qdScore,
    errored,
    record: record as unknown as JsonValue,
  });
}

export async function runStoredCycle<G>(
  options: StoredCycleOptions<G>,
): Promise<StoredCycleResult> {
  const { store, runId, setup, ranges, bins, signal, onRecord } = options;
  let state: CycleState;
  let resumedAfter: number | undefined;
  if (store.lastGeneration(runId) >= 0) {
    const records = store
      .generations(runId)
      .map((row) => parseCycleRecord(row.record, row.generation));
    state = replayCycle({ ranges, bins }, records);
    resumedAfter = state.generation;
  } else {
    const init = await initCycle(setup, {
      experts: await options.experts(),
      ranges,
      bins,
      ...(signal ? { signal } : {}),
    });
    state = init.state;
    append(
      store,
      runId,
      init.record,
      init.record.experts.some((e) => e.error !== null),
    );
    onRecord?.(init.record, state);
  }
  const run = await runCycle(setup, state, {
    generations: options.generations,
    ...(signal ? { signal } : {}),
    onGeneration: (record, now) => {
      append(store, runId, record, record.child.error !== null);
      onRecord?.(record, now);
    },
  });
  return { state, resumedAfter, stopped: run.stopped };
}
