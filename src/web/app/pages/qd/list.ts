/** `#/qd`: the CycleQD runs, newest first, page by page. */
import type { QdRunItem } from "../../../api/qd.js";
import { html } from "../../html.js";
import { type PagedColumn, PagedTable } from "../../paged.js";
import { href } from "../../router.js";
import { rate, Status, statusText, when } from "../../ui.js";

const COLUMNS: PagedColumn<QdRunItem>[] = [
  { label: "run", cell: (run) => html`<a href=${href(`/qd/${run.id}`)}>${run.id}</a>` },
  {
    label: "genome",
    title: "policy: embedded policies; agent-config: LLM agent configurations",
    cell: (run) => run.kind ?? "?",
  },
  { label: "tasks", cell: (run) => run.tasks.join(", ") },
  { label: "variant", cell: (run) => run.variant ?? "" },
  { label: "status", cell: (run) => html`<${Status} status=${statusText(run)} />` },
  {
    label: "generations",
    title: "the last stored generation (0: the experts)",
    numeric: true,
    cell: (run) => run.lastGeneration ?? "–",
  },
  {
    label: "coverage",
    title: "at the last generation: the mean over the archives of the share of cells filled",
    numeric: true,
    cell: (run) => rate(run.coverage),
  },
  {
    label: "QD-score",
    title:
      "at the last generation: summed over the archives (each elite's quality less the offset)",
    numeric: true,
    cell: (run) => rate(run.qdScore),
  },
  {
    label: "errored",
    title: "generations whose child's evaluation failed (dropped, never scored 0)",
    numeric: true,
    cell: (run) => run.erroredGenerations,
  },
  { label: "updated", cell: (run) => when(run.updatedAt) },
];

export function QdList() {
  return html`<h1>Quality-diversity (CycleQD)</h1>
    <p class="muted">One archive per task: its quality is that task's score, its cells the bins of the other tasks' scores.</p>
    <${PagedTable}
      path="/qd"
      columns=${COLUMNS}
      rowKey=${(run: QdRunItem) => run.id}
      testId="qd-runs"
      empty="no CycleQD runs in this store (clade qd)"
    />`;
}
