/**
 * Worker-thread side of EpisodeWriter: commits encoded batches on its own connection. An episode
 * that cannot be committed is stored as unstorable (saveBatch); only a failing store is reported.
 */
import { parentPort, workerData } from "node:worker_threads";
import { type PackedBatch, saveBatch, unpackBatch } from "./episode-batch.js";
import { RunStore } from "./run-store.js";

export interface WriterRequest {
  seq: number;
  runId: string;
  batch: PackedBatch;
}

export interface WriterReply {
  seq: number;
  error?: string;
}

if (parentPort) {
  const port = parentPort;
  const store = RunStore.open((workerData as { path: string }).path);
  port.on("message", (request: WriterRequest) => {
    const reply: WriterReply = { seq: request.seq };
    try {
      saveBatch(store, request.runId, unpackBatch(request.batch));
    } catch (error) {
      reply.error = error instanceof Error ? error.message : String(error);
    }
    port.postMessage(reply);
  });
}
