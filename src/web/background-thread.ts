/**
 * The viewer's worker thread: a run's metrics (every episode read with the store's damage check,
 * then the bootstrap) and two runs' comparison, on a read-only connection of its own, so the
 * server goes on answering while a run of 100,000 episodes takes a second or more.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase, type SqliteDatabase } from "../store/database.js";
import { type BackgroundJob, computeJob } from "./background-jobs.js";

const port = parentPort;
if (port === null) throw new Error("background-thread.ts runs as a worker thread only");
let db: SqliteDatabase | undefined;

port.on("message", (message: { id: number; job: BackgroundJob }) => {
  try {
    db ??= openDatabase((workerData as { path: string }).path, { readonly: true });
    port.postMessage({ id: message.id, value: computeJob(db, message.job) });
  } catch (error) {
    port.postMessage({ id: message.id, error: (error as Error).message.split("\n")[0] });
  }
});
