/**
 * Errors the env server answers with: a stable code (for clients to branch on), an HTTP status
 * for the clean API, and a one-line message for people.
 */
import { EnvError, EpisodeDoneError, NotResetError, UnknownTaskError } from "../env/types.js";

export type ServeErrorCode =
  | "bad_json"
  | "invalid_request"
  | "too_large"
  | "not_found"
  | "method_not_allowed"
  | "unknown_instance"
  | "unknown_task"
  | "not_reset"
  | "episode_done"
  | "capacity"
  | "client_capacity"
  | "shutting_down"
  | "env_error";

/** Status of each code in the clean (/v1) API. */
export const STATUS_OF_CODE: Readonly<Record<ServeErrorCode, number>> = {
  bad_json: 400,
  invalid_request: 400,
  unknown_task: 400,
  too_large: 413,
  not_found: 404,
  unknown_instance: 404,
  method_not_allowed: 405,
  not_reset: 409,
  episode_done: 409,
  capacity: 503,
  // The server has room, this client does not: "too many", not "unavailable".
  client_capacity: 429,
  shutting_down: 503,
  env_error: 500,
};

export class ServeError extends Error {
  override name = "ServeError";
  constructor(
    readonly code: ServeErrorCode,
    message: string,
    /** Sent as Retry-After with 503s and 429s. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  get status(): number {
    return STATUS_OF_CODE[this.code];
  }
}

/** Longest env error message passed on to clients; env errors may quote huge actions. */
const MAX_ENV_MESSAGE_CHARS = 500;

function shorten(text: string): string {
  return text.length <= MAX_ENV_MESSAGE_CHARS ? text : `${text.slice(0, MAX_ENV_MESSAGE_CHARS)}…`;
}

/** Whatever an env call threw, as a ServeError; errors clade's env API names keep their meaning. */
export function toServeError(error: unknown): ServeError {
  if (error instanceof ServeError) return error;
  if (error instanceof EpisodeDoneError) return new ServeError("episode_done", error.message);
  if (error instanceof NotResetError) return new ServeError("not_reset", error.message);
  if (error instanceof UnknownTaskError) return new ServeError("unknown_task", error.message);
  if (error instanceof EnvError) return new ServeError("env_error", shorten(error.message));
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new ServeError("env_error", `the environment failed: ${shorten(text)}`);
}
