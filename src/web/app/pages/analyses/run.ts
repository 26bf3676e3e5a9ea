/**
 * One blade run: BLADE's report as `clade blade report` prints it (scores with bootstrap
 * intervals, per category and per dataset, conclusions, the experts' decisions and how many
 * analyses matched each), and a table of its analyses, each opening beside the ground truth.
 */
import type { AnalysisRow, AnalysisRunResponse, BladeReport } from "../../../api/analyses.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { href } from "../../router.js";
import {
  type Column,
  ErrorLine,
  interval,
  Loaded,
  rate,
  Section,
  Status,
  Table,
  when,
} from "../../ui.js";

/** BLADE's categories in its order, with the names `clade blade report` uses. */
export const CATEGORIES = [
  ["cvar", "conceptual variables"],
  ["model", "models"],
  ["modelCvar", "model + variables"],
  ["transformGraph", "transforms (graph)"],
  ["transformValue", "transforms (value)"],
] as const;

const runAddress = (run: string) => apiPath(`/analyses/${encodeURIComponent(run)}`);

export function RunView({ run }: { run: string }) {
  const state = useApi<AnalysisRunResponse>(runAddress(run));
  return html`<p><a href=${href("/analyses")}>← Analyses</a></p>
    <${Loaded} state=${state}>${(data: AnalysisRunResponse) => html`<${RunBody} data=${data} />`}<//>`;
}

function RunBody({ data }: { data: AnalysisRunResponse }) {
  const { run, report } = data;
  return html`<h1 data-testid="analysis-run">BLADE run ${run.id}</h1>
    <p class="muted">agent <b>${run.agent}</b> · blade ${run.envVersion} · ${run.datasetsDir} (${run.runtime})
      · <${Status} status=${run.status} /> · ${when(run.createdAt)}</p>
    ${report ? html`<${ReportView} report=${report} />` : html`<${ErrorLine} message=${`No report: ${data.reportError ?? ""}`} />`}
    <${Section} title="Analyses">
      <${Table}
        rows=${data.analyses}
        columns=${analysisColumns(run.id)}
        rowKey=${(r: AnalysisRow) => r.episode}
        testId="analyses"
        empty="No finished analysis yet."
      />
    <//>
    ${report ? html`<${Decisions} report=${report} />` : ""}`;
}

const ci = (v: { interval: { low: number; high: number } } | undefined) =>
  v ? interval(v.interval) : "";

function ReportView({ report }: { report: BladeReport }) {
  const { scores, bootstrap, conclusions } = report;
  const card = (label: string, value: number, range: string, title: string, testId: string) =>
    html`<div class="card" title=${title} data-testid=${testId}>
      <div class="value">${rate(value)}</div>
      <div class="label">${label}</div>
      <div class="muted">${range || "no interval (one analysis per dataset)"}</div>
    </div>`;
  return html`<div class="cards">
      ${card("weighted score", scores.weighted, ci(bootstrap?.weighted), "Σ category weight × F1 (weights from the ground truth's sizes); 95% bootstrap interval over analyses", "score-weighted")}
      ${card("unweighted", scores.unweighted, ci(bootstrap?.unweighted), "(F1 cvar + F1 model + F1 model+cvar + ½F1 graph + ½F1 value) / 4", "score-unweighted")}
      ${card("unweighted (BLADE's code)", scores.unweightedAsBladeCodes, ci(bootstrap?.unweightedAsBladeCodes), "what BLADE's final_metrics.py computes: a typo adds 0.5 and counts F1 value fully", "score-blade-code")}
      ${
        conclusions
          ? html`${card("conclusion: direction right", conclusions.direction.rate, interval(conclusions.direction.interval), `${conclusions.direction.count}/${conclusions.direction.total}: the fitted effect's sign against the true effect`, "conclusion-direction")}
            ${card("conclusion: size within tolerance", conclusions.size.rate, interval(conclusions.size.interval), `${conclusions.size.count}/${conclusions.size.total} comparable`, "conclusion-size")}`
          : ""
      }
    </div>
    <p class="muted">${report.analyses} analyses · ${report.notSubmitted} submitted nothing (scored 0)
      · ${report.errored} errored (left out) · coverage@${report.k} · offline matching: variables by roles and columns, models by rules</p>
    <${Section} title="By category">
      <table data-testid="categories">
        <thead><tr><th>category</th><th class="num">hit rate</th><th>95% CI</th>
          <th class="num">coverage@${report.k}</th><th>95% CI</th><th class="num">F1</th><th>95% CI</th>
          <th class="num">weight</th></tr></thead>
        <tbody>${CATEGORIES.map(
          ([key, label]) => html`<tr>
            <td>${label}</td>
            <td class="num">${rate(scores.hitRate[key])}</td><td>${ci(bootstrap?.hitRate[key])}</td>
            <td class="num">${rate(scores.coverage[key])}</td><td>${ci(bootstrap?.coverage[key])}</td>
            <td class="num">${rate(scores.f1[key])}</td><td>${ci(bootstrap?.f1[key])}</td>
            <td class="num">${rate(scores.weights[key])}</td>
          </tr>`,
        )}</tbody>
      </table>
      <p class="muted">Hit rate: matched decisions / the analysis's decisions. Coverage@k: expert
      decisions matched by any of the first k analyses of a dataset. F1: their harmonic mean.</p>
    <//>
    <${Section} title="By dataset">
      <table data-testid="datasets">
        <thead><tr><th>dataset</th><th class="num">analyses</th><th class="num">not submitted</th>
          ${CATEGORIES.map(([, label]) => html`<th class="num" title=${`hit rate / coverage: ${label}`}>${label}</th>`)}</tr></thead>
        <tbody>${scores.datasets.map(
          (d) => html`<tr>
            <td>${d.name}</td><td class="num">${d.runs}</td><td class="num">${d.generationFailures}</td>
            ${CATEGORIES.map(([key]) => html`<td class="num">${rate(d.hitRate[key])} / ${rate(d.coverage[key])}</td>`)}
          </tr>`,
        )}</tbody>
      </table>
    <//>`;
}

const fraction = (n: number, of: number) => `${n}/${of}`;

function analysisColumns(run: string): Column<AnalysisRow>[] {
  const link = (r: AnalysisRow, text: string) =>
    html`<a href=${href(`/analyses/${run}`, { episode: r.episode })} data-episode=${r.episode}>${text}</a>`;
  const yes = (value: boolean | undefined) =>
    value === undefined
      ? ""
      : value
        ? html`<span class="match-yes">✓</span>`
        : html`<span class="match-no">✗</span>`;
  return [
    { label: "dataset", cell: (r) => link(r, r.dataset) },
    { label: "sample", numeric: true, cell: (r) => r.sample },
    {
      label: "outcome",
      cell: (r) =>
        html`<span class=${`outcome-${r.outcome}`}>${r.kind === "not-submitted" ? "submitted nothing" : r.outcome}</span>`,
    },
    {
      label: "score",
      numeric: true,
      title:
        "the episode's reward: BLADE's weighted score of this analysis alone (coverage over itself)",
      cell: (r) => rate(r.score),
    },
    {
      label: "variables",
      numeric: true,
      title: "the agent's variables matched / judged · the experts' variables matched / all",
      cell: (r) =>
        r.matched
          ? `${fraction(r.matched.variables.agent, r.matched.variables.agentOf)} · ${fraction(r.matched.variables.gt, r.matched.variables.gtOf)}`
          : "",
    },
    { label: "model", cell: (r) => yes(r.matched?.model) },
    {
      label: "model + vars",
      title: "an expert model matched with all of its variables",
      cell: (r) => yes(r.matched?.modelCvar),
    },
    {
      label: "transforms value",
      numeric: true,
      title: "expert transforms matched by value / all expanded expert transforms compared",
      cell: (r) =>
        r.matched
          ? r.matched.transformStatus === "matched"
            ? fraction(r.matched.transformsValue.gt, r.matched.transformsGt)
            : html`<span class="muted" title=${r.matched.transformStatus}>not compared</span>`
          : "",
    },
    {
      label: "graph",
      numeric: true,
      title: "expert transforms matched by data-flow graph",
      cell: (r) =>
        r.matched?.transformStatus === "matched"
          ? fraction(r.matched.transformsGraph.gt, r.matched.transformsGt)
          : "",
    },
    {
      label: "conclusion",
      cell: (r) =>
        r.matched?.conclusion
          ? html`<span class=${`conclusion-${r.matched.conclusion.replace(" ", "-")}`}>${r.matched.conclusion}</span>`
          : r.error
            ? html`<span class="outcome-error">${r.error}</span>`
            : "",
    },
  ];
}

/** The experts' decisions, each with how many analyses matched it (the report's last part). */
function Decisions({ report }: { report: BladeReport }) {
  return html`<${Section} title="Expert decisions, matched by how many analyses">
    ${report.decisions.map(
      (d) => html`<details class="decisions">
        <summary>${d.dataset} (${d.analyses} analyses)</summary>
        <table>
          <thead><tr><th>kind</th><th>decision</th><th>matched</th></tr></thead>
          <tbody>
            ${d.cvars.map((c) => html`<tr><td>variable</td><td>${c.item}</td><td>${c.matched === 0 ? "unmatched" : `${c.matched}/${d.analyses}`}</td></tr>`)}
            ${d.models.map((m) => html`<tr><td>model</td><td>${m.item}</td><td>${m.matched === 0 ? "unmatched" : `${m.matched}/${d.analyses}`}</td></tr>`)}
            ${d.transforms.map((t) => html`<tr><td>transform</td><td>${t.item} (${t.verb})</td><td>value ${t.value}/${d.analyses}, graph ${t.graph}/${d.analyses}</td></tr>`)}
          </tbody>
        </table>
      </details>`,
    )}
  <//>`;
}
