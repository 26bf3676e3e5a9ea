/**
 * The blade reference solver: submits one expert's analysis from the ground truth. It takes the
 * expert model with the most variables, the variables sharing a column with it, and the transforms that produce the
 * derived columns they use (with their ancestors, on that expert's branches), as explicit units
 * (so no model is needed to split them). Every decision it submits is an expert's, so its hit
 * rates are at the top; its coverage is one expert's share of the merged ground truth.
 */
import { bladeSourceOf } from "../../env/blade/index.js";
import type { RuntimeName } from "../../env/blade/runtime/types.js";
import {
  type BladeDataset,
  type ConceptualVarSpec,
  type ModelSpec,
  ROOT_SPEC_ID,
  type TransformSpec,
  UNIT_VERBS,
  type UnitVerb,
} from "../../env/blade/specs.js";
import { taskDataset } from "../../env/blade/tasks.js";
import { specCode } from "../../env/blade/transform-paths.js";
import type { Agent, AgentReply, ReferenceSolver } from "../types.js";

/** BLADE verbs that are not unit verbs, as the closest unit verb. */
const AS_UNIT_VERB: Record<string, UnitVerb> = {
  slice: "filter",
  other_impact_rows: "filter",
  other: "derive",
  other_impact_cols: "derive",
  post_groupby: "groupby",
};

function unitVerb(spec: TransformSpec): UnitVerb {
  const verb = spec.verb ?? "derive";
  return (UNIT_VERBS as readonly string[]).includes(verb)
    ? (verb as UnitVerb)
    : (AS_UNIT_VERB[verb] ?? "derive");
}

function unitMapping(spec: TransformSpec, verb: UnitVerb): [string[], string][] {
  return spec.mapping.map(([inputs, output]): [string[], string] => {
    if (output !== "") return [inputs, output];
    if (verb === "filter" || verb === "orderby") return [inputs, "ALL"];
    return [inputs, inputs[0] ?? "ALL"];
  });
}

/** A variable's columns as the model uses them, else its derived ones, else its original ones. */
function variableColumns(cvar: ConceptualVarSpec, modelColumns: ReadonlySet<string>): string[] {
  const used = [...cvar.columnsDerived, ...cvar.columnsOrig].filter((c) => modelColumns.has(c));
  if (used.length > 0) return used;
  return cvar.columnsDerived.length > 0 ? cvar.columnsDerived : cvar.columnsOrig;
}

/**
 * The transforms an expert's analysis needs: the specs that produce the given derived columns
 * (the expert's own producer first), with their ancestors, taking at each spec with several
 * branches the one whose parents are the expert's (else the first), in dependency order (file
 * order among independent specs).
 */
export function expertTransforms(
  transforms: readonly TransformSpec[],
  expert: string,
  derivedColumns: readonly string[],
): string[] {
  const byId = new Map(transforms.map((spec) => [spec.specId, spec]));
  const position = new Map(transforms.map((spec, i) => [spec.specId, i]));
  const producers = (column: string) =>
    transforms.filter((spec) => spec.mapping.some(([, output]) => output === column));
  const parents = new Map<string, string[]>();
  const visit = (spec: TransformSpec) => {
    if (parents.has(spec.specId)) return;
    const expertBranch = spec.branches.find((b) =>
      b.dependencies.every((d) => d === ROOT_SPEC_ID || byId.get(d)?.annotator === expert),
    );
    const branch = expertBranch ?? spec.branches[0];
    const deps = (branch?.dependencies ?? []).filter((d) => byId.has(d));
    parents.set(spec.specId, deps);
    for (const dep of deps) visit(byId.get(dep) as TransformSpec);
  };
  for (const column of new Set(derivedColumns)) {
    const candidates = producers(column);
    const chosen = candidates.find((spec) => spec.annotator === expert) ?? candidates[0];
    if (chosen) visit(chosen);
  }
  // Kahn's algorithm, taking the earliest spec in the file among those ready.
  const ordered: string[] = [];
  const done = new Set<string>();
  const waiting = [...parents.keys()].sort(
    (a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0),
  );
  while (waiting.length > 0) {
    const next = waiting.findIndex((id) => (parents.get(id) ?? []).every((d) => done.has(d)));
    const [id] = waiting.splice(next < 0 ? 0 : next, 1) as [string];
    done.add(id);
    ordered.push(id);
  }
  return ordered;
}

const columnsOf = (model: ModelSpec | undefined): Set<string> =>
  new Set([...(model?.columnsOrig ?? []), ...(model?.columnsDerived ?? [])]);

/** The variables sharing a column with a model (BLADE's associated variables). */
function associatedVariables(
  cvars: readonly ConceptualVarSpec[],
  columns: ReadonlySet<string>,
): ConceptualVarSpec[] {
  return cvars.filter((c) =>
    [...c.columnsOrig, ...c.columnsDerived].some((col) => columns.has(col)),
  );
}

/**
 * The expert model with the most associated variables (the first of those in the file): the
 * fullest analysis. BLADE's files often list a test or a bare model first (affairs: a Fisher
 * exact test with one variable on each side), which would leave most expert decisions unmade.
 */
function fullestModel(
  models: readonly ModelSpec[],
  cvars: readonly ConceptualVarSpec[],
): ModelSpec | undefined {
  let best: ModelSpec | undefined;
  let most = -1;
  for (const model of models) {
    const count = associatedVariables(cvars, columnsOf(model)).length;
    if (count > most) {
      best = model;
      most = count;
    }
  }
  return best;
}

/** The expert analysis the reference submits, as BLADE's submission JSON. */
export function expertAnalysis(
  dataset: BladeDataset,
  runtime: RuntimeName,
): Record<string, unknown> {
  const gt = dataset.groundTruth;
  const model = fullestModel(gt.models, gt.cvars);
  const expert = model?.annotator ?? "";
  const modelColumns = columnsOf(model);
  const associated = associatedVariables(gt.cvars, modelColumns);
  const cvars = associated.length > 0 ? associated : gt.cvars;
  // Only derived columns call for transforms: an original column the model uses is there as read.
  const order = expertTransforms(gt.transforms, expert, [
    ...(model?.columnsDerived ?? []),
    ...cvars.flatMap((c) => c.columnsDerived.filter((col) => modelColumns.has(col))),
  ]);
  const byId = new Map(gt.transforms.map((spec) => [spec.specId, spec]));
  const language = runtime === "sql" ? "sql" : "python";
  const units: Record<string, unknown>[] = [];
  for (const id of order) {
    const spec = byId.get(id);
    if (!spec || id === ROOT_SPEC_ID) continue;
    const code = specCode(spec, language);
    if (code.trim() === "") continue;
    const previous = units.at(-1);
    // A groupby spec and the aggregation after it are one unit (BLADE's groupby units).
    if (previous && previous.verb === "groupby" && spec.verb === "post_groupby") {
      previous.code = `${previous.code}${language === "sql" ? ";\n" : "\n"}${code}`;
      previous.mapping = unitMapping(spec, "groupby");
      continue;
    }
    const verb = unitVerb(spec);
    units.push({
      verb,
      code,
      mapping: verb === "groupby" ? [] : unitMapping(spec, verb),
      groupby_cols: verb === "groupby" ? [...new Set(spec.mapping.flatMap(([i]) => i))] : [],
    });
  }

  const ivs = cvars.filter((c) => c.role === "IV");
  const dv = cvars.find((c) => c.role === "DV") ?? gt.cvars.find((c) => c.role === "DV");
  const controls = cvars.filter((c) => c.role === "Control");
  const modelCode = model ? (runtime === "sql" ? (model.codeSql ?? "") : model.code) : "";
  return {
    cvars: {
      ivs: ivs.map((c) => ({ description: c.concept, columns: variableColumns(c, modelColumns) })),
      dv: dv
        ? { description: dv.concept, columns: variableColumns(dv, modelColumns) }
        : { description: "", columns: [] },
      controls: controls.map((c) => ({
        description: c.concept,
        columns: variableColumns(c, modelColumns),
        is_moderator: c.interaction,
        moderator_on: c.on,
      })),
    },
    transform_units: units,
    m_code: modelCode,
    ...(model ? { m_spec: model.specification } : {}),
  };
}

export const solveBlade: ReferenceSolver = (ctx): Agent => {
  const source = bladeSourceOf(ctx.env);
  if (!source) throw new Error("the blade reference solver plays the blade environment only");
  const analysis = expertAnalysis(taskDataset(source, ctx.taskIndex), source.runtime);
  const look = source.runtime === "sql" ? "SELECT count(*) AS rows FROM df" : "df.shape";
  return {
    async act(state): Promise<AgentReply> {
      const explored = state.history.some((turn) => turn.action.startsWith("run:"));
      const [action, thought] = explored
        ? [`submit: ${JSON.stringify(analysis)}`, "I submit the expert analysis."]
        : [`run: ${look}`, "First a look at the size of the data."];
      return { action, message: `Thought: ${thought}\n\nAction: ${action}` };
    },
  };
};
