/**
 * The learning curves of one or more training runs: a legend (one colour per run), one chart per
 * metric (reward, success, horizon, entropy, KL, and any other metric the user adds), and the
 * schedule's stages on every chart. Which extra charts are shown lives in the hash query `more`.
 */
import { useMemo } from "preact/hooks";
import { html } from "../../html.js";
import { href, type Route, withQuery } from "../../router.js";
import { rate, Status } from "../../ui.js";
import { MetricChart } from "./chart.js";
import {
  alignCurves,
  MAIN_METRICS,
  type MetricChoice,
  metricChoice,
  otherMetrics,
  type ShownRun,
  stageBands,
  stageMarkers,
} from "./curves.js";

/** The extra charts chosen in the address (`more=gradNorm,extra:meanTurns`). */
function chosenMetrics(route: Route): string[] {
  return (route.query.more ?? "").split(",").filter(Boolean);
}

function Legend({ runs }: { runs: readonly ShownRun[] }) {
  return html`<ul class="training-legend" data-testid="training-legend">
    ${runs.map(
      ({ id, color, data }) => html`<li key=${id} data-testid="legend-entry" data-run=${id}>
        <span class="swatch" style=${{ background: color }}></span>
        <a href=${href(`/training/${id}`)}>${id}</a>
        <span class="muted">${data.run.env ?? "?"} · ${data.run.algorithm ?? "?"} · ${data.run.schedule ?? "no schedule"}</span>
        <${Status} status=${data.run.status} />
        <span class="muted">${data.run.steps} steps, reward ${rate(data.run.meanReward)}, success ${rate(data.run.successRate)}</span>
      </li>`,
    )}
  </ul>`;
}

function AddChart({
  route,
  choices,
  chosen,
}: {
  route: Route;
  choices: readonly MetricChoice[];
  chosen: readonly string[];
}) {
  const left = choices.filter((c) => !chosen.includes(c.key));
  const set = (keys: string[]) => withQuery(route, { more: keys.join(",") || undefined });
  return html`<div class="toolbar training-more">
    ${chosen.map(
      (key) =>
        html`<button class="chip" title="remove this chart" onClick=${() => set(chosen.filter((k) => k !== key))}>
          ${metricChoice(key).label} ×
        </button>`,
    )}
    ${
      left.length > 0 &&
      html`<select
        data-testid="add-metric"
        onChange=${(event: Event) => {
          const select = event.currentTarget as HTMLSelectElement;
          if (select.value) set([...chosen, select.value]);
          select.value = "";
        }}
      >
        <option value="">add a chart…</option>
        ${left.map((c) => html`<option value=${c.key}>${c.label}</option>`)}
      </select>`
    }
  </div>`;
}

export function TrainingCharts({ runs, route }: { runs: readonly ShownRun[]; route: Route }) {
  const chosen = chosenMetrics(route);
  const bands = useMemo(() => stageBands(runs), [runs]);
  const series = runs.map((run) => ({ label: run.id, color: run.color }));
  // New arrays only when the data or the charts change: each new one is handed to uPlot.
  const charts = useMemo(
    () =>
      [...MAIN_METRICS, ...chosen.map(metricChoice)].map((metric) => ({
        metric,
        data: alignCurves(runs, metric.key),
      })),
    [runs, chosen.join(",")],
  );
  const markers = stageMarkers(bands, charts[0]?.data[0] ?? []).length;
  return html`<div class="training-curves" data-testid="training-curves" data-stage-markers=${markers} data-runs=${runs.length}>
    <${Legend} runs=${runs} />
    <p class="muted stage-note">
      ${
        bands.length > 0
          ? `Shaded bands and dashed lines: the horizon schedule's stages (h = the turn limit); ${markers} stage boundar${markers === 1 ? "y" : "ies"} so far.`
          : "No horizon schedule stored for these runs."
      }
    </p>
    <div class="training-grid">
      ${charts.map(
        ({ metric, data }) =>
          html`<${MetricChart}
            key=${metric.key}
            title=${metric.label}
            metricKey=${metric.key}
            series=${series}
            data=${data}
            stages=${bands}
            range=${metric.range}
          />`,
      )}
    </div>
    <${AddChart} route=${route} choices=${otherMetrics(runs)} chosen=${chosen} />
  </div>`;
}
