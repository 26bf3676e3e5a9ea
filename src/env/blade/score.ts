/**
 * Scoring one analysis against its dataset's ground truth: transforms by value and data-flow
 * graph (executed in the sandbox), the model by rules, the variables by the offline rule, the
 * model with its variables, and, on clade's own datasets, the conclusion. Every part a model
 * could decide better can be handed a model role (eval/blade) through ScoringOptions; without
 * one the decision is the offline one and the record says so.
 *
 * Untrusted code never shares a process with trusted code: the experts' transforms run in a
 * session of their own (their states are cached per dataset and runtime), the agent's in another.
 */
import type { SandboxMode } from "../../sandbox/index.js";
import { hashFrame } from "./column-hash.js";
import { type ConclusionVerdict, judgeConclusion } from "./conclusion.js";
import {
  agentCvarEntries,
  type ColumnLineage,
  type CvarMatch,
  gtCvarText,
  matchCvarsOffline,
} from "./cvar-match.js";
import {
  type CanonicalModel,
  canonicalFromCall,
  canonicalFromFitted,
  canonicalModel,
  compareModels,
} from "./model-canon.js";
import { parseModelCall } from "./model-formula.js";
import {
  decideModelsByRules,
  type ModelDecision,
  matchedIndices,
  normaliseSpecification,
  uniqueModels,
} from "./model-match.js";
import { openSession } from "./runtime/index.js";
import type { AnalysisSession, FittedModel, RuntimeLimits, RuntimeName } from "./runtime/types.js";
import { bladeScores, type RunMatch } from "./scores.js";
import type { Analysis, BladeDataset, ModelSpec, TransformUnit } from "./specs.js";
import { splitTransformCode } from "./split-units.js";
import { codeInsideFunction } from "./submission.js";
import { agentTransforms, groundTruthTransforms, type TransformStates } from "./transform-graph.js";
import { matchTransforms, type SpecMatchDetail } from "./transform-match.js";

/** Model roles and limits for scoring; each role replaces the offline decision it names. */
export interface ScoringOptions {
  limits?: Partial<RuntimeLimits>;
  mode?: SandboxMode;
  /**
   * Splits monolithic transform code into units; undefined leaves it to the default
   * (split-units.ts, by statement).
   */
  splitTransforms?: (
    code: string,
    dataset: BladeDataset,
    runtime: RuntimeName,
  ) => Promise<TransformUnit[] | undefined>;
  /** Decides the models the rules leave undecided (default: they stay unmatched). */
  judgeModels?: (
    gt: readonly ModelSpec[],
    agentSpecification: string,
    rules: ModelDecision[],
  ) => Promise<ModelDecision[]>;
  /** Matches the variables (default: the offline rule on roles and columns). */
  matchCvars?: (dataset: BladeDataset, analysis: Analysis) => Promise<CvarMatch>;
  /** Names a Python model in words when the agent did not (default: from the fitted model). */
  describeModel?: (code: string, dataset: BladeDataset) => Promise<string>;
}

/** How the agent's transform stage went (BLADE's run statuses for it). */
export type TransformStatus =
  | "matched"
  | "LM_SUBMISSION_EXECUTION_FAILED"
  | "LM_SUBMISSION_CONVERSION_FAILED"
  | "LM_SUBMISSION_TRANSFORM_CODE_EMPTY";

export interface SpecOutcome {
  name: string;
  verb: string;
  value: boolean;
  graph: boolean;
}

/** What an episode stores of its scoring (JSON), for `clade blade report` and the viewer. */
export interface BladeRecord {
  dataset: string;
  runtime: RuntimeName;
  score: number;
  run: RunMatch;
  transforms: {
    status: TransformStatus;
    error?: string;
    /** "units" when the agent gave them, else how the code was split. */
    split: "units" | "offline" | "model" | "none";
    units: number;
    gt: SpecOutcome[];
    agent: SpecOutcome[];
  };
  model: {
    specification: string;
    canonical?: CanonicalModel;
    fit?:
      | { ok: true; family: string; link: string; dv: string; terms: string[] }
      | { ok: false; error: string };
    decisions: ModelDecision[];
  };
  cvars: {
    method: CvarMatch["method"];
    pairs: CvarMatch["pairs"];
    matchedGt: string[];
    unmatchedGt: string[];
    agent: { text: string; matched: boolean }[];
  };
  modelCvar: string[];
  conclusion?: ConclusionVerdict;
}

export interface BladeScore {
  /** BLADE's weighted score of this analysis alone (coverage over this one run). */
  score: number;
  record: BladeRecord;
}

const groundTruthCache = new Map<string, Promise<TransformStates>>();

/** The experts' transform states of a dataset on a runtime, computed once per process. */
export function groundTruthStates(
  dataset: BladeDataset,
  runtime: RuntimeName,
  options: Pick<ScoringOptions, "limits" | "mode"> = {},
): Promise<TransformStates> {
  const key = `${dataset.dir}\n${runtime}`;
  let states = groundTruthCache.get(key);
  if (!states) {
    states = (async () => {
      const session = await openSession({
        runtime,
        dataset,
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.mode ? { mode: options.mode } : {}),
      });
      try {
        return await groundTruthTransforms(
          dataset,
          (scripts) => session.runScripts(scripts),
          (frame) => hashFrame(frame),
          { language: runtime },
        );
      } finally {
        await session.close();
      }
    })();
    groundTruthCache.set(key, states);
    states.catch(() => groundTruthCache.delete(key));
  }
  return states;
}

/** Column → the original data columns it was derived from, following unit mappings in order. */
export function columnLineage(
  mappings: readonly (readonly [readonly string[], string])[],
  dataColumns: readonly string[],
): ColumnLineage {
  const lineage: ColumnLineage = {};
  for (const column of dataColumns) lineage[column] = [column];
  for (const [inputs, output] of mappings) {
    if (output === "" || output === "ALL") continue;
    const sources = new Set<string>();
    for (const input of inputs) for (const s of lineage[input] ?? []) sources.add(s);
    // An in-place rewrite keeps its own origin too.
    for (const s of lineage[output] ?? []) sources.add(s);
    lineage[output] = [...sources].sort();
  }
  return lineage;
}

function specOutcomes(details: readonly SpecMatchDetail[]): SpecOutcome[] {
  return details
    .filter((d) => d.name !== "ROOT")
    .map((d) => ({
      name: d.name,
      verb: d.verb ?? "",
      value: d.matchedByValue,
      graph: d.matchedByGraph,
    }));
}

/** The model in words, for BLADE's comparison: the agent's own, else read off its code. */
function describeCanonical(model: CanonicalModel | undefined): string {
  if (!model?.family) return "";
  const link = model.link ? ` with ${model.link} link` : "";
  return `${model.family} GLM${link}`;
}

interface AgentModel {
  specification: string;
  canonical: CanonicalModel | undefined;
  fit: BladeRecord["model"]["fit"];
  fitted: FittedModel | undefined;
}

async function agentModel(
  session: AnalysisSession,
  runtime: RuntimeName,
  analysis: Analysis,
  transformScript: string,
  dataset: BladeDataset,
  options: ScoringOptions,
): Promise<AgentModel> {
  const code =
    runtime === "python"
      ? codeInsideFunction(analysis.modelCode, "model", false)
      : analysis.modelCode;
  let canonical: CanonicalModel | undefined;
  if (runtime === "sql") {
    try {
      canonical = canonicalFromCall(parseModelCall(code));
    } catch {
      canonical = undefined; // the fit below reports why
    }
  }
  let fit: AgentModel["fit"];
  let fitted: FittedModel | undefined;
  if (code.trim() === "") {
    fit = { ok: false, error: "no model code" };
  } else {
    const outcome = await session.fitModel(transformScript, code);
    if (outcome.ok) {
      fitted = outcome.model;
      canonical ??= canonicalFromFitted(outcome.model);
      fit = {
        ok: true,
        family: outcome.model.family,
        link: outcome.model.link,
        dv: outcome.model.dv,
        terms: outcome.model.terms,
      };
    } else {
      fit = { ok: false, error: outcome.error };
    }
  }
  let specification = analysis.modelSpecification?.trim() ?? "";
  if (specification === "" && options.describeModel && runtime === "python" && code.trim() !== "") {
    specification = await options.describeModel(code, dataset);
  }
  if (specification === "") specification = describeCanonical(canonical);
  return { specification, canonical, fit, fitted };
}

/**
 * BLADE's model_cvar for one run: the first matched ground-truth model whose associated
 * variables (those sharing a column with it) are all matched, as "<spec name> | <variables>".
 */
function modelWithVariables(
  dataset: BladeDataset,
  matchedModelIndices: readonly number[],
  matchedGtTexts: ReadonlySet<string>,
): string[] {
  for (const index of matchedModelIndices) {
    const model = dataset.groundTruth.models[index] as ModelSpec;
    const columns = new Set([...model.columnsOrig, ...model.columnsDerived]);
    const associated = dataset.groundTruth.cvars.filter((c) =>
      [...c.columnsOrig, ...c.columnsDerived].some((col) => columns.has(col)),
    );
    if (associated.length === 0) continue;
    const texts = associated.map(gtCvarText);
    if (texts.every((t) => matchedGtTexts.has(t))) {
      return [`${model.specName} | ${[...new Set(texts)].sort().join(", ")}`];
    }
  }
  return [];
}

/** Scores one analysis of a dataset. Throws only when the ground truth or a runtime fails. */
export async function scoreAnalysis(
  dataset: BladeDataset,
  analysis: Analysis,
  runtime: RuntimeName,
  options: ScoringOptions = {},
): Promise<BladeScore> {
  const gtStates = await groundTruthStates(dataset, runtime, options);

  // The agent's units: given, split by a model role, or split offline.
  let units: TransformUnit[];
  let split: BladeRecord["transforms"]["split"];
  const code =
    runtime === "python"
      ? codeInsideFunction(analysis.transformCode, "transform", true)
      : analysis.transformCode;
  if (analysis.transformUnits) {
    units = analysis.transformUnits;
    split = "units";
  } else if (code.trim() === "") {
    units = [];
    split = "none";
  } else {
    const byModel = await options.splitTransforms?.(code, dataset, runtime);
    units = byModel ?? splitTransformCode(code, runtime, dataset.fieldNames);
    split = byModel ? "model" : "offline";
  }
  const joiner = runtime === "sql" ? ";\n" : "\n";
  const transformScript =
    split === "units" || split === "model" ? units.map((u) => u.code).join(joiner) : code;

  const session = await openSession({
    runtime,
    dataset,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.mode ? { mode: options.mode } : {}),
  });
  let transforms: BladeRecord["transforms"];
  let matched: ReturnType<typeof matchTransforms> | undefined;
  let model: AgentModel;
  try {
    const agent = await agentTransforms(
      units,
      (scripts) => session.runScripts(scripts),
      (frame) => hashFrame(frame),
      dataset.fieldNames,
      { language: runtime },
    );
    if (agent.ok) {
      matched = matchTransforms(gtStates, agent.states);
      transforms = {
        status: "matched",
        split,
        units: units.length,
        gt: specOutcomes(matched.gt),
        agent: specOutcomes(matched.agent),
      };
    } else {
      transforms = {
        status: agent.status,
        error: agent.error,
        split,
        units: units.length,
        gt: [],
        agent: [],
      };
    }
    model = await agentModel(session, runtime, analysis, transformScript, dataset, options);
  } finally {
    await session.close();
  }

  // The model: rules on the words (or on the code's canonical form), a judge for the rest.
  const gtModels = dataset.groundTruth.models;
  const agentText = normaliseSpecification(model.specification);
  let decisions: ModelDecision[] = decideModelsByRules(gtModels, agentText, (gtText) =>
    compareModels(canonicalModel(gtText), model.canonical ?? canonicalModel(agentText)),
  );
  if (options.judgeModels && agentText !== "" && decisions.some((d) => d.by === "none")) {
    decisions = await options.judgeModels(gtModels, agentText, decisions);
  }
  const matchedModelIndices = matchedIndices(decisions);
  const firstMatch = matchedModelIndices[0];
  const matchedModels =
    firstMatch === undefined ? [] : [(gtModels[firstMatch] as ModelSpec).specification];

  // The variables.
  const agentMappings = units.flatMap((u) => u.mapping);
  const gtMappings = dataset.groundTruth.transforms.flatMap((t) => t.mapping);
  const cvars = options.matchCvars
    ? await options.matchCvars(dataset, analysis)
    : matchCvarsOffline(dataset.groundTruth.cvars, analysis.cvars, dataset.fieldNames, {
        lineage: {
          agent: columnLineage(agentMappings, dataset.fieldNames),
          gt: columnLineage(gtMappings, dataset.fieldNames),
        },
      });
  const matchedGt = new Set(cvars.matchedGt);
  const matchedAgent = new Set(cvars.matchedAgent);
  const modelCvar = modelWithVariables(dataset, matchedModelIndices, matchedGt);

  const run: RunMatch = {
    status: "scored",
    matchedCvarsGt: [...matchedGt],
    matchedCvarsAgent: [...matchedAgent],
    agentCvarCount: cvars.agentJudgedCount,
    gtCvarCount: cvars.gtCount,
    matchedModels,
    gtModelCount: gtModels.length,
    gtModelUniqueCount: uniqueModels(gtModels).length,
    matchedModelCvar: modelCvar,
    matchedValueGt: matched ? [...matched.matchedValueGt] : [],
    matchedGraphGt: matched ? [...matched.matchedGraphGt] : [],
    matchedValueAgent: matched ? matched.matchedValueAgent : [],
    matchedGraphAgent: matched ? matched.matchedGraphAgent : [],
    gtTransformCount: countGtTransforms(gtStates),
    agentTransformCount: matched ? matched.agentCount : 0,
  };
  const score = bladeScores(new Map([[dataset.name, [run]]]), { k: 1 }).weighted;

  const ivColumns = analysis.cvars.ivs.flatMap((v) => v.columns);
  let conclusion: ConclusionVerdict | undefined;
  if (dataset.trueEffect) {
    conclusion = model.fitted
      ? judgeConclusion(model.fitted, dataset.trueEffect, ivColumns)
      : {
          direction: "undetermined",
          size: "not comparable",
          reason: `no fitted model: ${model.fit && !model.fit.ok ? model.fit.error : "none"}`,
        };
  }
  const gtTexts = [...new Set(dataset.groundTruth.cvars.map(gtCvarText))];
  const record: BladeRecord = {
    dataset: dataset.name,
    runtime,
    score,
    run,
    transforms,
    model: {
      specification: model.specification,
      ...(model.canonical ? { canonical: model.canonical } : {}),
      ...(model.fit ? { fit: model.fit } : {}),
      decisions,
    },
    cvars: {
      method: cvars.method,
      pairs: cvars.pairs,
      matchedGt: [...matchedGt],
      unmatchedGt: gtTexts.filter((t) => !matchedGt.has(t)),
      agent: agentCvarEntries(analysis.cvars).map((entry) => ({
        text: entry.text,
        matched: matchedAgent.has(entry.text),
      })),
    },
    modelCvar,
    ...(conclusion ? { conclusion } : {}),
  };
  return { score, record };
}

/** BLADE's num_tspecs1: the expanded ground-truth specs minus ROOT. */
function countGtTransforms(states: TransformStates): number {
  return Math.max(0, states.expanded.size - 1);
}
