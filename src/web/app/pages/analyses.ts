/**
 * The Analyses page (BLADE): `#/analyses` lists the blade runs, `#/analyses/<run>` shows a run's
 * BLADE report and its analyses, `#/analyses/<run>?episode=<id>` one analysis, the agent's
 * decisions beside the experts'.
 */
import type { AnalysisRunItem } from "../../api/analyses.js";
import { html } from "../html.js";
import type { PageProps } from "../main.js";
import { type PagedColumn, PagedTable } from "../paged.js";
import { href } from "../router.js";
import { rate, Status, when } from "../ui.js";
import { AnalysisView } from "./analyses/analysis.js";
import { RunView } from "./analyses/run.js";
import "./analyses.css";

export function AnalysesPage({ route }: PageProps) {
  const run = route.segments[1];
  if (run === undefined) return html`<${RunList} />`;
  const episode = route.query.episode;
  return episode
    ? html`<${AnalysisView} run=${run} episode=${episode} />`
    : html`<${RunView} run=${run} />`;
}

const RUN_COLUMNS: PagedColumn<AnalysisRunItem>[] = [
  {
    label: "run",
    cell: (r) => html`<a href=${href(`/analyses/${r.id}`)} data-run=${r.id}>${r.id}</a>`,
  },
  { label: "agent", cell: (r) => r.agent },
  { label: "status", cell: (r) => html`<${Status} status=${r.status} />` },
  { label: "datasets", cell: (r) => r.datasets.join(", ") },
  {
    label: "analyses",
    numeric: true,
    title: "finished episodes (submitted or not); errored ones apart",
    cell: (r) =>
      html`${r.analyses}${r.errored ? html` <span class="outcome-error">+${r.errored} errored</span>` : ""}`,
  },
  {
    label: "mean score",
    numeric: true,
    title:
      "mean over analyses of each one's BLADE weighted score (coverage over itself); an analysis that submitted nothing counts 0",
    cell: (r) => rate(r.meanScore),
  },
  {
    label: "conclusion right",
    numeric: true,
    title:
      "analyses whose fitted effect has the true direction, over those on datasets with a known effect",
    cell: (r) => (r.conclusionTotal === 0 ? "n/a" : `${r.conclusionRight}/${r.conclusionTotal}`),
  },
  { label: "created", cell: (r) => when(r.createdAt) },
];

function RunList() {
  return html`<h1>Analyses (BLADE)</h1>
    <p class="muted">Evaluation runs of the blade environment: each episode ends with one analysis,
    matched decision by decision to the experts' ground truth.</p>
    <${PagedTable}
      path="/analyses"
      columns=${RUN_COLUMNS}
      rowKey=${(r: AnalysisRunItem) => r.id}
      testId="analysis-runs"
      empty="No blade runs yet: npx clade eval --env blade --agent reference"
    />`;
}
