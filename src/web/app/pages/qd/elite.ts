/**
 * The panel an elite opens: its score and bin on every task (and its quality in each archive it
 * holds a cell of), how it was made, and, from a server (a bundle holds only the archives), what
 * each archive did when it was offered and where its genome is kept.
 */
import type {
  QdArchivesResponse,
  QdCell,
  QdEliteResponse,
  QdGeometry,
  QdOrigin,
} from "../../../api/qd.js";
import { apiPath, isBundle } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { ErrorLine, rate, Table } from "../../ui.js";

const short = (id: string) => (id.length > 16 ? `${id.slice(0, 12)}…` : id);

function Origin({ origin, geometry }: { origin: QdOrigin | null; geometry: QdGeometry }) {
  if (origin === null) return html`<span class="muted">not in its generation's record</span>`;
  // Seeds are numbered as given (clade qd gives one per task for policies; agent configs may
  // have fewer), so no task is named for them.
  if (origin.kind === "expert") return html`a seed (expert ${origin.index + 1} of generation 0)`;
  return html`a child of ${origin.parents.map(
    (p, i) => html`${i > 0 ? " and " : ""}<code title=${p}>${short(p)}</code>`,
  )}, parents drawn from the archive of ${geometry.tasks[origin.qualityTask] ?? origin.qualityTask}`;
}

interface ScoreRow {
  task: number;
  label: string;
  score: number;
  bin: number;
  /** Its quality where it is archive k's elite (that archive's quality is this task's score). */
  elite: boolean;
}

export function ElitePanel({
  runId,
  cell,
  generation,
  archives,
  geometry,
  onClose,
}: {
  runId: string;
  cell: QdCell;
  generation: number;
  archives: QdArchivesResponse;
  geometry: QdGeometry;
  onClose: () => void;
}) {
  const rows: ScoreRow[] = cell.scores.map((score, k) => ({
    task: k,
    label: geometry.tasks[k] ?? String(k),
    score,
    bin: cell.bins[k] ?? 0,
    elite: archives.archives[k]?.cells.some((c) => c.id === cell.id) ?? false,
  }));
  const mean = cell.scores.reduce((a, b) => a + b, 0) / Math.max(1, cell.scores.length);
  return html`<aside class="qd-elite" data-testid="qd-elite" data-id=${cell.id}>
    <div class="qd-elite-head">
      <strong>Elite <code title=${cell.id}>${short(cell.id)}</code></strong>
      <button onClick=${onClose} aria-label="close" data-testid="qd-elite-close">×</button>
    </div>
    <p class="muted">Born in generation ${cell.generation}: <${Origin} origin=${cell.origin} geometry=${geometry} />.</p>
    <${Table}
      rows=${rows}
      rowKey=${(r: ScoreRow) => r.task}
      testId="qd-elite-scores"
      columns=${[
        { label: "task", cell: (r: ScoreRow) => r.label },
        { label: "score", numeric: true, cell: (r: ScoreRow) => rate(r.score) },
        {
          label: "bin",
          title: `the score's bin of ${geometry.bins} over the task's range`,
          numeric: true,
          cell: (r: ScoreRow) => r.bin,
        },
        {
          label: "elite of its archive",
          title: "whether it holds a cell in this task's archive at this generation",
          cell: (r: ScoreRow) => (r.elite ? "yes" : ""),
        },
      ]}
    />
    <p class="muted">mean over the ${cell.scores.length} tasks: <strong>${rate(mean)}</strong></p>
    ${isBundle() ? "" : html`<${EliteDetails} runId=${runId} id=${cell.id} generation=${generation} />`}
  </aside>`;
}

/** From the server only: the add results at birth and the genome's file. */
function EliteDetails({
  runId,
  id,
  generation,
}: {
  runId: string;
  id: string;
  generation: number;
}) {
  const state = useApi<QdEliteResponse>(
    apiPath(`/qd/${encodeURIComponent(runId)}/elites/${encodeURIComponent(id)}`, { generation }),
  );
  if (state.error !== undefined) return html`<${ErrorLine} message=${state.error} />`;
  const data = state.data;
  if (data === undefined) return "";
  return html`<h3>When it was offered</h3>
    <${Table}
      rows=${data.atBirth}
      rowKey=${(r: { task: number }) => r.task}
      testId="qd-elite-birth"
      empty="no add results recorded"
      columns=${[
        { label: "archive", cell: (r: { label: string }) => r.label },
        { label: "status", cell: (r: { status: string }) => r.status },
        {
          label: "value",
          title:
            "new: its gain in QD-score; improved: over the elite it replaced; not added: its shortfall",
          numeric: true,
          cell: (r: { value: number }) => rate(r.value),
        },
      ]}
    />
    <h3>Genome</h3>
    <p data-testid="qd-elite-genome">${data.genome.kind ?? "unknown kind"} · ${
      data.genome.file
        ? html`<code>${data.genome.file}</code> (${data.genome.bytes} bytes)`
        : html`<span class="muted">no file at the run's default folder</span>`
    }</p>
    ${data.genome.config === null ? "" : html`<pre>${JSON.stringify(data.genome.config, null, 2)}</pre>`}`;
}
