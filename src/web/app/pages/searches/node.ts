/**
 * One node of a search, beside its tree: how it was made (its patch from the parent, coloured
 * by added and removed lines, and the diagnosis behind it), the improvements of it that gave no
 * child and why, and its evaluations task by task with links to the stored episodes and run.
 */
import type { JsonValue } from "../../../../store/search-log.js";
import type {
  FailedImprovement,
  NodeEvaluation,
  NodeResponse,
  TreeNode,
} from "../../../api/searches.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { href } from "../../router.js";
import { type Column, cost, Loaded, rate, Table } from "../../ui.js";

/** The page's address of a node (and the API's, spelled as the bundle spells it). */
export const nodeHref = (search: string, node: number) => href(`/searches/${search}`, { node });
const nodeApi = (search: string, node: number) =>
  apiPath(`/searches/${encodeURIComponent(search)}/nodes/${node}`);

/** A unified diff, each line coloured by what it is. */
function Diff({ patch }: { patch: string }) {
  const lines = patch.replace(/\n$/, "").split("\n");
  const kind = (line: string) =>
    line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")
      ? "file"
      : line.startsWith("@@")
        ? "hunk"
        : line.startsWith("+")
          ? "add"
          : line.startsWith("-")
            ? "del"
            : "context";
  return html`<pre class="diff" data-testid="node-diff">${lines.map(
    (line) => html`<span class=${`diff-${kind(line)}`}>${line}</span>`,
  )}</pre>`;
}

const words = (key: string) => key.replace(/_/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2");

/** A JSON object as a definition list (the diagnosis' plan, a record). */
function Fields({ value, testId }: { value: Record<string, JsonValue>; testId?: string }) {
  return html`<dl class="fields" data-testid=${testId}>${Object.entries(value).map(
    ([key, field]) =>
      html`<dt>${words(key)}</dt><dd>${
        Array.isArray(field)
          ? html`<ul>${field.map((item) => html`<li>${typeof item === "string" ? item : JSON.stringify(item)}</li>`)}</ul>`
          : typeof field === "object" && field !== null
            ? html`<code>${JSON.stringify(field)}</code>`
            : typeof field === "number"
              ? String(Number(field.toFixed(4)))
              : String(field)
      }</dd>`,
  )}</dl>`;
}

const OUTCOME_CLASS: Record<NodeEvaluation["outcome"], string> = {
  pass: "outcome-success",
  fail: "outcome-failure",
  error: "outcome-error",
  pending: "muted",
};

const seconds = (ms: number | null) => (ms === null ? "" : `${(ms / 1000).toFixed(1)} s`);

const EVALUATION_COLUMNS: Column<NodeEvaluation>[] = [
  { label: "task", cell: (e) => e.task, numeric: true },
  { label: "attempt", cell: (e) => e.attempt, numeric: true },
  {
    label: "outcome",
    title: "an error is an infrastructure failure, never a fail: the task is tried again",
    cell: (e) => html`<span class=${OUTCOME_CLASS[e.outcome]}>${e.outcome}</span>`,
  },
  { label: "reason", cell: (e) => e.reason ?? "" },
  {
    label: "cost",
    cell: (e) => (e.outcome === "pending" ? "" : cost(e.costUsd, e.unpriced)),
    numeric: true,
  },
  { label: "time", cell: (e) => seconds(e.durationMs), numeric: true },
  {
    label: "episode",
    cell: (e) =>
      e.episodeId === null
        ? ""
        : html`<a href=${href(`/episodes/${e.episodeId}`)}>${e.episodeId}</a>`,
  },
];

function FailedList({ failed }: { failed: readonly FailedImprovement[] }) {
  return html`<ul class="failed-list" data-testid="node-failed">${failed.map(
    (f) =>
      html`<li><span class="muted">work ${f.work} · ${cost(f.costUsd, f.unpriced)} · ${seconds(f.durationMs)}</span><br />${f.reason}</li>`,
  )}</ul>`;
}

function NodeLinks({ search, ids }: { search: string; ids: readonly number[] }) {
  if (ids.length === 0) return html`<span class="muted">none</span>`;
  return html`${ids.map((id, i) => html`${i > 0 ? " " : ""}<a href=${nodeHref(search, id)}>${id}</a>`)}`;
}

function Facts({ data, node }: { data: NodeResponse; node: TreeNode }) {
  const n = node.s + node.f;
  return html`<dl class="facts" data-testid="node-facts">
    <dt>status</dt><dd>${node.status}${node.pending ? ` (${node.pending} in flight)` : ""}</dd>
    <dt>own</dt><dd>${node.s}/${n} passed · mean ${rate(node.mean)}</dd>
    <dt title="passes and evaluations of the node and all its descendants">clade</dt>
    <dd>${node.cladeS}/${node.cladeS + node.cladeF} · CMP estimate ${rate(node.cmp)}</dd>
    <dt>cost</dt><dd>${cost(node.costUsd, node.unpriced)}${
      data.made
        ? html` <span class="muted">(making it: ${cost(data.made.costUsd, data.made.unpriced)}, ${seconds(data.made.durationMs)})</span>`
        : ""
    }</dd>
    ${node.quality !== null ? html`<dt>true quality</dt><dd>${rate(node.quality)} <span class="muted">(simulated, hidden from the search)</span></dd>` : ""}
    ${node.label ? html`<dt>${data.kind === "policy" ? "recipe" : data.kind === "agent" ? "fixes" : "type"}</dt><dd>${node.label}</dd>` : ""}
    <dt>path</dt><dd><${NodeLinks} search=${data.search} ids=${data.path} /></dd>
    <dt>children</dt><dd><${NodeLinks} search=${data.search} ids=${node.children} /></dd>
    <dt>made at</dt><dd>t = ${node.createdAtT}${node.errors ? html` · <span class="outcome-error">${node.errors} errored</span>` : ""}</dd>
    ${
      data.evalRun
        ? html`<dt>eval run</dt><dd><a href=${href(`/runs/${data.evalRun}`)} data-testid="node-run">${data.evalRun}</a></dd>`
        : ""
    }
  </dl>`;
}

export function NodePanel({
  search,
  node,
  onClose,
}: {
  search: string;
  node: number;
  onClose: () => void;
}) {
  const state = useApi<NodeResponse>(nodeApi(search, node));
  return html`<aside class="node-panel" data-testid="node-panel" data-node=${node}>
    <div class="panel-head">
      <h2>Node ${node}${state.data?.node.chosen ? html` <span class="badge chosen-badge">final choice</span>` : ""}</h2>
      <button class="close" onClick=${onClose} title="close">×</button>
    </div>
    <${Loaded} state=${state}>${(data: NodeResponse) => {
      const record = data.record;
      const hasRecord =
        record !== null &&
        typeof record === "object" &&
        !Array.isArray(record) &&
        Object.keys(record).length > 0;
      return html`
        <${Facts} data=${data} node=${data.node} />
        ${
          data.failedImprovements.length > 0
            ? html`<h3>Improvements that gave no child (${data.failedImprovements.length})</h3><${FailedList} failed=${data.failedImprovements} />`
            : ""
        }
        ${data.diagnosis ? html`<h3>Diagnosis</h3><${Fields} value=${data.diagnosis} testId="node-diagnosis" />` : ""}
        ${
          data.summary
            ? html`<h3>Change</h3><p data-testid="node-summary">${data.summary}${
                data.stopReason
                  ? html` <span class="muted">(stopped: ${data.stopReason}${data.steps !== null ? `, ${data.steps} steps` : ""})</span>`
                  : ""
              }</p>`
            : ""
        }
        ${data.patch ? html`<h3>Patch from node ${data.node.parent}</h3><${Diff} patch=${data.patch} />` : ""}
        ${hasRecord ? html`<h3>Record</h3><${Fields} value=${record as Record<string, JsonValue>} testId="node-record" />` : ""}
        <h3>Evaluations (${data.evaluations.length})</h3>
        <${Table} rows=${data.evaluations} columns=${EVALUATION_COLUMNS} rowKey=${(e: NodeEvaluation) => e.work}
          testId="node-evaluations" empty="no evaluations yet" />`;
    }}<//>
  </aside>`;
}
