/**
 * BLADE (docs/blade.md): the blade environment's data, runtimes, matching and scores, and the
 * model roles and reports over many analyses, under the library's names.
 */
export { hashFrame } from "../../env/blade/column-hash.js";
export { type ConclusionVerdict, judgeConclusion } from "../../env/blade/conclusion.js";
export { matchCvarsOffline } from "../../env/blade/cvar-match.js";
export { listBladeDatasets, readBladeDataset } from "../../env/blade/dataset.js";
export type { Column, ColumnHashes, Frame } from "../../env/blade/frame.js";
export { fitModel } from "../../env/blade/glm.js";
export {
  bladeEnvDefinition,
  bladeSourceOf,
  builtinBladeEnv,
  OWN_DATASETS_DIR,
} from "../../env/blade/index.js";
export { compareModelTexts } from "../../env/blade/model-canon.js";
export { parseModelCall } from "../../env/blade/model-formula.js";
export { readCsvFile, readCsvFrame } from "../../env/blade/read-csv.js";
export { openSession, runtimeAvailability } from "../../env/blade/runtime/index.js";
export type { AnalysisSession, RuntimeName } from "../../env/blade/runtime/types.js";
export {
  type BladeRecord,
  type BladeScore,
  type ScoringOptions,
  scoreAnalysis,
} from "../../env/blade/score.js";
export { type BladeScores, bladeScores, type RunMatch } from "../../env/blade/scores.js";
export type { Analysis, BladeDataset, DatasetSubmission } from "../../env/blade/specs.js";
export {
  analysisJson,
  parseAnalysis,
  parseSubmissionFile,
  SubmissionError,
} from "../../env/blade/submission.js";
export { bootstrapScores, conclusionRates } from "./metrics.js";
export { type BladeReport, buildBladeReport, type ReportedAnalysis } from "./report.js";
export { type ModelRoles, modelRoles } from "./roles.js";
