/**
 * The SQL runtime: the embedded engine (DuckDB, from `npm ci` alone) in one long-lived Node
 * process in the sandbox, driven by data/blade/runtime/sql-kernel.mjs. The host reads the
 * dataset (pandas-compatible read_csv) and hands the frame over; the kernel loads it as table
 * `df` (int64 → BIGINT, float64 → DOUBLE, bool → BOOLEAN, object → VARCHAR, datetime64 →
 * TIMESTAMP) and then locks the engine away from files, extensions and the network. Models are
 * fitted on the host by clade's own GLM (glm.ts) on the frame a transform script leaves.
 */
import { copyFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createWorkspace,
  packageBinds,
  type SandboxBind,
  type SandboxMode,
} from "../../../sandbox/index.js";
import type { Frame } from "../frame.js";
import { fitModelCode } from "../glm.js";
import { encodeFrame } from "./frame-wire.js";
import {
  KernelProcess,
  KernelSession,
  librariesOf,
  nativeModulesUnder,
  RESIDENT_SHARE,
} from "./kernel-process.js";
import {
  type AnalysisSession,
  type ModelOutcome,
  type RuntimeLimits,
  RuntimeUnavailableError,
} from "./types.js";

/** The package's root (src/env/blade/runtime → four levels up), where node_modules is found. */
const PACKAGE_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const KERNEL_FILE = fileURLToPath(
  new URL("../../../../data/blade/runtime/sql-kernel.mjs", import.meta.url),
);
/** The kernel in the session's workspace (/work inside the sandbox). */
const KERNEL_NAME = "sql-kernel.mjs";
/** Room in /work beyond the kernel. */
const SESSION_WORK_BYTES = 4 * 1024 * 1024;
/** The engine's package; its native bindings come with it as dependencies. */
export const SQL_PACKAGE = "@duckdb/node-api";
/** Limits of the sandbox around a whole session (a cell's own limit is RuntimeLimits.cellMs). */
const SESSION_WALL_MS = 6 * 60 * 60_000;
const SESSION_CPU_SECONDS = 2 * 60 * 60;
/** Node itself runs about ten threads, the engine two more per database. */
const SESSION_PROCESSES = 64;
const SESSION_FILE_BYTES = 64 * 1024 * 1024;
const SESSION_TMP_BYTES = 64 * 1024 * 1024;
const SESSION_OUTPUT_BYTES = 16 * 1024 * 1024;
/**
 * The engine's own memory limit, as a share of the process's: the rest is Node's (a query's
 * result is read into JavaScript too). At a half, a query that filled the engine's share left
 * too little for Node to read the next large result, and the process died.
 */
const ENGINE_MEMORY_SHARE = 0.35;
const START_MS = 60_000;

export const SQL_INSTALL_HINT = `install clade's dependencies with \`npm ci\` (${SQL_PACKAGE})`;

let binds: Promise<SandboxBind[]> | undefined;

/** The engine's packages, read-only at /node_modules, and the libraries its native module loads. */
export function sqlBinds(): Promise<SandboxBind[]> {
  binds ??= (async () => {
    let packages: SandboxBind[];
    try {
      packages = packageBinds([SQL_PACKAGE], PACKAGE_ROOT);
    } catch (error) {
      throw new RuntimeUnavailableError(
        `the blade task's SQL runtime needs ${SQL_PACKAGE}, which is not installed (${(error as Error).message}): ${SQL_INSTALL_HINT}`,
      );
    }
    const sources = packages.map((bind) => bind.source);
    const natives = sources.flatMap((dir) => nativeModulesUnder(dir, [".node", ".so"]));
    const libraries = await librariesOf(natives, sources);
    return [...packages, ...libraries.map((path) => ({ source: path, target: path }))];
  })();
  return binds;
}

/** Whether the engine's package resolves here (for availability checks). */
export function sqlPackageVersion(): string | undefined {
  try {
    const require = createRequire(`${PACKAGE_ROOT}/package.json`);
    return (require(`${SQL_PACKAGE}/package.json`) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

export interface SqlSessionOptions {
  /** The dataset as pandas' read_csv reads it (read-csv.ts). */
  frame: Frame;
  limits: RuntimeLimits;
  mode: SandboxMode;
}

/** Starts a SQL session on a dataset; throws when the runtime cannot start. */
export async function openSqlSession(options: SqlSessionOptions): Promise<AnalysisSession> {
  const sandboxed = options.mode !== "none";
  const packages = await sqlBinds();
  // In the sandbox the kernel is copied into /work (whatever its host permissions) and finds the
  // engine at /node_modules; without it, it runs where it is, next to clade's node_modules.
  const workspace = sandboxed ? createWorkspace("blade-sql-") : undefined;
  const kernel = new KernelProcess({
    label: "SQL",
    command: process.execPath,
    args: [sandboxed ? KERNEL_NAME : KERNEL_FILE],
    binds: sandboxed ? packages : [],
    ...(workspace === undefined
      ? {}
      : {
          workspace,
          prepare: () => copyFileSync(KERNEL_FILE, join(workspace, KERNEL_NAME)),
        }),
    env: { NODE_ENV: "production", TZ: "UTC" },
    limits: {
      wallMs: SESSION_WALL_MS,
      cpuSeconds: SESSION_CPU_SECONDS,
      memoryBytes: options.limits.memoryBytes,
      residentBytes: options.limits.memoryBytes * RESIDENT_SHARE,
      processes: SESSION_PROCESSES,
      fileBytes: SESSION_FILE_BYTES,
      workspaceBytes: statSync(KERNEL_FILE).size + SESSION_WORK_BYTES,
      tmpBytes: SESSION_TMP_BYTES,
      outputBytes: SESSION_OUTPUT_BYTES,
    },
    mode: options.mode,
    startMs: START_MS,
    init: {
      op: "load",
      frame: encodeFrame(options.frame),
      memoryLimit: `${Math.floor((options.limits.memoryBytes * ENGINE_MEMORY_SHARE) / 1024 / 1024)}MB`,
    },
  });
  const started = await kernel.start();
  if (!started.ok) {
    await kernel.close();
    throw started.setupError ?? new Error(`the SQL session did not start: ${started.reason}`);
  }
  return new SqlSession(kernel, options.limits);
}

class SqlSession extends KernelSession {
  readonly runtime = "sql" as const;

  constructor(kernel: KernelProcess, limits: RuntimeLimits) {
    super(kernel, limits, "SQL");
  }

  /** Runs the transform in the engine, then fits the model on the host (glm.ts). */
  async fitModel(transformScript: string, modelCode: string): Promise<ModelOutcome> {
    const [outcome] = await this.runScripts([transformScript]);
    if (outcome === undefined) return { ok: false, error: "the transform left no outcome" };
    if (!outcome.ok) return { ok: false, error: `the transform failed: ${outcome.error}` };
    if (outcome.kind !== "frame") return { ok: false, error: "the transform left no table" };
    return fitModelCode(outcome.frame, modelCode);
  }
}
