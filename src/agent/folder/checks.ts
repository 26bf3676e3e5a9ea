/**
 * An agent folder's checks: its type check (tsc) and its own tests (node:test through tsx). The
 * folder is untrusted (a model may have written it, tests included), so both run only in the
 * sandbox, on a fresh copy of its files with clade's agent API declarations written over the
 * folder's own.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  createWorkspace,
  defaultSandboxMode,
  removeWorkspace,
  runSandboxed,
  type SandboxBind,
  type SandboxLimits,
  type SandboxMode,
  type SandboxResult,
} from "../../sandbox/index.js";
import {
  type AgentFiles,
  AgentFolderError,
  agentManifest,
  checkAgentFiles,
  writeFilesInto,
} from "./files.js";
import { packageBindsOf, tsxImport } from "./packages.js";
import { agentTemplateDir, withAgentApi } from "./template.js";

export interface CheckOptions {
  /** Where the check runs: the sandbox's default mode (CLADE_SANDBOX, else "bwrap") unless set. */
  mode?: SandboxMode;
  /** Aborting kills the check; it resolves not ok, with killedBy "abort". */
  signal?: AbortSignal;
  /** Overrides of the check's sandbox limits. */
  limits?: Partial<SandboxLimits>;
}

export interface CheckResult {
  ok: boolean;
  /** stdout then stderr, the end kept when longer than CHECK_OUTPUT_CHARS. */
  output: string;
  durationMs: number;
  /** The sandbox limit that stopped the check ("wall", "cpu", "memory", ...), or null. */
  killedBy: string | null;
}

/** Characters of a check's output kept (the end: compilers and test runners summarise last). */
export const CHECK_OUTPUT_CHARS = 8_000;
/** Characters of each stream the sandbox keeps (its first ones) before we take the end. */
const KEEP_CHARS = 1024 * 1024;

/** tsc of a small folder takes a few seconds; these leave it ample room and no more. */
export const TYPECHECK_LIMITS: Partial<SandboxLimits> = {
  wallMs: 60_000,
  cpuSeconds: 60,
  memoryBytes: 1024 * 1024 * 1024,
  processes: 64,
  workspaceBytes: 32 * 1024 * 1024,
  outputBytes: 4 * 1024 * 1024,
};

/** node --test starts one process per test file, each with tsx. */
export const TEST_LIMITS: Partial<SandboxLimits> = {
  wallMs: 60_000,
  cpuSeconds: 60,
  memoryBytes: 1024 * 1024 * 1024,
  processes: 128,
  workspaceBytes: 32 * 1024 * 1024,
  outputBytes: 4 * 1024 * 1024,
};

const TSCONFIG = "tsconfig.json";

/** Type-checks the folder with its tsconfig.json (the template's when it has none). */
export async function runTypecheck(
  files: AgentFiles,
  options: CheckOptions = {},
): Promise<CheckResult> {
  let prepared = prepare(files);
  if (typeof prepared === "string") return refused(prepared);
  if (!prepared.has(TSCONFIG)) {
    prepared = new Map(prepared).set(TSCONFIG, templateTsconfig());
  }
  const typescript = packageBindsOf("typescript");
  const result = await runCheck(prepared, options, TYPECHECK_LIMITS, (mode) => ({
    args: [
      `${mode === "none" ? typescript.main.source : typescript.main.target}/bin/tsc`,
      ...["-p", TSCONFIG, "--noEmit", "--pretty", "false"],
    ],
    binds: typescript.binds,
  }));
  // tsc says nothing when all is well.
  return result.ok && result.output === "" ? { ...result, output: "no type errors" } : result;
}

/** Runs the tests the manifest lists with node:test (tsx loads the TypeScript). */
export async function runAgentTests(
  files: AgentFiles,
  options: CheckOptions = {},
): Promise<CheckResult> {
  const prepared = prepare(files);
  if (typeof prepared === "string") return refused(prepared);
  let tests: string[];
  try {
    tests = agentManifest(prepared).tests;
  } catch (error) {
    if (error instanceof AgentFolderError) return refused(error.message);
    throw error;
  }
  if (tests.length === 0) return { ok: true, output: "no tests", durationMs: 0, killedBy: null };
  return runCheck(prepared, options, TEST_LIMITS, (mode) => ({
    args: [
      "--import",
      tsxImport(mode).specifier,
      "--test",
      "--test-reporter=spec",
      // "./" so that no file name can read as an option.
      ...tests.map((path) => `./${path}`),
    ],
    binds: tsxImport(mode).binds,
  }));
}

/** The files as the check sees them, or why they cannot be checked at all. */
function prepare(files: AgentFiles): Map<string, string> | string {
  try {
    checkAgentFiles(files);
  } catch (error) {
    if (error instanceof AgentFolderError) return error.message;
    throw error;
  }
  return withAgentApi(files);
}

function refused(message: string): CheckResult {
  return { ok: false, output: message, durationMs: 0, killedBy: null };
}

let tsconfigText: string | undefined;
function templateTsconfig(): string {
  tsconfigText ??= readFileSync(join(agentTemplateDir(), TSCONFIG), "utf8");
  return tsconfigText;
}

async function runCheck(
  files: AgentFiles,
  options: CheckOptions,
  limits: Partial<SandboxLimits>,
  command: (mode: SandboxMode) => { args: string[]; binds: SandboxBind[] },
): Promise<CheckResult> {
  const mode = options.mode ?? defaultSandboxMode();
  const { args, binds } = command(mode);
  const workspace = createWorkspace("check-");
  try {
    writeFilesInto(workspace, files);
    const result = await runSandboxed({
      command: process.execPath,
      args,
      workspace,
      binds,
      mode,
      limits: { ...limits, ...options.limits },
      outputKeepChars: KEEP_CHARS,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return checkResult(result, { ...limits, ...options.limits });
  } finally {
    removeWorkspace(workspace);
  }
}

const KILL_REASONS: Record<string, string> = {
  wall: "it ran past its wall-clock limit",
  cpu: "it used up its CPU time",
  memory: "it ran out of memory",
  fsize: "it wrote a file past the size limit",
  output: "it printed more than the output limit",
  abort: "it was cancelled",
};

function checkResult(result: SandboxResult, limits: Partial<SandboxLimits>): CheckResult {
  let output = result.stdout.text + result.stderr.text;
  if (result.stdout.dropped + result.stderr.dropped > 0) {
    output += "\n[output past the first MiB of each stream was not kept]";
  }
  const killedBy = result.killedBy;
  if (killedBy !== null) {
    const wall = killedBy === "wall" && limits.wallMs ? ` (${limits.wallMs / 1000} s)` : "";
    output += `\n[the check was killed: ${KILL_REASONS[killedBy] ?? killedBy}${wall}]`;
  } else if (result.workspaceFull) {
    output += "\n[the workspace ran out of space]";
  }
  return {
    ok: killedBy === null && result.exitCode === 0,
    output: clipEnd(output.trim(), CHECK_OUTPUT_CHARS),
    durationMs: Math.round(result.durationMs),
    killedBy,
  };
}

/** The last `max` characters, saying how many were left out. */
export function clipEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = `[${text.length - max} earlier characters left out]\n`;
  return note + text.slice(text.length - max);
}
