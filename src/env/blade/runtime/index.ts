/**
 * Opening an analysis session of the blade environment: Python (pandas and statsmodels, BLADE's
 * own tools) or SQL (the embedded engine). Both run only in the sandbox (src/sandbox); each
 * session is one long-lived process that keeps the state of exploration cells. A cell that
 * outlives `cellMs` kills its process; the outcome says so, and the next call starts a fresh one.
 *
 * Scoring should run transform scripts in a session of its own, not in the agent's exploration
 * session: exploration code shares the process and could change what later scripts see.
 */
import { defaultSandboxMode, type SandboxMode } from "../../../sandbox/index.js";
import type { Frame } from "../frame.js";
import { readCsvFile } from "../read-csv.js";
import { openPythonSession } from "./python.js";
import { openSqlSession } from "./sql.js";
import type { AnalysisSession, RuntimeLimits, RuntimeName } from "./types.js";

export {
  type RuntimeAvailability,
  requirePythonRuntime,
  runtimeAvailability,
} from "./availability.js";
export { encodeFrame, FrameDecoder, FrameWireError } from "./frame-wire.js";
export { findPython, type PythonInstall, resetPythonSearch } from "./python.js";
export * from "./types.js";

export const DEFAULT_RUNTIME_LIMITS: Readonly<RuntimeLimits> = {
  cellMs: 30_000,
  memoryBytes: 1.5 * 1024 * 1024 * 1024,
  outputChars: 4000,
};

export interface OpenSessionOptions {
  runtime: RuntimeName;
  /** The dataset's folder and its data.csv (only data.csv is visible to the session). */
  dataset: { dir: string; dataPath: string };
  /** SQL: the dataset as read (read-csv.ts); read from dataPath when absent. */
  frame?: Frame;
  limits?: Partial<RuntimeLimits>;
  /** Default: the sandbox's default mode ("none" only when asked for). */
  mode?: SandboxMode;
}

function resolveLimits(given: Partial<RuntimeLimits> | undefined): RuntimeLimits {
  const limits = { ...DEFAULT_RUNTIME_LIMITS };
  for (const [key, value] of Object.entries(given ?? {})) {
    if (value === undefined) continue;
    if (!(typeof value === "number" && Number.isFinite(value) && value > 0)) {
      throw new RangeError(`the runtime limit ${key} must be a positive number, got ${value}`);
    }
    limits[key as keyof RuntimeLimits] = value;
  }
  return limits;
}

/**
 * Starts a session on a dataset. Throws RuntimeUnavailableError (one line) when the runtime is
 * not installed, SandboxUnavailableError when the sandbox cannot run, and an Error naming the
 * cause when the session does not start (the dataset cannot be read, for one).
 */
export async function openSession(options: OpenSessionOptions): Promise<AnalysisSession> {
  const limits = resolveLimits(options.limits);
  const mode = options.mode ?? defaultSandboxMode();
  if (options.runtime === "python") {
    return openPythonSession({ dataPath: options.dataset.dataPath, limits, mode });
  }
  const frame = options.frame ?? readCsvFile(options.dataset.dataPath);
  return openSqlSession({ frame, limits, mode });
}
