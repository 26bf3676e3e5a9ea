/**
 * Child-process side of the query pool (query-pool.ts): opens each database from the image the
 * parent sends with its first query on it, and runs one query at a time under the guards of
 * execute.ts. The parent kills this process when a query outlives its deadline; a watchdog
 * thread does the same if the parent is gone and cannot.
 */
import { Worker } from "node:worker_threads";
import { openImage } from "./connection.js";
import { type QueryOutcome, type QueryTarget, runQuery } from "./execute.js";

/** Set in a child's environment by the pool, so that importing this module elsewhere is inert. */
export const QUERY_CHILD_MARKER = "CLADE_SQL_QUERY_CHILD";
/** The watchdog kills this process this long after a query's deadline has passed. */
export const WATCHDOG_GRACE_MS = 1_000;

/** A database as the parent hands it over: its image and its table sizes (for the guard). */
export interface DatabaseImage {
  bytes: Uint8Array;
  tableRows: [string, number][];
}

export interface QueryRequest {
  id: number;
  database: string;
  sql: string;
  /** The parent's deadline for this query; rows are read for at most three quarters of it. */
  timeLimitMs: number;
  /** Sent with the first query on each database a child sees. */
  image?: DatabaseImage;
}

export type QueryReply = { ready: true } | { id: number; outcome: QueryOutcome };

/**
 * A thread that SIGKILLs this process once a query runs past deadline + grace: the main thread
 * is stuck in SQLite then and cannot notice that the parent died without killing it.
 */
const WATCHDOG_SOURCE = `
const { workerData } = require("node:worker_threads");
const deadline = new BigInt64Array(workerData);
setInterval(() => {
  const at = Atomics.load(deadline, 0);
  if (at > 0n && BigInt(Date.now()) > at) process.kill(process.pid, "SIGKILL");
}, 100);
`;

function serve(send: (reply: QueryReply) => void): void {
  const deadline = new BigInt64Array(new SharedArrayBuffer(8));
  const databases = new Map<string, QueryTarget>();
  // Without the parent there is no one to answer: go (the parent's death closes the channel).
  process.on("disconnect", () => process.exit(0));
  process.on("message", (request: QueryRequest) => {
    Atomics.store(deadline, 0, BigInt(Date.now() + request.timeLimitMs + WATCHDOG_GRACE_MS));
    let outcome: QueryOutcome;
    try {
      if (request.image) {
        databases.set(request.database, {
          connection: openImage(request.image.bytes),
          tableRows: new Map(request.image.tableRows),
        });
      }
      const target = databases.get(request.database);
      if (!target) throw new Error(`no image of database ${request.database} was sent`);
      outcome = runQuery(target, request.sql, Math.floor(request.timeLimitMs * 0.75));
    } catch (error) {
      outcome = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    Atomics.store(deadline, 0, 0n);
    send({ id: request.id, outcome });
  });
  send({ ready: true });
  // After saying ready: a thread takes a few milliseconds to start and is not needed before.
  new Worker(WATCHDOG_SOURCE, { eval: true, workerData: deadline.buffer }).unref();
}

if (process.env[QUERY_CHILD_MARKER] === "1" && process.send) {
  const channel = process.send.bind(process);
  // A failed send means the parent is gone; "disconnect" ends this process.
  serve((reply) => channel(reply, undefined, {}, () => {}));
}
