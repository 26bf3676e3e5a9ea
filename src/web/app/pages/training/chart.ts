/**
 * One learning-curve chart: a metric over the steps, one line per run, drawn by uPlot, with the
 * horizon schedule's stages behind the lines (every other stage shaded, a dashed line where a
 * stage starts, its horizon written at the top). The uPlot instance lives as long as the runs
 * shown stay the same: new steps of a running run are handed to setData, so the curve grows in
 * place instead of the chart being built again.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { html } from "../../html.js";
import { type StageBand, stageMarkers } from "./curves.js";

interface ChartSeries {
  label: string;
  color: string;
}

interface MetricChartProps {
  title: string;
  metricKey: string;
  series: readonly ChartSeries[];
  /** [steps, one value array per series]. */
  data: [number[], ...(number | null)[][]];
  stages: readonly StageBand[];
  range?: [number, number];
}

const HEIGHT = 220;
/** Spacings between the step axis's ticks that uPlot may choose from. */
const STEP_TICKS = [
  1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 50_000, 100_000,
];
/** Charts hovered together show the same step (uPlot's cursor sync). */
const SYNC_KEY = "clade-training";

/** Stage bands and labels, behind the series (uPlot's drawClear hook: after the clear). */
function drawBands(u: uPlot, bands: readonly StageBand[]): void {
  const { left, top, width, height } = u.bbox;
  const min = u.scales.x?.min;
  const max = u.scales.x?.max;
  if (min === undefined || max === undefined) return;
  const ctx = u.ctx;
  const ratio = uPlot.pxRatio;
  ctx.save();
  ctx.font = `${Math.round(11 * ratio)}px system-ui, sans-serif`;
  ctx.textBaseline = "top";
  for (const band of bands) {
    const from = Math.max(band.startStep, min);
    const to = Math.min(band.endStep ?? max, max);
    if (to < from || (to === from && band.endStep !== null)) continue;
    const x0 = u.valToPos(from, "x", true);
    const x1 = u.valToPos(to, "x", true);
    if (band.shaded) {
      ctx.fillStyle = `${band.color}14`;
      ctx.fillRect(x0, top, x1 - x0, height);
    }
    ctx.fillStyle = band.color;
    const label = `h=${band.horizon}`;
    if (x0 + ctx.measureText(label).width < left + width) {
      ctx.fillText(label, x0 + 4 * ratio, top + (3 + band.row * 13) * ratio);
    }
  }
  ctx.restore();
}

/** Dashed lines where stages start, over the series so they stay visible. */
function drawBoundaries(u: uPlot, bands: readonly StageBand[]): void {
  const steps = u.data[0] as number[];
  const { top, height } = u.bbox;
  const ctx = u.ctx;
  ctx.save();
  ctx.lineWidth = uPlot.pxRatio;
  ctx.setLineDash([4 * uPlot.pxRatio, 3 * uPlot.pxRatio]);
  for (const band of stageMarkers(bands, steps)) {
    const x = Math.round(u.valToPos(band.startStep, "x", true));
    ctx.strokeStyle = band.color;
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
  }
  ctx.restore();
}

/** A number in a few significant digits (KL and gradient norms are tiny or huge). */
function shortNumber(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  if (value === 0) return "0";
  const size = Math.abs(value);
  if (size >= 1e5 || size < 1e-3) return value.toExponential(Math.max(0, digits - 2));
  return String(Number(value.toPrecision(digits)));
}

function options(props: MetricChartProps, width: number, bands: { current: readonly StageBand[] }) {
  const opts: uPlot.Options = {
    width,
    height: HEIGHT,
    // Steps, not times: uPlot's x scale is a time axis unless told otherwise.
    scales: {
      x: { time: false },
      y: props.range ? { range: props.range } : { auto: true },
    },
    axes: [
      // Whole steps only: no tick at step 0.5.
      { label: "step", incrs: STEP_TICKS },
      { size: 60, values: (_u: uPlot, splits: number[]) => splits.map((v) => shortNumber(v)) },
    ],
    cursor: { sync: { key: SYNC_KEY } },
    legend: { live: true },
    series: [
      { label: "step" },
      ...props.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 1.5,
        spanGaps: true,
        value: (_u: uPlot, v: number | null) => shortNumber(v, 4),
      })),
    ],
    hooks: {
      drawClear: [(u: uPlot) => drawBands(u, bands.current)],
      draw: [(u: uPlot) => drawBoundaries(u, bands.current)],
    },
  };
  return opts;
}

export function MetricChart(props: MetricChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const bands = useRef(props.stages);
  bands.current = props.stages;
  // The chart is built again only when the lines it has change (another run chosen).
  const shape = `${props.metricKey}|${props.series.map((s) => `${s.label}:${s.color}`).join(",")}`;

  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const made = new uPlot(
      options(props, element.clientWidth || 600, bands),
      props.data as uPlot.AlignedData,
      element,
    );
    plot.current = made;
    const resize = new ResizeObserver(() => {
      const width = element.clientWidth;
      if (width > 0 && width !== made.width) made.setSize({ width, height: HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(props.data as uPlot.AlignedData);
  }, [props.data]);

  const markers = stageMarkers(props.stages, props.data[0]).length;
  const empty = props.data.slice(1).every((values) => values.every((v) => v === null));
  return html`<figure
    class="training-chart"
    data-testid="training-chart"
    data-metric=${props.metricKey}
    data-points=${props.data[0].length}
    data-series=${props.series.length}
    data-stage-markers=${markers}
  >
    <figcaption>${props.title}${empty ? html` <span class="muted">(no values yet)</span>` : ""}</figcaption>
    <div ref=${box}></div>
  </figure>`;
}
