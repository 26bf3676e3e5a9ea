/**
 * `#/qd/<id>?generation=g&task=t&elite=e`: one CycleQD run. Its coverage and QD-score per
 * generation, a slider over the generations (a bundle offers only those it holds), each archive
 * at the chosen generation as a heat map (`task` shows one archive), and the elite a click opens
 * (`elite`). Without `generation` the page follows the newest one, so a running run's maps
 * advance by themselves; the address keeps every choice, so a view can be shared.
 */
import { useRef } from "preact/hooks";
import type {
  QdArchivesResponse,
  QdArchiveView,
  QdCell,
  QdGeometry,
  QdRunResponse,
} from "../../../api/qd.js";
import { apiPath, isBundle } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { href, type Route, withQuery } from "../../router.js";
import { Card, ErrorLine, Loaded, Loading, rate, Section, Status, statusText } from "../../ui.js";
import { Curve } from "./curve.js";
import { ElitePanel } from "./elite.js";
import { HeatMap, Legend } from "./heatmap.js";

const runPath = (id: string) => `/qd/${encodeURIComponent(id)}`;

/** The index of the available generation nearest to the one asked for. */
function nearestIndex(available: readonly number[], asked: number): number {
  let best = 0;
  available.forEach((g, i) => {
    if (Math.abs(g - asked) < Math.abs((available[best] as number) - asked)) best = i;
  });
  return best;
}

/** The archives `task` names (a label or an index); all of them without one. */
function shownArchives(geometry: QdGeometry, task: string | undefined): number[] {
  const all = geometry.tasks.map((_, k) => k);
  if (task === undefined || task === "") return all;
  const byLabel = geometry.tasks.indexOf(task);
  const k = byLabel >= 0 ? byLabel : /^\d+$/.test(task) ? Number(task) : -1;
  return k >= 0 && k < geometry.tasks.length ? [k] : all;
}

export function QdRun({ id, route }: { id: string; route: Route }) {
  const state = useApi<QdRunResponse>(apiPath(runPath(id)));
  return html`<p><a href=${href("/qd")}>← CycleQD runs</a></p>
    <h1>CycleQD run <code>${id}</code> ${state.data ? html`<${Status} status=${statusText(state.data.run)} />` : ""}</h1>
    <${Loaded} state=${state}>${(data: QdRunResponse) => html`<${RunBody} data=${data} route=${route} />`}<//>`;
}

function RunBody({ data, route }: { data: QdRunResponse; route: Route }) {
  const { run, geometry, series } = data;
  const available = isBundle() ? data.bundledGenerations : series.generation;
  const last = series.generation.length - 1;
  const cards: [string, string | number][] = [
    ["genome", run.kind ?? "?"],
    ["tasks", run.tasks.join(", ")],
    ["variant", run.variant ?? "?"],
    ["generations", run.lastGeneration ?? "none yet"],
    ["coverage", rate(run.coverage)],
    ["QD-score", rate(run.qdScore)],
    ["errored", run.erroredGenerations],
  ];
  const config = html`<${Section} title="Configuration"><details><summary>as stored</summary><pre data-testid="qd-config">${JSON.stringify(data.config, null, 2)}</pre></details><//>`;
  const head = html`<div class="cards">
    ${cards.map(([label, value]) => html`<${Card} label=${label} value=${value} />`)}
  </div>`;
  if (geometry === null) {
    return html`${head}<${ErrorLine} message=${data.configError ?? "no archive geometry"} />${config}`;
  }
  if (available.length === 0) {
    return html`${head}<p class="muted" data-testid="qd-no-generation">No generation stored yet: the experts' evaluation is under way.</p>${config}`;
  }
  const asked = route.query.generation === undefined ? Number.NaN : Number(route.query.generation);
  const index = Number.isFinite(asked) ? nearestIndex(available, asked) : available.length - 1;
  const generation = available[index] as number;
  const following = !Number.isFinite(asked);
  const setIndex = (i: number) =>
    withQuery(route, { generation: i >= available.length - 1 ? undefined : available[i] });
  const pickGeneration = (g: number) => setIndex(nearestIndex(available, g));
  const metric = (label: string, title: string, values: number[]) =>
    html`<${Curve}
      label=${label}
      title=${title}
      generations=${series.generation}
      values=${values}
      errored=${series.errored}
      current=${generation}
      onPick=${pickGeneration}
    />`;
  return html`${head}
    <${Section} title="Progress">
      <div class="qd-curves">
        ${metric("coverage", "the mean over the archives of the share of cells filled", series.coverage)}
        ${metric("QD-score", "summed over the archives: each elite's quality less the archive's offset", series.qdScore)}
      </div>
    <//>
    <${Section} title="Archives">
      <div class="toolbar qd-toolbar">
        <label>generation
          <input
            type="range"
            data-testid="qd-slider"
            min="0"
            max=${available.length - 1}
            step="1"
            value=${index}
            onInput=${(event: Event) => setIndex(Number((event.target as HTMLInputElement).value))}
          />
        </label>
        <strong data-testid="qd-generation">${generation}</strong>
        <span class="muted">of ${series.generation[last]}${
          generation > 0 && series.qualityTask[series.generation.indexOf(generation)] != null
            ? ` · parents from ${geometry.tasks[series.qualityTask[series.generation.indexOf(generation)] as number]}`
            : generation === 0
              ? " · the experts"
              : ""
        }${following && run.status === "running" ? " · following the run" : ""}${
          isBundle() && available.length < series.generation.length
            ? ` · this bundle holds ${available.length} of ${series.generation.length} generations`
            : ""
        }</span>
        <select
          data-testid="qd-task"
          aria-label="archive"
          value=${route.query.task ?? ""}
          onChange=${(event: Event) => withQuery(route, { task: (event.target as HTMLSelectElement).value })}
        >
          <option value="">all archives</option>
          ${geometry.tasks.map((label) => html`<option value=${label}>${label}</option>`)}
        </select>
      </div>
      <${Archives} runId=${run.id} generation=${generation} geometry=${geometry} route=${route} />
    <//>
    ${config}`;
}

/** The heat maps at a generation; the previous ones stay on show while the next load. */
function Archives({
  runId,
  generation,
  geometry,
  route,
}: {
  runId: string;
  generation: number;
  geometry: QdGeometry;
  route: Route;
}) {
  const state = useApi<QdArchivesResponse>(apiPath(`${runPath(runId)}/archives`, { generation }));
  const shown = useRef<QdArchivesResponse | undefined>(undefined);
  if (state.data !== undefined) shown.current = state.data;
  const data = shown.current;
  if (data === undefined) {
    return state.error ? html`<${ErrorLine} message=${state.error} />` : html`<${Loading} />`;
  }
  const picked = route.query.elite;
  const archives = shownArchives(geometry, route.query.task).map(
    (k) => data.archives[k] as QdArchiveView,
  );
  const cell =
    picked === undefined
      ? undefined
      : [...archives, ...data.archives].flatMap((a) => a.cells).find((c) => c.id === picked);
  const pick = (c: QdCell) => withQuery(route, { elite: c.id });
  return html`${state.error ? html`<${ErrorLine} message=${state.error} />` : ""}
    <div class=${`qd-layout${picked === undefined ? "" : " with-panel"}${state.loading ? " loading" : ""}`}>
      <div class="qd-maps" data-testid="qd-maps" data-generation=${data.generation}>
        ${archives.map(
          (archive) => html`<figure class="qd-archive" key=${archive.task} data-testid="qd-archive">
            <figcaption>
              <strong>${archive.label}</strong> <span class="muted">archive (quality: ${archive.label})</span>
              <div class="muted" data-testid="qd-archive-stats">${archive.stats.elites}/${archive.stats.cells} cells · QD-score ${rate(archive.stats.qdScore)} · max ${rate(archive.stats.objMax)}</div>
              ${archive.folded.length > 0 ? html`<div class="muted">best elite over the bins of ${archive.folded.join(", ")}</div>` : ""}
            </figcaption>
            <${HeatMap} archive=${archive} selected=${picked} onPick=${pick} />
            <${Legend} range=${archive.qualityRange} label=${archive.label} />
          </figure>`,
        )}
      </div>
      ${
        picked === undefined
          ? ""
          : cell === undefined
            ? html`<aside class="qd-elite" data-testid="qd-elite-missing">
                <p class="muted">Elite <code>${picked}</code> holds no cell at generation ${data.generation}.</p>
                <button onClick=${() => withQuery(route, { elite: undefined })}>close</button>
              </aside>`
            : html`<${ElitePanel}
                runId=${runId}
                cell=${cell}
                generation=${data.generation}
                archives=${data}
                geometry=${geometry}
                onClose=${() => withQuery(route, { elite: undefined })}
              />`
      }
    </div>`;
}
