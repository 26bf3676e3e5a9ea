/**
 * One CycleQD archive as a heat map, drawn as SVG cells (a chart library would bring far more
 * than a grid of rectangles): rows are the first other task's score bins, high at the top,
 * columns the second's; a filled cell's colour is its elite's quality over the quality task's
 * range, an empty cell stays blank. Clicking a filled cell picks its elite.
 */
import type { QdArchiveView, QdCell } from "../../../api/qd.js";
import { html } from "../../html.js";
import { rate } from "../../ui.js";

/** Viridis, sampled: dark for low quality, yellow for high; readable in grey and by most. */
const STOPS: readonly [number, number, number][] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

/** The colour of a share 0..1 of the range (clamped). */
function colorOf(share: number): string {
  const t = Math.min(1, Math.max(0, Number.isFinite(share) ? share : 0)) * (STOPS.length - 1);
  const i = Math.min(Math.floor(t), STOPS.length - 2);
  const from = STOPS[i] as [number, number, number];
  const to = STOPS[i + 1] as [number, number, number];
  const mix = (a: number, b: number) => Math.round(a + (b - a) * (t - i));
  return `rgb(${mix(from[0], to[0])}, ${mix(from[1], to[1])}, ${mix(from[2], to[2])})`;
}

const shareOf = (quality: number, range: { min: number; max: number }) =>
  (quality - range.min) / (range.max - range.min);

/** Pixels per cell: a 15 × 15 map is 270 px wide; a K = 2 strip gets wider cells. */
const CELL = 18;
const LEFT = 44;
const BOTTOM = 34;
const TOP = 6;

export function HeatMap({
  archive,
  selected,
  onPick,
}: {
  archive: QdArchiveView;
  /** The elite shown in the panel: outlined wherever it sits. */
  selected: string | undefined;
  onPick: (cell: QdCell) => void;
}) {
  const { rows, columns } = archive;
  const width = columns === 1 ? CELL * 3 : CELL;
  const byPosition = new Map(archive.cells.map((cell) => [`${cell.row},${cell.column}`, cell]));
  const y = (row: number) => TOP + (rows - 1 - row) * CELL;
  const x = (column: number) => LEFT + column * width;
  const rects = [];
  for (let row = 0; row < rows; row++) {
    for (let column = 0; column < columns; column++) {
      const cell = byPosition.get(`${row},${column}`);
      if (cell === undefined) {
        rects.push(
          html`<rect class="qd-empty" data-testid="qd-empty" x=${x(column)} y=${y(row)} width=${width} height=${CELL} />`,
        );
        continue;
      }
      const where = [
        `${archive.rowLabel} bin ${cell.row}`,
        ...(archive.columnLabel === null ? [] : [`${archive.columnLabel} bin ${cell.column}`]),
      ].join(", ");
      rects.push(html`<rect
        class=${`qd-filled${cell.id === selected ? " qd-selected" : ""}`}
        data-testid="qd-cell"
        data-id=${cell.id}
        data-quality=${cell.quality}
        x=${x(column)}
        y=${y(row)}
        width=${width}
        height=${CELL}
        fill=${colorOf(shareOf(cell.quality, archive.qualityRange))}
        onClick=${() => onPick(cell)}
      ><title>${`${archive.label} ${rate(cell.quality)} · ${where} · born in generation ${cell.generation}`}</title></rect>`);
    }
  }
  const svgWidth = LEFT + columns * width + 8;
  const svgHeight = TOP + rows * CELL + BOTTOM;
  const { rowRange, columnRange } = archive;
  return html`<svg
    class="qd-heatmap"
    data-testid="qd-heatmap"
    data-task=${archive.label}
    width=${svgWidth}
    height=${svgHeight}
    viewBox=${`0 0 ${svgWidth} ${svgHeight}`}
    role="img"
    aria-label=${`archive of ${archive.label}: ${archive.cells.length} cells filled`}
  >
    ${rects}
    <text class="qd-tick" x=${LEFT - 4} y=${TOP + 10} text-anchor="end">${rowRange.max}</text>
    <text class="qd-tick" x=${LEFT - 4} y=${TOP + rows * CELL} text-anchor="end">${rowRange.min}</text>
    <text class="qd-axis" transform=${`translate(12 ${TOP + (rows * CELL) / 2}) rotate(-90)`} text-anchor="middle">${archive.rowLabel}</text>
    ${
      columnRange === null
        ? ""
        : html`<text class="qd-tick" x=${LEFT} y=${TOP + rows * CELL + 13}>${columnRange.min}</text>
          <text class="qd-tick" x=${LEFT + columns * width} y=${TOP + rows * CELL + 13} text-anchor="end">${columnRange.max}</text>
          <text class="qd-axis" x=${LEFT + (columns * width) / 2} y=${TOP + rows * CELL + 28} text-anchor="middle">${archive.columnLabel}</text>`
    }
  </svg>`;
}

/** The colour scale of an archive's quality range, as a bar with its ends. */
export function Legend({ range, label }: { range: { min: number; max: number }; label: string }) {
  const id = `qd-scale-${label.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return html`<svg class="qd-legend" data-testid="qd-legend" width="220" height="30" viewBox="0 0 220 30">
    <defs><linearGradient id=${id}>${STOPS.map(
      (_, i) =>
        html`<stop offset=${`${(i / (STOPS.length - 1)) * 100}%`} stop-color=${colorOf(i / (STOPS.length - 1))} />`,
    )}</linearGradient></defs>
    <rect x="10" y="2" width="200" height="10" fill=${`url(#${id})`} />
    <text class="qd-tick" x="10" y="26">${range.min}</text>
    <text class="qd-tick" x="110" y="26" text-anchor="middle">${label} (quality)</text>
    <text class="qd-tick" x="210" y="26" text-anchor="end">${range.max}</text>
  </svg>`;
}
