/**
 * The Python runtime: BLADE's own tools (pandas, statsmodels) in one long-lived interpreter in
 * the sandbox, driven by data/blade/runtime/kernel.py. The interpreter is found once per
 * process: the first python3 that imports pandas and statsmodels (/usr/bin/python3 first; a
 * pyenv shim is looked through to the interpreter it runs). Inside the sandbox it sees, read-only,
 * its standard library and package folders, the shared libraries their native modules load
 * (from ldd: never /usr or /lib whole) and the system's time zones; its /work holds a copy of the
 * kernel and of the dataset's data.csv alone (not the dataset's other files: its annotations are
 * the ground truth).
 */
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createWorkspace, type SandboxBind, type SandboxMode } from "../../../sandbox/index.js";
import {
  KernelProcess,
  KernelSession,
  librariesOf,
  nativeModulesUnder,
  RESIDENT_SHARE,
} from "./kernel-process.js";
import {
  type AnalysisSession,
  type FittedModel,
  type ModelOutcome,
  type RuntimeLimits,
  RuntimeUnavailableError,
} from "./types.js";

/** The kernel, shipped in the package's data/ (src/env/blade/runtime → three levels up). */
const KERNEL_FILE = fileURLToPath(
  new URL("../../../../data/blade/runtime/kernel.py", import.meta.url),
);
/** The kernel and the dataset in the session's workspace (/work inside the sandbox). */
const KERNEL_NAME = "kernel.py";
const DATA_NAME = "data.csv";
/** Interpreters tried, in order, before python3 on PATH. */
const PYTHON_CANDIDATES = ["/usr/bin/python3", "/usr/local/bin/python3"];
/** Names an interpreter explicitly (skips the search). */
export const PYTHON_VARIABLE = "CLADE_BLADE_PYTHON";
/**
 * System data the packages read, bound where present: Debian's pytz and dateutil use the
 * system's time zones; Debian's matplotlib keeps its rc file and fonts under /usr/share.
 */
const SYSTEM_DATA_DIRS = ["/usr/share/zoneinfo", "/usr/share/matplotlib", "/usr/share/fonts"];
/** Packages whose native modules' libraries are bound (what analyses import). */
const NATIVE_PACKAGES = [
  "numpy",
  "pandas",
  "scipy",
  "statsmodels",
  "patsy",
  "sklearn",
  "matplotlib",
  "PIL",
  "kiwisolver",
  "contourpy",
];
const NATIVE_SUFFIXES = [".so"];
/** How long probing one interpreter may take (importing pandas and statsmodels). */
const PROBE_MS = 60_000;
/** Limits of the sandbox around a whole session (a cell's own limit is RuntimeLimits.cellMs). */
const SESSION_WALL_MS = 6 * 60 * 60_000;
const SESSION_CPU_SECONDS = 2 * 60 * 60;
/**
 * Processes and threads: the kernel needs one (numerics run single-threaded). Few, because the
 * memory watchdog counts each forked copy of the kernel in full: a fork bomb should meet this
 * limit (an error in the cell) before the watchdog (a restart).
 */
const SESSION_PROCESSES = 16;
const SESSION_FILE_BYTES = 64 * 1024 * 1024;
const SESSION_TMP_BYTES = 64 * 1024 * 1024;
/** Room in /work beyond the kernel and the dataset. */
const SESSION_WORK_BYTES = 16 * 1024 * 1024;
const SESSION_OUTPUT_BYTES = 16 * 1024 * 1024;
/** Starting: importing pandas and statsmodels, then reading the dataset. */
const START_MS = 120_000;
/** The environment of the kernel: single-threaded numerics, matplotlib without a display. */
const KERNEL_ENV: Record<string, string> = {
  OPENBLAS_NUM_THREADS: "1",
  OMP_NUM_THREADS: "1",
  MKL_NUM_THREADS: "1",
  MPLCONFIGDIR: "/tmp",
  MPLBACKEND: "Agg",
  // Debian's matplotlib reads /etc/matplotlibrc, which the sandbox has not: its packaged copy.
  MATPLOTLIBRC: "/usr/share/matplotlib/mpl-data/matplotlibrc",
  HOME: "/tmp",
  LANG: "C.UTF-8",
  PYTHONHASHSEED: "0",
};

export const PYTHON_INSTALL_HINT =
  "install them with `apt-get install python3-pandas python3-statsmodels` (or point " +
  `${PYTHON_VARIABLE} at a python3 that has them)`;

/** A Python found on this machine with what BLADE's analyses need. */
export interface PythonInstall {
  executable: string;
  version: string;
  packages: Record<string, string>;
  /** sys.path folders that exist (standard library first), bound read-only. */
  paths: string[];
  /** The folders of NATIVE_PACKAGES that are installed. */
  packageDirs: string[];
}

/** Prints what the kernel needs to know about this interpreter, as one JSON line. */
const PROBE = `
import json, sys, importlib.util
info = {"executable": sys.executable, "version": sys.version.split()[0], "paths": sys.path,
        "packages": {}, "missing": [], "dirs": []}
for name in ("pandas", "statsmodels", "numpy", "scipy"):
    try:
        module = __import__(name)
        info["packages"][name] = getattr(module, "__version__", "?")
    except Exception as error:
        info["missing"].append(name + " (" + type(error).__name__ + ")")
# Optional: some of BLADE's expert code (and agents') uses them.
for name in ("sklearn", "matplotlib"):
    spec = importlib.util.find_spec(name)
    if spec is not None:
        info["packages"][name] = "installed"
for name in ${JSON.stringify(NATIVE_PACKAGES)}:
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.submodule_search_locations:
        info["dirs"].extend(spec.submodule_search_locations)
print(json.dumps(info))
`;

interface Probe {
  executable: string;
  version: string;
  paths: string[];
  packages: Record<string, string>;
  missing: string[];
  dirs: string[];
}

async function probe(python: string): Promise<Probe | string> {
  try {
    const { stdout } = await promisify(execFile)(python, ["-s", "-c", PROBE], {
      timeout: PROBE_MS,
      env: { PATH: process.env.PATH ?? "", LANG: "C.UTF-8" },
      maxBuffer: 1024 * 1024,
    });
    const line = stdout.trim().split("\n").at(-1) ?? "";
    return JSON.parse(line) as Probe;
  } catch (error) {
    const text = String((error as { stderr?: unknown }).stderr ?? error).trim();
    return text.split("\n").at(-1) ?? "it did not run";
  }
}

function isExecutable(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function candidates(): string[] {
  const named = process.env[PYTHON_VARIABLE];
  if (named !== undefined && named.trim() !== "") return [named.trim()];
  const onPath = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => isAbsolute(dir))
    .map((dir) => join(dir, "python3"));
  return [...new Set([...PYTHON_CANDIDATES, ...onPath])].filter(isExecutable);
}

let found: Promise<PythonInstall> | undefined;

/**
 * The Python to run analyses with, found once per process. Throws RuntimeUnavailableError (one
 * line) when no python3 here imports pandas and statsmodels.
 */
export function findPython(): Promise<PythonInstall> {
  found ??= search();
  return found;
}

/** Forgets the interpreter found (tests, or after installing packages in a running process). */
export function resetPythonSearch(): void {
  found = undefined;
  bindsCache = undefined;
}

async function search(): Promise<PythonInstall> {
  const tried: string[] = [];
  for (const python of candidates()) {
    const result = await probe(python);
    if (typeof result === "string") {
      tried.push(`${python}: ${result}`);
      continue;
    }
    if (result.missing.length > 0) {
      tried.push(`${python}: no ${result.missing.join(", ")}`);
      continue;
    }
    const executable = result.executable || python;
    const paths = result.paths.filter(
      (path) => isAbsolute(path) && existsSync(path) && statSync(path).isDirectory(),
    );
    return {
      executable,
      version: result.version,
      packages: result.packages,
      paths: [...new Set(paths.map((path) => realpathSync(path)))],
      packageDirs: result.dirs.filter((dir) => existsSync(dir)),
    };
  }
  const detail = tried.length > 0 ? ` (tried ${tried.join("; ")})` : " (no python3 found)";
  throw new RuntimeUnavailableError(
    `the blade task's Python runtime needs a python3 with pandas and statsmodels${detail}: ${PYTHON_INSTALL_HINT}`,
  );
}

let bindsCache: Promise<SandboxBind[]> | undefined;

/** The interpreter's folders and the libraries of its native modules, read-only. */
function pythonBinds(install: PythonInstall): Promise<SandboxBind[]> {
  bindsCache ??= (async () => {
    const natives = [
      ...install.packageDirs,
      ...install.paths.filter((p) => p.endsWith("lib-dynload")),
    ].flatMap((dir) => nativeModulesUnder(dir, NATIVE_SUFFIXES));
    const libraries = await librariesOf(natives, install.paths);
    return [
      ...install.paths.map((path) => ({ source: path, target: path })),
      ...SYSTEM_DATA_DIRS.filter((dir) => existsSync(dir)).map((dir) => ({
        source: realpathSync(dir),
        target: dir,
      })),
      ...libraries.map((path) => ({ source: path, target: path })),
    ];
  })();
  return bindsCache;
}

export interface PythonSessionOptions {
  /** The dataset's data.csv, read by the kernel with pd.read_csv and no options. */
  dataPath: string;
  limits: RuntimeLimits;
  mode: SandboxMode;
}

/** Starts a Python session on a dataset; throws when the runtime or the dataset cannot start. */
export async function openPythonSession(options: PythonSessionOptions): Promise<AnalysisSession> {
  const install = await findPython();
  const sandboxed = options.mode !== "none";
  const binds = sandboxed ? await pythonBinds(install) : [];
  const dataBytes = statSync(options.dataPath).size;
  // The kernel and data.csv (and nothing else of the dataset's folder: its annotations are the
  // ground truth) are copied into the session's workspace, afresh before every start.
  const workspace = createWorkspace("blade-python-");
  const config = {
    data: DATA_NAME,
    paths: install.paths,
    outputChars: options.limits.outputChars,
    // The kernel ends the processes a cell leaves behind only inside the sandbox's namespace.
    sandboxed,
  };
  const kernel = new KernelProcess({
    label: "Python",
    command: install.executable,
    // No site (the host's .pth files), no user site, no bytecode written, UTF-8 throughout.
    args: ["-s", "-S", "-B", "-X", "utf8", KERNEL_NAME, JSON.stringify(config)],
    binds,
    env: KERNEL_ENV,
    limits: {
      wallMs: SESSION_WALL_MS,
      cpuSeconds: SESSION_CPU_SECONDS,
      memoryBytes: options.limits.memoryBytes,
      residentBytes: options.limits.memoryBytes * RESIDENT_SHARE,
      processes: SESSION_PROCESSES,
      fileBytes: SESSION_FILE_BYTES,
      workspaceBytes: dataBytes + statSync(KERNEL_FILE).size + SESSION_WORK_BYTES,
      tmpBytes: SESSION_TMP_BYTES,
      outputBytes: SESSION_OUTPUT_BYTES,
    },
    mode: options.mode,
    startMs: START_MS,
    workspace,
    prepare: () => {
      copyFileSync(KERNEL_FILE, join(workspace, KERNEL_NAME));
      copyFileSync(options.dataPath, join(workspace, DATA_NAME));
    },
  });
  const started = await kernel.start();
  if (!started.ok) {
    await kernel.close();
    throw started.setupError ?? new Error(`the Python session did not start: ${started.reason}`);
  }
  return new PythonSession(kernel, options.limits);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numberOf(value: unknown): number {
  if (typeof value === "number") return value;
  if (value === "inf") return Number.POSITIVE_INFINITY;
  if (value === "-inf") return Number.NEGATIVE_INFINITY;
  return Number.NaN;
}

function numbersByTerm(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isRecord(value)) return out;
  for (const [term, number] of Object.entries(value)) out[term] = numberOf(number);
  return out;
}

/** The kernel's description of a fitted model, checked. */
function modelOutcome(reply: unknown): ModelOutcome {
  if (!isRecord(reply)) return { ok: false, error: "the kernel's reply is not readable" };
  if (reply.ok !== true) {
    return { ok: false, error: typeof reply.error === "string" ? reply.error : "the model failed" };
  }
  const model = reply.model;
  if (
    !isRecord(model) ||
    typeof model.family !== "string" ||
    typeof model.link !== "string" ||
    typeof model.dv !== "string" ||
    !Array.isArray(model.terms) ||
    !model.terms.every((term) => typeof term === "string")
  ) {
    return { ok: false, error: "the kernel's description of the model is not readable" };
  }
  const fitted: FittedModel = {
    family: model.family,
    link: model.link,
    dv: model.dv,
    terms: model.terms as string[],
    params: numbersByTerm(model.params),
    stdErrors: numbersByTerm(model.stdErrors),
    pValues: numbersByTerm(model.pValues),
    observations: typeof model.observations === "number" ? model.observations : 0,
  };
  return { ok: true, model: fitted };
}

class PythonSession extends KernelSession {
  readonly runtime = "python" as const;

  constructor(kernel: KernelProcess, limits: RuntimeLimits) {
    super(kernel, limits, "Python");
  }

  async fitModel(transformScript: string, modelCode: string): Promise<ModelOutcome> {
    const command = { op: "model", transform: transformScript, model: modelCode };
    const exchange = await this.kernel.send(command, this.limits.cellMs);
    if (!exchange.ok) {
      return {
        ok: false,
        error: exchange.timedOut
          ? `the model ran past its ${this.limits.cellMs / 1000} s limit`
          : exchange.reason,
      };
    }
    return modelOutcome(exchange.reply);
  }
}

/** The kernel file (for availability checks and tests). */
export const PYTHON_KERNEL_FILE = KERNEL_FILE;
