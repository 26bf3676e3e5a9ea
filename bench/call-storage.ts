/**
 * Stored bytes per model call on 30-turn ReAct episodes against the bytes of the messages each
 * call adds (issue 8: ≤ 3×). A call's request repeats the conversation so far; storing it whole
 * makes the store grow with the square of the episode's length.
 *
 * Stored bytes: the record bytes SQLite holds for the calls' rows and their index (dbstat's
 * payload: request, response and accounting alike), divided by the calls. New bytes: the UTF-8
 * JSON of the messages of each call after those it shares with the episode's previous call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ChatMessage,
  type EpisodeRecord,
  findEnv,
  RunStore,
  resolveAgent,
  runEpisodes,
} from "../dist/index.js";
import { ScriptedModel } from "../dist/testing/index.js";

const TURNS = 30;
const EPISODES = 20;
const TARGET_RATIO = 3;

/** The messages a call adds to the previous call of its episode. */
function newMessageBytes(messages: ChatMessage[], previous: ChatMessage[] | undefined): number {
  let shared = 0;
  while (
    previous &&
    shared < Math.min(messages.length, previous.length) &&
    JSON.stringify(messages[shared]) === JSON.stringify(previous[shared])
  ) {
    shared++;
  }
  return messages
    .slice(shared)
    .reduce((n, m) => n + Buffer.byteLength(JSON.stringify(m), "utf8"), 0);
}

export async function callStorageFigure(): Promise<void> {
  const env = findEnv("maze");
  const records: EpisodeRecord[] = [];
  await runEpisodes({
    episodes: Array.from({ length: EPISODES }, (_, i) => ({
      taskIndex: i,
      sampleIndex: 0,
      seed: 0,
    })),
    envInfo: env.info,
    createEnv: env.create,
    // Back and forth never reaches the goal, so every episode runs its 30 turns.
    createAgent: (context) => {
      const replies = Array.from({ length: TURNS }, (_, i) => {
        const move = i % 2 === 0 ? "move up" : "move down";
        return `Thought: I will try to ${move} and see what happens.\n\nAction: ${move}`;
      });
      return resolveAgent("react", env, { model: new ScriptedModel(replies) }).create(context);
    },
    limits: { maxTurns: TURNS, timeoutMs: 60_000 },
    concurrency: 1,
    onEpisode: (record) => {
      records.push(record);
    },
  });

  let calls = 0;
  let newBytes = 0;
  for (const record of records) {
    let previous: ChatMessage[] | undefined;
    for (const call of record.calls ?? []) {
      calls++;
      newBytes += newMessageBytes(call.request.messages, previous);
      previous = call.request.messages;
    }
  }

  const dir = mkdtempSync(join(tmpdir(), "clade-bench-calls-"));
  try {
    const store = RunStore.open(join(dir, "calls.db"));
    store.startRun({
      id: "bench",
      env: "maze",
      envVersion: env.info.version,
      agent: "react",
      config: {},
    });
    store.saveEpisodes("bench", records);
    // Rows of model calls: model_call_rows since migration 3, model_calls before it.
    const table = store.db
      .prepare("SELECT name FROM sqlite_master WHERE name = 'model_call_rows'")
      .get()
      ? "model_call_rows"
      : "model_calls";
    const { bytes } = store.db
      .prepare(
        `SELECT SUM(payload) AS bytes FROM dbstat
         WHERE name IN (?, 'model_calls_by_episode')`,
      )
      .get(table) as { bytes: number };
    store.close();
    const stored = bytes / calls;
    const added = newBytes / calls;
    const ratio = stored / added;
    process.stdout.write(
      `${JSON.stringify({
        name: "react_30_turn_stored_bytes_per_call",
        value: Math.round(stored),
        unit: "bytes/call",
        ratio: Number(ratio.toFixed(3)),
        baseline: Math.round(added),
        baseline_unit: "bytes/call of new messages",
        calls,
        episodes: records.length,
        target: `<= ${TARGET_RATIO}`,
        pass: ratio <= TARGET_RATIO,
      })}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
