/**
 * Errors of remote environments. Server-reported errors (a status, or AgentGym's errors-as-200
 * {"error": ...}) become the env API's typed errors where they mean the same thing.
 */
import { EnvError, EpisodeDoneError, NotResetError, UnknownTaskError } from "../types.js";
import { quote } from "./transport.js";

export interface RemoteErrorDetails {
  /** The endpoint called. */
  url: string;
  /** HTTP status, when a reply came. */
  status?: number;
  /** The server's error code (clade servers send one), or the socket error code. */
  code?: string;
}

export class RemoteEnvError extends EnvError {
  override name = "RemoteEnvError";
  constructor(
    message: string,
    readonly details: RemoteErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Nothing listens at the URL (or it cannot be reached at all). */
export class EnvServerUnavailableError extends RemoteEnvError {
  override name = "EnvServerUnavailableError";
}

/** The server no longer knows the instance: closed, expired when idle, or the server restarted. */
export class RemoteInstanceLostError extends RemoteEnvError {
  override name = "RemoteInstanceLostError";
}

/** The server's reply does not have the shape the dialect promises. */
export class RemoteProtocolError extends RemoteEnvError {
  override name = "RemoteProtocolError";
}

/** How AgentGym servers word "the episode is over" (ALFWorld: "... has finished."). */
const DONE_MESSAGE = new RegExp(
  [
    "has finished",
    "is finished",
    "is done",
    "already (done|finished|over|ended)",
    "episode (has )?ended",
    "game (is )?over",
  ].join("|"),
  "i",
);
/** ... and "no such instance" (ALFWorld: "The id 3 is not valid.", "... has been deleted."). */
const LOST_MESSAGE = new RegExp(
  [
    "\\b(id|instance|env(ironment)?|env_idx) \\d+\\b.*" +
      "(not valid|invalid|not found|does not exist|doesn't exist|deleted|no longer exists)",
    "(invalid|unknown|no such) (env(ironment)? )?(id|instance|env_idx)\\b",
  ].join("|"),
  "i",
);

export interface ServerErrorContext {
  env: string;
  url: string;
  status: number;
  /** For unknown_task errors. */
  taskIndex?: number;
}

/** The typed error for an error the server reported. */
export function serverError(
  message: string,
  code: string | undefined,
  context: ServerErrorContext,
): EnvError {
  const details: RemoteErrorDetails = {
    url: context.url,
    status: context.status,
    ...(code === undefined ? {} : { code }),
  };
  const said = `the environment server said: ${quote(message)}`;
  if (code === "episode_done" || (code === undefined && DONE_MESSAGE.test(message))) {
    const error = new EpisodeDoneError(context.env);
    error.message += ` (${said})`;
    return error;
  }
  if (code === "not_reset") {
    const error = new NotResetError(context.env);
    error.message += ` (${said})`;
    return error;
  }
  if (code === "unknown_task" && context.taskIndex !== undefined) {
    return new UnknownTaskError(context.env, context.taskIndex);
  }
  if (code === "unknown_instance" || (code === undefined && LOST_MESSAGE.test(message))) {
    return new RemoteInstanceLostError(`${context.env}: ${said}`, details);
  }
  return new RemoteEnvError(`${context.env}: ${said} (at ${context.url})`, details);
}

/** The clear message for a server that is not there. */
export function unavailableError(
  baseUrl: string,
  url: string,
  reason: string,
  cause?: unknown,
): EnvServerUnavailableError {
  return new EnvServerUnavailableError(
    `no environment server at ${baseUrl} — is the environment server started? (${reason})`,
    { url, code: "ECONNREFUSED" },
    { cause },
  );
}
