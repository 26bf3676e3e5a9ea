/**
 * AgentGym's "id" dialect, answering the shapes AgentGym's own Python clients read
 * (TextCraftEnvClient, BabyAIEnvClient, MazeEnvClient, ...). Errors come back as HTTP 200 with
 * {"error": "..."} as AgentGym servers do, except a refused /create: 503 with Retry-After when
 * the server is full or shutting down, 429 with Retry-After when this client holds its share,
 * because those clients check the status on create only and AgentGym-RL's client factory
 * retries a failed create.
 */
import { z } from "zod";
import type { Observation } from "../env/types.js";
import { ServeError, toServeError } from "./errors.js";
import type { EpisodeState } from "./instances.js";
import {
  instanceIdSchema,
  integerSchema,
  json,
  parseInput,
  queryInstanceId,
  type Reply,
  type RequestContext,
  type Route,
  type ServeApp,
} from "./request.js";

const createSchema = z.looseObject({});

const resetSchema = z.looseObject({
  id: instanceIdSchema,
  /** The task index, under the names AgentGym's clients use: TextCraft/BabyAI, Maze, Wordle. */
  data_idx: integerSchema.optional(),
  game: integerSchema.optional(),
  idx: integerSchema.optional(),
  seed: integerSchema.optional(),
  /** clade's episode seed (varies the episode within a task). */
  episode_seed: integerSchema.optional(),
  /** false: the bare first observation, without the instruction (clade's client sends this). */
  include_instruction: z.boolean().optional(),
});

const stepSchema = z.looseObject({ id: instanceIdSchema, action: z.string() });

const closeSchema = z.looseObject({ id: instanceIdSchema });

/** The env's error as AgentGym servers report it: 200 with {"error"}; 503/429 for refusals. */
export function agentgymError(error: unknown): Reply {
  const serveError = toServeError(error);
  const body = { error: serveError.message, code: serveError.code };
  if (
    serveError.code === "capacity" ||
    serveError.code === "client_capacity" ||
    serveError.code === "shutting_down"
  ) {
    return json(serveError.status, body, {
      "retry-after": String(serveError.retryAfterSeconds ?? 1),
    });
  }
  if (serveError.code === "not_found" || serveError.code === "method_not_allowed") {
    return json(serveError.status, body);
  }
  return json(200, body);
}

function actionsField(observation: Observation): { available_actions?: string[] } {
  return observation.availableActions ? { available_actions: observation.availableActions } : {};
}

/** The observation text as this API shows it: the first one may carry the instruction. */
function shownText(episode: EpisodeState): string {
  return episode.steps === 0 && episode.introduction !== undefined
    ? episode.introduction + episode.observation.text
    : episode.observation.text;
}

function requireEpisode(id: number, episode: EpisodeState | undefined): EpisodeState {
  if (!episode) {
    throw new ServeError("not_reset", `instance ${id} has no episode yet; call reset first`);
  }
  return episode;
}

async function create(app: ServeApp, context: RequestContext): Promise<Reply> {
  parseInput(createSchema, await context.body());
  const instance = app.pool.create(context.client);
  // TextCraft's client reads an observation here; before any reset the instruction is what
  // there is to show.
  return json(200, {
    id: instance.id,
    observation: app.def.info.instruction,
    reward: 0,
    done: false,
  });
}

async function reset(app: ServeApp, context: RequestContext): Promise<Reply> {
  const input = parseInput(resetSchema, await context.body());
  const taskIndex = input.data_idx ?? input.game ?? input.idx ?? input.seed;
  if (taskIndex === undefined) {
    throw new ServeError("invalid_request", 'missing field "data_idx" (the task index)');
  }
  const seed = input.episode_seed ?? 0;
  const episode = await app.pool.reset(input.id, taskIndex, seed);
  if (app.instructionInFirstObservation && input.include_instruction !== false) {
    episode.introduction = `${app.def.info.instruction}\n\n`;
  }
  return json(200, {
    id: input.id,
    observation: shownText(episode),
    reward: 0,
    score: 0,
    done: false,
    ...actionsField(episode.observation),
    task_index: taskIndex,
    seed,
  });
}

async function step(app: ServeApp, context: RequestContext): Promise<Reply> {
  const input = parseInput(stepSchema, await context.body());
  const result = await app.pool.step(input.id, input.action);
  return json(200, {
    observation: result.observation.text,
    reward: result.reward,
    // BabyAI's and SciWorld's clients read the score.
    score: result.reward,
    done: result.done,
    ...actionsField(result.observation),
    info: result.info,
  });
}

async function observation(app: ServeApp, context: RequestContext): Promise<Reply> {
  const id = queryInstanceId(context.query);
  const episode = requireEpisode(id, app.pool.get(id).episode);
  return json(200, shownText(episode));
}

async function availableActions(app: ServeApp, context: RequestContext): Promise<Reply> {
  const id = queryInstanceId(context.query);
  const episode = requireEpisode(id, app.pool.get(id).episode);
  return json(200, episode.observation.availableActions ?? []);
}

async function detail(app: ServeApp, context: RequestContext): Promise<Reply> {
  const id = queryInstanceId(context.query);
  const instance = app.pool.get(id);
  const episode = instance.episode;
  return json(200, {
    id,
    env: app.def.info.name,
    version: app.def.info.version,
    created_at: new Date(instance.createdAt).toISOString(),
    ...(episode
      ? {
          task_index: episode.taskIndex,
          seed: episode.seed,
          steps: episode.steps,
          reward: episode.reward,
          done: episode.done,
          observation: shownText(episode),
          ...actionsField(episode.observation),
          info: episode.info,
        }
      : { done: false, steps: 0 }),
  });
}

async function close(app: ServeApp, context: RequestContext): Promise<Reply> {
  const input = parseInput(closeSchema, await context.body());
  return json(200, await app.pool.close(input.id));
}

type Handler = (app: ServeApp, context: RequestContext) => Promise<Reply>;

const HANDLERS: Record<string, Record<string, Handler>> = {
  "/create": { POST: create },
  "/reset": { POST: reset },
  "/step": { POST: step },
  "/observation": { GET: observation },
  "/available_actions": { GET: availableActions },
  "/detail": { GET: detail },
  "/close": { POST: close },
};

/**
 * The AgentGym routes, at the root and under "/<env name>" (AgentGym serves Maze and Wordle
 * under /maze and /wordle, and its clients take that as part of the base URL).
 */
export function agentgymRoutes(app: ServeApp): Route {
  const prefix = `/${app.def.info.name}`;
  const { name, version } = app.def.info;
  const banner = `This is environment ${name} (clade, version ${version}).`;
  return (context) => {
    let path = context.path;
    if (path === prefix) path = "/";
    else if (path.startsWith(`${prefix}/`)) path = path.slice(prefix.length);
    if (path === "/") {
      if (context.method !== "GET") return Promise.resolve(notAllowed(context.method, "GET"));
      return Promise.resolve(json(200, banner));
    }
    const methods = HANDLERS[path];
    if (!methods) return undefined;
    const handler = methods[context.method];
    if (!handler) {
      return Promise.resolve(notAllowed(context.method, Object.keys(methods).join(", ")));
    }
    return handler(app, context).catch(agentgymError);
  };
}

function notAllowed(method: string, allowed: string): Reply {
  return json(
    405,
    { error: `method ${method} is not allowed here (use ${allowed})`, code: "method_not_allowed" },
    { allow: allowed },
  );
}
