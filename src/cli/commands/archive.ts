/**
 * `clade archive RUN [--task T] [--generation G]`: a CycleQD run's archives as heat maps on the
 * terminal, rebuilt from the stored generation records (src/improve/qd/replay.ts), at the last
 * generation or any earlier one; `--json` gives every cell.
 *
 * A heat map of archive k has one axis per other task's score bins: rows are the first other
 * task's bins (high scores at the top), columns the second's. Each cell shows its elite's quality
 * (the score on task k) as a digit 0-9, tenths of task k's score range, or "·" when empty. With
 * more than three tasks the map shows, per (row, column), the best elite over the remaining
 * tasks' bins, and says so. Drawn by hand: a few lines, where a plotting package would bring a
 * renderer for much more than this.
 */
import { existsSync } from "node:fs";
import { z } from "zod";
import { heatMapElites, type TaskArchive } from "../../improve/qd/archive.js";
import { parseCycleRecord, replayCycle, storedGeometrySchema } from "../../improve/qd/replay.js";
import { QdStore } from "../../store/qd-log.js";
import { type CliIo, UsageError } from "../io.js";
import { integerOption, parseOptions } from "../options.js";
import { renderTable } from "../table.js";

const archiveOptionsSchema = z.object({
  task: z.string().min(1, "must not be empty").optional(),
  generation: integerOption(0, 1_000_000_000).optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
});

export type RawArchiveOptions = z.input<typeof archiveOptionsSchema>;

const EMPTY = "·";

/** The digit 0-9 of a quality in tenths of its range (9: the top tenth, max included). */
export function qualityDigit(quality: number, range: { min: number; max: number }): string {
  const share = (quality - range.min) / (range.max - range.min);
  return String(Math.min(9, Math.max(0, Math.floor(share * 10))));
}

/**
 * The heat map of one archive: a header, then one line per bin of the first other task (highest
 * first). `labels` are the K task labels.
 */
export function renderHeatMap(archive: TaskArchive, labels: readonly string[]): string {
  const k = archive.task;
  const others = labels.map((_, i) => i).filter((i) => i !== k);
  const range = archive.ranges[k] as { min: number; max: number };
  const B = archive.bins;
  const best = heatMapElites(archive);
  const rowTask = others[0] as number;
  const columnTask = others[1];
  const rowRange = archive.ranges[rowTask] as { min: number; max: number };
  const lines = [
    `archive ${k} (quality: ${labels[k]} ${range.min}..${range.max}) · ${archive.size}/${archive.cells} cells`,
  ];
  if (others.length > 2) {
    lines.push(
      `  (best elite over the bins of ${others
        .slice(2)
        .map((i) => labels[i])
        .join(", ")})`,
    );
  }
  const width = String(B - 1).length;
  for (let row = B - 1; row >= 0; row--) {
    const cells: string[] = [];
    for (let column = 0; column < (columnTask === undefined ? 1 : B); column++) {
      const elite = best.get(`${row},${column}`);
      cells.push(elite ? qualityDigit(elite.quality, range) : EMPTY);
    }
    const label =
      row === B - 1 ? ` ${labels[rowTask]} ${rowRange.max}` : row === 0 ? ` ${rowRange.min}` : "";
    lines.push(`  ${String(row).padStart(width)} ${cells.join(" ")}${label}`);
  }
  if (columnTask !== undefined) {
    const columnRange = archive.ranges[columnTask] as { min: number; max: number };
    lines.push(
      `  ${" ".repeat(width)} ${Array.from({ length: B }, (_, c) => String(c % 10)).join(" ")}`,
      `  ${" ".repeat(width)} ${labels[columnTask]} ${columnRange.min} → ${columnRange.max}`,
    );
  }
  return lines.join("\n");
}

export function archiveCommand(runId: string, raw: RawArchiveOptions, io: CliIo): number {
  const options = parseOptions(archiveOptionsSchema, raw);
  const unknown = () => new UsageError(`no CycleQD run "${runId}" in ${options.db}`);
  if (!existsSync(options.db)) throw unknown();
  const store = QdStore.open(options.db, { readonly: true });
  try {
    const run = store.getRun(runId);
    if (!run) throw unknown();
    const parsed = storedGeometrySchema.safeParse(run.config);
    if (!parsed.success) {
      throw new UsageError(`CycleQD run "${runId}" has a configuration clade cannot read`);
    }
    const { tasks, ranges, bins } = parsed.data;
    const labels = tasks.map((t) => t.label);
    const last = store.lastGeneration(runId);
    if (last < 0) throw new UsageError(`CycleQD run "${runId}" has no generation yet`);
    const generation = options.generation ?? last;
    if (generation > last) {
      throw new UsageError(`--generation ${generation}: run "${runId}" has generations 0-${last}`);
    }
    let shown = labels.map((_, k) => k);
    if (options.task !== undefined) {
      const byLabel = labels.indexOf(options.task);
      const k = byLabel >= 0 ? byLabel : /^\d+$/.test(options.task) ? Number(options.task) : -1;
      if (k < 0 || k >= labels.length) {
        throw new UsageError(
          `--task ${options.task}: the run's tasks are ${labels.join(", ")} (or 0-${labels.length - 1})`,
        );
      }
      shown = [k];
    }
    const records = store
      .generations(runId, generation)
      .map((row) => parseCycleRecord(row.record, row.generation));
    const state = replayCycle({ ranges, bins }, records);
    const archives = shown.map((k) => state.archives.archives[k] as TaskArchive);

    if (options.json) {
      io.stdout(
        `${JSON.stringify({
          schema: "clade.archive/1",
          runId,
          generation,
          lastGeneration: last,
          status: run.status,
          tasks: labels,
          ranges,
          bins,
          archives: archives.map((archive) => ({
            task: archive.task,
            label: labels[archive.task],
            stats: archive.stats(),
            cells: archive.elites().map((e) => ({
              cell: [...e.cell],
              id: e.id,
              quality: e.quality,
              scores: [...e.scores],
              generation: e.generation,
            })),
          })),
        })}\n`,
      );
      return 0;
    }
    const head = `CycleQD ${runId}: generation ${generation} of ${last} (${run.status}); digits: quality in tenths of its range, ${EMPTY} empty`;
    const stats = renderTable(
      ["archive (quality)", "elites", "coverage", "QD-score", "norm. QD-score", "max", "mean"],
      archives.map((archive) => {
        const s = archive.stats();
        const num = (v: number | null) => (v === null ? "n/a" : v.toFixed(3));
        return [
          labels[archive.task] ?? "",
          `${s.elites}/${s.cells}`,
          num(s.coverage),
          num(s.qdScore),
          num(s.normQdScore),
          num(s.objMax),
          num(s.objMean),
        ];
      }),
    );
    const maps = archives.map((archive) => renderHeatMap(archive, labels));
    io.stdout(`${[head, ...maps, stats].join("\n\n")}\n`);
    return 0;
  } finally {
    store.close();
  }
}
