/**
 * CycleQD's K archives together, one per quality task, and the cycle of quality tasks.
 *
 * Generations are 1-based, as in the reference's loop `for gen in 1..G: q = tasks[gen mod K]`;
 * generation 0 is the initialisation (the experts, offered to every archive). So with K = 3 the
 * quality tasks of generations 1, 2, 3, 4, … are 1, 2, 0, 1, …: the cycle starts at task 1, not
 * task 0, exactly as the reference's.
 */
import { z } from "zod";
import {
  type AddCounts,
  type AddResult,
  type ArchiveStats,
  type Candidate,
  type ScoreRange,
  TaskArchive,
  type TaskArchiveJson,
} from "./archive.js";

/** The quality task of a generation (1-based): generation mod K. */
export function qualityTask(generation: number, taskCount: number): number {
  if (!Number.isInteger(taskCount) || taskCount < 1) {
    throw new RangeError(`task count must be an integer ≥ 1, got ${taskCount}`);
  }
  if (!Number.isInteger(generation) || generation < 1) {
    throw new RangeError(`generations count from 1, got ${generation}`);
  }
  return generation % taskCount;
}

export interface CycleArchivesConfig {
  /** One score range per task (K ≥ 2). */
  readonly ranges: readonly ScoreRange[];
  /** Bins per task score; default 15. */
  readonly bins?: number;
  /** Per archive QD-score offsets; default each quality task's range min. */
  readonly qdOffsets?: readonly number[];
}

export interface OfferResult {
  /** One status per archive, in task order. */
  readonly results: readonly AddResult[];
  /** True when the candidate entered at least one archive (new or improved): the child is kept. */
  readonly kept: boolean;
}

export interface CycleArchivesJson {
  readonly version: 1;
  readonly archives: TaskArchiveJson[];
}

const jsonSchema = z.strictObject({
  version: z.literal(1),
  archives: z.array(z.unknown()).min(2),
});

export class CycleArchives {
  readonly archives: readonly TaskArchive[];

  /** Private: archives come from `create` or `fromJSON`, which keep them consistent. */
  private constructor(archives: readonly TaskArchive[]) {
    this.archives = archives;
  }

  /** K empty archives, archive k with quality task k. */
  static create(config: CycleArchivesConfig): CycleArchives {
    const { ranges, bins, qdOffsets } = config;
    if (qdOffsets !== undefined && qdOffsets.length !== ranges.length) {
      throw new RangeError(`expected ${ranges.length} qdOffsets, got ${qdOffsets.length}`);
    }
    const archives = ranges.map(
      (_, task) =>
        new TaskArchive({
          task,
          ranges,
          ...(bins === undefined ? {} : { bins }),
          ...(qdOffsets === undefined ? {} : { qdOffset: qdOffsets[task] as number }),
        }),
    );
    return new CycleArchives(archives);
  }

  /** K. */
  get taskCount(): number {
    return this.archives.length;
  }

  /** The archive parents are drawn from in a generation (1-based). */
  qualityArchive(generation: number): TaskArchive {
    return this.archives[qualityTask(generation, this.taskCount)] as TaskArchive;
  }

  /** Offers one evaluated candidate to every archive. */
  offerToAll(candidate: Candidate): OfferResult {
    const results = this.archives.map((archive) => archive.add(candidate));
    return { results, kept: results.some((result) => result.status !== "not_added") };
  }

  stats(): ArchiveStats[] {
    return this.archives.map((archive) => archive.stats());
  }

  /** Each archive's add counts since the last call, resetting them (once per generation). */
  takeAddCounts(): AddCounts[] {
    return this.archives.map((archive) => archive.takeAddCounts());
  }

  toJSON(): CycleArchivesJson {
    return { version: 1, archives: this.archives.map((archive) => archive.toJSON()) };
  }

  /**
   * Restores archives stored by `toJSON`; one-line errors. The archives must be tasks 0..K−1 in
   * order over the same ranges and bins, as `create` makes them.
   */
  static fromJSON(json: unknown): CycleArchives {
    const parsed = jsonSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path.map(String).join(".") ?? "";
      throw new Error(`invalid archives JSON: ${path === "" ? "" : `${path}: `}${issue?.message}`);
    }
    const archives = parsed.data.archives.map((stored, i) => {
      let archive: TaskArchive;
      try {
        archive = TaskArchive.fromJSON(stored);
      } catch (error) {
        const reason = (error as Error).message.replace(/^invalid archive JSON: /, "");
        throw new Error(`invalid archives JSON: archives.${i}: ${reason}`);
      }
      if (archive.task !== i) {
        throw new Error(
          `invalid archives JSON: archives.${i} is the archive of task ${archive.task}`,
        );
      }
      return archive;
    });
    const first = archives[0] as TaskArchive;
    const shape = (a: TaskArchive) => JSON.stringify([a.ranges, a.bins]);
    archives.forEach((archive, i) => {
      if (archive.ranges.length !== archives.length || shape(archive) !== shape(first)) {
        throw new Error(`invalid archives JSON: archives.${i} has other ranges or bins than 0`);
      }
    });
    return new CycleArchives(archives);
  }
}
