/**
 * A small line chart of one per-generation figure (coverage, QD-score) as plain SVG: the curve,
 * the generation on show marked, the generations whose child errored ticked in red along the
 * bottom. Clicking it asks for the nearest generation (the page snaps it to one it can show).
 */
import { html } from "../../html.js";
import { rate } from "../../ui.js";

const W = 360;
const H = 110;
const PAD = { left: 44, right: 8, top: 8, bottom: 20 };

export function Curve({
  label,
  title,
  generations,
  values,
  errored,
  current,
  onPick,
}: {
  label: string;
  title: string;
  generations: readonly number[];
  values: readonly number[];
  errored: readonly boolean[];
  current: number | undefined;
  onPick: (generation: number) => void;
}) {
  const first = generations[0] ?? 0;
  const last = generations.at(-1) ?? 0;
  const span = Math.max(1, last - first);
  const low = Math.min(0, ...values);
  const high = Math.max(low + 1e-9, ...values);
  const x = (g: number) => PAD.left + ((g - first) / span) * (W - PAD.left - PAD.right);
  const y = (v: number) => PAD.top + (1 - (v - low) / (high - low)) * (H - PAD.top - PAD.bottom);
  const points = generations.map((g, i) => `${x(g).toFixed(1)},${y(values[i] ?? 0).toFixed(1)}`);
  const at = current === undefined ? -1 : generations.indexOf(current);
  const pick = (event: MouseEvent) => {
    const box = (event.currentTarget as SVGSVGElement).getBoundingClientRect();
    const share = ((event.clientX - box.left) / box.width) * W;
    const g = first + ((share - PAD.left) / (W - PAD.left - PAD.right)) * span;
    onPick(Math.round(Math.min(last, Math.max(first, g))));
  };
  return html`<figure class="qd-curve" data-testid="qd-curve" data-metric=${label}>
    <figcaption title=${title}>${label}${at >= 0 ? html` <strong>${rate(values[at])}</strong> at generation ${current}` : ""}</figcaption>
    <svg width=${W} height=${H} viewBox=${`0 0 ${W} ${H}`} onClick=${pick}>
      <line class="qd-frame" x1=${PAD.left} y1=${H - PAD.bottom} x2=${W - PAD.right} y2=${H - PAD.bottom} />
      <text class="qd-tick" x=${PAD.left - 4} y=${PAD.top + 8} text-anchor="end">${rate(high, 2)}</text>
      <text class="qd-tick" x=${PAD.left - 4} y=${H - PAD.bottom} text-anchor="end">${rate(low, 2)}</text>
      <text class="qd-tick" x=${PAD.left} y=${H - 4}>${first}</text>
      <text class="qd-tick" x=${W - PAD.right} y=${H - 4} text-anchor="end">${last}</text>
      ${generations.map((g, i) =>
        errored[i]
          ? html`<line class="qd-errored" x1=${x(g)} x2=${x(g)} y1=${H - PAD.bottom - 6} y2=${H - PAD.bottom}><title>${`generation ${g}: the child errored`}</title></line>`
          : "",
      )}
      <polyline class="qd-line" points=${points.join(" ")} />
      ${
        at >= 0
          ? html`<line class="qd-now" x1=${x(current as number)} x2=${x(current as number)} y1=${PAD.top} y2=${H - PAD.bottom} />
            <circle class="qd-dot" cx=${x(current as number)} cy=${y(values[at] ?? 0)} r="3.5" />`
          : ""
      }
    </svg>
  </figure>`;
}
