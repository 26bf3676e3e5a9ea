/**
 * Whether the blade environment's runtimes can run here, for `clade doctor` and for a task that
 * needs one: Python with pandas and statsmodels, the embedded SQL engine, and the sandbox both
 * run in. Nothing is started beyond probing the interpreter and the sandbox once.
 */
import { checkSandbox, defaultSandboxMode } from "../../../sandbox/index.js";
import { findPython, type PythonInstall } from "./python.js";
import { SQL_INSTALL_HINT, SQL_PACKAGE, sqlPackageVersion } from "./sql.js";
import { RuntimeUnavailableError } from "./types.js";

/** The pandas version BLADE pins (its hashes of parsed dates depend on it). */
export const BLADE_PANDAS_VERSION = "1.5.3";

export interface Availability {
  ok: boolean;
  /** One line: what was found, or what is missing and how to install it. */
  detail: string;
}

export interface RuntimeAvailability {
  python: Availability;
  sql: Availability;
  sandbox: Availability;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function pythonAvailability(): Promise<Availability> {
  try {
    const python = await findPython();
    const pandas = python.packages.pandas ?? "?";
    const pin =
      pandas === BLADE_PANDAS_VERSION
        ? ""
        : `; BLADE pins pandas ${BLADE_PANDAS_VERSION}, so hashes of parsed dates may differ`;
    // scikit-learn is optional: some of BLADE's expert code imports it.
    const sklearn = python.packages.sklearn ? ", scikit-learn" : "";
    const noSklearn = python.packages.sklearn
      ? ""
      : "; no scikit-learn, which some of BLADE's expert code imports (apt-get install python3-sklearn)";
    return {
      ok: true,
      detail: `${python.executable} (Python ${python.version}, pandas ${pandas}, statsmodels ${python.packages.statsmodels ?? "?"}${sklearn})${noSklearn}${pin}`,
    };
  } catch (error) {
    return { ok: false, detail: message(error) };
  }
}

async function sandboxAvailability(): Promise<Availability> {
  if (defaultSandboxMode() === "none") {
    return { ok: true, detail: "no sandbox (CLADE_SANDBOX=none): analyses run unisolated" };
  }
  try {
    const host = await checkSandbox();
    return { ok: true, detail: `bubblewrap ${host.version} (${host.bwrap})` };
  } catch (error) {
    return { ok: false, detail: message(error) };
  }
}

/** What `clade doctor` reports for the blade environment. */
export async function runtimeAvailability(): Promise<RuntimeAvailability> {
  const version = sqlPackageVersion();
  const sql: Availability =
    version === undefined
      ? { ok: false, detail: `${SQL_PACKAGE} is not installed: ${SQL_INSTALL_HINT}` }
      : { ok: true, detail: `DuckDB through ${SQL_PACKAGE} ${version}` };
  const [python, sandbox] = await Promise.all([pythonAvailability(), sandboxAvailability()]);
  return { python, sql, sandbox };
}

/**
 * The Python a task needs, or RuntimeUnavailableError in one line, e.g. "the blade task's Python
 * runtime needs a python3 with pandas and statsmodels (...): install them with `apt-get install
 * python3-pandas python3-statsmodels`".
 */
export async function requirePythonRuntime(): Promise<PythonInstall> {
  try {
    return await findPython();
  } catch (error) {
    if (error instanceof RuntimeUnavailableError) throw error;
    throw new RuntimeUnavailableError(
      `the blade task's Python runtime cannot be used: ${message(error)}`,
    );
  }
}
