/**
 * Model-call requests are stored by difference (migration 3): each row keeps what its request adds
 * to the call before it in the same episode. calls() and the model_calls view must still give the
 * exact requests recorded, rows written before the migration must still read, and replacing an
 * episode (resume) must leave no rows of the old one behind.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../src/agent/registry.js";
import { findEnv } from "../../src/env/registry.js";
import type { ModelCallRecord } from "../../src/model/call-record.js";
import type { ModelRequest } from "../../src/model/types.js";
import type { EpisodeRecord } from "../../src/rollout/episode.js";
import { runEpisodes } from "../../src/rollout/runner.js";
import { EpisodeWriter } from "../../src/store/episode-writer.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunStore } from "../../src/store/run-store.js";
import { ScriptedModel, type ScriptedReply } from "../../src/testing/scripted-model.js";

const TURNS = 12;
const header = { id: "r", env: "maze", envVersion: "1", agent: "react", config: {} };

const tempDb = () => join(mkdtempSync(join(tmpdir(), "clade-calls-")), "clade.db");

/** Real agents' calls: moves that keep the episode going, with one unusable reply on the way. */
async function recordedEpisodes(agent: "react" | "tools", episodes = 2): Promise<EpisodeRecord[]> {
  const env = findEnv("maze");
  const moves = ["move up", "move down", "move left", "move right"];
  const reply = (i: number): ScriptedReply => {
    const move = moves[i % moves.length] as string;
    return agent === "react"
      ? `Thought: try ${move}.\n\nAction: ${move}`
      : { content: "", toolCalls: [{ name: "act", arguments: { action: move } }] };
  };
  const records: EpisodeRecord[] = [];
  await runEpisodes({
    episodes: Array.from({ length: episodes }, (_, i) => ({
      taskIndex: i,
      sampleIndex: 0,
      seed: 0,
    })),
    envInfo: env.info,
    createEnv: env.create,
    createAgent: (context) => {
      // A reply with no action in turn 3: the correction call shares only part of the history.
      const replies = Array.from({ length: TURNS + 1 }, (_, i) =>
        i === 3 ? "I am not sure." : reply(i),
      );
      const model = new ScriptedModel(replies);
      return resolveAgent(agent, env, { model }).create(context);
    },
    limits: { maxTurns: TURNS, timeoutMs: 60_000 },
    concurrency: 1,
    onEpisode: (record) => {
      records.push(record);
    },
  });
  return records;
}

function storedRequestColumns(db: Database.Database) {
  return db
    .prepare(
      `SELECT COUNT(*) AS calls,
         SUM(json_array_length(request, '$.messages')) AS messages,
         SUM(length(request)) AS bytes
       FROM model_call_rows`,
    )
    .get() as { calls: number; messages: number; bytes: number };
}

describe.each(["react", "tools"] as const)("requests of %s agent calls", (agent) => {
  it("read back exactly as recorded, from calls() and the model_calls view", async () => {
    const records = await recordedEpisodes(agent);
    const recorded = records.flatMap((r) => r.calls ?? []);
    expect(recorded.length).toBeGreaterThan(TURNS);
    if (agent === "tools") expect(recorded.every((c) => c.request.tools?.length)).toBe(true);
    const path = tempDb();
    const store = RunStore.open(path);
    store.startRun(header);
    store.saveEpisodes("r", records);
    const episodes = store.episodes("r");
    const read = episodes.flatMap((e) => store.calls(e.id));
    expect(read).toEqual(recorded);
    // Exact text, key order included (what an export of the request would print).
    expect(read.map((c) => JSON.stringify(c.request))).toEqual(
      recorded.map((c) => JSON.stringify(c.request)),
    );
    const viewed = store.db.prepare("SELECT request FROM model_calls ORDER BY id").all() as {
      request: string;
    }[];
    expect(viewed.map((v) => JSON.parse(v.request))).toEqual(recorded.map((c) => c.request));

    // Each message is stored about once per episode, not once per call.
    const stored = storedRequestColumns(store.db);
    const whole = recorded.reduce((n, c) => n + c.request.messages.length, 0);
    expect(stored.calls).toBe(recorded.length);
    expect(stored.messages).toBeLessThan(whole / 4);
    const wholeBytes = recorded.reduce((n, c) => n + JSON.stringify(c.request).length, 0);
    expect(stored.bytes).toBeLessThan(wholeBytes / 4);
    store.close();
  });
});

describe("requests stored by difference", () => {
  it("round-trip through the writer thread", async () => {
    const records = await recordedEpisodes("tools", 3);
    const path = tempDb();
    const store = RunStore.open(path);
    store.startRun(header);
    const writer = new EpisodeWriter(store, "r", { thread: true });
    for (const record of records) writer.write(record);
    await writer.close();
    const read = store.episodes("r").flatMap((e) => store.calls(e.id));
    expect(read).toEqual(records.flatMap((r) => r.calls ?? []));
    store.close();
  });

  it("keep whatever a request changes: tools, parameters, key order, shorter histories", () => {
    const base: ModelCallRecord = {
      turn: 0,
      model: "m",
      request: { messages: [] },
      usage: { inputTokens: 1, outputTokens: 1 },
      costUsd: 0,
      latencyMs: 1,
      cacheHit: false,
      attempts: 1,
      startedAt: "2026-01-01T00:00:00.000Z",
    };
    const sys = { role: "system" as const, content: "rules" };
    const tool = { name: "act", description: "d", parameters: { type: "object" } };
    const requests: ModelRequest[] = [
      { messages: [sys], tools: [tool], params: { temperature: 0 }, sampleIndex: 1 },
      {
        messages: [sys, { role: "user", content: "a" }],
        tools: [tool],
        params: { temperature: 0 },
      },
      // Same tools, keys in another order; a message equal but for key order is not shared.
      {
        params: { temperature: 1 },
        tools: [tool],
        messages: [{ content: "rules", role: "system" }],
      },
      { messages: [sys, { role: "user", content: "b" }], tools: [{ ...tool, description: "e" }] },
      { messages: [sys] },
      { messages: [sys, { role: "assistant", content: "", toolCalls: [] }], tools: [] },
      { messages: [], tools: [] },
    ];
    const calls = requests.map((request, turn) => ({ ...base, turn, request }));
    const store = RunStore.open(tempDb());
    store.startRun(header);
    store.saveEpisodes("r", [
      {
        taskIndex: 0,
        sampleIndex: 0,
        seed: 0,
        outcome: "failure",
        reward: 0,
        endReason: "max_turns",
        initialObservation: { text: "start" },
        steps: [],
        calls,
        parseErrors: 0,
        startedAt: base.startedAt,
        durationMs: 1,
      },
    ]);
    const [episode] = store.episodes("r");
    const read = store.calls(episode?.id ?? -1);
    expect(read.map((c) => JSON.stringify(c.request))).toEqual(
      requests.map((r) => JSON.stringify(r)),
    );
    const viewed = store.db.prepare("SELECT request FROM model_calls ORDER BY id").all() as {
      request: string;
    }[];
    expect(viewed.map((v) => JSON.parse(v.request))).toEqual(requests);
    store.close();
  });

  it("leave no rows behind when an errored episode is replaced (resume)", async () => {
    const [first] = await recordedEpisodes("react", 1);
    const store = RunStore.open(tempDb());
    store.startRun(header);
    store.saveEpisodes("r", [{ ...(first as EpisodeRecord), outcome: "error", error: "boom" }]);
    expect(store.finishedEpisodeKeys("r").size).toBe(0);
    store.saveEpisodes("r", [first as EpisodeRecord]);
    expect(store.finishedEpisodeKeys("r")).toEqual(new Set(["0:0"]));
    const [episode] = store.episodes("r");
    expect(store.calls(episode?.id ?? -1)).toEqual(first?.calls);
    const count = (table: string) =>
      (store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect(count("model_call_rows")).toBe(first?.calls?.length);
    expect(count("model_calls")).toBe(first?.calls?.length);
    store.close();
  });

  it("still reads rows written whole before migration 3, beside new ones", async () => {
    const [old, fresh] = await recordedEpisodes("tools", 2);
    const path = tempDb();
    // A store as the schema-2 clade left it, with one episode's calls written whole.
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    for (const migration of MIGRATIONS.slice(0, 2)) raw.exec(migration);
    raw.pragma("user_version = 2");
    raw
      .prepare(
        `INSERT INTO runs (id, env, env_version, agent, config, status, created_at, updated_at)
         VALUES ('r', 'maze', '1', 'react', '{}', 'running', 'x', 'x')`,
      )
      .run();
    raw
      .prepare(
        `INSERT INTO episodes (id, run_id, task_index, sample_index, seed, outcome, reward,
           end_reason, turns, started_at, duration_ms)
         VALUES (1, 'r', 0, 0, 0, 'failure', 0, 'max_turns', 0, 'x', 1)`,
      )
      .run();
    raw.prepare("INSERT INTO trajectories (episode_id, steps) VALUES (1, '[]')").run();
    const insert = raw.prepare(
      `INSERT INTO model_calls (episode_id, turn, model, request, response, error, input_tokens,
         output_tokens, cost_usd, latency_ms, cache_hit, attempts, started_at, attempt_errors)
       VALUES (1, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    );
    for (const c of old?.calls ?? []) {
      insert.run(
        c.turn,
        c.model,
        JSON.stringify(c.request),
        JSON.stringify(c.response),
        c.usage.inputTokens,
        c.usage.outputTokens,
        c.costUsd,
        c.latencyMs,
        c.cacheHit ? 1 : 0,
        c.attempts,
        c.startedAt,
      );
    }
    raw.close();

    const store = RunStore.open(path);
    store.saveEpisodes("r", [fresh as EpisodeRecord]);
    const [a, b] = store.episodes("r");
    expect(store.calls(a?.id ?? -1)).toEqual(old?.calls);
    expect(store.calls(b?.id ?? -1)).toEqual(fresh?.calls);
    const viewed = store.db.prepare("SELECT request FROM model_calls ORDER BY id").all() as {
      request: string;
    }[];
    expect(viewed.map((v) => JSON.parse(v.request))).toEqual(
      [...(old?.calls ?? []), ...(fresh?.calls ?? [])].map((c) => c.request),
    );
    expect(store.usageByModel("r")[0]?.calls).toBe(viewed.length);
    store.close();
  });
});
