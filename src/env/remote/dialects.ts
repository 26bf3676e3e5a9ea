/**
 * The HTTP dialects of environment servers, as request builders and reply readers:
 *
 * - "id": AgentGym's TextCraft/BabyAI/SciWorld/ALFWorld/Maze/Wordle servers and clade's
 *   AgentGym API: /create → {id}, /reset {id, data_idx}, /step {id, action},
 *   GET /observation?id=N, /close {id}.
 * - "env_idx": AgentGym's WebShop, sqlgym, tool and WebArena servers: /create → a bare int
 *   (or {env_idx}), /reset {env_idx, id|item_id|session_id}, /step {env_idx, action} →
 *   {observation|state, reward, done | terminated/truncated, info}, GET /observation?env_idx=N.
 * - "clade": clade's own /v1 API with proper status codes.
 *
 * Readers are lenient about extra fields and strict about the ones they need.
 */
import type { Observation, StepResult } from "../types.js";
import { quote } from "./transport.js";

export type RemoteDialect = "id" | "env_idx" | "clade";

export interface DialectRequest {
  method: "GET" | "POST" | "DELETE";
  /** Path below the server's base URL (and env prefix), with any query. */
  path: string;
  body?: unknown;
}

export interface DialectSettings {
  /** Fields the task index is sent under on reset. */
  taskFields: readonly string[];
  /** Extra fields for /create (TextCraft: {commands, goal}; the tool servers: {id}). */
  createBody: Record<string, unknown>;
}

export interface Dialect {
  create(settings: DialectSettings): DialectRequest;
  readCreate(body: unknown): number;
  reset(id: number, taskIndex: number, seed: number, settings: DialectSettings): DialectRequest;
  /** The first observation, or undefined when it has to be fetched with observe(). */
  readReset(body: unknown): Observation | undefined;
  observe(id: number): DialectRequest;
  readObservation(body: unknown): Observation;
  step(id: number, action: string): DialectRequest;
  readStep(body: unknown): StepResult;
  close(id: number): DialectRequest;
}

/** A reply that does not have the shape the dialect promises. */
export class UnexpectedReplyError extends Error {
  override name = "UnexpectedReplyError";
}

export const DEFAULT_TASK_FIELDS: Readonly<Record<RemoteDialect, readonly string[]>> = {
  id: ["data_idx"],
  // Each env_idx server reads one of these and ignores the others.
  env_idx: ["id", "item_id", "session_id"],
  clade: ["task"],
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function unexpected(what: string, body: unknown): never {
  throw new UnexpectedReplyError(`expected ${what}, got ${quote(body)}`);
}

/**
 * Ids up to 2^53 - 1 (clade's are random in [2^31, 2^53)) come through exactly; a larger one was
 * already rounded by JSON.parse, and sending it back would name another instance, so it is
 * refused rather than used.
 */
function exactId(value: unknown): number | undefined {
  if (typeof value === "string" && /^\d{1,16}$/.test(value)) value = Number(value);
  if (!Number.isInteger(value)) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw new UnexpectedReplyError(
      "expected an instance id between 0 and 2^53 - 1 (larger ones lose digits in JSON), " +
        `got ${quote(value)}`,
    );
  }
  return value as number;
}

function instanceIdOf(body: unknown, fields: readonly string[]): number {
  const bare = exactId(body);
  if (bare !== undefined) return bare;
  if (isRecord(body)) {
    for (const field of fields) {
      const id = exactId(body[field]);
      if (id !== undefined) return id;
    }
  }
  return unexpected(`an instance id (${fields.join(" or ")})`, body);
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function actionsOf(body: Record<string, unknown>): string[] | undefined {
  const actions = body.available_actions ?? body.availableActions;
  if (!Array.isArray(actions)) return undefined;
  return actions.every((a) => typeof a === "string") ? (actions as string[]) : undefined;
}

function observationOf(text: string, actions: string[] | undefined): Observation {
  return actions ? { text, availableActions: actions } : { text };
}

/** An observation from {observation | state, available_actions?}, or undefined. */
function observationField(body: unknown): Observation | undefined {
  if (!isRecord(body)) return undefined;
  const value = body.observation ?? body.state;
  if (value === undefined || value === null) return undefined;
  if (isRecord(value) && typeof value.text === "string") {
    return observationOf(value.text, actionsOf(value) ?? actionsOf(body));
  }
  return observationOf(asText(value), actionsOf(body));
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  return undefined;
}

/** {observation|state, reward|score, done | terminated/truncated, info?} */
function readAgentgymStep(body: unknown): StepResult {
  const observation = observationField(body);
  if (!isRecord(body) || !observation) return unexpected("{observation, reward, done}", body);
  const done =
    typeof body.done === "boolean"
      ? body.done
      : body.terminated === true || body.truncated === true;
  if (typeof body.done !== "boolean" && !("terminated" in body) && !("truncated" in body)) {
    return unexpected("a done (or terminated/truncated) flag", body);
  }
  // BabyAI's and SciWorld's clients keep `score` as the reward; elsewhere it equals `reward`.
  const reward = numberOf(body.score) ?? numberOf(body.reward) ?? 0;
  const info = isRecord(body.info) ? body.info : {};
  return { observation, reward, done, info };
}

function readObservationReply(body: unknown): Observation {
  if (typeof body === "string") return { text: body };
  return observationField(body) ?? unexpected("an observation", body);
}

function taskBody(
  taskIndex: number,
  settings: DialectSettings,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...extra };
  for (const field of settings.taskFields) body[field] = taskIndex;
  return body;
}

const idDialect: Dialect = {
  create: (settings) => ({ method: "POST", path: "/create", body: settings.createBody }),
  readCreate: (body) => instanceIdOf(body, ["id", "env_idx"]),
  reset: (id, taskIndex, seed, settings) => ({
    method: "POST",
    path: "/reset",
    // clade's server: the bare observation (the instruction is in EnvInfo) and the seed;
    // AgentGym's servers ignore both fields.
    body: taskBody(taskIndex, settings, {
      id,
      episode_seed: seed,
      include_instruction: false,
    }),
  }),
  readReset: observationField,
  observe: (id) => ({ method: "GET", path: `/observation?id=${id}` }),
  readObservation: readObservationReply,
  step: (id, action) => ({ method: "POST", path: "/step", body: { id, action } }),
  readStep: readAgentgymStep,
  close: (id) => ({ method: "POST", path: "/close", body: { id } }),
};

const envIdxDialect: Dialect = {
  create: (settings) => ({ method: "POST", path: "/create", body: settings.createBody }),
  readCreate: (body) => instanceIdOf(body, ["env_idx", "id"]),
  reset: (id, taskIndex, _seed, settings) => ({
    method: "POST",
    path: "/reset",
    body: taskBody(taskIndex, settings, { env_idx: id }),
  }),
  // WebShop answers reset with a list; the observation comes from GET /observation.
  readReset: observationField,
  observe: (id) => ({ method: "GET", path: `/observation?env_idx=${id}` }),
  readObservation: readObservationReply,
  step: (id, action) => ({ method: "POST", path: "/step", body: { env_idx: id, action } }),
  readStep: readAgentgymStep,
  close: (id) => ({ method: "POST", path: "/close", body: { env_idx: id } }),
};

const cladeDialect: Dialect = {
  create: () => ({ method: "POST", path: "/v1/instances", body: {} }),
  readCreate: (body) => instanceIdOf(body, ["id"]),
  reset: (id, taskIndex, seed) => ({
    method: "POST",
    path: `/v1/instances/${id}/reset`,
    body: { task: taskIndex, seed },
  }),
  readReset: (body) => observationField(body) ?? unexpected("{observation}", body),
  observe: (id) => ({ method: "GET", path: `/v1/instances/${id}` }),
  readObservation: (body) =>
    (isRecord(body) ? observationField(body.episode) : undefined) ??
    unexpected("{episode: {observation}}", body),
  step: (id, action) => ({ method: "POST", path: `/v1/instances/${id}/step`, body: { action } }),
  readStep: (body) => {
    const observation = observationField(body);
    if (!isRecord(body) || !observation || typeof body.done !== "boolean") {
      return unexpected("{observation, reward, done, info}", body);
    }
    return {
      observation,
      reward: numberOf(body.reward) ?? 0,
      done: body.done,
      info: isRecord(body.info) ? body.info : {},
    };
  },
  close: (id) => ({ method: "DELETE", path: `/v1/instances/${id}` }),
};

export const DIALECTS: Readonly<Record<RemoteDialect, Dialect>> = {
  id: idDialect,
  env_idx: envIdxDialect,
  clade: cladeDialect,
};
