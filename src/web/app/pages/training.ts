/**
 * The training page: multi-turn RL runs and their learning curves.
 *
 *   #/training              the runs, newest first, with a box to tick per run; the ticked ones
 *   #/training?ids=a,b      are overlaid below the list (the selection lives in the address)
 *   #/training/<id>         one run: its curves, the schedule's stages, checkpoints and config
 *
 * Every run's response comes from useApi, so a running run's curves grow by themselves.
 */
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import type { TrainingRunItem, TrainingRunResponse } from "../../api/training.js";
import { apiPath } from "../api.js";
import { html } from "../html.js";
import { useApi } from "../live.js";
import type { PageProps } from "../main.js";
import { type PagedColumn, PagedTable } from "../paged.js";
import { href, type Route, withQuery } from "../router.js";
import {
  Card,
  ErrorLine,
  Loaded,
  Loading,
  rate,
  Section,
  Status,
  statusText,
  Table,
  when,
} from "../ui.js";
import { TrainingCharts } from "./training/charts.js";
import { colorOf, type ShownRun } from "./training/curves.js";
import "./training.css";

const runAddress = (id: string) => apiPath(`/training/${encodeURIComponent(id)}`);

/** The ids ticked for the overlay (`ids=a,b`), in the order they were ticked. */
function selectedIds(route: Route): string[] {
  return [...new Set((route.query.ids ?? "").split(",").filter(Boolean))];
}

export function TrainingPage({ route }: PageProps) {
  // Keyed by the run: another run's page starts empty rather than showing the last one's data.
  const id = route.segments[1];
  return id === undefined
    ? html`<${TrainingList} route=${route} />`
    : html`<${TrainingRun} key=${id} id=${id} route=${route} />`;
}

// ---- #/training: the list and the overlay --------------------------------------------------

function algorithmOf(run: TrainingRunItem): string {
  if (run.algorithm === null) return "?";
  return run.estimator && run.estimator !== run.algorithm
    ? `${run.algorithm} (${run.estimator})`
    : run.algorithm;
}

function listColumns(selected: readonly string[], toggle: (id: string) => void) {
  const columns: PagedColumn<TrainingRunItem>[] = [
    {
      label: "",
      cell: (run) =>
        html`<input
          type="checkbox"
          data-testid="overlay-toggle"
          data-run=${run.id}
          aria-label=${`overlay ${run.id}`}
          checked=${selected.includes(run.id)}
          onChange=${() => toggle(run.id)}
        />`,
    },
    { label: "run", cell: (run) => html`<a href=${href(`/training/${run.id}`)}>${run.id}</a>` },
    { label: "env", cell: (run) => run.env ?? "?" },
    { label: "algorithm", title: "algorithm (advantage estimator)", cell: algorithmOf },
    { label: "schedule", title: "horizon schedule", cell: (run) => run.schedule ?? "" },
    { label: "status", cell: (run) => html`<${Status} status=${statusText(run)} />` },
    { label: "steps", numeric: true, cell: (run) => run.steps },
    {
      label: "reward",
      title: "mean reward of the last step",
      numeric: true,
      cell: (run) => rate(run.meanReward),
    },
    {
      label: "success",
      title: "success rate of the last step",
      numeric: true,
      cell: (run) => rate(run.successRate),
    },
    {
      label: "horizon",
      title: "the last step's turn limit",
      numeric: true,
      cell: (run) => run.horizon ?? "",
    },
    { label: "updated", cell: (run) => when(run.updatedAt) },
  ];
  return columns;
}

function TrainingList({ route }: { route: Route }) {
  const selected = selectedIds(route);
  const toggle = (id: string) => {
    const next = selected.includes(id) ? selected.filter((s) => s !== id) : [...selected, id];
    withQuery(route, { ids: next.join(",") || undefined });
  };
  const columns = listColumns(selected, toggle);
  return html`<h1>Training runs</h1>
    <p class="muted">Tick runs to overlay their learning curves below.</p>
    <${PagedTable}
      path="/training"
      columns=${columns}
      rowKey=${(run: TrainingRunItem) => run.id}
      testId="training-runs"
      empty="no training runs in this store (clade train)"
    />
    ${
      selected.length > 0
        ? html`<div class="toolbar">
              <strong>${selected.length} run${selected.length === 1 ? "" : "s"} overlaid</strong>
              <button onClick=${() => withQuery(route, { ids: undefined })}>clear</button>
            </div>
            <${Overlay} ids=${selected} route=${route} />`
        : ""
    }`;
}

/** Fetches one run (live) and hands its response up; draws nothing. */
function RunLoader({
  id,
  onLoad,
  onError,
}: {
  id: string;
  onLoad: (id: string, data: TrainingRunResponse) => void;
  onError: (id: string, error: string | undefined) => void;
}) {
  const state = useApi<TrainingRunResponse>(runAddress(id));
  useEffect(() => {
    if (state.data) onLoad(id, state.data);
  }, [state.data]);
  useEffect(() => onError(id, state.error), [state.error]);
  return null;
}

function Overlay({ ids, route }: { ids: readonly string[]; route: Route }) {
  const [loaded, setLoaded] = useState<Record<string, TrainingRunResponse>>({});
  const [errors, setErrors] = useState<Record<string, string | undefined>>({});
  const onLoad = useCallback(
    (id: string, data: TrainingRunResponse) => setLoaded((prev) => ({ ...prev, [id]: data })),
    [],
  );
  const onError = useCallback(
    (id: string, error: string | undefined) => setErrors((prev) => ({ ...prev, [id]: error })),
    [],
  );
  const key = ids.join(",");
  const runs = useMemo(
    () =>
      ids.flatMap((id, i): ShownRun[] => {
        const data = loaded[id];
        return data ? [{ id, color: colorOf(i), data }] : [];
      }),
    [key, loaded],
  );
  const failed = ids.filter((id) => errors[id] !== undefined && loaded[id] === undefined);
  return html`${ids.map((id) => html`<${RunLoader} key=${id} id=${id} onLoad=${onLoad} onError=${onError} />`)}
    ${failed.map((id) => html`<${ErrorLine} message=${`${id}: ${errors[id]}`} />`)}
    ${runs.length > 0 ? html`<${TrainingCharts} runs=${runs} route=${route} />` : failed.length === 0 ? html`<${Loading} />` : ""}`;
}

// ---- #/training/<id>: one run --------------------------------------------------------------

function StageTable({ data }: { data: TrainingRunResponse }) {
  if (data.schedule === null) {
    return html`<p class="muted">${data.scheduleError ?? "no horizon schedule stored"}</p>`;
  }
  const last = data.run.lastStep;
  const where = (start: number, end: number | null) =>
    last === null || last < start ? "ahead" : end === null || last < end ? "current" : "done";
  return html`<p class="muted">${data.schedule.spec} (${data.schedule.kind})</p>
    <${Table}
      rows=${data.schedule.stages}
      rowKey=${(s: { index: number }) => s.index}
      testId="training-stages"
      columns=${[
        { label: "stage", numeric: true, cell: (s: { index: number }) => s.index + 1 },
        {
          label: "steps",
          cell: (s: { startStep: number; endStep: number | null }) =>
            s.endStep === null ? `${s.startStep}–` : `${s.startStep}–${s.endStep - 1}`,
        },
        {
          label: "horizon",
          title: "turn limit",
          numeric: true,
          cell: (s: { horizon: number }) => s.horizon,
        },
        {
          label: "",
          cell: (s: { startStep: number; endStep: number | null }) =>
            html`<span class="muted">${where(s.startStep, s.endStep)}</span>`,
        },
      ]}
    />`;
}

function RunBody({ data, route }: { data: TrainingRunResponse; route: Route }) {
  const runs = useMemo((): ShownRun[] => [{ id: data.run.id, color: colorOf(0), data }], [data]);
  const { run } = data;
  const cards: [string, string | number][] = [
    ["env", `${run.env ?? "?"}${run.envVersion ? ` v${run.envVersion}` : ""}`],
    ["algorithm", algorithmOf(run)],
    ["schedule", run.schedule ?? "none"],
    ["steps", run.steps],
    ["last reward", rate(run.meanReward)],
    ["last success", rate(run.successRate)],
  ];
  return html`<div class="cards">
      ${cards.map(([label, value]) => html`<${Card} label=${label} value=${value} />`)}
    </div>
    <${Section} title="Learning curves"><${TrainingCharts} runs=${runs} route=${route} /><//>
    <${Section} title="Horizon schedule"><${StageTable} data=${data} /><//>
    <${Section} title="Checkpoints">
      <${Table}
        rows=${data.checkpoints}
        rowKey=${(c: { step: number }) => c.step}
        testId="training-checkpoints"
        empty="no checkpoint saved yet"
        columns=${[
          { label: "step", numeric: true, cell: (c: { step: number }) => c.step },
          { label: "policy file", cell: (c: { path: string }) => html`<code>${c.path}</code>` },
          {
            label: "sha256",
            cell: (c: { sha256: string }) =>
              html`<code title=${c.sha256}>${c.sha256.slice(0, 12)}…</code>`,
          },
        ]}
      />
    <//>
    <${Section} title="Configuration"><pre data-testid="training-config">${JSON.stringify(data.config, null, 2)}</pre><//>`;
}

function TrainingRun({ id, route }: { id: string; route: Route }) {
  const state = useApi<TrainingRunResponse>(runAddress(id));
  return html`<p><a href=${href("/training")}>← training runs</a> · <a href=${href("/training", { ids: id })}>overlay with others</a></p>
    <h1>Training run <code>${id}</code> ${state.data ? html`<${Status} status=${statusText(state.data.run)} />` : ""}</h1>
    <${Loaded} state=${state}>${(data: TrainingRunResponse) => html`<${RunBody} data=${data} route=${route} />`}<//>`;
}
