/**
 * clade's own env API under /v1: resources and HTTP status codes instead of errors-as-200.
 *
 *   GET    /v1/info                      server, environment metadata, instance counts
 *   POST   /v1/instances                 201 {id}; 503 + Retry-After when full, 429 +
 *                                         Retry-After when this client holds its share
 *   GET    /v1/instances/:id             {id, episode | null}
 *   POST   /v1/instances/:id/reset       {task, seed?} → {observation}
 *   POST   /v1/instances/:id/step        {action} → {observation, reward, done, info}
 *   DELETE /v1/instances/:id             204
 *
 * Errors: {"error": message, "code": code} with 400 (malformed JSON, missing or invalid fields,
 * unknown task), 404 (unknown or closed instance), 409 (step before reset or after done),
 * 413 (body too large), 429 (this client's cap, with Retry-After), 503 (full or shutting down,
 * with Retry-After). Ids are random integers (see MIN_INSTANCE_ID): knowing one is what grants
 * access to its instance.
 */
import { z } from "zod";
import { ServeError, toServeError } from "./errors.js";
import type { EpisodeState } from "./instances.js";
import {
  instanceIdSchema,
  integerSchema,
  json,
  parseInput,
  type Reply,
  type RequestContext,
  type Route,
  type ServeApp,
} from "./request.js";

/** Bumped on incompatible changes to this API. */
export const V1_API_VERSION = 1;
export const SERVER_NAME = "clade";

const resetSchema = z.object({ task: integerSchema, seed: integerSchema.optional() });
const stepSchema = z.object({ action: z.string() });
/** Nothing to say on create yet; any object (or no body) will do. */
const createSchema = z.looseObject({});

export function v1Error(error: unknown): Reply {
  const serveError = toServeError(error);
  const body = { error: serveError.message, code: serveError.code };
  if (serveError.retryAfterSeconds !== undefined) {
    return json(serveError.status, body, { "retry-after": String(serveError.retryAfterSeconds) });
  }
  return json(serveError.status, body);
}

function episodeView(episode: EpisodeState | undefined) {
  if (!episode) return null;
  return {
    task: episode.taskIndex,
    seed: episode.seed,
    steps: episode.steps,
    reward: episode.reward,
    done: episode.done,
    observation: episode.observation,
    info: episode.info,
  };
}

function info(app: ServeApp, client: string): Reply {
  return json(200, {
    server: SERVER_NAME,
    api: V1_API_VERSION,
    env: app.def.info,
    instances: {
      active: app.pool.size,
      max: app.pool.maxInstances,
      maxPerClient: app.pool.maxInstancesPerClient,
      // The asking client's own count, so it can tell its cap from the server's.
      yours: app.pool.countOf(client),
    },
    idleTimeoutMs: app.idleTimeoutMs,
    evictIdleAfterMs: app.evictIdleAfterMs,
    maxBodyBytes: app.maxBodyBytes,
  });
}

async function instanceCall(
  app: ServeApp,
  context: RequestContext,
  id: number,
  action: string | undefined,
): Promise<Reply> {
  if (action === undefined) {
    if (context.method === "GET") {
      const instance = app.pool.get(id);
      return json(200, { id, episode: episodeView(instance.episode) });
    }
    if (context.method === "DELETE") {
      if (!(await app.pool.close(id))) app.pool.get(id);
      return { status: 204 };
    }
    return notAllowed(context.method, "GET, DELETE");
  }
  if (context.method !== "POST") return notAllowed(context.method, "POST");
  if (action === "reset") {
    const input = parseInput(resetSchema, await context.body());
    const episode = await app.pool.reset(id, input.task, input.seed ?? 0);
    return json(200, { observation: episode.observation });
  }
  const input = parseInput(stepSchema, await context.body());
  const result = await app.pool.step(id, input.action);
  return json(200, {
    observation: result.observation,
    reward: result.reward,
    done: result.done,
    info: result.info,
  });
}

function notAllowed(method: string, allowed: string): Reply {
  const body = { error: `method ${method} is not allowed here (use ${allowed})` };
  return json(405, { ...body, code: "method_not_allowed" }, { allow: allowed });
}

const INSTANCE_PATH = /^\/v1\/instances\/([^/]+)(?:\/(reset|step))?$/;

export function v1Routes(app: ServeApp): Route {
  return (context) => {
    const { path, method } = context;
    if (!path.startsWith("/v1/") && path !== "/v1") return undefined;
    const handle = async (): Promise<Reply> => {
      if (path === "/v1/info") {
        return method === "GET" ? info(app, context.client) : notAllowed(method, "GET");
      }
      if (path === "/v1/instances") {
        if (method !== "POST") return notAllowed(method, "POST");
        parseInput(createSchema, await context.body());
        const instance = app.pool.create(context.client);
        return json(201, { id: instance.id }, { location: `/v1/instances/${instance.id}` });
      }
      const match = INSTANCE_PATH.exec(path);
      if (!match) throw new ServeError("not_found", `no such endpoint: ${method} ${path}`);
      const id = parseInput(z.object({ id: instanceIdSchema }), { id: match[1] }).id;
      return instanceCall(app, context, id, match[2]);
    };
    return handle().catch(v1Error);
  };
}
