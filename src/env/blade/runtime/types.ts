/**
 * The two analysis runtimes: Python with pandas and statsmodels (BLADE's own), and the embedded
 * SQL engine (DuckDB) that needs nothing beyond `npm ci`. Both run only inside the sandbox.
 */
import type { Frame } from "../frame.js";

export type RuntimeName = "python" | "sql";

/** The result of one exploration cell. */
export interface CellOutcome {
  ok: boolean;
  /** What the cell printed, plus the value of a final expression (Python) or the query's result table (SQL); capped. */
  output: string;
  /** The error's last line (e.g. "KeyError: 'age'"), when not ok. */
  error?: string;
  /** The cell ran past its time limit; the session was restarted and its state is lost. */
  timedOut?: boolean;
}

/** What running one transform script left behind (BLADE's transform(df) result, §2.1). */
export type ScriptOutcome =
  | { ok: true; kind: "frame"; frame: Frame }
  /** A pandas DataFrameGroupBy: its column names, and no frame (BLADE hashes nothing for it). */
  | { ok: true; kind: "groupby"; columns: string[] }
  /** Any other value (a Series, None, ...): no state. */
  | { ok: true; kind: "other"; type: string }
  | { ok: false; error: string; timedOut?: boolean };

/** A fitted statistical model, read off the runtime's result object. */
export interface FittedModel {
  /** "gaussian" | "binomial" | "poisson" | "negativebinomial" | ...; lower case. */
  family: string;
  /** "identity" | "logit" | "probit" | "log" | ...; lower case. */
  link: string;
  /** The dependent variable's column. */
  dv: string;
  /** Term names as the runtime writes them (e.g. "Intercept", "x", "C(g)[T.b]", "x:z"). */
  terms: string[];
  /** Estimates, standard errors and p-values by term. */
  params: Record<string, number>;
  stdErrors: Record<string, number>;
  pValues: Record<string, number>;
  observations: number;
}

export type ModelOutcome = { ok: true; model: FittedModel } | { ok: false; error: string };

export interface RuntimeLimits {
  /** Wall time of one cell or script, in ms. */
  cellMs: number;
  /** Memory of the runtime's processes, in bytes. */
  memoryBytes: number;
  /** Characters of a cell's output shown to the agent. */
  outputChars: number;
}

/**
 * A session on one dataset: `df` is the dataset as read (pandas' read_csv, or the same frame
 * loaded into the SQL engine); exploration cells keep their state across calls.
 */
export interface AnalysisSession {
  readonly runtime: RuntimeName;
  /** Runs an exploration cell; state is kept across cells. */
  execute(code: string): Promise<CellOutcome>;
  /**
   * Runs each script on its own fresh copy of the data, as the body of `transform(df)` (Python)
   * or as a sequence of SELECTs over `df` (SQL), and returns what each left behind, in order.
   */
  runScripts(scripts: readonly string[]): Promise<ScriptOutcome[]>;
  /** Runs a transform script, then the model code on its result, and reads the fitted model. */
  fitModel(transformScript: string, modelCode: string): Promise<ModelOutcome>;
  close(): Promise<void>;
}

/** The runtime named is not installed here: one line saying which and how to install it. */
export class RuntimeUnavailableError extends Error {
  override name = "RuntimeUnavailableError";
}
