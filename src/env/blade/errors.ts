/**
 * The blade environment's errors that come from the user's input (a dataset folder, a
 * submissions file, a CSV, a missing runtime): the CLI prints them as one line.
 */
import { BladeDatasetError } from "./annotations.js";
import { BladeFolderError } from "./folders.js";
import { CsvReadError } from "./read-csv.js";
import { RuntimeUnavailableError } from "./runtime/types.js";
import { SubmissionError } from "./submission.js";
import { BladeTaskError } from "./tasks.js";
import { BladeTransformError } from "./transform-paths.js";

export const BLADE_INPUT_ERRORS = [
  BladeDatasetError,
  BladeFolderError,
  BladeTaskError,
  BladeTransformError,
  CsvReadError,
  RuntimeUnavailableError,
  SubmissionError,
] as const;
