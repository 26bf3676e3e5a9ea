/**
 * Write-behind batching for finished episodes: one transaction per batch instead of per episode.
 * Episodes are encoded as they arrive (so the step objects die young), then committed when a
 * batch holds `maxEpisodes`, `maxDelayMs` after its first episode, and always on close().
 * A crash loses at most the batches not yet committed; those episodes are simply absent, and a
 * resume runs them again. An episode that cannot be encoded or committed is stored as an error
 * without its steps (episode-batch.ts) rather than failing its batch or the run.
 *
 * With `thread: true` the commits run on a worker thread with its own connection, so SQLite's
 * work overlaps the episode loop instead of pausing it (see `npm run bench`).
 */
import type { Worker } from "node:worker_threads";
import type { EpisodeRecord } from "../rollout/episode.js";
import { BatchPacker, saveBatch, transferList, unstorableEpisode } from "./episode-batch.js";
import { startModuleWorker } from "./module-worker.js";
import { type EncodedEpisode, encodeEpisode, type RunStore } from "./run-store.js";
import type { WriterReply, WriterRequest } from "./writer-thread.js";

export interface EpisodeWriterOptions {
  maxEpisodes?: number;
  maxDelayMs?: number;
  /** Commit on a worker thread (needs the store's file path). */
  thread?: boolean;
}

/** The episode encoded, or the unstorable error that replaces it when it cannot be. */
function encodeOrReplace(record: EpisodeRecord): EncodedEpisode {
  try {
    return encodeEpisode(record);
  } catch (error) {
    return encodeEpisode(unstorableEpisode(record, error));
  }
}

export class EpisodeWriter {
  /** In-process mode: episodes encoded on arrival, so their step objects die young. */
  private pending: EncodedEpisode[] = [];
  /** Writer-thread mode: the batch being packed. */
  private readonly packer = new BatchPacker();
  private timer: NodeJS.Timeout | undefined;
  private readonly maxEpisodes: number;
  private readonly maxDelayMs: number;
  /** A failed commit, rethrown to the next caller instead of crashing the process. */
  private failure: unknown;
  private readonly worker: Worker | undefined;
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private nextBatch = 0;

  constructor(
    private readonly store: RunStore,
    private readonly runId: string,
    options: EpisodeWriterOptions = {},
  ) {
    this.maxEpisodes = options.maxEpisodes ?? 64;
    this.maxDelayMs = options.maxDelayMs ?? 200;
    if (options.thread) this.worker = this.startWorker();
  }

  write(record: EpisodeRecord): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.worker) this.packer.add(record);
    else this.pending.push(encodeOrReplace(record));
    if (this.pendingCount() >= this.maxEpisodes) {
      this.commitPending();
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.commitPending(), this.maxDelayMs);
    }
  }

  /** Commits everything written so far and waits until it is durable; stops the worker. */
  async close(): Promise<void> {
    this.commitPending();
    if (this.worker) {
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      await this.worker.terminate();
    }
    if (this.failure !== undefined) throw this.failure;
  }

  private pendingCount(): number {
    return this.worker ? this.packer.size : this.pending.length;
  }

  private commitPending(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pendingCount() === 0 || this.failure !== undefined) return;
    if (this.worker) {
      this.inFlight++;
      const request: WriterRequest = {
        seq: this.nextBatch++,
        runId: this.runId,
        batch: this.packer.take(),
      };
      this.worker.postMessage(request, transferList(request.batch));
      return;
    }
    const batch = this.pending;
    this.pending = [];
    try {
      saveBatch(this.store, this.runId, batch);
    } catch (error) {
      this.failure = error;
    }
  }

  private startWorker(): Worker {
    const path = this.store.db.name;
    const worker = startModuleWorker(import.meta.url, "writer-thread", { path });
    const settle = () => {
      if (this.inFlight === 0 && this.drained) {
        this.drained();
        this.drained = undefined;
      }
    };
    worker.on("message", (reply: WriterReply) => {
      this.inFlight--;
      if (reply.error !== undefined) this.failure ??= new Error(`store writer: ${reply.error}`);
      settle();
    });
    worker.on("error", (error) => {
      this.failure ??= error;
      this.inFlight = 0;
      settle();
    });
    return worker;
  }
}
