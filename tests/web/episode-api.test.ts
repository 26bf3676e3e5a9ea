/**
 * The episode page's API over a store written by real runs: a ReAct agent on the fake OpenAI
 * server (a priced model; one run's calls are cache hits and one call is retried after a 503)
 * and the reference agent, which makes no model calls.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunStore } from "../../src/store/run-store.js";
import type { CallBodyResponse, EpisodeResponse } from "../../src/web/api/episodes.js";
import { episodesApi } from "../../src/web/api/episodes.js";
import type { ViewServer } from "../../src/web/server.js";
import { type LlmEpisodes, PRICE, REPLY, storeLlmRuns } from "./fixtures/llm-runs.js";
import { api, scratchDir, startViewer } from "./support.js";

let scratch: ReturnType<typeof scratchDir>;
let viewer: ViewServer;
let db: string;
let ids: LlmEpisodes;

beforeAll(async () => {
  scratch = scratchDir("episode-api");
  db = join(scratch.dir, "clade.db");
  ids = await storeLlmRuns(db);
  viewer = await startViewer(db);
});

afterAll(async () => {
  await viewer?.close();
  scratch?.remove();
});

describe("GET /episodes/:id", () => {
  it("gives the episode, its run, the instruction, the steps and the calls without bodies", async () => {
    const { status, body } = await api<EpisodeResponse>(viewer, `/episodes/${ids.mixed}`);
    expect(status).toBe(200);
    expect(body.run).toEqual({
      id: "mixed",
      env: "maze",
      envVersion: expect.any(String),
      agent: "react",
    });
    expect(body.episode).toMatchObject({
      id: ids.mixed,
      taskIndex: 0,
      sampleIndex: 0,
      outcome: "failure",
      endReason: "max_turns",
      turns: 3,
    });
    expect(body.instruction).toMatch(/^You are in a maze/);
    expect(body.episode.initialObservation?.text).toMatch(/The maze has/);
    expect(body.steps.map((s) => [s.turn, s.action, s.message])).toEqual([
      [0, "move up", REPLY],
      [1, "move up", REPLY],
      [2, "move up", REPLY],
    ]);
    expect(body.steps[1]?.info).toEqual({ wall: "up" });
    expect(body.problems).toEqual([]);

    // Turns 0 and 1 come from the cache (free, no attempt); turn 2 was retried after a 503.
    expect(body.calls.map((c) => [c.turn, c.cacheHit, c.attempts])).toEqual([
      [0, true, 0],
      [1, true, 0],
      [2, false, 2],
    ]);
    const retried = body.calls[2];
    expect(retried?.attemptErrors).toEqual([expect.stringMatching(/503/)]);
    expect(retried?.latencyMs).toBeGreaterThan(0);
    expect(retried?.retryMs).toBeGreaterThanOrEqual(0);
    expect(retried?.finishReason).toBe("stop");
    const { inputTokens, outputTokens } = retried?.usage ?? { inputTokens: 0, outputTokens: 0 };
    expect(retried?.costUsd).toBeCloseTo(
      (inputTokens * PRICE.inputPerMTok + outputTokens * PRICE.outputPerMTok) / 1e6,
      12,
    );
    expect(body.calls[0]?.costUsd).toBe(0);
    for (const call of body.calls) {
      expect(call).not.toHaveProperty("request");
      expect(call).not.toHaveProperty("response");
    }

    expect(body.totals).toEqual({
      calls: 3,
      inputTokens: body.calls.reduce((s, c) => s + c.usage.inputTokens, 0),
      outputTokens: body.calls.reduce((s, c) => s + c.usage.outputTokens, 0),
      cacheHits: 2,
      retries: 1,
      failedCalls: 0,
      costUsd: retried?.costUsd,
    });
  });

  it("gives call ids that are the store's rows, in order", async () => {
    const { body } = await api<EpisodeResponse>(viewer, `/episodes/${ids.fresh}`);
    const conn = new Database(db, { readonly: true });
    const rows = conn
      .prepare("SELECT id FROM model_call_rows WHERE episode_id = ? ORDER BY id")
      .pluck()
      .all(ids.fresh);
    conn.close();
    expect(body.calls.map((c) => c.id)).toEqual(rows);
    expect(body.calls.map((c) => [c.turn, c.cacheHit, c.attempts])).toEqual([
      [0, false, 1],
      [1, false, 1],
    ]);
  });

  it("shows a reference-agent episode with no calls and no cost", async () => {
    const { status, body } = await api<EpisodeResponse>(viewer, `/episodes/${ids.reference}`);
    expect(status).toBe(200);
    expect(body.run.agent).toBe("reference");
    expect(body.episode.outcome).toBe("success");
    expect(body.episode.reward).toBe(1);
    expect(body.steps.length).toBe(body.episode.turns);
    expect(body.steps.at(-1)?.done).toBe(true);
    expect(body.calls).toEqual([]);
    expect(body.totals).toEqual({
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cacheHits: 0,
      retries: 0,
      failedCalls: 0,
      costUsd: null,
    });
  });

  it("answers 404 for an unknown id and 400 for one that is not a number", async () => {
    expect(await api(viewer, "/episodes/999999")).toEqual({
      status: 404,
      body: { error: "no episode with id 999999" },
    });
    const bad = await api<{ error: string }>(viewer, "/episodes/abc");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^param\.id: must be a number/);
  });
});

describe("GET /episodes/:id/calls/:callId", () => {
  it("gives the exact request, rebuilt whole, and the response", async () => {
    const { body: episode } = await api<EpisodeResponse>(viewer, `/episodes/${ids.mixed}`);
    const last = episode.calls[2] as EpisodeResponse["calls"][number];
    const { status, body } = await api<CallBodyResponse>(
      viewer,
      `/episodes/${ids.mixed}/calls/${last.id}`,
    );
    expect(status).toBe(200);
    // The third call's row holds only what it adds; the whole conversation comes back.
    const store = RunStore.open(db, { readonly: true });
    const expected = store.calls(ids.mixed)[2];
    store.close();
    expect(body).toEqual({
      id: last.id,
      episodeId: ids.mixed,
      turn: 2,
      model: "openai-compatible:fake-model",
      request: JSON.parse(JSON.stringify(expected?.request)),
      response: JSON.parse(JSON.stringify(expected?.response)),
      error: null,
    });
    expect(body.request.messages[0]?.role).toBe("system");
    expect(body.request.messages.at(-1)?.content).toMatch(/wall above you/);
    expect(
      body.request.messages.filter((m) => m.role === "assistant" && m.content === REPLY),
    ).toHaveLength(2);
    expect(body.response?.content).toBe(REPLY);
  });

  it("answers 404 for a call of another episode or an unknown episode, 400 for a bad id", async () => {
    const { body: other } = await api<EpisodeResponse>(viewer, `/episodes/${ids.fresh}`);
    const foreign = other.calls[0]?.id as number;
    expect(await api(viewer, `/episodes/${ids.mixed}/calls/${foreign}`)).toEqual({
      status: 404,
      body: { error: `episode ${ids.mixed} has no call ${foreign}` },
    });
    expect((await api(viewer, `/episodes/999999/calls/${foreign}`)).status).toBe(404);
    const bad = await api<{ error: string }>(viewer, `/episodes/${ids.mixed}/calls/x1`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^param\.callId: must be a number/);
  });
});

describe("bundle", () => {
  it("lists the chosen runs' episode pages and call bodies, spelled as the page asks", () => {
    const conn = new Database(db, { readonly: true });
    try {
      const callsOf = (episode: number) =>
        (
          conn
            .prepare("SELECT id FROM model_call_rows WHERE episode_id = ? ORDER BY id")
            .pluck()
            .all(episode) as number[]
        ).map((call) => `/episodes/${episode}/calls/${call}`);
      const bundle = episodesApi.bundle;
      expect(bundle).toBeDefined();
      expect(bundle?.(conn, new Set(["mixed", "ref", "not-a-run"]))).toEqual([
        `/episodes/${ids.mixed}`,
        ...callsOf(ids.mixed),
        `/episodes/${ids.reference}`,
      ]);
      const all = bundle?.(conn, "all") ?? [];
      expect(all).toHaveLength(3 + 2 + 3);
      expect(all).toContain(`/episodes/${ids.fresh}`);
    } finally {
      conn.close();
    }
  });
});

describe("a damaged episode", () => {
  it("shows what can be read and says what cannot, in one line each", async () => {
    const conn = new Database(db);
    const firstCall = conn
      .prepare("SELECT MIN(id) FROM model_call_rows WHERE episode_id = ?")
      .pluck()
      .get(ids.fresh) as number;
    conn.prepare("UPDATE trajectories SET steps = '[{' WHERE episode_id = ?").run(ids.fresh);
    conn.prepare("UPDATE model_call_rows SET request = 'x' WHERE id = ?").run(firstCall);
    conn.close();
    const { status, body } = await api<EpisodeResponse>(viewer, `/episodes/${ids.fresh}`);
    expect(status).toBe(200);
    // As every reader of the store has it: damaged, with what it was.
    expect(body.episode).toMatchObject({
      outcome: "damaged",
      error: expect.stringMatching(/was failure/),
    });
    expect(body.steps).toEqual([]);
    expect(body.calls).toEqual([]);
    expect(body.problems).toEqual([
      expect.stringMatching(/^the trajectory of episode \d+ could not be read/),
      expect.stringMatching(/^the model calls of episode \d+ could not be read/),
    ]);
    const call = await api<{ error: string }>(viewer, `/episodes/${ids.fresh}/calls/${firstCall}`);
    expect(call.status).toBe(409);
    expect(call.body.error).toMatch(/^the model calls of episode \d+ could not be read/);
  });
});
