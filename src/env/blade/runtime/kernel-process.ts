/**
 * One long-lived kernel process in the sandbox, driven over the sandbox's channel (fd 3; see
 * src/sandbox/channel.ts). The kernel pulls its work: it sends the request
 * `{"id", "op": "next", "reply"}` carrying the result of its previous command and waits; the
 * parent answers with the next command. While a command runs the kernel may send notifications
 * (`{"op": "started" | "outcome", ...}`), which reach the caller in order and restart the clock:
 * the time limit holds for each cell or script, not for a whole batch.
 *
 * A command that outlives its limit kills the process (every process of its sandbox); so does
 * any limit of the sandbox (memory, output, CPU). The caller learns that the state was lost, and
 * the next command starts a fresh process transparently. Shared by the Python and SQL runtimes.
 */
import { execFile } from "node:child_process";
import { type Dirent, existsSync, readdirSync } from "node:fs";
import { join, sep } from "node:path";
import { promisify } from "node:util";
import {
  removeWorkspace,
  runSandboxed,
  type SandboxBind,
  type SandboxLimits,
  type SandboxMode,
  type SandboxResult,
} from "../../../sandbox/index.js";
import { FrameDecoder, FrameWireError } from "./frame-wire.js";
import type {
  AnalysisSession,
  CellOutcome,
  ModelOutcome,
  RuntimeLimits,
  RuntimeName,
  ScriptOutcome,
} from "./types.js";

/**
 * The resident-memory watchdog (all the session's processes together), as a multiple of the
 * memory limit: above it, so that one process meets its own limit first (a MemoryError, or the
 * engine's out-of-memory error, and the session goes on) and the watchdog stops only what that
 * limit cannot see (many processes at once).
 */
export const RESIDENT_SHARE = 1.25;
/** Longest line the kernel may send (a frame of one script, in JSON). */
const CHANNEL_LINE_BYTES = 256 * 1024 * 1024;
/** The channel's budget for a whole session: frames of many batches pass through it. */
const CHANNEL_TOTAL_BYTES = Number.MAX_SAFE_INTEGER;
/** How long close() lets the kernel leave on its own before it is killed. */
const CLOSE_GRACE_MS = 2_000;
/** Characters of the kernel's stderr quoted when it dies. */
const STDERR_TAIL_CHARS = 400;
/** Files handed to one `ldd` call. */
const LDD_BATCH = 64;

export interface KernelSpec {
  /** Named in messages: "Python", "SQL". */
  label: string;
  command: string;
  args: string[];
  binds: SandboxBind[];
  env: Record<string, string>;
  limits: Partial<SandboxLimits>;
  mode: SandboxMode;
  /** Limit for starting (the first "next", and the answer to `init`). */
  startMs: number;
  /** A first command sent to every fresh process (the SQL kernel's dataset). */
  init?: unknown;
  /**
   * A host folder copied to /work for every fresh process (the kernel and its data travel this
   * way, whatever their host permissions), and removed at close.
   */
  workspace?: string;
  /** Run before every start: (re)writes the workspace, which a previous process may have changed. */
  prepare?: () => void;
}

/** What one command came to. */
export type Exchange =
  | { ok: true; reply: unknown }
  | {
      ok: false;
      /** The command ran past its limit. */
      timedOut: boolean;
      /** Why the process is gone (or could not start), in one line. */
      reason: string;
      /** The process could not be started at all (no sandbox, a bad setup). */
      setupError?: Error;
    };

interface Current {
  resolve: (exchange: Exchange) => void;
  onNote: ((note: Record<string, unknown>) => void) | undefined;
  ms: number;
  timer: NodeJS.Timeout | undefined;
}

interface Instance {
  controller: AbortController;
  done: Promise<void>;
  /** The kernel's pending "next": hand it the next command. */
  waiting: ((command: unknown) => void) | undefined;
  current: Current | undefined;
  timedOut: boolean;
  ended: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeEnd(label: string, result: SandboxResult, timedOut: boolean): string {
  if (timedOut) return `the ${label} process ran past its time limit and was stopped`;
  const limit: Record<string, string> = {
    wall: "its session time limit",
    cpu: "its CPU time limit",
    memory: "its memory limit",
    fsize: "its file size limit",
    output: "its output limit",
    abort: "a stop",
  };
  const how = result.killedBy
    ? `was killed by ${limit[result.killedBy] ?? result.killedBy}`
    : result.signal
      ? `ended by ${result.signal}`
      : `exited with code ${result.exitCode}`;
  const tail = result.stderr.text.trim().split("\n").slice(-3).join(" | ");
  return `the ${label} process ${how}${tail ? ` (${tail.slice(-STDERR_TAIL_CHARS)})` : ""}`;
}

export class KernelProcess {
  private instance: Instance | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly spec: KernelSpec) {}

  /** Starts the process now (if it is not running) and says how that went. */
  start(): Promise<Exchange> {
    return this.serialized(() => this.ensureStarted());
  }

  /**
   * Sends one command and waits for the kernel's reply. `ms` is the limit for the command, or
   * for each stretch between two of its notifications.
   */
  send(
    command: unknown,
    ms: number,
    onNote?: (note: Record<string, unknown>) => void,
  ): Promise<Exchange> {
    return this.serialized(async () => {
      const started = await this.ensureStarted();
      if (!started.ok) return started;
      const instance = this.instance as Instance;
      return this.await(instance, ms, onNote, command);
    });
  }

  /** Ends the process (asking the kernel to leave first). */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue.catch(() => {});
    const instance = this.instance;
    this.instance = undefined;
    if (instance !== undefined && !instance.ended) {
      const waiting = instance.waiting;
      instance.waiting = undefined;
      if (waiting) waiting({ op: "exit" });
      else instance.controller.abort("closed");
      const timer = setTimeout(() => instance.controller.abort("closed"), CLOSE_GRACE_MS);
      await instance.done;
      clearTimeout(timer);
    }
    if (this.spec.workspace !== undefined) removeWorkspace(this.spec.workspace);
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => {});
    return next;
  }

  private async ensureStarted(): Promise<Exchange> {
    if (this.closed) {
      return { ok: false, timedOut: false, reason: `the ${this.spec.label} session is closed` };
    }
    if (this.instance !== undefined && !this.instance.ended) return { ok: true, reply: null };
    const instance = this.spawn();
    this.instance = instance;
    const hello = await this.await(instance, this.spec.startMs, undefined, undefined);
    if (!hello.ok) return hello;
    const fatal = this.fatal(hello.reply);
    if (fatal !== undefined) return this.fail(instance, fatal);
    if (this.spec.init === undefined) return hello;
    const loaded = await this.await(instance, this.spec.startMs, undefined, this.spec.init);
    if (!loaded.ok) return loaded;
    const failed = this.fatal(loaded.reply);
    return failed === undefined ? loaded : this.fail(instance, failed);
  }

  private fatal(reply: unknown): string | undefined {
    return isRecord(reply) && typeof reply.fatal === "string" ? reply.fatal : undefined;
  }

  private async fail(instance: Instance, reason: string): Promise<Exchange> {
    instance.controller.abort("failed");
    await instance.done;
    return { ok: false, timedOut: false, reason: `the ${this.spec.label} kernel: ${reason}` };
  }

  /** Hands `command` to the kernel (none: just waits for its first request) and awaits its reply. */
  private await(
    instance: Instance,
    ms: number,
    onNote: Current["onNote"],
    command: unknown,
  ): Promise<Exchange> {
    if (instance.ended) {
      return Promise.resolve({
        ok: false,
        timedOut: false,
        reason: `the ${this.spec.label} process is gone`,
      });
    }
    return new Promise<Exchange>((resolve) => {
      const current: Current = { resolve, onNote, ms, timer: undefined };
      instance.current = current;
      this.arm(instance, current);
      if (command !== undefined) {
        const waiting = instance.waiting;
        instance.waiting = undefined;
        waiting?.(command);
      }
    });
  }

  private arm(instance: Instance, current: Current): void {
    if (current.timer) clearTimeout(current.timer);
    current.timer = setTimeout(() => {
      instance.timedOut = true;
      instance.controller.abort("timed out");
    }, current.ms);
  }

  private spawn(): Instance {
    const controller = new AbortController();
    const instance: Instance = {
      controller,
      done: Promise.resolve(),
      waiting: undefined,
      current: undefined,
      timedOut: false,
      ended: false,
    };
    const end = (exchange: Exchange) => {
      instance.ended = true;
      instance.waiting = undefined;
      const current = instance.current;
      instance.current = undefined;
      if (current?.timer) clearTimeout(current.timer);
      current?.resolve(exchange);
    };
    try {
      this.spec.prepare?.();
    } catch (error) {
      const setupError = error instanceof Error ? error : new Error(String(error));
      end({ ok: false, timedOut: false, reason: setupError.message, setupError });
      return instance;
    }
    instance.done = runSandboxed({
      ...(this.spec.workspace === undefined ? {} : { workspace: this.spec.workspace }),
      command: this.spec.command,
      args: this.spec.args,
      binds: this.spec.binds,
      env: this.spec.env,
      limits: this.spec.limits,
      mode: this.spec.mode,
      signal: controller.signal,
      channelLimits: { maxLineBytes: CHANNEL_LINE_BYTES, maxTotalBytes: CHANNEL_TOTAL_BYTES },
      onMessage: (message) => this.onMessage(instance, message),
    }).then(
      (result) =>
        end({
          ok: false,
          timedOut: instance.timedOut,
          reason: describeEnd(this.spec.label, result, instance.timedOut),
        }),
      (error: unknown) => {
        const setupError = error instanceof Error ? error : new Error(String(error));
        end({ ok: false, timedOut: false, reason: setupError.message, setupError });
      },
    );
    return instance;
  }

  private onMessage(instance: Instance, message: unknown): unknown {
    if (!isRecord(message)) return undefined;
    if (message.id === undefined) {
      // A notification: part of the current command's result; the clock starts again.
      const current = instance.current;
      if (current === undefined) return undefined;
      this.arm(instance, current);
      current.onNote?.(message);
      return undefined;
    }
    if (message.op !== "next") throw new Error(`unknown request ${JSON.stringify(message.op)}`);
    if (instance.waiting !== undefined) throw new Error("a command is already awaited");
    return new Promise<unknown>((resolve) => {
      instance.waiting = resolve;
      const current = instance.current;
      instance.current = undefined;
      if (current?.timer) clearTimeout(current.timer);
      current?.resolve({ ok: true, reply: message.reply ?? null });
    });
  }
}

let lddCache: Map<string, string[]> | undefined;

/**
 * The shared libraries that `files` (native modules: .so, .node) load, from `ldd`, without
 * those under `except` (folders bound whole anyway). A library `ldd` cannot find is left out:
 * the module that needs it fails to load inside, as it would outside. Only for trusted host
 * files (ldd may run what it inspects).
 */
export async function librariesOf(
  files: readonly string[],
  except: readonly string[] = [],
): Promise<string[]> {
  lddCache ??= new Map();
  const run = promisify(execFile);
  const found = new Set<string>();
  const missing = files.filter((file) => !lddCache?.has(file));
  for (let at = 0; at < missing.length; at += LDD_BATCH) {
    const batch = missing.slice(at, at + LDD_BATCH);
    let text = "";
    try {
      text = (await run("ldd", batch, { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 })).stdout;
    } catch (error) {
      // ldd exits non-zero when one file of the batch is not dynamic; its output still holds the rest.
      text = String((error as { stdout?: unknown }).stdout ?? "");
    }
    let file: string | undefined;
    let libraries: string[] = [];
    const flush = () => {
      if (file !== undefined) lddCache?.set(file, libraries);
    };
    for (const line of text.split("\n")) {
      const header = /^(\/\S.*):$/.exec(line);
      if (header?.[1] !== undefined) {
        flush();
        file = header[1];
        libraries = [];
        continue;
      }
      if (batch.length === 1 && file === undefined) file = batch[0];
      const match = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
      if (match?.[1]) libraries.push(match[1]);
    }
    flush();
    for (const name of batch) if (!lddCache.has(name)) lddCache.set(name, []);
  }
  for (const file of files) for (const library of lddCache.get(file) ?? []) found.add(library);
  return [...found].filter((path) => !except.some((dir) => path.startsWith(`${dir}${sep}`)));
}

/** Every file under `dir` whose name ends with one of `suffixes` (native modules), at most `limit`. */
export function nativeModulesUnder(
  dir: string,
  suffixes: readonly string[],
  limit = 5_000,
): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    if (found.length >= limit) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && suffixes.some((suffix) => entry.name.includes(suffix))) {
        found.push(path);
        if (found.length >= limit) return;
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

/** What a cell says when its process is gone. */
export function lostCell(
  exchange: Exchange & { ok: false },
  label: string,
  cellMs: number,
): CellOutcome {
  const lost = `the ${label} session was restarted and its state (variables, tables) was lost`;
  return exchange.timedOut
    ? {
        ok: false,
        output: "",
        error: `TimeoutError: the cell ran past its ${cellMs / 1000} s limit; ${lost}`,
        timedOut: true,
      }
    : { ok: false, output: "", error: `${exchange.reason}; ${lost}` };
}

/** A kernel's reply to a cell, checked. */
export function cellOutcome(reply: unknown): CellOutcome {
  if (!isRecord(reply) || typeof reply.ok !== "boolean" || typeof reply.output !== "string") {
    return { ok: false, output: "", error: "the kernel's reply to the cell is not readable" };
  }
  const outcome: CellOutcome = { ok: reply.ok, output: reply.output };
  if (!reply.ok) outcome.error = typeof reply.error === "string" ? reply.error : "error";
  return outcome;
}

function scriptOutcome(raw: unknown, decoder: FrameDecoder, label: string): ScriptOutcome {
  if (!isRecord(raw) || typeof raw.ok !== "boolean") {
    return { ok: false, error: `${label}: the kernel's outcome is not readable` };
  }
  if (!raw.ok) return { ok: false, error: typeof raw.error === "string" ? raw.error : "error" };
  switch (raw.kind) {
    case "frame":
      try {
        return { ok: true, kind: "frame", frame: decoder.decode(raw.frame, label) };
      } catch (error) {
        if (error instanceof FrameWireError) {
          return { ok: false, error: `the script's frame could not be read: ${error.message}` };
        }
        throw error;
      }
    case "groupby":
      if (Array.isArray(raw.columns) && raw.columns.every((name) => typeof name === "string")) {
        return { ok: true, kind: "groupby", columns: raw.columns as string[] };
      }
      break;
    case "other":
      if (typeof raw.type === "string") return { ok: true, kind: "other", type: raw.type };
      break;
  }
  return { ok: false, error: `${label}: the kernel's outcome is not readable` };
}

/**
 * Runs scripts in a kernel ("scripts" command), each outcome as it arrives. A script that kills
 * the process (its time limit, memory) fails alone: a fresh process runs the scripts after it.
 */
export async function runScriptBatch(
  kernel: KernelProcess,
  scripts: readonly string[],
  cellMs: number,
): Promise<ScriptOutcome[]> {
  const outcomes: (ScriptOutcome | undefined)[] = new Array(scripts.length).fill(undefined);
  let start = 0;
  while (start < scripts.length) {
    const decoder = new FrameDecoder();
    const from = start;
    let running: number | undefined;
    const exchange = await kernel.send(
      { op: "scripts", scripts: scripts.slice(from) },
      cellMs,
      (note) => {
        const index = typeof note.index === "number" ? from + note.index : -1;
        if (!(index >= from && index < scripts.length)) return;
        if (note.op === "started") running = index;
        else if (note.op === "outcome") {
          outcomes[index] = scriptOutcome(note.outcome, decoder, `script ${index + 1}`);
        }
      },
    );
    if (exchange.ok) break;
    if (running === undefined) {
      // Not even started (the process could not start): every remaining script fails alike.
      for (let index = from; index < scripts.length; index++) {
        outcomes[index] ??= { ok: false, error: exchange.reason };
      }
      break;
    }
    outcomes[running] ??= exchange.timedOut
      ? { ok: false, error: `the script ran past its ${cellMs / 1000} s limit`, timedOut: true }
      : { ok: false, error: exchange.reason };
    start = running + 1;
  }
  return outcomes.map(
    (outcome) =>
      outcome ?? {
        ok: false,
        error: "the kernel sent no outcome for this script (its frame may be too large)",
      },
  );
}

/**
 * What both runtimes' sessions share: cells and script batches go to the kernel the same way;
 * only fitting a model differs (statsmodels in the kernel, or clade's GLM on the host).
 */
export abstract class KernelSession implements AnalysisSession {
  abstract readonly runtime: RuntimeName;

  constructor(
    protected readonly kernel: KernelProcess,
    protected readonly limits: RuntimeLimits,
    /** How errors name the runtime: "Python", "SQL". */
    private readonly label: string,
  ) {}

  async execute(code: string): Promise<CellOutcome> {
    const command = { op: "execute", code, outputChars: this.limits.outputChars };
    const exchange = await this.kernel.send(command, this.limits.cellMs);
    if (!exchange.ok) return lostCell(exchange, this.label, this.limits.cellMs);
    return cellOutcome(exchange.reply);
  }

  runScripts(scripts: readonly string[]): Promise<ScriptOutcome[]> {
    return runScriptBatch(this.kernel, scripts, this.limits.cellMs);
  }

  abstract fitModel(transformScript: string, modelCode: string): Promise<ModelOutcome>;

  close(): Promise<void> {
    return this.kernel.close();
  }
}
