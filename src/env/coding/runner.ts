/**
 * The sandboxed test runner. Agent code runs only in a child `node` process: empty environment
 * (no inherited variables, so no secrets), 128 MB heap, a wall-clock timeout that kills the
 * child's process group, capped output, cwd = the workspace, and, where Node offers it, the
 * permission model: files readable and writable only inside the workspace, no child processes,
 * no workers, no addons. Where unprivileged namespaces are available (`unshare -rnpf`), the child
 * also gets its own network namespace (the host's servers are unreachable) and its own PID
 * namespace (it cannot see or signal the host's processes).
 *
 * Children run at most SANDBOX_SLOTS at a time per process, a number derived from the machine's
 * memory, however many coding environments are open (a server may hold 1,024); further runs
 * wait in line.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { pathToFileURL } from "node:url";
import { EnvError } from "../types.js";
import { HARNESS_SOURCE, type HarnessSpec } from "./harness.js";

export const DEFAULT_TIMEOUT_MS = 5000;
/** Console output kept for the observation (per stream); the rest is counted, not stored. */
export const OUTPUT_KEEP_CHARS = 4000;
/** A child printing more than this in total is killed. */
export const OUTPUT_KILL_BYTES = 8 * 1024 * 1024;
/**
 * A child whose processes hold more resident memory than this is killed. --max-old-space-size
 * caps only the JS heap; Buffers and other native memory are caught here.
 */
export const MEMORY_KILL_BYTES = 256 * 1024 * 1024;
const MEMORY_CHECK_MS = 50;
/**
 * Memory budgeted per concurrent child: the RSS kill line plus a margin, because the watchdog
 * samples every MEMORY_CHECK_MS (a child can overshoot in between) and the `unshare` wrapper
 * and pipes cost a little too.
 */
export const SANDBOX_RUN_MEMORY_BYTES = MEMORY_KILL_BYTES + 64 * 1024 * 1024;
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

/** Resident bytes of a process and its children (Linux /proc; 0 where unreadable). */
function residentBytes(pid: number): number {
  let total = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    for (const child of children ? children.split(/\s+/) : [])
      total += residentBytes(Number(child));
  } catch {
    // The process ended, or this is not Linux: nothing to add.
  }
  return total;
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

const NAMESPACE_ARGS = ["--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"];
let namespacesAvailable: boolean | undefined;

/** Whether `unshare` can give the child its own user, network and PID namespaces here. */
function canUseNamespaces(): boolean {
  if (namespacesAvailable === undefined) {
    const probe = spawnSync("unshare", [...NAMESPACE_ARGS, "true"], {
      stdio: "ignore",
      timeout: 5000,
    });
    namespacesAvailable = probe.status === 0;
  }
  return namespacesAvailable;
}

/** The command that starts the sandboxed node with these arguments. */
function sandboxCommand(nodeArgs: string[]): [string, string[]] {
  return canUseNamespaces()
    ? ["unshare", [...NAMESPACE_ARGS, process.execPath, ...nodeArgs]]
    : [process.execPath, nodeArgs];
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
  exitCode: number | null;
  signal: string | null;
  stdout: CappedText;
  stderr: CappedText;
  durationMs: number;
}

export interface CappedText {
  text: string;
  /** Characters received beyond `text`. */
  dropped: number;
}

export interface SandboxOptions {
  /** Absolute workspace directory: the child's cwd and the only place it may read or write. */
  root: string;
  /** Wall-clock limit of the child, from its start (time spent waiting for a slot not counted). */
  timeoutMs?: number;
  /** Longest wait for a sandbox slot (default DEFAULT_QUEUE_TIMEOUT_MS); then SandboxBusyError. */
  queueTimeoutMs?: number;
  /** Aborting gives up a run still waiting for a slot, or kills its child once started. */
  signal?: AbortSignal;
}

class TextCollector {
  private kept = "";
  private dropped = 0;
  add(chunk: string): void {
    const room = OUTPUT_KEEP_CHARS - this.kept.length;
    if (room > 0) this.kept += chunk.slice(0, room);
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }
  result(): CappedText {
    return { text: this.kept, dropped: this.dropped };
  }
}

/** Splits fd-3 bytes into JSON records; anything unparseable is ignored. */
class RecordReader {
  private pending = "";
  private bytes = 0;
  constructor(private readonly onRecord: (record: Record<string, unknown>) => void) {}
  add(chunk: string): void {
    this.bytes += chunk.length;
    if (this.bytes > RECORDS_MAX_BYTES) return;
    this.pending += chunk;
    let newline = this.pending.indexOf("\n");
    while (newline >= 0) {
      const line = this.pending.slice(0, newline);
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf("\n");
      try {
        const record = JSON.parse(line) as unknown;
        if (record && typeof record === "object") this.onRecord(record as Record<string, unknown>);
      } catch {
        // Not a harness record: ignore it.
      }
    }
  }
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

function runChild(suites: SuiteRequest[], options: SandboxOptions): Promise<SandboxRun> {
  const { root, signal: abortSignal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const spec: HarnessSpec = {
    root,
    nonce: randomUUID(),
    suites: suites.map((suite) => ({
      module: pathToFileURL(`${root}/${suite.file}`).href,
      names: suite.names,
      calls: suite.calls,
    })),
  };
  const runs: SuiteRun[] = suites.map((suite) => ({
    load: undefined,
    cases: new Array<CaseRecord | undefined>(suite.calls.length).fill(undefined),
  }));
  const started = Date.now();
  const args = [
    "--max-old-space-size=128",
    ...permissionFlags(root),
    "--no-warnings",
    "--input-type=module",
    "--eval",
    HARNESS_SOURCE,
  ];

  return new Promise((resolve) => {
    const [command, commandArgs] = sandboxCommand(args);
    const child = spawn(command, commandArgs, {
      cwd: root,
      env: {},
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      // Its own process group, so a kill reaches anything it started.
      detached: true,
      windowsHide: true,
    });
    const stdout = new TextCollector();
    const stderr = new TextCollector();
    let outputBytes = 0;
    let completed = false;
    let timedOut = false;
    let outputExceeded = false;
    let memoryExceeded = false;
    let settled = false;

    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = !completed;
      kill();
    }, timeoutMs);
    // An abort kills the child; the run still settles with what it got, when the child closes.
    const onAbort = () => kill();
    abortSignal?.addEventListener("abort", onAbort, { once: true });
    const memoryWatch = setInterval(() => {
      if (child.pid !== undefined && residentBytes(child.pid) > MEMORY_KILL_BYTES) {
        memoryExceeded = true;
        kill();
      }
    }, MEMORY_CHECK_MS);

    const onOutput = (collector: TextCollector) => (chunk: string) => {
      outputBytes += chunk.length;
      collector.add(chunk);
      if (outputBytes > OUTPUT_KILL_BYTES && !outputExceeded) {
        outputExceeded = true;
        kill();
      }
    };
    child.stdout?.setEncoding("utf8").on("data", onOutput(stdout));
    child.stderr?.setEncoding("utf8").on("data", onOutput(stderr));
    const records = new RecordReader((record) => {
      if (storeRecord(runs, record, spec.nonce)) completed = true;
    });
    const resultPipe = child.stdio[3];
    if (resultPipe && "setEncoding" in resultPipe) {
      resultPipe.setEncoding("utf8");
      resultPipe.on("data", (chunk: string) => records.add(chunk));
      resultPipe.on("error", () => {});
    }
    // The child may exit before reading its spec; a broken pipe here is not our failure.
    child.stdin?.on("error", () => {});
    child.stdin?.end(JSON.stringify(spec));

    const finish = (exitCode: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(memoryWatch);
      abortSignal?.removeEventListener("abort", onAbort);
      resolve({
        suites: runs,
        completed,
        timedOut,
        outputExceeded,
        memoryExceeded,
        exitCode,
        signal,
        stdout: stdout.result(),
        stderr: stderr.result(),
        durationMs: Date.now() - started,
      });
    };
    // "close" fires after every stdio stream has ended, so all records are in.
    child.on("close", (code, signal) => finish(code, signal));
    child.on("error", () => finish(null, null));
  });
}
