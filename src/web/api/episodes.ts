/**
 * The episode page's API: one episode of an evaluation run, turn by turn.
 * - `GET /episodes/:id`: the episode row, its run, the instruction the agent saw, the decoded
 *   steps, and every model call's accounting (tokens, latency, waits, cost, cache, attempts)
 *   without the request and response bodies, which can be large;
 * - `GET /episodes/:id/calls/:callId`: one call's exact request (whole, rebuilt from the calls
 *   before it) and response, asked for when the reader opens it.
 * Reads go through RunStore (steps, calls, instruction), as `clade show RUN --episode` does, so
 * the page and the CLI show the same thing. The store holds no secrets (clients scrub them
 * before recording) and no headers are stored, so none can be shown.
 */
import { Hono } from "hono";
import { z } from "zod";
import { builtInInstruction } from "../../eval/report.js";
import type { ModelCallRecord } from "../../model/call-record.js";
import type { ModelRequest, ModelResponse } from "../../model/types.js";
import type { StepRecord } from "../../rollout/episode.js";
import type { SqliteDatabase } from "../../store/database.js";
import {
  addCosts,
  type CostFields,
  callForJson,
  orDamaged,
  type StoredEpisode,
} from "../../store/run-store.js";
import { apiPath } from "../api-path.js";
import type { ApiModule, Chosen } from "../server.js";
import { runStoreOn, type StoreView } from "../store-view.js";
import { valid } from "../validate.js";

/** The run an episode belongs to, as its header shows it. */
export interface EpisodeRun {
  id: string;
  env: string;
  envVersion: string;
  agent: string;
}

/** One model call without its bodies: what the calls table shows. */
export type CallSummary = Omit<ModelCallRecord, "request" | "response" | "costUsd"> &
  CostFields & {
    /** The call's row id: `GET /episodes/:id/calls/:callId` gives its request and response. */
    id: number;
    /** Why the reply ended ("stop", "length", "tool_calls"), null when the call failed. */
    finishReason: string | null;
  };

/** The episode's model calls added up. */
export interface CallTotals extends CostFields {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cacheHits: number;
  /** Attempts beyond the first, over all calls. */
  retries: number;
  /** Calls that ended in an error. */
  failedCalls: number;
}

export interface EpisodeResponse {
  run: EpisodeRun;
  episode: StoredEpisode;
  /** The instruction the agent was given; null when the episode does not record it. */
  instruction: string | null;
  steps: StepRecord[];
  calls: CallSummary[];
  totals: CallTotals;
  /** Parts of the episode that could not be read (damaged rows); what could be read is shown. */
  problems: string[];
}

export interface CallBodyResponse {
  id: number;
  episodeId: number;
  turn: number;
  model: string;
  /** The whole request as the model received it (messages, tools, parameters). */
  request: ModelRequest;
  /** Null when the call failed. */
  response: ModelResponse | null;
  error: string | null;
}

/**
 * What a static bundle holds per run: the pages of its first episodes (by task, then sample), and
 * the call bodies of the first few of them only, since every body repeats the conversation so
 * far. The page says "not in this bundle" for a body left out.
 */
export const BUNDLE_LIMITS = { episodesPerRun: 2000, callBodyEpisodesPerRun: 100 } as const;

/** One episode by id, with its run (as RunStore reads it: a damaged row reads as damaged). */
function readEpisode(
  db: SqliteDatabase,
  id: number,
): { run: EpisodeRun; episode: StoredEpisode } | undefined {
  const store = runStoreOn(db);
  const found = store.episode(id);
  const run = found && store.getRun(found.runId);
  if (found === undefined || run === undefined) return undefined;
  const { runId: _, ...episode } = found;
  return {
    run: { id: run.id, env: run.env, envVersion: run.envVersion, agent: run.agent },
    episode,
  };
}

export function summarizeCall(id: number, call: ModelCallRecord): CallSummary {
  const { request: _request, response, ...rest } = callForJson(call);
  return { id, ...rest, finishReason: response?.finishReason ?? null };
}

export function callTotals(calls: readonly CallSummary[]): CallTotals {
  let inputTokens = 0;
  let outputTokens = 0;
  let cacheHits = 0;
  let retries = 0;
  let failedCalls = 0;
  for (const call of calls) {
    inputTokens += call.usage.inputTokens;
    outputTokens += call.usage.outputTokens;
    if (call.cacheHit) cacheHits++;
    retries += Math.max(call.attempts - 1, 0);
    if (call.error !== undefined) failedCalls++;
  }
  return {
    calls: calls.length,
    inputTokens,
    outputTokens,
    cacheHits,
    retries,
    failedCalls,
    ...addCosts(calls),
  };
}

/** Everything of the episode the store holds (inside the caller's read transaction). */
function readWhole(db: SqliteDatabase, id: number): Omit<EpisodeResponse, "totals"> | undefined {
  const found = readEpisode(db, id);
  if (found === undefined) return undefined;
  const store = runStoreOn(db);
  // A damaged row says so in its own error (shown with the episode); problems list the parts.
  const problems: string[] = [];
  const steps = orDamaged(() => store.steps(id), problems);
  const calls = orDamaged(() => store.callRows(id), problems);
  return {
    ...found,
    problems,
    instruction: store.instruction(id),
    steps,
    calls: calls.map((row) => summarizeCall(row.id, row.call)),
  };
}

const EPISODE_ID = z.string().regex(/^\d+$/, "must be a number (an episode id)");
const episodeParam = z.object({ id: EPISODE_ID });
const callParam = z.object({
  id: EPISODE_ID,
  callId: z.string().regex(/^\d+$/, "must be a number (a call id)"),
});

const notFound = (id: string) => ({ error: `no episode with id ${id}` });

function routes(view: StoreView): Hono {
  return new Hono()
    .get("/episodes/:id", valid("param", episodeParam), async (c) => {
      const { id } = c.req.valid("param");
      const db = view.db;
      // One short read transaction: a rerun of the episode in between cannot mix two attempts.
      const read = db?.transaction(() => readWhole(db, Number(id)))();
      if (db === undefined || read === undefined) return c.json(notFound(id), 404);
      const body: EpisodeResponse = {
        ...read,
        instruction: read.instruction ?? (await builtInInstruction(read.run)),
        totals: callTotals(read.calls),
      };
      return c.json(body);
    })
    .get("/episodes/:id/calls/:callId", valid("param", callParam), (c) => {
      const { id, callId } = c.req.valid("param");
      const db = view.db;
      if (db === undefined) return c.json(notFound(id), 404);
      const episodeId = Number(id);
      // A request stored by difference is rebuilt from the calls before it in the episode.
      const call = runStoreOn(db)
        .callRows(episodeId)
        .find((row) => row.id === Number(callId))?.call;
      if (call === undefined) {
        const exists = db.prepare("SELECT 1 FROM episodes WHERE id = ?").get(episodeId);
        return c.json(
          exists ? { error: `episode ${id} has no call ${callId}` } : notFound(id),
          404,
        );
      }
      const body: CallBodyResponse = {
        id: Number(callId),
        episodeId,
        turn: call.turn,
        model: call.model,
        request: call.request,
        response: call.response ?? null,
        error: call.error ?? null,
      };
      return c.json(body);
    });
}

/**
 * The addresses of the chosen eval runs' episode pages (BUNDLE_LIMITS.episodesPerRun per run, by
 * task then sample) and of the call bodies of their first BUNDLE_LIMITS.callBodyEpisodesPerRun.
 */
function bundle(db: SqliteDatabase, chosen: Chosen): string[] {
  const runIds = (
    db.prepare("SELECT id FROM runs ORDER BY created_at, id").pluck().all() as string[]
  ).filter((id) => chosen === "all" || chosen.has(id));
  const episodes = db
    .prepare("SELECT id FROM episodes WHERE run_id = ? ORDER BY task_index, sample_index LIMIT ?")
    .pluck();
  const calls = db
    .prepare("SELECT id FROM model_call_rows WHERE episode_id = ? ORDER BY id")
    .pluck();
  const addresses: string[] = [];
  for (const runId of runIds) {
    const ids = episodes.all(runId, BUNDLE_LIMITS.episodesPerRun) as number[];
    ids.forEach((episodeId, i) => {
      addresses.push(apiPath(`/episodes/${episodeId}`));
      if (i >= BUNDLE_LIMITS.callBodyEpisodesPerRun) return;
      for (const callId of calls.all(episodeId) as number[]) {
        addresses.push(apiPath(`/episodes/${episodeId}/calls/${callId}`));
      }
    });
  }
  return addresses;
}

export const episodesApi: ApiModule = { routes, bundle };
