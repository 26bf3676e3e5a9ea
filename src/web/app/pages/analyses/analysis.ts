/**
 * One analysis: the agent's decisions beside the experts' ground truth, in two columns per
 * category (variables, transforms, model, conclusion). A matched pair shares a row with a ✓ and
 * how it matched; an unmatched decision stands on its own side, the other side greyed.
 */
import type { ComponentChildren } from "preact";
import type {
  AgentModelView,
  AgentTransformView,
  AgentVariableView,
  AnalysisResponse,
  ConclusionVerdict,
  DecisionRow,
  GtModelView,
  GtTransformView,
  GtVariableView,
  TrueEffectView,
} from "../../../api/analyses.js";
import { apiPath } from "../../api.js";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { href } from "../../router.js";
import { Card, ErrorLine, Loaded, rate, Section } from "../../ui.js";
import { CATEGORIES } from "./run.js";

const analysisAddress = (run: string, episode: string) =>
  apiPath(`/analyses/${encodeURIComponent(run)}/episodes/${encodeURIComponent(episode)}`);

export function AnalysisView({ run, episode }: { run: string; episode: string }) {
  const state = useApi<AnalysisResponse>(analysisAddress(run, episode));
  return html`<p><a href=${href(`/analyses/${run}`)}>← run ${run}</a></p>
    <${Loaded} state=${state}>${(data: AnalysisResponse) => html`<${AnalysisBody} data=${data} />`}<//>`;
}

function AnalysisBody({ data }: { data: AnalysisResponse }) {
  const { episode, scores } = data;
  return html`<div data-testid="analysis-view">
    <h1>${data.dataset ?? `task ${episode.task}`} · sample ${episode.sample}</h1>
    ${data.question ? html`<p class="question">${data.question}</p>` : ""}
    <p class="muted">run ${data.run.id} (agent ${data.run.agent}) · episode ${episode.id} ·
      <span class=${`outcome-${episode.outcome}`}>${episode.outcome}</span>
      ${episode.error ? html` · <span class="outcome-error">${episode.error}</span>` : ""}</p>
    ${data.groundTruthError ? html`<${ErrorLine} message=${data.groundTruthError} />` : ""}
    ${
      data.kind === "scored"
        ? ""
        : html`<p class="muted" data-testid="no-analysis">${
            data.kind === "errored"
              ? "The episode errored: no analysis, and it is left out of the scores."
              : "The agent submitted no analysis: it counts as an all-zero analysis (BLADE's generation failure)."
          }</p>`
    }
    ${
      scores
        ? html`<div class="cards" data-testid="analysis-scores">
            <${Card} label="weighted score" value=${rate(scores.weighted)}
              title="BLADE's weighted score of this analysis alone (coverage over itself): the episode's reward" />
            ${CATEGORIES.map(
              ([
                key,
                label,
              ]) => html`<div class="card" title=${`hit rate ${rate(scores.hitRate[key])}, coverage ${rate(scores.coverage[key])}`}>
                <div class="value">${rate(scores.f1[key])}</div><div class="label">F1 ${label}</div>
                <div class="muted">hit ${rate(scores.hitRate[key])} · cov ${rate(scores.coverage[key])}</div>
              </div>`,
            )}
          </div>`
        : ""
    }
    ${
      data.kind === "scored"
        ? html`
          <${Category} title="Variables" testId="variables" rows=${data.variables} agent=${VariableCell} gt=${GtVariableCell} />
          <${Category} title="Transforms" testId="transforms" rows=${data.transforms} agent=${TransformCell} gt=${GtTransformCell}
            note=${data.transformStage ? stageNote(data.transformStage) : ""} />
          <${Category} title="Model" testId="model" rows=${data.model} agent=${ModelCell} gt=${GtModelCell}
            note=${data.modelCvar.length > 0 ? `model + variables matched: ${data.modelCvar.join("; ")}` : "model + variables: no expert model matched with all of its variables"} />
          <${Category} title="Conclusion" testId="conclusion" rows=${data.conclusion} agent=${ConclusionCell} gt=${TruthCell}
            note="clade's addition: the fitted effect of the independent variable against the process that generated the data" />`
        : ""
    }
    ${
      data.submitted
        ? html`<details class="submitted"><summary>the analysis as submitted</summary><pre>${pretty(data.submitted)}</pre></details>`
        : ""
    }
  </div>`;
}

/** How the agent's transforms came to be units, and what went wrong if anything did. */
function stageNote(stage: NonNullable<AnalysisResponse["transformStage"]>): string {
  const how =
    stage.split === "units"
      ? "given by the agent"
      : stage.split === "none"
        ? "no transform code"
        : `its code split by statement (${stage.split})`;
  return `${stage.units} units, ${how}${stage.error ? ` · ${stage.error}` : ""}`;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function Category<A, G>({
  title,
  testId,
  rows,
  agent,
  gt,
  note,
}: {
  title: string;
  testId: string;
  rows: DecisionRow<A, G>[];
  agent: (props: { value: A }) => ComponentChildren;
  gt: (props: { value: G }) => ComponentChildren;
  note?: string;
}) {
  const matched = rows.filter((r) => r.matched).length;
  return html`<${Section} title=${`${title} · ${matched} of ${rows.length} rows matched`}>
    ${note ? html`<p class="muted">${note}</p>` : ""}
    ${
      rows.length === 0
        ? html`<p class="muted">nothing to compare</p>`
        : html`<table class="decisions-table" data-testid=${`decisions-${testId}`}>
            <thead><tr><th class="side">the agent's decisions</th><th class="mark">match</th><th class="side">ground truth (experts)</th></tr></thead>
            <tbody>${rows.map(
              (
                row,
              ) => html`<tr class=${row.matched ? "matched" : "unmatched"} data-matched=${String(row.matched)}>
                ${side(row.agent, agent, "agent")}
                <td class="mark">${row.matched ? html`<span class="match-yes">✓</span>` : html`<span class="match-no">✗</span>`}
                  <div class="how">${row.how}</div></td>
                ${side(row.gt, gt, "gt")}
              </tr>`,
            )}</tbody>
          </table>`
    }
  <//>`;
}

function side<T>(value: T | null, Cell: (props: { value: T }) => ComponentChildren, which: string) {
  return value === null
    ? html`<td class="side absent" data-side=${which} data-absent="true">—</td>`
    : html`<td class="side" data-side=${which}><${Cell} value=${value} /></td>`;
}

const columns = (names: readonly string[]) =>
  names.length === 0
    ? html`<span class="muted">no columns</span>`
    : names.map((c) => html`<code class="col">${c}</code> `);

function VariableCell({ value }: { value: AgentVariableView }) {
  return html`<span class="badge role">${value.role}</span> ${value.description}
    <div>${columns(value.columns)}</div>
    ${value.judged ? "" : html`<div class="muted">not judged: no expert variable has this role</div>`}`;
}

function GtVariableCell({ value }: { value: GtVariableView }) {
  return html`<span class="badge role">${value.role}</span> ${value.concept}
    <div>${columns(value.columns)}</div>
    <div class="muted">${value.rationale} ${value.annotator ? `(${value.annotator})` : ""}</div>`;
}

const kinds = (v: { value: boolean; graph: boolean }) =>
  html`<span class=${v.value ? "match-yes" : "match-no"}>value ${v.value ? "✓" : "✗"}</span>
    <span class=${v.graph ? "match-yes" : "match-no"}>graph ${v.graph ? "✓" : "✗"}</span>`;

function TransformCell({ value }: { value: AgentTransformView }) {
  return html`<b>unit ${value.index + 1}</b> <span class="badge">${value.verb}</span> ${kinds(value)}
    <div class="muted">${value.mapping.join("; ")}</div>
    <pre class="code">${value.code}</pre>`;
}

function GtTransformCell({ value }: { value: GtTransformView }) {
  const after = value.after
    .map((parents) => (parents.length === 0 ? "the data as read" : parents.join(" + ")))
    .join(" or ");
  return html`<b>${value.name}</b> <span class="badge">${value.verb}</span> ${kinds(value)}
    <div>${value.specification}</div>
    <div class="muted">after ${after}${value.after.length > 1 ? " (alternatives)" : ""} · ${value.mapping.join("; ")}</div>
    <pre class="code">${value.code}</pre>
    <div class="muted">${value.rationale} ${value.annotator ? `(${value.annotator})` : ""}</div>`;
}

function ModelCell({ value }: { value: AgentModelView }) {
  return html`<b>${value.specification || "(no specification)"}</b>
    <pre class="code">${value.code}</pre>
    <div class="muted">fit: ${value.fit}</div>`;
}

function GtModelCell({ value }: { value: GtModelView }) {
  return html`<b>${value.name}</b>: ${value.specification}
    <pre class="code">${value.code}</pre>
    <div>${columns(value.columns)}</div>
    <div class="muted">${value.rationale} ${value.annotator ? `(${value.annotator})` : ""}</div>`;
}

function ConclusionCell({ value }: { value: ConclusionVerdict }) {
  return html`<b class=${`conclusion-${value.direction.replace(" ", "-")}`}>direction ${value.direction}</b> · size ${value.size}
    ${value.term ? html`<div><code>${value.term}</code> = ${value.estimate?.toPrecision(4)} (p = ${value.pValue?.toPrecision(3)})</div>` : ""}
    <div class="muted">${value.reason}</div>`;
}

function TruthCell({ value }: { value: TrueEffectView }) {
  return html`<b>true effect of <code>${value.iv}</code> on <code>${value.dv}</code>: ${value.direction}</b>
    ${value.sizes.length > 0 ? html`<div>size ${value.sizes.join("; ")}</div>` : ""}
    <div class="muted">${value.process}</div>`;
}
