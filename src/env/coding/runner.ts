/**
 * The test runner. Agent code runs only in clade's sandbox (src/sandbox: bubblewrap with its own
 * user, PID, network, IPC and mount namespaces, a 32 MB tmpfs workspace, rlimits, an empty
 * environment), in a `node` that also runs under Node's permission model: files readable and
 * writable only inside the workspace, no child processes, no workers, no addons. The harness
 * reads its spec from stdin and reports on the sandbox's channel (fd 3). If bubblewrap is
 * missing, runs fail with one line saying how to install it; only an explicit sandbox mode
 * "none" (CLADE_SANDBOX=none or the env's option) runs the child unsandboxed.
 *
 * Children run at most SANDBOX_SLOTS at a time per process, a number derived from the machine's
 * memory, however many coding environments are open (a server may hold 1,024); further runs
 * wait in line.
 */
import { randomUUID } from "node:crypto";
import { totalmem } from "node:os";
import { pathToFileURL } from "node:url";
import {
  defaultSandboxMode,
  runSandboxed,
  SANDBOX_WORKDIR,
  type SandboxLimits,
  type SandboxMode,
} from "../../sandbox/index.js";
import { EnvError } from "../types.js";
import { HARNESS_SOURCE, type HarnessSpec } from "./harness.js";

export const DEFAULT_TIMEOUT_MS = 5000;
/** Console output kept for the observation (per stream); the rest is counted, not stored. */
export const OUTPUT_KEEP_CHARS = 4000;
/** A child printing more than this in total is killed. */
export const OUTPUT_KILL_BYTES = 8 * 1024 * 1024;
/**
 * A child whose processes hold more resident memory than this is killed (sampled every 50 ms).
 * --max-old-space-size caps only the JS heap; Buffers and other native memory are caught here,
 * and RLIMIT_DATA (CODING_DATA_BYTES) is the ceiling the kernel enforces between samples.
 */
export const MEMORY_KILL_BYTES = 256 * 1024 * 1024;
/** RLIMIT_DATA of the child: what it can never exceed, whatever the watchdog sees. */
export const CODING_DATA_BYTES = 512 * 1024 * 1024;
/** Size of the sandbox's workspace (a tmpfs): code under test cannot write more than this. */
export const WORKSPACE_BYTES = 32 * 1024 * 1024;
/** Size of the sandbox's /tmp. */
export const TMP_BYTES = 8 * 1024 * 1024;
/** The largest file code under test may write (RLIMIT_FSIZE). */
export const FILE_BYTES = 16 * 1024 * 1024;
/**
 * Memory budgeted per concurrent child: the RSS kill line plus a margin (the watchdog samples,
 * so a child can overshoot in between; bwrap and pipes cost a little too), plus the sandbox's
 * tmpfs workspace and /tmp, which live in memory.
 */
export const SANDBOX_RUN_MEMORY_BYTES =
  MEMORY_KILL_BYTES + 64 * 1024 * 1024 + WORKSPACE_BYTES + TMP_BYTES;
/**
 * Share of the machine's memory that sandboxed children may take together; the rest is the host
 * process's (the env server and its instances) and everything else on the machine.
 */
export const SANDBOX_MEMORY_SHARE = 0.5;
/**
 * How long a run waits for a slot before giving up with SandboxBusyError. The run's own timeout
 * starts when its child does, so waiting in line never costs agent code its time.
 */
export const DEFAULT_QUEUE_TIMEOUT_MS = 120_000;

/** The machine's memory, or the cgroup's limit when that is lower (containers). */
function machineMemoryBytes(): number {
  const total = totalmem();
  // Node reports no limit as 0, undefined or a huge number, depending on version and cgroup.
  const constrained = process.constrainedMemory?.() ?? 0;
  return constrained > 0 ? Math.min(total, constrained) : total;
}

/** Concurrent children this much memory allows: at least 1. */
export function sandboxSlotsFor(memoryBytes: number): number {
  return Math.max(1, Math.floor((memoryBytes * SANDBOX_MEMORY_SHARE) / SANDBOX_RUN_MEMORY_BYTES));
}

/** A run that waited for a sandbox slot longer than its queue timeout. */
export class SandboxBusyError extends EnvError {
  override name = "SandboxBusyError";
}

interface Waiter {
  grant(): void;
}

/** A counting semaphore in arrival order, one per process: the children running at once. */
class SandboxSlots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(public limit: number) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves with a release function once a slot is free; rejects on abort or queue timeout. */
  acquire(signal: AbortSignal | undefined, queueTimeoutMs: number): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.running < this.limit && this.waiting.length === 0) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        leave();
        reject(abortReason(signal));
      };
      const waiter: Waiter = {
        grant: () => {
          leave();
          this.running++;
          resolve(this.releaser());
        },
      };
      timer = setTimeout(() => {
        leave();
        reject(
          new SandboxBusyError(
            `every sandbox slot (${this.limit}) stayed busy for ${queueTimeoutMs / 1000} s; ` +
              "the machine is running as many tests as its memory allows, try again",
          ),
        );
      }, queueTimeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Lets waiters in while there is room (after a release or a raised limit). */
  pump(): void {
    while (this.running < this.limit) {
      const next = this.waiting[0];
      if (!next) break;
      next.grant();
    }
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.pump();
    };
  }
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException("the sandbox run was aborted", "AbortError");
}

const slots = new SandboxSlots(sandboxSlotsFor(machineMemoryBytes()));

export interface SandboxConcurrency {
  /** Children allowed at once. */
  limit: number;
  /** Children running now. */
  active: number;
  /** Runs waiting for a slot. */
  queued: number;
}

export function sandboxConcurrency(): SandboxConcurrency {
  return { limit: slots.limit, active: slots.active, queued: slots.queued };
}

/**
 * Sets how many children may run at once in this process (tests, or a host that knows better
 * than the memory rule); undefined restores the memory-derived default.
 */
export function setSandboxConcurrency(limit?: number): void {
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) {
    throw new RangeError(`the sandbox concurrency must be a whole number >= 1, got ${limit}`);
  }
  slots.limit = limit ?? sandboxSlotsFor(machineMemoryBytes());
  slots.pump();
}

/** Result records beyond this size are dropped (the harness keeps values far smaller). */
const RECORDS_MAX_BYTES = 16 * 1024 * 1024;

/** Node 20 names the permission model --experimental-permission; later versions --permission. */
function permissionFlags(root: string): string[] {
  const flags = process.allowedNodeEnvironmentFlags;
  const flag = flags.has("--permission")
    ? "--permission"
    : flags.has("--experimental-permission")
      ? "--experimental-permission"
      : undefined;
  if (flag === undefined) return [];
  return [flag, `--allow-fs-read=${root}`, `--allow-fs-write=${root}`];
}

export interface SuiteRequest {
  /** The module's file name inside the workspace. */
  file: string;
  names: string[];
  calls: string[];
}

export interface ErrorReport {
  name: string;
  message: string;
  /** The stack frame inside the workspace that threw, e.g. "at f (sol.js:3:9)"; may be empty. */
  where: string;
  /** The first lines of the stack (syntax errors show the offending line here). */
  stack: string;
}

export type CaseRecord = { ok: true; value: unknown } | { ok: false; error: ErrorReport };

export type LoadRecord = { ok: true; exports: string[] } | { ok: false; error: ErrorReport };

export interface SuiteRun {
  /** Undefined when the child never got to load the module (killed or crashed before). */
  load: LoadRecord | undefined;
  /** Per call, in order; undefined for calls that never finished. */
  cases: (CaseRecord | undefined)[];
}

export interface SandboxRun {
  suites: SuiteRun[];
  /** The harness reached its end (every call finished). */
  completed: boolean;
  timedOut: boolean;
  /** Killed for printing more than OUTPUT_KILL_BYTES. */
  outputExceeded: boolean;
  /** Killed for using more than MEMORY_KILL_BYTES of resident memory. */
  memoryExceeded: boolean;
  /** Killed by RLIMIT_CPU. */
  cpuExceeded: boolean;
  /** The workspace (WORKSPACE_BYTES) was full at the end: some write failed. */
  workspaceFull: boolean;
  exitCode: number | null;
  signal: string | null;
  stdout: CappedText;
  stderr: CappedText;
  durationMs: number;
  /** How the code ran: "bwrap" (the sandbox) or "none" (explicitly unsandboxed). */
  mode: SandboxMode;
  /** The workspace's path as the code saw it (stripped from texts shown to the agent). */
  workdir: string;
}

export interface CappedText {
  text: string;
  /** Characters received beyond `text`. */
  dropped: number;
}

export interface SandboxOptions {
  /**
   * Absolute host workspace directory: copied into the sandbox's /work for the run and mirrored
   * back after it (in mode "none", the child's cwd itself).
   */
  root: string;
  /** Wall-clock limit of the child, from its start (time spent waiting for a slot not counted). */
  timeoutMs?: number;
  /** Longest wait for a sandbox slot (default DEFAULT_QUEUE_TIMEOUT_MS); then SandboxBusyError. */
  queueTimeoutMs?: number;
  /** Aborting gives up a run still waiting for a slot, or kills its child once started. */
  signal?: AbortSignal;
  /** "bwrap" unless said otherwise (CLADE_SANDBOX, see src/sandbox/mode.ts). */
  mode?: SandboxMode;
}

/** The sandbox limits of one test run with this wall-clock limit. */
export function codingLimits(timeoutMs: number): SandboxLimits {
  return {
    wallMs: timeoutMs,
    // The wall clock fires first; RLIMIT_CPU only backs it up.
    cpuSeconds: Math.ceil(timeoutMs / 1000) + 1,
    memoryBytes: CODING_DATA_BYTES,
    residentBytes: MEMORY_KILL_BYTES,
    // Node alone runs about ten threads; the permission model allows no child processes.
    processes: 64,
    fileBytes: FILE_BYTES,
    workspaceBytes: WORKSPACE_BYTES,
    tmpBytes: TMP_BYTES,
    openFiles: 128,
    outputBytes: OUTPUT_KILL_BYTES,
  };
}

function asErrorReport(value: unknown): ErrorReport {
  const raw = (value ?? {}) as Partial<Record<keyof ErrorReport, unknown>>;
  const text = (field: unknown) => (typeof field === "string" ? field : "");
  return {
    name: text(raw.name) || "Error",
    message: text(raw.message),
    where: text(raw.where),
    stack: text(raw.stack),
  };
}

/**
 * Stores one harness record into the runs (the first record for each slot wins); true for the
 * end record. Records without the run's nonce did not come from the harness and are ignored.
 */
function storeRecord(suites: SuiteRun[], record: Record<string, unknown>, nonce: string): boolean {
  if (record.k !== nonce) return false;
  if (record.t === "end") return true;
  const suite = typeof record.s === "number" ? suites[record.s] : undefined;
  if (!suite) return false;
  if (record.t === "load" && suite.load === undefined) {
    suite.load = record.ok
      ? {
          ok: true,
          exports: Array.isArray(record.exports) ? record.exports.map((name) => String(name)) : [],
        }
      : { ok: false, error: asErrorReport(record.error) };
  } else if (record.t === "case" && typeof record.i === "number") {
    const i = record.i;
    if (i >= 0 && i < suite.cases.length && suite.cases[i] === undefined) {
      suite.cases[i] = record.ok
        ? { ok: true, value: record.value }
        : { ok: false, error: asErrorReport(record.error) };
    }
  }
  return false;
}

/**
 * Runs the suites' calls in one sandboxed child process and collects what came back, once a
 * sandbox slot is free. Rejects only while waiting: SandboxBusyError past the queue timeout, or
 * the signal's reason when aborted.
 */
export async function runInSandbox(
  suites: SuiteRequest[],
  options: SandboxOptions,
): Promise<SandboxRun> {
  const release = await slots.acquire(
    options.signal,
    options.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS,
  );
  try {
    return await runChild(suites, options);
  } finally {
    release();
  }
}

async function runChild(suites: SuiteRequest[], options: SandboxOptions): Promise<SandboxRun> {
  const { root, signal } = options;
  const mode = options.mode ?? defaultSandboxMode();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // The path the code sees its workspace at.
  const workdir = mode === "bwrap" ? SANDBOX_WORKDIR : root;
  const spec: HarnessSpec = {
    root: workdir,
    nonce: randomUUID(),
    suites: suites.map((suite) => ({
      module: pathToFileURL(`${workdir}/${suite.file}`).href,
      names: suite.names,
      calls: suite.calls,
    })),
  };
  const runs: SuiteRun[] = suites.map((suite) => ({
    load: undefined,
    cases: new Array<CaseRecord | undefined>(suite.calls.length).fill(undefined),
  }));
  let completed = false;
  const result = await runSandboxed({
    mode,
    command: process.execPath,
    args: [
      "--max-old-space-size=128",
      ...permissionFlags(workdir),
      "--no-warnings",
      "--input-type=module",
      "--eval",
      HARNESS_SOURCE,
    ],
    workspace: root,
    env: {},
    stdin: JSON.stringify(spec),
    limits: codingLimits(timeoutMs),
    outputKeepChars: OUTPUT_KEEP_CHARS,
    channelLimits: { maxTotalBytes: RECORDS_MAX_BYTES, maxLineBytes: RECORDS_MAX_BYTES },
    // Harness records are notifications; those without the run's nonce are ignored.
    onMessage: (record) => {
      if (record && typeof record === "object" && !Array.isArray(record)) {
        if (storeRecord(runs, record as Record<string, unknown>, spec.nonce)) completed = true;
      }
    },
    ...(signal === undefined ? {} : { signal }),
  });
  return {
    suites: runs,
    completed,
    timedOut: result.timedOut && !completed,
    outputExceeded: result.killedBy === "output",
    memoryExceeded: result.killedBy === "memory",
    cpuExceeded: result.killedBy === "cpu",
    workspaceFull: result.workspaceFull,
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    durationMs: result.durationMs,
    mode: result.mode,
    workdir,
  };
}
