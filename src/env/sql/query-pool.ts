/**
 * Runs agent-written SQL where it can be stopped: in a few long-lived child processes, each with
 * its own copy of the databases, under a deadline. SQLite work cannot be interrupted from
 * JavaScript (better-sqlite3 has no interrupt, and Worker.terminate waits for the native call to
 * return), so a query that outlives its deadline is answered with an error and its process is
 * SIGKILLed; the next query that needs one gets a fresh process. Children also run under a
 * data-size limit (RLIMIT_DATA, on Linux): better-sqlite3 builds SQLite without memory
 * statistics, so PRAGMA hard_heap_limit does nothing, and a query that builds gigabytes of text
 * fails with "out of memory" instead. The parent process only waits on IPC, so it keeps serving
 * other clients while a query runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DATABASE_NAMES, databaseImage, databaseInfo } from "./databases.js";
import { type QueryOutcome, refusal } from "./execute.js";
import { QUERY_CHILD_MARKER, type QueryReply, type QueryRequest } from "./query-child.js";

/** Longest a query may run, in milliseconds, before its process is killed. */
export const QUERY_TIME_LIMIT_MS = 2_000;
/**
 * Child processes at most; more queries wait in a queue. Two even on one core: while one child
 * is held by a slow query up to its deadline, the other keeps answering everyone else.
 */
export const QUERY_POOL_SIZE = 2;
/** Data-segment limit of a child, in KiB (SQLite's values, the V8 heap, everything). */
const CHILD_DATA_LIMIT_KIB = 1024 * 1024;
/** A child that has not said it is ready in this long is taken as broken. */
const STARTUP_LIMIT_MS = 60_000;
/** Children that die before they are ready, in a row, before queued queries fail. */
const MAX_FAILED_STARTS = 3;
/** Last characters of a child's stderr kept for the error when it fails to start. */
const STDERR_TAIL = 1_000;

export interface QueryOptions {
  /** Deadline for this query (default QUERY_TIME_LIMIT_MS). */
  timeLimitMs?: number;
}

export interface QueryPoolOptions {
  size?: number;
  timeLimitMs?: number;
}

interface Job {
  request: QueryRequest;
  resolve: (outcome: QueryOutcome) => void;
}

interface Child {
  process: ChildProcess;
  ready: boolean;
  /** The query in flight, if any. */
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Databases whose image this child has been sent. */
  databases: Set<string>;
  stderr: string;
  /** Set once the child is killed or dead; it then takes no more work. */
  gone: boolean;
}

const fromTypeScriptSource = () => import.meta.url.endsWith(".ts");

/** The command that starts a child: the compiled script, or under tsx its TypeScript source. */
function childCommand(): { file: string; args: string[] } {
  const source = fromTypeScriptSource();
  const script = fileURLToPath(
    new URL(source ? "./query-child.ts" : "./query-child.js", import.meta.url),
  );
  // As for the store's writer thread: the test runner and bench load the .ts file through tsx.
  const loader = source
    ? ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href]
    : [];
  const node = [...loader, script];
  // Linux counts every private writable mapping (malloc's included) against RLIMIT_DATA; other
  // systems differ, and there the deadline alone bounds a query.
  if (process.platform !== "linux") return { file: process.execPath, args: node };
  // The shell sets the limit and execs node in its place (same pid, same IPC channel); a limit
  // it may not raise is skipped rather than keeping the child from starting.
  return {
    file: "/bin/sh",
    args: [
      "-c",
      `ulimit -d ${CHILD_DATA_LIMIT_KIB} 2>/dev/null; exec "$0" "$@"`,
      process.execPath,
      ...node,
    ],
  };
}

const timeText = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

export class QueryPool {
  private readonly size: number;
  private readonly timeLimitMs: number;
  private readonly children = new Set<Child>();
  private readonly queue: Job[] = [];
  private nextId = 0;
  private failedStarts = 0;
  private lastStartError = "";
  private closed = false;
  /** Children must not outlive this process, even while stuck in a query. */
  private readonly killAll = () => {
    for (const child of this.children) child.process.kill("SIGKILL");
  };

  constructor(options: QueryPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? QUERY_POOL_SIZE);
    this.timeLimitMs = options.timeLimitMs ?? QUERY_TIME_LIMIT_MS;
    process.on("exit", this.killAll);
  }

  /** Runs one query on the named database in a child; never throws or rejects. */
  run(database: string, sql: string, options: QueryOptions = {}): Promise<QueryOutcome> {
    // Refusals need no child: answered here, they cost no round trip and no copy of the text.
    const refused = refusal(sql);
    if (refused) return Promise.resolve({ ok: false, error: refused });
    if (this.closed) return Promise.resolve({ ok: false, error: "the query pool is closed" });
    if (!DATABASE_NAMES.includes(database)) {
      return Promise.resolve({ ok: false, error: `unknown database ${database}` });
    }
    const timeLimitMs = options.timeLimitMs ?? this.timeLimitMs;
    return new Promise((resolve) => {
      this.queue.push({ request: { id: this.nextId++, database, sql, timeLimitMs }, resolve });
      this.dispatch();
    });
  }

  /**
   * Starts a child now if there is none, so that its start overlaps the caller's own setup
   * instead of delaying the first query. It does not keep this process alive.
   */
  prestart(): void {
    if (!this.closed && this.children.size === 0) this.spawn();
  }

  /** Process ids of the live children (for tests). */
  pids(): number[] {
    return [...this.children].flatMap((child) => (child.process.pid ? [child.process.pid] : []));
  }

  /** Kills every child and answers queued queries with an error. */
  close(): void {
    this.closed = true;
    process.off("exit", this.killAll);
    for (const child of [...this.children]) this.lose(child, "the query pool was closed");
    this.failQueue("the query pool was closed");
  }

  private dispatch(): void {
    for (const child of this.children) {
      while (this.queue.length > 0 && child.ready && !child.job && !child.gone) {
        this.start(child, this.queue.shift() as Job);
      }
    }
    const startingChildren = [...this.children].filter((child) => !child.ready);
    // Queued queries wait for starting children: they keep this process alive meanwhile.
    for (const child of startingChildren) this.hold(child, this.queue.length > 0);
    // One start at a time: starts compete for the CPU with the work already under way.
    if (
      this.queue.length > 0 &&
      startingChildren.length === 0 &&
      this.children.size < this.size &&
      this.failedStarts < MAX_FAILED_STARTS
    ) {
      this.spawn();
    }
    if (this.children.size === 0 && this.queue.length > 0) {
      // Every recent start failed: say so rather than retry forever; the next query tries again.
      this.failQueue(`the query process could not be started: ${this.lastStartError}`);
      this.failedStarts = 0;
    }
  }

  private start(child: Child, job: Job): void {
    const { database, timeLimitMs } = job.request;
    let request = job.request;
    if (!child.databases.has(database)) {
      // Built here once per process (the parent generated this database for its tasks anyway).
      try {
        const bytes = databaseImage(database);
        request = {
          ...request,
          image: { bytes, tableRows: [...databaseInfo(database).tableRows] },
        };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        job.resolve({ ok: false, error: `the database could not be built: ${message}` });
        return;
      }
      child.databases.add(database);
    }
    child.job = job;
    this.hold(child, true);
    child.timer = setTimeout(() => {
      this.lose(child, `the query ran longer than ${timeText(timeLimitMs)} and was stopped`);
    }, timeLimitMs);
    child.process.send(request, undefined, {}, (error) => {
      if (error) this.lose(child, `the query process could not be reached (${error.message})`);
    });
  }

  private spawn(): void {
    const { file, args } = childCommand();
    const spawned = spawn(file, args, {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      // Structured clone keeps blobs as bytes (JSON would turn them into objects).
      serialization: "advanced",
      env: { ...process.env, [QUERY_CHILD_MARKER]: "1" },
    });
    const child: Child = {
      process: spawned,
      ready: false,
      job: undefined,
      timer: undefined,
      databases: new Set(),
      stderr: "",
      gone: false,
    };
    this.children.add(child);
    child.timer = setTimeout(
      () => this.lose(child, `the query process did not start in ${timeText(STARTUP_LIMIT_MS)}`),
      STARTUP_LIMIT_MS,
    );
    child.timer.unref();
    spawned.stderr?.setEncoding("utf8");
    spawned.stderr?.on("data", (chunk: string) => {
      child.stderr = (child.stderr + chunk).slice(-STDERR_TAIL);
    });
    // Idle children must not keep this process alive: the handle, the pipe and the channel.
    (spawned.stderr as { unref?: () => void } | null)?.unref?.();
    spawned.on("message", (reply: QueryReply) => this.receive(child, reply));
    spawned.on("error", (error) => this.lose(child, `the query process failed: ${error.message}`));
    spawned.on("exit", (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      // The last line that says something (V8 and Node end their reports with "#" or a version).
      const detail =
        child.stderr
          .split("\n")
          .map((line) => line.replace(/^[#\s]+/, "").trim())
          .filter((line) => /[a-z]/i.test(line) && !/^Node\.js v\d/.test(line))
          .at(-1) ?? "";
      this.lose(child, `the query process ${how}${detail ? ` (${detail})` : ""}`);
    });
    this.hold(child, this.queue.length > 0);
  }

  private receive(child: Child, reply: QueryReply): void {
    if (child.gone) return;
    if ("ready" in reply) {
      clearTimeout(child.timer);
      child.timer = undefined;
      child.ready = true;
      this.failedStarts = 0;
      this.hold(child, false);
      this.dispatch();
      return;
    }
    const job = child.job;
    if (!job || job.request.id !== reply.id) return;
    clearTimeout(child.timer);
    child.timer = undefined;
    child.job = undefined;
    this.hold(child, false);
    job.resolve(reply.outcome);
    this.dispatch();
  }

  /** Takes a child out of the pool for good, killing it, and answers its query with `error`. */
  private lose(child: Child, error: string): void {
    if (child.gone) return;
    child.gone = true;
    clearTimeout(child.timer);
    this.children.delete(child);
    child.process.kill("SIGKILL");
    // Its exit is no longer awaited: nothing of it may keep this process alive.
    this.hold(child, false);
    if (!child.ready) {
      this.failedStarts++;
      this.lastStartError = error;
    }
    const job = child.job;
    child.job = undefined;
    job?.resolve({ ok: false, error });
    if (!this.closed) this.dispatch();
  }

  private failQueue(error: string): void {
    for (const job of this.queue.splice(0)) job.resolve({ ok: false, error });
  }

  /** Keeps this process alive for a child while it has work (true), or not (false). */
  private hold(child: Child, busy: boolean): void {
    const { process: spawned } = child;
    if (busy) {
      spawned.ref();
      spawned.channel?.ref();
    } else {
      spawned.unref();
      spawned.channel?.unref();
    }
  }
}

let shared: QueryPool | undefined;

/** The process-wide pool every SqlEnv uses, created on first use. */
export function queryPool(): QueryPool {
  shared ??= new QueryPool();
  return shared;
}
