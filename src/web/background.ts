/**
 * Runs the viewer's heavy computations (background-jobs.ts) in one worker thread, started when
 * first needed and unref'd, so a long one never holds up the server's other answers. A store read
 * from a private snapshot has no file a worker could open: its jobs run here, in the thread.
 */
import type { Worker } from "node:worker_threads";
import type { SqliteDatabase } from "../store/database.js";
import { startModuleWorker } from "../store/module-worker.js";
import { type BackgroundJob, type BackgroundResult, computeJob } from "./background-jobs.js";

export class Background {
  #worker: Worker | undefined;
  #next = 0;
  #waiting = new Map<number, { resolve: (value: unknown) => void; reject: (e: Error) => void }>();

  /** `path`: the store's file, or null to compute in this thread (a snapshot). */
  constructor(private readonly path: string | null) {}

  run<J extends BackgroundJob>(db: SqliteDatabase, job: J): Promise<BackgroundResult<J>> {
    if (this.path === null) {
      return Promise.resolve(computeJob(db, job) as BackgroundResult<J>);
    }
    const worker = this.#start(this.path);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (this.#waiting.size === 1) worker.ref();
      worker.postMessage({ id, job });
    });
  }

  #start(path: string): Worker {
    if (this.#worker) return this.#worker;
    const worker = startModuleWorker(import.meta.url, "background-thread", { path });
    worker.unref();
    worker.on("message", (reply: { id: number; value?: unknown; error?: string }) => {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) worker.unref();
      if (reply.error !== undefined) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.value);
    });
    const fail = (error: Error) => {
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
      this.#worker = undefined;
    };
    worker.on("error", fail);
    worker.on("exit", (code) => {
      if (this.#worker === worker) fail(new Error(`the viewer's worker stopped (exit ${code})`));
    });
    this.#worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }
}
