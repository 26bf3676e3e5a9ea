/**
 * AgentGym's HTTP API in both of its dialects, answering the shapes AgentGym's own Python clients
 * read:
 *
 * - "id" (TextCraftEnvClient, BabyAIEnvClient, MazeEnvClient, WordleEnvClient, ...): /create →
 *   {"id", ...}; reset, step, close and the GETs name the instance by "id".
 * - "env_idx" (SqlGymEnvClient, TodoEnvClient and the other tool clients, WebShop, SearchQA):
 *   /create → a bare integer; later calls name the instance by "env_idx", and the task index
 *   comes as "item_id", "session_id" or "id".
 *
 * Served at the root, under "/<env name>" and under "/<AgentGym task name>" for each AgentGym
 * task the env plays (agentgym-tasks.ts). Every call after /create says its dialect by carrying
 * "env_idx" or not, so each is answered in the dialect it speaks. /create alone is ambiguous
 * (SqlGym's and BabyAI's clients both send no body): under a task name it answers in that task's
 * dialect; elsewhere it answers {"id", ...}, except to the tool clients' body {"id": n}, which
 * gets a bare integer.
 *
 * Errors come back as HTTP 200 with {"error": "..."} as AgentGym servers do, except a refused
 * /create: 503 with Retry-After when the server is full or shutting down, 429 with Retry-After
 * when this client holds its share, because those clients check the status on create only and
 * AgentGym-RL's client factory retries a failed create.
 */
import { z } from "zod";
import type { Observation } from "../env/types.js";
import { agentgymTask, agentgymTasksServedBy, type MountedAgentgymTask } from "./agentgym-tasks.js";
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

/** Where a request arrived: the root, "/<env name>", or "/<AgentGym task name>". */
interface Mount {
  prefix: string;
  /** The AgentGym task served under this prefix. */
  task?: MountedAgentgymTask;
}

const createSchema = z.looseObject({});

const commonResetFields = {
  /** clade's episode seed (varies the episode within a task). */
  episode_seed: integerSchema.optional(),
  /** false: the bare first observation, without the instruction (clade's client sends this). */
  include_instruction: z.boolean().optional(),
};

const resetSchema = z.looseObject({
  id: instanceIdSchema,
  /** The task index, under the names AgentGym's clients use: TextCraft/BabyAI, Maze, Wordle. */
  data_idx: integerSchema.optional(),
  game: integerSchema.optional(),
  idx: integerSchema.optional(),
  seed: integerSchema.optional(),
  ...commonResetFields,
});

/** The task index fields of the env_idx dialect, in the order they are looked at. */
const ENV_IDX_TASK_FIELDS = ["item_id", "session_id", "id", "data_idx", "idx"] as const;

const envIdxResetSchema = z.looseObject({
  env_idx: instanceIdSchema,
  /** The task index: SqlGym, WebShop, the tool clients and SearchQA. */
  item_id: integerSchema.optional(),
  session_id: integerSchema.optional(),
  id: integerSchema.optional(),
  data_idx: integerSchema.optional(),
  idx: integerSchema.optional(),
  ...commonResetFields,
});

const stepSchema = z.looseObject({ id: instanceIdSchema, action: z.string() });
const envIdxStepSchema = z.looseObject({ env_idx: instanceIdSchema, action: z.string() });

const closeSchema = z.looseObject({ id: instanceIdSchema });
const envIdxCloseSchema = z.looseObject({ env_idx: instanceIdSchema });

/** Whether a request body speaks the env_idx dialect (it names the instance by "env_idx"). */
function speaksEnvIdx(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) && "env_idx" in body;
}

/** The tool clients' and SearchQA's /create body: {"id": n} and nothing else. */
function isToolCreateBody(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  return keys.length === 1 && keys[0] === "id" && Number.isInteger((body as { id: unknown }).id);
}

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

/** The instance a GET names: ?env_idx=N (env_idx dialect) or ?id=N. */
function queryInstance(query: URLSearchParams): number {
  return queryInstanceId(query, query.has("env_idx") ? "env_idx" : "id");
}

async function create(app: ServeApp, context: RequestContext, mount: Mount): Promise<Reply> {
  const body = await context.body();
  parseInput(createSchema, body);
  const bare = mount.task ? mount.task.dialect === "env_idx" : isToolCreateBody(body);
  const instance = app.pool.create(context.client);
  // The env_idx clients keep the whole reply as their instance id.
  if (bare) return json(200, instance.id);
  // TextCraft's client reads an observation here; before any reset the instruction is what
  // there is to show.
  return json(200, {
    id: instance.id,
    observation: app.def.info.instruction,
    reward: 0,
    done: false,
  });
}

/** A reset without a task index: name the field the mount's client sends, if it is that one. */
function missingTask(mount: Mount, envIdx: boolean, fields: readonly string[]): ServeError {
  const task = mount.task && (mount.task.dialect === "env_idx") === envIdx ? mount.task : undefined;
  const list = (task ? [task.taskField] : fields).map((name) => `"${name}"`).join(" or ");
  return new ServeError(
    "invalid_request",
    `missing field ${list} (the task index)${task ? ` for ${task.client}` : ""}`,
  );
}

async function startEpisode(
  app: ServeApp,
  mount: Mount,
  id: number,
  taskIndex: number,
  input: { episode_seed?: number | undefined; include_instruction?: boolean | undefined },
): Promise<EpisodeState> {
  const episode = await app.pool.reset(id, taskIndex, input.episode_seed ?? 0);
  if (app.instructionInFirstObservation && input.include_instruction !== false) {
    const note = mount.task?.instructionNote;
    episode.introduction = `${app.def.info.instruction}\n\n${note ? `${note}\n\n` : ""}`;
  }
  return episode;
}

async function reset(app: ServeApp, context: RequestContext, mount: Mount): Promise<Reply> {
  const body = await context.body();
  if (speaksEnvIdx(body)) return resetEnvIdx(app, body, mount);
  const input = parseInput(resetSchema, body);
  const taskIndex = input.data_idx ?? input.game ?? input.idx ?? input.seed;
  if (taskIndex === undefined) throw missingTask(mount, false, ["data_idx"]);
  const seed = input.episode_seed ?? 0;
  const episode = await startEpisode(app, mount, input.id, taskIndex, input);
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

/**
 * The env_idx reset. Its clients ignore the reply, except forks that read it the way the server
 * they were written for answers: SqlGym (and WebShop) with [observation, null], the tool servers
 * with the observation text; GET /observation gives the same text.
 */
async function resetEnvIdx(app: ServeApp, body: unknown, mount: Mount): Promise<Reply> {
  const input = parseInput(envIdxResetSchema, body);
  const field = ENV_IDX_TASK_FIELDS.find((name) => input[name] !== undefined);
  const taskIndex = field === undefined ? undefined : input[field];
  if (field === undefined || taskIndex === undefined) {
    throw missingTask(mount, true, ENV_IDX_TASK_FIELDS.slice(0, 3));
  }
  const episode = await startEpisode(app, mount, input.env_idx, taskIndex, input);
  const text = shownText(episode);
  return json(200, field === "item_id" || field === "session_id" ? [text, null] : text);
}

function envIdxStep(body: unknown): { id: number; action: string } {
  const input = parseInput(envIdxStepSchema, body);
  return { id: input.env_idx, action: input.action };
}

async function step(app: ServeApp, context: RequestContext, mount: Mount): Promise<Reply> {
  const body = await context.body();
  const envIdx = speaksEnvIdx(body);
  const input = envIdx ? envIdxStep(body) : parseInput(stepSchema, body);
  const adapt = mount.task?.adaptAction;
  const result = await app.pool.step(input.id, adapt ? adapt(input.action) : input.action);
  if (envIdx) {
    // SqlGym and WebShop read "state", the tool clients and SearchQA "observation".
    return json(200, {
      observation: result.observation.text,
      state: result.observation.text,
      reward: result.reward,
      done: result.done,
      info: result.info,
    });
  }
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
  const id = queryInstance(context.query);
  const episode = requireEpisode(id, app.pool.get(id).episode);
  return json(200, shownText(episode));
}

async function availableActions(app: ServeApp, context: RequestContext): Promise<Reply> {
  const id = queryInstance(context.query);
  const episode = requireEpisode(id, app.pool.get(id).episode);
  return json(200, episode.observation.availableActions ?? []);
}

async function detail(app: ServeApp, context: RequestContext): Promise<Reply> {
  const id = queryInstance(context.query);
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
  const body = await context.body();
  const id = speaksEnvIdx(body)
    ? parseInput(envIdxCloseSchema, body).env_idx
    : parseInput(closeSchema, body).id;
  return json(200, await app.pool.close(id));
}

type Handler = (app: ServeApp, context: RequestContext, mount: Mount) => Promise<Reply>;

const HANDLERS: Record<string, Record<string, Handler>> = {
  "/create": { POST: create },
  "/reset": { POST: reset },
  "/step": { POST: step },
  "/observation": { GET: observation },
  "/available_actions": { GET: availableActions },
  "/detail": { GET: detail },
  "/close": { POST: close },
};

/** A GET the mount's AgentGym client calls besides the common ones (Wordle's /filtered_vocab). */
function extraGet(mount: Mount, path: string): Handler | undefined {
  const answer = mount.task?.extraGets?.[path];
  if (!answer) return undefined;
  return async (app, context) => {
    app.pool.get(queryInstance(context.query));
    return json(200, answer());
  };
}

/** The root, "/<task name>" for each AgentGym task the env plays, and "/<env name>". */
function mountsOf(app: ServeApp): Mount[] {
  const name = app.def.info.name;
  const tasks = agentgymTasksServedBy(name);
  const mounts: Mount[] = tasks.map((task) => ({ prefix: `/${task.name}`, task }));
  if (!tasks.some((task) => task.name === name)) mounts.push({ prefix: `/${name}` });
  return mounts;
}

/** 404 for an AgentGym task name this server does not play, saying what does. */
function notPlayedHere(app: ServeApp, path: string): Reply | undefined {
  const task = agentgymTask(path.split("/")[1] ?? "");
  if (!task) return undefined;
  const served = app.def.info.name;
  const where = task.env
    ? `\`clade serve-env --env ${task.env}\` serves it`
    : `no clade environment plays it: ${task.note}`;
  return json(404, {
    error: `AgentGym's "${task.name}" task (${task.client}) is not served here (this server plays clade's ${served}); ${where}`,
    code: "not_found",
  });
}

/**
 * The AgentGym routes, at the root, under "/<env name>" (AgentGym serves Maze and Wordle under
 * /maze and /wordle, and its clients take that as part of the base URL) and under the name of
 * each AgentGym task the env plays.
 */
export function agentgymRoutes(app: ServeApp): Route {
  const mounts = mountsOf(app);
  const { name, version } = app.def.info;
  const banner = `This is environment ${name} (clade, version ${version}).`;
  return (context) => {
    let path = context.path;
    let mount: Mount = { prefix: "" };
    for (const candidate of mounts) {
      if (path === candidate.prefix || path.startsWith(`${candidate.prefix}/`)) {
        mount = candidate;
        path = path.slice(candidate.prefix.length) || "/";
        break;
      }
    }
    if (path === "/") {
      if (context.method !== "GET") return Promise.resolve(notAllowed(context.method, "GET"));
      return Promise.resolve(json(200, banner));
    }
    const methods = HANDLERS[path];
    const extra = context.method === "GET" ? extraGet(mount, path) : undefined;
    if (extra) return extra(app, context, mount).catch(agentgymError);
    if (!methods) {
      const refusal = mount.prefix === "" ? notPlayedHere(app, path) : undefined;
      return refusal ? Promise.resolve(refusal) : undefined;
    }
    const handler = methods[context.method];
    if (!handler) {
      return Promise.resolve(notAllowed(context.method, Object.keys(methods).join(", ")));
    }
    return handler(app, context, mount).catch(agentgymError);
  };
}

function notAllowed(method: string, allowed: string): Reply {
  return json(
    405,
    { error: `method ${method} is not allowed here (use ${allowed})`, code: "method_not_allowed" },
    { allow: allowed },
  );
}
