/**
 * One CycleQD archive: the archive of quality task k among K tasks. Its quality is a candidate's
 * score on task k; its cell is the tuple of bins of the candidate's scores on the other K − 1
 * tasks (in task order, the first other task most significant in the flat cell index), so an
 * archive of K = 3 tasks with B = 15 is a 15 × 15 grid. Each cell holds one elite.
 *
 * The API follows pyribs' archives: `add` reports a status and a value, `sampleElites` draws
 * distinct occupied cells, `stats` gives coverage, QD-score with its offset, normalised QD-score
 * and the objective's max and mean. Everything random comes from the caller's seeded `Rng`, and
 * the whole state (elites and add counters) round-trips through `toJSON`/`fromJSON`, so a resumed
 * run continues with exactly the archive it stopped with.
 */
import { z } from "zod";
import type { Rng } from "../../env/rng.js";
import { binEdges, binIndexInEdges, DEFAULT_BINS, validateBinSpec } from "./bins.js";

/** A task's score range: bins are cut over it; the quality range of its archive. */
export interface ScoreRange {
  readonly min: number;
  readonly max: number;
}

export interface TaskArchiveConfig {
  /** k: the quality task, an index into `ranges`. */
  readonly task: number;
  /** One score range per task (K of them, K ≥ 2). */
  readonly ranges: readonly ScoreRange[];
  /** Bins per task score (the same for every task, as in the reference); default 15. */
  readonly bins?: number;
  /**
   * Subtracted from every elite's quality in the QD-score. Default: the quality task's range min,
   * so qualities inside the range contribute ≥ 0 and an empty archive scores 0. Must be < max.
   */
  readonly qdOffset?: number;
}

/** A model (or configuration) evaluated on all K tasks, offered to the archive. */
export interface Candidate {
  readonly id: string;
  /** Scores on all K tasks, in task order. */
  readonly scores: readonly number[];
  /** The generation that made it (0: the initial experts). */
  readonly generation: number;
}

export interface Elite extends Candidate {
  /** scores[k]. */
  readonly quality: number;
  /** The bins of the other tasks' scores, in task order. */
  readonly cell: readonly number[];
}

export type AddStatus = "new" | "improved" | "not_added";

/**
 * `value` is how much the add changed the archive's QD-score, or how far it fell short:
 *   new:       quality − qdOffset (the new cell's contribution to the QD-score);
 *   improved:  quality − the replaced elite's quality (> 0);
 *   not_added: quality − the incumbent's quality (≤ 0).
 * So the values of all accepted adds sum to the change in QD-score.
 */
export interface AddResult {
  readonly status: AddStatus;
  readonly value: number;
}

export interface AddCounts {
  new: number;
  improved: number;
  not_added: number;
}

export interface ArchiveStats {
  /** Occupied cells. */
  readonly elites: number;
  /** All cells: bins^(K − 1). */
  readonly cells: number;
  /** elites / cells. */
  readonly coverage: number;
  /** The offset subtracted from each quality in `qdScore`. */
  readonly qdOffset: number;
  /** Σ over elites of (quality − qdOffset). */
  readonly qdScore: number;
  /** qdScore / (cells × (range max − qdOffset)): 1 when every cell holds a quality of max. */
  readonly normQdScore: number;
  /** Best and mean quality; null while the archive is empty. */
  readonly objMax: number | null;
  readonly objMean: number | null;
  /** Add statuses since the archive was created. */
  readonly adds: Readonly<AddCounts>;
}

export type SampleMode = "uniform" | "elite";

/** The range elite sampling normalises quality over. */
export interface QualityNormRange {
  readonly lo: number;
  readonly hi: number;
}

/**
 * The paper's normalisation range for elite sampling. The public code uses [0.5, 1.3]
 * (RELEASED_ELITE_QUALITY_RANGE); the issue asks to follow the paper, so this is the default.
 */
export const PAPER_ELITE_QUALITY_RANGE: QualityNormRange = { lo: 0.5, hi: 0.8 };
export const RELEASED_ELITE_QUALITY_RANGE: QualityNormRange = { lo: 0.5, hi: 1.3 };

function zeroCounts(): AddCounts {
  return { new: 0, improved: 0, not_added: 0 };
}

const clamp01 = (x: number): number => Math.min(Math.max(x, 0), 1);

/**
 * Elite sampling's weight of one elite:
 *   clamp((quality − lo) / (hi − lo), 0, 1) × Π over the cell's bins of bin / (B − 1).
 * Each characteristic's bin index is normalised to [0, 1] (with B = 1 every bin normalises to 1);
 * the product favours elites that are good at the quality task and far along every other one.
 */
export function eliteWeight(
  elite: Pick<Elite, "quality" | "cell">,
  bins: number,
  range: QualityNormRange = PAPER_ELITE_QUALITY_RANGE,
): number {
  if (!(range.lo < range.hi)) {
    throw new RangeError(`quality range needs lo < hi, got [${range.lo}, ${range.hi}]`);
  }
  let weight = clamp01((elite.quality - range.lo) / (range.hi - range.lo));
  for (const bin of elite.cell) weight *= bins === 1 ? 1 : bin / (bins - 1);
  return weight;
}

const finite = z.number().refine(Number.isFinite, "must be a finite number");
const count = z.number().int().nonnegative();
const countsSchema = z.strictObject({ new: count, improved: count, not_added: count });

const archiveJsonSchema = z.strictObject({
  version: z.literal(1),
  task: count,
  ranges: z.array(z.strictObject({ min: finite, max: finite })).min(2),
  bins: z.number().int().min(1),
  qdOffset: finite,
  elites: z.array(
    z.strictObject({
      id: z.string(),
      scores: z.array(finite),
      generation: count,
      cell: z.array(count),
    }),
  ),
  adds: countsSchema,
  /** Counts since the last takeAddCounts(), so a resumed generation reports the same counts. */
  pendingAdds: countsSchema,
});

export type TaskArchiveJson = z.infer<typeof archiveJsonSchema>;

/** The first zod issue as one line: `path.to.field: message`. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const path = issue.path.map(String).join(".");
  return path === "" ? issue.message : `${path}: ${issue.message}`;
}

export class TaskArchive {
  readonly task: number;
  readonly ranges: readonly ScoreRange[];
  readonly bins: number;
  readonly qdOffset: number;
  /** bins^(K − 1). */
  readonly cells: number;
  /** Each task's bin edges, computed once. */
  private readonly edges: readonly (readonly number[])[];
  /** Flat cell index → elite. */
  private readonly byCell = new Map<number, Elite>();
  private readonly totalAdds: AddCounts = zeroCounts();
  private pendingAdds: AddCounts = zeroCounts();

  constructor(config: TaskArchiveConfig) {
    const { task, ranges } = config;
    const bins = config.bins ?? DEFAULT_BINS;
    if (ranges.length < 2) throw new RangeError(`CycleQD needs K ≥ 2 tasks, got ${ranges.length}`);
    if (!Number.isInteger(task) || task < 0 || task >= ranges.length) {
      throw new RangeError(
        `quality task must be an integer in 0..${ranges.length - 1}, got ${task}`,
      );
    }
    this.edges = ranges.map((range) => {
      validateBinSpec({ ...range, bins });
      return binEdges({ ...range, bins });
    });
    const quality = ranges[task] as ScoreRange;
    const qdOffset = config.qdOffset ?? quality.min;
    if (!Number.isFinite(qdOffset) || !(qdOffset < quality.max)) {
      throw new RangeError(`qdOffset must be finite and < ${quality.max}, got ${qdOffset}`);
    }
    this.task = task;
    this.ranges = ranges.map(({ min, max }) => ({ min, max }));
    this.bins = bins;
    this.qdOffset = qdOffset;
    this.cells = bins ** (ranges.length - 1);
  }

  /** The bins of the other tasks' scores, in task order. */
  cellOf(scores: readonly number[]): number[] {
    this.checkScores(scores);
    const cell: number[] = [];
    for (let t = 0; t < scores.length; t++) {
      if (t !== this.task) {
        cell.push(binIndexInEdges(scores[t] as number, this.edges[t] as readonly number[]));
      }
    }
    return cell;
  }

  /** Row-major flat index of a cell (the first other task most significant). */
  cellIndex(cell: readonly number[]): number {
    let index = 0;
    for (const bin of cell) index = index * this.bins + bin;
    return index;
  }

  /** The elite of a cell, if any. */
  get(cell: readonly number[]): Elite | undefined {
    return this.byCell.get(this.cellIndex(cell));
  }

  /** Occupied cells. */
  get size(): number {
    return this.byCell.size;
  }

  /** The elites in flat cell order (a fixed order, whatever order they arrived in). */
  elites(): Elite[] {
    return [...this.byCell.entries()].sort((a, b) => a[0] - b[0]).map(([, elite]) => elite);
  }

  /**
   * Offers a candidate. It takes an empty cell, or replaces the cell's elite only when its quality
   * is strictly higher: on a tie the incumbent stays, so re-offering equal models never churns
   * the archive and the earlier (usually cheaper to reproduce) elite is kept.
   */
  add(candidate: Candidate): AddResult {
    const cell = this.cellOf(candidate.scores);
    if (!Number.isInteger(candidate.generation) || candidate.generation < 0) {
      throw new RangeError(`generation must be an integer ≥ 0, got ${candidate.generation}`);
    }
    const index = this.cellIndex(cell);
    const quality = candidate.scores[this.task] as number;
    const incumbent = this.byCell.get(index);
    let result: AddResult;
    if (incumbent === undefined) {
      result = { status: "new", value: quality - this.qdOffset };
    } else if (quality > incumbent.quality) {
      result = { status: "improved", value: quality - incumbent.quality };
    } else {
      result = { status: "not_added", value: quality - incumbent.quality };
    }
    if (result.status !== "not_added") {
      this.byCell.set(index, {
        id: candidate.id,
        scores: [...candidate.scores],
        generation: candidate.generation,
        quality,
        cell,
      });
    }
    this.totalAdds[result.status]++;
    this.pendingAdds[result.status]++;
    return result;
  }

  /** Add statuses since the last call (or since creation), then starts counting afresh. */
  takeAddCounts(): AddCounts {
    const counts = this.pendingAdds;
    this.pendingAdds = zeroCounts();
    return counts;
  }

  /**
   * n distinct elites (distinct cells), drawn one after another without replacement.
   *   uniform: each remaining cell equally likely.
   *   elite:   each remaining cell with probability proportional to `eliteWeight` (quality
   *            normalised over `qualityRange`, the paper's [0.5, 0.8] by default); when every
   *            remaining weight is 0 that draw falls back to uniform over the remaining cells.
   * Cells are considered in flat cell order, so the draws depend only on the archive's contents
   * and the rng, not on the order elites arrived in.
   */
  sampleElites(
    n: number,
    rng: Rng,
    mode: SampleMode = "uniform",
    qualityRange: QualityNormRange = PAPER_ELITE_QUALITY_RANGE,
  ): Elite[] {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`sample size must be ≥ 1, got ${n}`);
    if (n > this.byCell.size) {
      throw new RangeError(
        `archive of task ${this.task} holds ${this.byCell.size} elite(s); cannot draw ${n} distinct`,
      );
    }
    const pool = this.elites();
    const weights =
      mode === "elite" ? pool.map((elite) => eliteWeight(elite, this.bins, qualityRange)) : null;
    const drawn: Elite[] = [];
    for (let i = 0; i < n; i++) {
      const j = weights === null ? rng.int(pool.length) : weightedIndex(weights, rng);
      drawn.push(pool[j] as Elite);
      pool.splice(j, 1);
      weights?.splice(j, 1);
    }
    return drawn;
  }

  stats(): ArchiveStats {
    const elites = this.elites();
    let qdScore = 0;
    let sum = 0;
    let objMax = Number.NEGATIVE_INFINITY;
    for (const elite of elites) {
      qdScore += elite.quality - this.qdOffset;
      sum += elite.quality;
      objMax = Math.max(objMax, elite.quality);
    }
    const max = (this.ranges[this.task] as ScoreRange).max;
    return {
      elites: elites.length,
      cells: this.cells,
      coverage: elites.length / this.cells,
      qdOffset: this.qdOffset,
      qdScore,
      normQdScore: qdScore / (this.cells * (max - this.qdOffset)),
      objMax: elites.length === 0 ? null : objMax,
      objMean: elites.length === 0 ? null : sum / elites.length,
      adds: { ...this.totalAdds },
    };
  }

  toJSON(): TaskArchiveJson {
    return {
      version: 1,
      task: this.task,
      ranges: this.ranges.map(({ min, max }) => ({ min, max })),
      bins: this.bins,
      qdOffset: this.qdOffset,
      elites: this.elites().map(({ id, scores, generation, cell }) => ({
        id,
        scores: [...scores],
        generation,
        cell: [...cell],
      })),
      adds: { ...this.totalAdds },
      pendingAdds: { ...this.pendingAdds },
    };
  }

  /**
   * Restores an archive stored by `toJSON`. Throws one line naming the first problem: a shape
   * error, or elites that this configuration would not have stored (wrong score count, a cell
   * that disagrees with the scores' bins, two elites in one cell).
   */
  static fromJSON(json: unknown): TaskArchive {
    const parsed = archiveJsonSchema.safeParse(json);
    if (!parsed.success) throw new Error(`invalid archive JSON: ${firstIssue(parsed.error)}`);
    const data = parsed.data;
    let archive: TaskArchive;
    try {
      archive = new TaskArchive(data);
    } catch (error) {
      throw new Error(`invalid archive JSON: ${(error as Error).message}`);
    }
    data.elites.forEach((stored, i) => {
      let cell: number[];
      try {
        cell = archive.cellOf(stored.scores);
      } catch (error) {
        throw new Error(`invalid archive JSON: elites.${i}: ${(error as Error).message}`);
      }
      if (cell.join(",") !== stored.cell.join(",")) {
        throw new Error(
          `invalid archive JSON: elites.${i}: cell [${stored.cell}] but its scores bin to [${cell}]`,
        );
      }
      const index = archive.cellIndex(cell);
      if (archive.byCell.has(index)) {
        throw new Error(`invalid archive JSON: elites.${i}: a second elite in cell [${cell}]`);
      }
      archive.byCell.set(index, {
        id: stored.id,
        scores: [...stored.scores],
        generation: stored.generation,
        quality: stored.scores[archive.task] as number,
        cell,
      });
    });
    Object.assign(archive.totalAdds, data.adds);
    archive.pendingAdds = { ...data.pendingAdds };
    return archive;
  }

  private checkScores(scores: readonly number[]): void {
    if (scores.length !== this.ranges.length) {
      throw new RangeError(`expected ${this.ranges.length} task scores, got ${scores.length}`);
    }
    for (const score of scores) {
      if (!Number.isFinite(score)) throw new RangeError(`task scores must be finite, got ${score}`);
    }
  }
}

/**
 * An index drawn with probability weights[i] / Σ weights; uniform when every weight is 0.
 * One rng.next() per draw either way, so the stream of draws stays aligned across modes.
 */
export function weightedIndex(weights: readonly number[], rng: Rng): number {
  let total = 0;
  for (const weight of weights) total += weight;
  const u = rng.next();
  if (total <= 0) return Math.floor(u * weights.length);
  const target = u * total;
  let cumulative = 0;
  let last = 0;
  for (let i = 0; i < weights.length; i++) {
    const weight = weights[i] as number;
    if (weight <= 0) continue;
    cumulative += weight;
    last = i;
    if (target < cumulative) return i;
  }
  // Rounding can leave target ≥ the running sum at the very end: the last positive weight wins.
  return last;
}

/**
 * An archive drawn as a heat map: per (row, column) — the bins of the first and second other
 * task — its best elite, over the bins of any further tasks (K > 3). Keys are "row,column".
 */
export function heatMapElites(archive: TaskArchive): Map<string, Elite> {
  const best = new Map<string, Elite>();
  for (const elite of archive.elites()) {
    const key = `${elite.cell[0]},${elite.cell[1] ?? 0}`;
    const held = best.get(key);
    if (!held || elite.quality > held.quality) best.set(key, elite);
  }
  return best;
}
