/**
 * BLADE's data as clade holds it after reading a dataset folder (docs/blade-spec.md §4) and an
 * analysis as an agent submits it (§5). Column names here are always stripped of BLADE's
 * 🟨 (original column) and 🟩 (derived column) prefixes.
 */

/** The id of the ground truth's root transform spec (the data as read). */
export const ROOT_SPEC_ID = "ROOT_SPEC_ID";

/** Transform verbs of BLADE's vocabulary (verbs.py), plus post_groupby used internally. */
export const TRANSFORM_VERBS = [
  "derive",
  "filter",
  "slice",
  "groupby",
  "deduplicate",
  "impute",
  "orderby",
  "rollup",
  "other",
  "other_impact_rows",
  "other_impact_cols",
  "post_groupby",
] as const;
export type TransformVerb = (typeof TRANSFORM_VERBS)[number];

/** The verbs an agent's transform unit may carry (BLADE's TransformDataReturn). */
export const UNIT_VERBS = [
  "derive",
  "filter",
  "groupby",
  "deduplicate",
  "impute",
  "rollup",
  "orderby",
] as const;
export type UnitVerb = (typeof UNIT_VERBS)[number];

/** One alternative parent set of a transform spec; several branches = alternatives. */
export interface Branch {
  dependencies: string[];
  condition: string;
}

export interface TransformSpec {
  specId: string;
  specName: string;
  specification: string;
  /** The first of the annotation's trans_verb list; undefined for ROOT. */
  verb: TransformVerb | undefined;
  /** pandas statements on `df` (empty for ROOT). */
  code: string;
  /**
   * clade's own datasets only: the same transform as one SQL SELECT over `df` for the embedded
   * engine (statements separated by ";" run in order, each result becoming the next `df`).
   */
  codeSql?: string;
  rationale: string;
  /** [input columns, output column]; the output may be "" (in place / whole frame). */
  mapping: [string[], string][];
  branches: Branch[];
  annotator: string;
}

/** The root spec: the data as read (no verb, no code, no parents). */
export function rootTransformSpec(): TransformSpec {
  return {
    specId: ROOT_SPEC_ID,
    specName: "ROOT",
    specification: "",
    verb: undefined,
    code: "",
    rationale: "",
    mapping: [],
    branches: [],
    annotator: "",
  };
}

export interface ModelSpec {
  specId: string;
  specName: string;
  /** The model in words, e.g. "Logistic regression"; what BLADE's model judge compares. */
  specification: string;
  rationale: string;
  /** statsmodels code (BLADE); may be empty. */
  code: string;
  /** clade's own datasets only: the model in the embedded engine's form, e.g. `logit(y ~ x + z)`. */
  codeSql?: string;
  columnsOrig: string[];
  columnsDerived: string[];
  columnsDerivedSpecIds: string[];
  annotator: string;
}

export type CvarRole = "IV" | "DV" | "Control";

export interface ConceptualVarSpec {
  specId: string;
  role: CvarRole;
  concept: string;
  /** A control that moderates (BLADE's `interaction`). */
  interaction: boolean;
  /** What a moderator moderates. */
  on: string;
  rationale: string;
  columnsOrig: string[];
  columnsDerived: string[];
  columnsDerivedSpecIds: string[];
  annotator: string;
}

export interface GroundTruth {
  /** Every transform spec, ROOT included, in file order. */
  transforms: TransformSpec[];
  models: ModelSpec[];
  cvars: ConceptualVarSpec[];
}

/** One column of info.json's data_desc.fields. */
export interface FieldInfo {
  column: string;
  description: string;
  /** BLADE's property dtype: "number", "category", "date", ... */
  dtype: string;
  /** Everything else info.json says of the column (samples, num_unique_values, std, min, max). */
  properties: Record<string, unknown>;
}

/** What clade's own datasets know and BLADE's do not: the true effect behind the data. */
export interface TrueEffect {
  /** The data column of the independent variable whose effect is known. */
  iv: string;
  /** The dependent variable's data column. */
  dv: string;
  /** Sign of the true effect of iv on dv, all else equal. */
  direction: "positive" | "negative" | "none";
  /**
   * The size on a model scale, when a model with this family and link on the untransformed iv
   * estimates it directly: e.g. { family: "binomial", link: "logit", value: 0.4, tolerance: 0.15 }.
   */
  sizes: { family: string; link: string; value: number; tolerance: number }[];
  /** How the data were generated, in words (shown in reports, never to the agent). */
  process: string;
}

export interface BladeDataset {
  name: string;
  /** The folder the dataset was read from. */
  dir: string;
  dataPath: string;
  /** The research questions; the first is the task's. */
  questions: string[];
  description: string;
  fields: FieldInfo[];
  /** Column names of data.csv in file order (info.json's field_names). */
  fieldNames: string[];
  rowCount: number;
  groundTruth: GroundTruth;
  /** Present for clade's own datasets. */
  trueEffect?: TrueEffect;
}

// ---- Submissions (BLADE's DatasetSubmission / EntireAnalysis, §5) ----

export interface AgentVariable {
  description: string;
  columns: string[];
}

export interface AgentControl extends AgentVariable {
  isModerator: boolean;
  moderatorOn: string;
}

export interface AgentCvars {
  ivs: AgentVariable[];
  dv: AgentVariable;
  controls: AgentControl[];
}

/** clade's optional explicit form of a transform: one unit (BLADE's TransformDataReturn). */
export interface TransformUnit {
  verb: UnitVerb;
  code: string;
  /** [input columns, output column]; output "ALL" only for filter and orderby. */
  mapping: [string[], string][];
  groupbyCols: string[];
}

export interface Analysis {
  cvars: AgentCvars;
  /** The whole transform as code (BLADE's transform_code); "" when units are given. */
  transformCode: string;
  /** The transform as units, when the agent gave them (clade's addition). */
  transformUnits?: TransformUnit[];
  /** The model code (BLADE's m_code); in the embedded engine, e.g. `logit(y ~ x + z)`. */
  modelCode: string;
  /** The model in words, when the agent gave it (BLADE asks an LLM for it otherwise). */
  modelSpecification?: string;
}

export interface DatasetSubmission {
  datasetName: string;
  analyses: Analysis[];
}
