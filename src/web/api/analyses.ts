/**
 * The Analyses API (BLADE): evaluation runs of the `blade` environment, each episode ending with
 * the agent's analysis matched decision by decision to the experts' ground truth (the record
 * env/blade/score.ts stores in the last step's `info.blade`).
 * - GET /analyses: blade runs, newest first, with their mean score and conclusion agreement;
 * - GET /analyses/:run: BLADE's report of the run, as `clade blade report` builds it (scores with
 *   bootstrap intervals, conclusions, expert decisions), and one row per analysis;
 * - GET /analyses/:run/episodes/:id: one analysis, the agent's decisions beside the experts', per
 *   category, each matched or not and how.
 * Stored analyses are read by eval/blade/report.ts (storedAnalyses), the one reading of a blade
 * run; the ground truth comes from the run's own datasets, checked by version as the report does.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { ConclusionVerdict } from "../../env/blade/conclusion.js";
import {
  type AgentCvarEntry,
  agentCvarEntries,
  CVAR_GROUPS,
  type CvarGroup,
  gtCvarRole,
  gtCvarText,
  MATCH_THRESHOLD,
} from "../../env/blade/cvar-match.js";
import type { BladeRecord, SpecOutcome } from "../../env/blade/score.js";
import { type BladeScores, bladeScores } from "../../env/blade/scores.js";
import type {
  Analysis,
  BladeDataset,
  TransformSpec,
  TransformUnit,
} from "../../env/blade/specs.js";
import { ROOT_SPEC_ID } from "../../env/blade/specs.js";
import { splitTransformCode } from "../../env/blade/split-units.js";
import { parseAnalysisText } from "../../env/blade/submission.js";
import { defaultRuntime, OWN_DATASETS_DIR, taskDataset } from "../../env/blade/tasks.js";
import { expandedUnitNames, WHOLE_FRAME_VERBS } from "../../env/blade/transform-graph.js";
import {
  type BladeReport,
  buildBladeReport,
  type ReportedAnalysis,
  reportedAnalyses,
  reportedAnalysis,
  reportedDataset,
  type StoredAnalysis,
  storedAnalyses,
  storedAnalysis,
  storedRunConfig,
  storedRunSource,
} from "../../eval/blade/report.js";
import type { SqliteDatabase } from "../../store/database.js";
import type { RunRow, RunStore, StoredEpisode } from "../../store/run-store.js";
import { apiPath } from "../api-path.js";
import { decodeCursor, page } from "../cursor.js";
import type { ApiModule, Chosen } from "../server.js";
import { runStoreOn, type StoreView } from "../store-view.js";
import { pageQuery, valid } from "../validate.js";
import { runState } from "./runs-read.js";

export type { BladeReport, BladeScores, ConclusionVerdict };

// ---- response types (the page imports them with `import type`) ----

/** One blade run in the list. */
export interface AnalysisRunItem {
  id: string;
  agent: string;
  envVersion: string;
  /** running, complete, interrupted, or "killed" (running, its process gone: resumable). */
  status: string;
  createdAt: string;
  /** Datasets its scored analyses name, by name. */
  datasets: string[];
  episodes: number;
  /** Finished episodes (success or failure): the analyses, submitted or not. */
  analyses: number;
  errored: number;
  /** Mean reward of the analyses: each one's BLADE weighted score (coverage over itself). */
  meanScore: number | null;
  /** Analyses concluding the true direction, over the analyses of datasets with a known effect. */
  conclusionRight: number;
  conclusionTotal: number;
}

export interface AnalysisRunsResponse {
  items: AnalysisRunItem[];
  nextCursor: string | null;
}

/** One analysis (episode) of a run, as the run page's table shows it. */
export interface AnalysisRow {
  episode: number;
  task: number;
  sample: number;
  dataset: string;
  kind: "scored" | "not-submitted" | "errored";
  outcome: string;
  /** The episode's reward: BLADE's weighted score of this analysis alone. */
  score: number | null;
  error: string | null;
  /** Matched over all, per side; null where the analysis has no record. */
  matched: {
    variables: { agent: number; agentOf: number; gt: number; gtOf: number };
    model: boolean;
    modelCvar: boolean;
    transformsValue: { gt: number; agent: number };
    transformsGraph: { gt: number; agent: number };
    transformsGt: number;
    transformsAgent: number;
    transformStatus: string;
    conclusion: ConclusionVerdict["direction"] | null;
  } | null;
}

export interface AnalysisRunResponse {
  run: {
    id: string;
    agent: string;
    envVersion: string;
    status: string;
    createdAt: string;
    updatedAt: string;
    datasetsDir: string;
    runtime: string;
  };
  /**
   * BLADE's report of the run as `clade blade report RUN --json` gives it (offline matching);
   * null with `reportError` when nothing could be scored yet. Rates with no data are null.
   */
  report: BladeReport | null;
  reportError: string | null;
  analyses: AnalysisRow[];
}

export interface AgentVariableView {
  index: number;
  role: CvarGroup;
  description: string;
  columns: string[];
  /** BLADE's text form, the key of the match record. */
  text: string;
  /** False when its role is absent from the ground truth (neither judged nor counted). */
  judged: boolean;
}

export interface GtVariableView {
  index: number;
  specId: string;
  role: CvarGroup;
  concept: string;
  text: string;
  columns: string[];
  rationale: string;
  annotator: string;
}

export interface MatchKinds {
  value: boolean;
  graph: boolean;
}

export interface AgentTransformView extends MatchKinds {
  index: number;
  verb: string;
  code: string;
  /** "inputs → output" for each mapping entry. */
  mapping: string[];
  /** The expanded specs BLADE matched for it, with how each fared. */
  expanded: SpecOutcome[];
}

export interface GtTransformView extends MatchKinds {
  specId: string;
  name: string;
  verb: string;
  specification: string;
  code: string;
  rationale: string;
  mapping: string[];
  /** Each alternative set of parents (names): it runs after any one of them. */
  after: string[][];
  expanded: SpecOutcome[];
  annotator: string;
}

export interface AgentModelView {
  specification: string;
  code: string;
  /** The fitted model (family, link, terms), or why it did not fit. */
  fit: string;
}

export interface GtModelView {
  index: number;
  specId: string;
  name: string;
  specification: string;
  code: string;
  rationale: string;
  columns: string[];
  annotator: string;
}

export interface TrueEffectView {
  iv: string;
  dv: string;
  direction: string;
  sizes: string[];
  process: string;
}

/**
 * One line of a category: the agent's decision and the ground truth's it matched, or one side
 * alone. `matched` with one side alone: matched, but the record does not say to what.
 */
export interface DecisionRow<Agent, Truth> {
  agent: Agent | null;
  gt: Truth | null;
  matched: boolean;
  /** How it matched (or why not), in words. */
  how: string;
}

export interface AnalysisResponse {
  run: { id: string; agent: string; envVersion: string };
  episode: {
    id: number;
    task: number;
    sample: number;
    outcome: string;
    reward: number;
    error: string | null;
    endReason: string | null;
  };
  kind: AnalysisRow["kind"];
  dataset: string | null;
  question: string | null;
  /** Why the ground truth is not shown, when it is not (datasets gone or changed). */
  groundTruthError: string | null;
  /** BLADE's scores of this analysis alone (coverage over itself), null without a record. */
  scores: BladeScores | null;
  transformStage: { status: string; error: string | null; split: string; units: number } | null;
  /** BLADE's model + variables: the expert model whose variables were all matched. */
  modelCvar: string[];
  variables: DecisionRow<AgentVariableView, GtVariableView>[];
  transforms: DecisionRow<AgentTransformView, GtTransformView>[];
  model: DecisionRow<AgentModelView, GtModelView>[];
  conclusion: DecisionRow<ConclusionVerdict, TrueEffectView>[];
  /** The analysis as the agent submitted it (JSON text). */
  submitted: string | null;
}

// ---- reading the store ----

/** The dataset of a task, from the run's own datasets, refused (one line) if they changed. */
function runDataset(run: RunRow, task: number): BladeDataset | string {
  try {
    return taskDataset(storedRunSource(run), task);
  } catch (error) {
    return `the ground truth cannot be read: ${(error as Error).message.split("\n")[0]}`;
  }
}

// ---- the list ----

interface EpisodeFacts {
  run_id: string;
  task_index: number;
  outcome: string;
  reward: number;
  dataset: string | null;
  direction: string | null;
}

/** The list's figures for some runs, from the records' JSON alone (no trajectory decoded). */
function runFigures(db: SqliteDatabase, ids: readonly string[]): Map<string, EpisodeFacts[]> {
  const byRun = new Map<string, EpisodeFacts[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byRun;
  const last = (path: string) =>
    `CASE WHEN json_valid(t.steps) THEN json_extract(t.steps, '$[#-1].info.blade${path}') END`;
  const rows = db
    .prepare(
      `SELECT e.run_id, e.task_index, e.outcome, e.reward,
         ${last(".dataset")} AS dataset, ${last(".conclusion.direction")} AS direction
       FROM episodes e LEFT JOIN trajectories t ON t.episode_id = e.id
       WHERE e.run_id IN (${ids.map(() => "?").join(",")})`,
    )
    .all(...ids) as EpisodeFacts[];
  for (const row of rows) byRun.get(row.run_id)?.push(row);
  return byRun;
}

/**
 * The list's figures of one run, counted as the report counts them: an analysis that submitted
 * nothing scores 0 and, on a dataset with a known effect, concluded nothing.
 */
function summarise(facts: readonly EpisodeFacts[]) {
  const finished = facts.filter((f) => f.outcome === "success" || f.outcome === "failure");
  const datasetOfTask = new Map<number, string>();
  for (const f of finished) if (f.dataset) datasetOfTask.set(f.task_index, f.dataset);
  const withEffect = new Set(
    finished.filter((f) => f.direction !== null).map((f) => datasetOfTask.get(f.task_index)),
  );
  const judged = finished.filter(
    (f) =>
      f.direction !== null ||
      (f.dataset === null && withEffect.has(datasetOfTask.get(f.task_index))),
  );
  return {
    datasets: [...new Set(datasetOfTask.values())].sort(),
    episodes: facts.length,
    analyses: finished.length,
    errored: facts.filter((f) => f.outcome === "error").length,
    meanScore:
      finished.length === 0 ? null : finished.reduce((s, f) => s + f.reward, 0) / finished.length,
    conclusionRight: judged.filter((f) => f.direction === "right").length,
    conclusionTotal: judged.length,
  };
}

function listRuns(
  db: SqliteDatabase,
  limit: number,
  after: readonly (string | number | null)[] | undefined,
): AnalysisRunsResponse {
  const where = after ? "AND (created_at, id) < (?, ?)" : "";
  const rows = db
    .prepare(
      `SELECT id FROM runs WHERE env = 'blade' ${where}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .pluck()
    .all(...(after ?? []), limit + 1) as string[];
  const store = runStoreOn(db);
  const runs = rows.map((id) => store.getRun(id) as RunRow);
  const figures = runFigures(db, rows.slice(0, limit));
  const items = runs.map(
    (run): AnalysisRunItem => ({
      id: run.id,
      agent: run.agent,
      envVersion: run.envVersion,
      status: runState(run),
      createdAt: run.createdAt,
      ...summarise(figures.get(run.id) ?? []),
    }),
  );
  return page(items, limit, (item) => [item.createdAt, item.id]);
}

// ---- one run ----

/** One analysis's row: `reported` is how the run's report takes it (kind, dataset, record). */
function analysisRow({ episode }: StoredAnalysis, reported: ReportedAnalysis): AnalysisRow {
  const record = reported.kind === "scored" ? reported.record : undefined;
  return {
    episode: episode.id,
    task: episode.taskIndex,
    sample: episode.sampleIndex,
    dataset: reportedDataset(reported),
    kind: reported.kind,
    outcome: episode.outcome,
    score: reported.kind === "errored" ? null : episode.reward,
    error: episode.error,
    matched: record
      ? {
          variables: {
            agent: record.cvars.agent.filter((a) => a.matched).length,
            agentOf: record.cvars.agent.length,
            gt: record.cvars.matchedGt.length,
            gtOf: record.cvars.matchedGt.length + record.cvars.unmatchedGt.length,
          },
          model: record.run.matchedModels.length > 0,
          modelCvar: record.modelCvar.length > 0,
          transformsValue: {
            gt: record.transforms.gt.filter((t) => t.value).length,
            agent: record.transforms.agent.filter((t) => t.value).length,
          },
          transformsGraph: {
            gt: record.transforms.gt.filter((t) => t.graph).length,
            agent: record.transforms.agent.filter((t) => t.graph).length,
          },
          transformsGt: record.transforms.gt.length,
          transformsAgent: record.transforms.agent.length,
          transformStatus: record.transforms.status,
          conclusion: record.conclusion?.direction ?? null,
        }
      : null,
  };
}

function runResponse(store: RunStore, run: RunRow): AnalysisRunResponse {
  const stored = storedAnalyses(store, run.id);
  const reported = reportedAnalyses(stored);
  let report: BladeReport | null = null;
  let reportError: string | null = null;
  if (!stored.some((analysis) => !analysis.errored)) {
    reportError = "no finished analysis yet";
  } else {
    try {
      report = buildBladeReport(reported);
    } catch (error) {
      reportError = (error as Error).message.split("\n")[0] ?? "the report failed";
    }
  }
  const { dir, runtime } = storedRunConfig(run.config);
  return {
    run: {
      id: run.id,
      agent: run.agent,
      envVersion: run.envVersion,
      status: runState(run),
      createdAt: run.createdAt,
      updatedAt: run.updatedAt,
      datasetsDir: dir === OWN_DATASETS_DIR ? "clade's own datasets" : dir,
      runtime: defaultRuntime(dir, runtime),
    },
    report,
    reportError,
    analyses: stored.map((analysis, i) => analysisRow(analysis, reported[i] as ReportedAnalysis)),
  };
}

// ---- one analysis: the agent's decisions beside the ground truth's ----

const mappingText = (mapping: readonly (readonly [readonly string[], string])[]): string[] =>
  mapping.map(
    ([inputs, output]) => `${inputs.join(", ")} → ${output === "" ? "(in place)" : output}`,
  );

const kindsText = (k: MatchKinds): string =>
  k.value && k.graph ? "by value and by graph" : k.value ? "by value" : k.graph ? "by graph" : "";

function variableRows(
  dataset: BladeDataset | undefined,
  analysis: Analysis | undefined,
  record: BladeRecord,
): DecisionRow<AgentVariableView, GtVariableView>[] {
  const gtSpecs = dataset?.groundTruth.cvars ?? [];
  const gtRoles = new Set(gtSpecs.map(gtCvarRole));
  const agentEntries: AgentCvarEntry[] = analysis ? agentCvarEntries(analysis.cvars) : [];
  const agent = agentEntries.map(
    (entry): AgentVariableView => ({
      index: entry.index,
      role: entry.role,
      description: entry.description,
      columns: entry.columns,
      text: entry.text,
      judged: gtRoles.size === 0 || gtRoles.has(entry.role),
    }),
  );
  const gt = gtSpecs.map(
    (spec, index): GtVariableView => ({
      index,
      specId: spec.specId,
      role: gtCvarRole(spec),
      concept: spec.concept,
      text: gtCvarText(spec),
      columns: [...spec.columnsOrig, ...spec.columnsDerived],
      rationale: spec.rationale,
      annotator: spec.annotator,
    }),
  );
  const rows: DecisionRow<AgentVariableView, GtVariableView>[] = [];
  const pairedAgent = new Set<number>();
  const pairedGt = new Set<number>();
  const pairs = record.cvars.pairs.filter((p) => p.similarity >= MATCH_THRESHOLD);
  for (const role of CVAR_GROUPS) {
    for (const pair of pairs.filter((p) => p.role === role)) {
      const a = agent[pair.agentIndex];
      const g = gt[pair.gtIndex];
      if (!a || !g) continue;
      pairedAgent.add(a.index);
      pairedGt.add(g.index);
      rows.push({
        agent: a,
        gt: g,
        matched: true,
        how: `similarity ${pair.similarity}: ${pair.rationale}`,
      });
    }
    for (const a of agent.filter((v) => v.role === role && !pairedAgent.has(v.index))) {
      rows.push({
        agent: a,
        gt: null,
        matched: false,
        how: a.judged
          ? "no expert variable of this role shares its columns"
          : "role not in the ground truth: not judged",
      });
    }
    for (const g of gt.filter((v) => v.role === role && !pairedGt.has(v.index))) {
      rows.push({ agent: null, gt: g, matched: false, how: "no agent variable matched it" });
    }
  }
  // Without the analysis or the ground truth, the record's texts are all there is.
  if (agent.length === 0) {
    for (const a of record.cvars.agent) {
      rows.push({
        agent: {
          index: -1,
          role: roleOfText(a.text),
          description: a.text,
          columns: [],
          text: a.text,
          judged: true,
        },
        gt: null,
        matched: a.matched,
        how: a.matched ? "matched" : "unmatched",
      });
    }
  }
  return rows;
}

function roleOfText(text: string): CvarGroup {
  const role = text.split(":")[0];
  return role === "IV" || role === "DV" || role === "Moderator" ? role : "Control";
}

function kindsOf(outcomes: readonly SpecOutcome[]): MatchKinds {
  return { value: outcomes.some((o) => o.value), graph: outcomes.some((o) => o.graph) };
}

/**
 * The agent's expanded specs by unit: the record lists them in unit order, `node_<i>_<verb>`
 * for whole-frame units and `<verb>_<column>` for the others (transform-graph.ts's names).
 */
function outcomesByUnit(units: readonly TransformUnit[], outcomes: readonly SpecOutcome[]) {
  const byUnit = units.map((): SpecOutcome[] => []);
  let current = 0;
  for (const outcome of outcomes) {
    const node = /^node_(\d+)_/.exec(outcome.name);
    let index = node ? Number(node[1]) : -1;
    if (index < 0) {
      const verb = outcome.verb === "post_groupby" ? "groupby" : outcome.verb;
      const column = outcome.name.slice(outcome.verb.length + 1);
      index = units.findIndex(
        (u, i) =>
          i >= current &&
          (u.verb === verb || (verb === "groupby" && u.groupbyCols.length > 0)) &&
          u.mapping.some(([, out]) => out === column || out === "ALL"),
      );
    }
    if (index >= 0 && index < byUnit.length) {
      byUnit[index]?.push(outcome);
      current = index;
    }
  }
  return byUnit;
}

/** Why the transforms were not compared, in words (BLADE's run statuses). */
const STAGE_TEXT: Record<BladeRecord["transforms"]["status"], string> = {
  matched: "compared",
  LM_SUBMISSION_TRANSFORM_CODE_EMPTY: "the agent gave no transforms",
  LM_SUBMISSION_EXECUTION_FAILED: "the agent's transforms failed to run",
  LM_SUBMISSION_CONVERSION_FAILED: "the agent's transforms could not be converted to units",
};

function transformRows(
  dataset: BladeDataset | undefined,
  analysis: Analysis | undefined,
  record: BladeRecord,
): DecisionRow<AgentTransformView, GtTransformView>[] {
  const runtime = record.runtime;
  const compared = record.transforms.status === "matched";
  let units: TransformUnit[] = [];
  if (analysis?.transformUnits) units = analysis.transformUnits;
  else if (analysis && analysis.transformCode.trim() !== "" && dataset) {
    // The offline split the scoring used (a split by a judge model is not repeated here).
    units =
      record.transforms.split === "offline"
        ? splitTransformCode(analysis.transformCode, runtime, dataset.fieldNames)
        : [{ verb: "derive", code: analysis.transformCode, mapping: [], groupbyCols: [] }];
  }
  const unitOutcomes = outcomesByUnit(units, record.transforms.agent);
  const agent = units.map(
    (unit, index): AgentTransformView => ({
      index,
      verb: unit.verb,
      code: unit.code,
      mapping: mappingText(unit.mapping),
      expanded: unitOutcomes[index] ?? [],
      ...kindsOf(unitOutcomes[index] ?? []),
    }),
  );
  const specs = (dataset?.groundTruth.transforms ?? []).filter((s) => s.specId !== ROOT_SPEC_ID);
  const nameOf = new Map(specs.map((s) => [s.specId, s.specName]));
  const gt = specs.map((spec): GtTransformView => {
    const names = expandedUnitNames(spec);
    const expanded = record.transforms.gt.filter((o) => names.includes(o.name));
    return {
      specId: spec.specId,
      name: spec.specName,
      verb: spec.verb ?? "",
      specification: spec.specification,
      code: (runtime === "sql" ? spec.codeSql : undefined) ?? spec.code,
      rationale: spec.rationale,
      mapping: mappingText(spec.mapping),
      after: spec.branches.map((b) =>
        b.dependencies.filter((d) => d !== ROOT_SPEC_ID).map((d) => nameOf.get(d) ?? d),
      ),
      expanded,
      annotator: spec.annotator,
      ...kindsOf(expanded),
    };
  });
  // Pair a matched unit with a matched expert transform of the same verb on the same columns.
  const columnsOf = (verb: string, mapping: readonly (readonly [readonly string[], string])[]) => {
    const whole = WHOLE_FRAME_VERBS.includes(verb);
    const cols = mapping.flatMap(([inputs, output]) =>
      whole || output === "" || output === "ALL" ? inputs : [output],
    );
    return [...new Set(cols)].sort().join(",");
  };
  const rows: DecisionRow<AgentTransformView, GtTransformView>[] = [];
  const pairedGt = new Set<string>();
  for (const [i, a] of agent.entries()) {
    const unit = units[i] as TransformUnit;
    const partner = gt.find(
      (g, j) =>
        !pairedGt.has(g.specId) &&
        g.verb === a.verb &&
        ((a.value && g.value) || (a.graph && g.graph)) &&
        columnsOf(g.verb, (specs[j] as TransformSpec).mapping) ===
          columnsOf(unit.verb, unit.mapping),
    );
    if (partner) {
      pairedGt.add(partner.specId);
      const both = { value: a.value && partner.value, graph: a.graph && partner.graph };
      rows.push({
        agent: a,
        gt: partner,
        matched: true,
        how: `${kindsText(both)}; same verb and columns`,
      });
    } else {
      rows.push({
        agent: a,
        gt: null,
        matched: a.value || a.graph,
        how: !compared
          ? `not compared: ${STAGE_TEXT[record.transforms.status]}`
          : a.value || a.graph
            ? `${kindsText(a)} (through shared columns; no single expert transform)`
            : "no expert transform gives the same columns",
      });
    }
  }
  for (const g of gt.filter((g) => !pairedGt.has(g.specId))) {
    rows.push({
      agent: null,
      gt: g,
      matched: g.value || g.graph,
      how: !compared
        ? `not compared: ${STAGE_TEXT[record.transforms.status]}`
        : g.value || g.graph
          ? `${kindsText(g)} (through shared columns)`
          : "not matched by any of the agent's transforms",
    });
  }
  return rows;
}

function fitText(fit: BladeRecord["model"]["fit"]): string {
  if (!fit) return "not fitted";
  return fit.ok
    ? `${fit.family}/${fit.link}: ${fit.dv} ~ ${fit.terms.join(" + ")}`
    : `did not fit: ${fit.error}`;
}

function modelRows(
  dataset: BladeDataset | undefined,
  analysis: Analysis | undefined,
  record: BladeRecord,
): DecisionRow<AgentModelView, GtModelView>[] {
  const agent: AgentModelView = {
    specification: record.model.specification,
    code: analysis?.modelCode ?? "",
    fit: fitText(record.model.fit),
  };
  const runtime = record.runtime;
  const models = dataset?.groundTruth.models ?? [];
  const rows: DecisionRow<AgentModelView, GtModelView>[] = [];
  let placed = false;
  for (const [index, spec] of models.entries()) {
    const decision = record.model.decisions.find((d) => d.gtIndices.includes(index));
    const gt: GtModelView = {
      index,
      specId: spec.specId,
      name: spec.specName,
      specification: spec.specification,
      code: (runtime === "sql" ? spec.codeSql : undefined) ?? spec.code,
      rationale: spec.rationale,
      columns: [...spec.columnsOrig, ...spec.columnsDerived],
      annotator: spec.annotator,
    };
    // The rules' rationale names them ("rules: ..."); a judge's is its own words.
    const how = !decision
      ? "not compared"
      : decision.by === "none"
        ? "undecided by the rules (no judge model)"
        : decision.by === "judge"
          ? `judge: ${decision.rationale}`
          : decision.rationale;
    if (decision?.matched) {
      // The agent's one model matched each of these: it stands beside every one.
      rows.push({ agent, gt, matched: true, how });
      placed = true;
    } else {
      rows.push({ agent: null, gt, matched: false, how });
    }
  }
  if (!placed) {
    rows.unshift({ agent, gt: null, matched: false, how: "matches no expert model" });
  }
  return rows;
}

function conclusionRows(
  dataset: BladeDataset | undefined,
  record: BladeRecord,
): DecisionRow<ConclusionVerdict, TrueEffectView>[] {
  const truth = dataset?.trueEffect;
  const verdict = record.conclusion;
  if (!truth && !verdict) return [];
  const gt: TrueEffectView | null = truth
    ? {
        iv: truth.iv,
        dv: truth.dv,
        direction: truth.direction,
        sizes: truth.sizes.map(
          (s) => `${s.value} ± ${s.tolerance} on the ${s.family}/${s.link} scale`,
        ),
        process: truth.process,
      }
    : null;
  const right = verdict?.direction === "right";
  return [
    {
      agent: verdict ?? null,
      gt,
      matched: right,
      how: verdict
        ? `direction ${verdict.direction}; size ${verdict.size}`
        : "no conclusion (no fitted model)",
    },
  ];
}

function analysisResponse(
  store: RunStore,
  run: RunRow,
  episode: StoredEpisode,
): AnalysisResponse | undefined {
  const stored = storedAnalysis(store, episode);
  if (!stored) return undefined;
  const found = runDataset(run, episode.taskIndex);
  const dataset = typeof found === "string" ? undefined : found;
  // Its kind and record as the run's report takes it (named here by its own dataset alone).
  const reported = reportedAnalysis(stored, dataset?.name ?? `task ${episode.taskIndex}`);
  const record = reported.kind === "scored" ? reported.record : undefined;
  let analysis: Analysis | undefined;
  if (stored.submitted !== undefined) {
    try {
      analysis = parseAnalysisText(stored.submitted, `episode ${episode.id}`);
    } catch {
      analysis = undefined; // an unparsable submission was never scored: no record either
    }
  }
  const base = {
    run: { id: run.id, agent: run.agent, envVersion: run.envVersion },
    episode: {
      id: episode.id,
      task: episode.taskIndex,
      sample: episode.sampleIndex,
      outcome: episode.outcome,
      reward: episode.reward,
      error: episode.error,
      endReason: episode.endReason,
    },
    kind: reported.kind,
    dataset: record?.dataset ?? dataset?.name ?? null,
    question: dataset?.questions[0] ?? null,
    groundTruthError: typeof found === "string" ? found : null,
    submitted: stored.submitted ?? null,
  };
  if (!record) {
    return {
      ...base,
      scores: null,
      transformStage: null,
      modelCvar: [],
      variables: [],
      transforms: [],
      model: [],
      conclusion: [],
    };
  }
  return {
    ...base,
    scores: bladeScores(new Map([[record.dataset, [record.run]]]), { k: 1 }),
    transformStage: {
      status: record.transforms.status,
      error: record.transforms.error ?? null,
      split: record.transforms.split,
      units: record.transforms.units,
    },
    modelCvar: record.modelCvar,
    variables: variableRows(dataset, analysis, record),
    transforms: transformRows(dataset, analysis, record),
    model: modelRows(dataset, analysis, record),
    conclusion: conclusionRows(dataset, record),
  };
}

// ---- routes ----

const runParam = z.object({ run: z.string().min(1) });
const episodeParam = runParam.extend({
  id: z.string().regex(/^\d+$/, "must be an episode id (a number)").transform(Number),
});

function bladeRun(store: RunStore, id: string): RunRow | string {
  const run = store.getRun(id);
  if (!run) return `no run "${id}"`;
  if (run.env !== "blade") return `run "${id}" is a ${run.env} run, not blade`;
  return run;
}

function routes(view: StoreView): Hono {
  return new Hono()
    .get("/analyses", valid("query", pageQuery), (c) => {
      const { limit, cursor } = c.req.valid("query");
      const after = cursor === undefined ? undefined : decodeCursor(cursor, 2);
      if (cursor !== undefined && after === undefined) {
        return c.json({ error: "query.cursor: not a cursor of this list" }, 400);
      }
      const db = view.db;
      if (!db) return c.json({ items: [], nextCursor: null } satisfies AnalysisRunsResponse);
      return c.json(listRuns(db, limit, after));
    })
    .get("/analyses/:run", valid("param", runParam), (c) => {
      const db = view.db;
      const id = c.req.valid("param").run;
      if (!db) return c.json({ error: `no run "${id}"` }, 404);
      const store = runStoreOn(db);
      const run = bladeRun(store, id);
      if (typeof run === "string") return c.json({ error: run }, 404);
      return c.json(runResponse(store, run));
    })
    .get("/analyses/:run/episodes/:id", valid("param", episodeParam), (c) => {
      const db = view.db;
      const { run: runId, id } = c.req.valid("param");
      if (!db) return c.json({ error: `no run "${runId}"` }, 404);
      const store = runStoreOn(db);
      const run = bladeRun(store, runId);
      if (typeof run === "string") return c.json({ error: run }, 404);
      const episode = store.episode(id);
      if (!episode || episode.runId !== run.id)
        return c.json({ error: `no episode ${id} in run "${run.id}"` }, 404);
      const body = analysisResponse(store, run, episode);
      if (!body) {
        return c.json(
          { error: `episode ${id} has not finished (${episode.outcome}): no analysis yet` },
          404,
        );
      }
      return c.json(body);
    });
}

/** Every address the Analyses pages ask for about the chosen blade runs. */
function bundle(db: SqliteDatabase, chosen: Chosen): string[] {
  const ids = (
    db
      .prepare("SELECT id FROM runs WHERE env = 'blade' ORDER BY created_at DESC, id DESC")
      .pluck()
      .all() as string[]
  ).filter((id) => chosen === "all" || chosen.has(id));
  if (ids.length === 0) return [];
  const addresses = [apiPath("/analyses")];
  const episodes = db.prepare(
    "SELECT id FROM episodes WHERE run_id = ? AND outcome IN ('success', 'failure', 'error') ORDER BY task_index, sample_index",
  );
  for (const id of ids) {
    addresses.push(apiPath(runAddress(id)));
    for (const episode of episodes.pluck().all(id) as number[]) {
      addresses.push(apiPath(episodeAddress(id, episode)));
    }
  }
  return addresses;
}

/** The API addresses of a run and of one of its analyses (pages/analyses spells them the same). */
const runAddress = (run: string): string => `/analyses/${encodeURIComponent(run)}`;
const episodeAddress = (run: string, episode: number): string =>
  `${runAddress(run)}/episodes/${episode}`;

export const analysesApi: ApiModule = { routes, bundle };
