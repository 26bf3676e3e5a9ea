/**
 * Serves one clade environment over HTTP: AgentGym's "id" and "env_idx" dialects (for AgentGym
 * and AgentGym-RL clients, also under AgentGym's task names) and clade's own /v1 API, on
 * node:http. Many instances under unguessable ids, calls to each serialised, caps on instances
 * overall and per client with least-recently-used eviction, size and time limits on requests,
 * graceful shutdown.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import type { EnvDefinition } from "../env/types.js";
import { agentgymError, agentgymRoutes } from "./agentgym-api.js";
import { RequestAbortedError } from "./body.js";
import { ServeError } from "./errors.js";
import { InstancePool } from "./instances.js";
import { json, type Reply, requestContext, type ServeApp } from "./request.js";
import { v1Error, v1Routes } from "./v1-api.js";

/** Loopback unless told otherwise: an env server runs whatever actions it is sent. */
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_MAX_INSTANCES = 1024;
/**
 * Unless told otherwise one client (remote address) may hold this share of maxInstances: half
 * lets a lone trainer (AgentGym-RL creates batch x n instances from one machine) use most of the
 * server, while a client that grabs all it can still leaves the other half to everyone else.
 */
export const DEFAULT_PER_CLIENT_SHARE = 0.5;
/**
 * Long: an RL trainer may leave an instance alone for minutes between two steps of one episode
 * (while its model generates for the whole batch), and an instance closed under it scores that
 * sample 0. Room for new instances comes from eviction instead (DEFAULT_EVICT_IDLE_AFTER_MS).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 24 * 3600_000;
/**
 * When a new instance needs room, an instance in an unfinished episode may be closed to make it
 * after this long without calls (least recently used first; finished episodes after 1 s).
 */
export const DEFAULT_EVICT_IDLE_AFTER_MS = 60_000;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Oversized bodies are read and dropped up to this, so the client gets the error reply. */
export const DEFAULT_MAX_DRAIN_BYTES = 64 * 1024 * 1024;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Time to receive a whole request (headers and body), not to answer it. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Above common clients' idle-socket timeouts' reuse window; Node's own default. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
export const DEFAULT_RETRY_AFTER_SECONDS = 1;
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/** Node checks header and request timeouts this often at most (its default is 30 s). */
const MAX_TIMEOUT_CHECK_MS = 1_000;
/** After refusing an unread body, the socket gets this long to deliver the reply, then goes. */
const UNREAD_BODY_LINGER_MS = 1_000;

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

const serverOptionsSchema = z.object({
  maxInstances: positiveInt.default(DEFAULT_MAX_INSTANCES),
  maxInstancesPerClient: positiveInt.optional(),
  idleTimeoutMs: nonNegativeInt.default(DEFAULT_IDLE_TIMEOUT_MS),
  evictIdleAfterMs: nonNegativeInt.default(DEFAULT_EVICT_IDLE_AFTER_MS),
  maxBodyBytes: positiveInt.default(DEFAULT_MAX_BODY_BYTES),
  maxDrainBytes: positiveInt.default(DEFAULT_MAX_DRAIN_BYTES),
  headersTimeoutMs: positiveInt.default(DEFAULT_HEADERS_TIMEOUT_MS),
  requestTimeoutMs: positiveInt.default(DEFAULT_REQUEST_TIMEOUT_MS),
  keepAliveTimeoutMs: positiveInt.default(DEFAULT_KEEP_ALIVE_TIMEOUT_MS),
  retryAfterSeconds: positiveInt.default(DEFAULT_RETRY_AFTER_SECONDS),
  shutdownGraceMs: nonNegativeInt.default(DEFAULT_SHUTDOWN_GRACE_MS),
  instructionInFirstObservation: z.boolean().default(true),
});

export interface EnvServerOptions {
  /** Live instances at most; /create beyond it gets 503 with Retry-After. */
  maxInstances?: number;
  /**
   * Live instances one client (remote address) may hold; /create beyond it gets 429 with
   * Retry-After. At most maxInstances; default half of it (DEFAULT_PER_CLIENT_SHARE).
   */
  maxInstancesPerClient?: number;
  /** Instances without a call for this long are closed; 0 never closes them. Default 24 h. */
  idleTimeoutMs?: number;
  /**
   * When /create finds the server (or the asking client) at its cap, the least recently used
   * instance left alone this long is closed to make room (a finished episode's after 1 s): one of
   * the client's own when the client is at its cap. Only when none qualifies is creation refused
   * (503 / 429). Default 60 s.
   */
  evictIdleAfterMs?: number;
  /** Largest request body (default 1 MiB). */
  maxBodyBytes?: number;
  maxDrainBytes?: number;
  /** A client must send its headers within this (slow-client protection). */
  headersTimeoutMs?: number;
  /** ...and its whole request within this. */
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  /** Retry-After sent with 503 when full. */
  retryAfterSeconds?: number;
  /** shutdown() lets requests in flight finish for up to this long. */
  shutdownGraceMs?: number;
  /**
   * AgentGym API: start an episode's first observation with the env's instruction, since
   * AgentGym's clients only know their own (default true; a reset may ask for the bare one).
   */
  instructionInFirstObservation?: boolean;
  /** Failures no request is waiting for (an env's close() throwing, a reply that failed). */
  onError?: (error: unknown) => void;
  /**
   * The server log: one line for every instance the server closes on its own (expired, or
   * evicted to make room), naming it, its client and episode, and why. Closed ids are never
   * issued again, so naming them gives nothing away.
   */
  log?: (line: string) => void;
}

export type ResolvedEnvServerOptions = Omit<
  z.output<typeof serverOptionsSchema>,
  "maxInstancesPerClient"
> & { maxInstancesPerClient: number };

/** The per-client cap when none is given: DEFAULT_PER_CLIENT_SHARE of maxInstances, at least 1. */
export function defaultMaxInstancesPerClient(maxInstances: number): number {
  return Math.max(1, Math.floor(maxInstances * DEFAULT_PER_CLIENT_SHARE));
}

export function resolveEnvServerOptions(options: EnvServerOptions = {}): ResolvedEnvServerOptions {
  const { onError: _onError, log: _log, ...rest } = options;
  const parsed = serverOptionsSchema.parse(rest);
  const maxInstancesPerClient =
    parsed.maxInstancesPerClient ?? defaultMaxInstancesPerClient(parsed.maxInstances);
  if (maxInstancesPerClient > parsed.maxInstances) {
    throw new RangeError(
      `maxInstancesPerClient (${maxInstancesPerClient}) must not exceed ` +
        `maxInstances (${parsed.maxInstances})`,
    );
  }
  return {
    ...parsed,
    maxInstancesPerClient,
    // Node refuses a headers timeout longer than the request timeout.
    headersTimeoutMs: Math.min(parsed.headersTimeoutMs, parsed.requestTimeoutMs),
    maxDrainBytes: Math.max(parsed.maxDrainBytes, parsed.maxBodyBytes),
  };
}

export interface EnvServer {
  readonly server: Server;
  readonly pool: InstancePool;
  readonly options: ResolvedEnvServerOptions;
  /**
   * Stops accepting connections, answers new requests on open ones with 503, lets requests in
   * flight finish (up to shutdownGraceMs), then closes every connection and every instance.
   */
  shutdown(): Promise<void>;
}

function send(response: ServerResponse, reply: Reply, closeConnection: boolean): void {
  let payload: string | undefined;
  let status = reply.status;
  let headers = reply.headers ?? {};
  try {
    payload = reply.body === undefined ? undefined : JSON.stringify(reply.body);
  } catch (error) {
    status = 500;
    headers = {};
    const reason = error instanceof Error ? error.message : String(error);
    payload = JSON.stringify({
      error: `the reply could not be encoded: ${reason}`,
      code: "env_error",
    });
  }
  const allHeaders: Record<string, string | number> = { ...headers };
  if (payload !== undefined) {
    allHeaders["content-type"] = "application/json; charset=utf-8";
    allHeaders["content-length"] = Buffer.byteLength(payload);
  }
  if (closeConnection) allHeaders.connection = "close";
  response.writeHead(status, allHeaders);
  response.end(payload);
}

/** The error reply in the dialect the path belongs to. */
function errorReply(path: string, error: unknown): Reply {
  return path === "/v1" || path.startsWith("/v1/") ? v1Error(error) : agentgymError(error);
}

export function createEnvServer(def: EnvDefinition, options: EnvServerOptions = {}): EnvServer {
  const resolved = resolveEnvServerOptions(options);
  const onError = options.onError;
  const pool = new InstancePool(def, {
    maxInstances: resolved.maxInstances,
    maxInstancesPerClient: resolved.maxInstancesPerClient,
    idleTimeoutMs: resolved.idleTimeoutMs,
    evictIdleAfterMs: resolved.evictIdleAfterMs,
    retryAfterSeconds: resolved.retryAfterSeconds,
    ...(onError ? { onBackgroundError: onError } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  const app: ServeApp = {
    def,
    pool,
    instructionInFirstObservation: resolved.instructionInFirstObservation,
    idleTimeoutMs: resolved.idleTimeoutMs,
    evictIdleAfterMs: resolved.evictIdleAfterMs,
    maxBodyBytes: resolved.maxBodyBytes,
  };
  const routes = [v1Routes(app), agentgymRoutes(app)];
  const limits = { maxBytes: resolved.maxBodyBytes, maxDrainBytes: resolved.maxDrainBytes };

  let shuttingDown = false;
  let inFlight = 0;
  let onDrained: (() => void) | undefined;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const context = requestContext(request, limits);
    let reply: Reply;
    try {
      if (shuttingDown) throw new ServeError("shutting_down", "the server is shutting down", 1);
      let answer: Promise<Reply> | undefined;
      for (const route of routes) {
        answer = route(context);
        if (answer) break;
      }
      reply =
        (await answer) ??
        json(404, {
          error: `no such endpoint: ${context.method} ${context.path}`,
          code: "not_found",
        });
    } catch (error) {
      reply = errorReply(context.path, error);
    }
    if (response.writableEnded || response.destroyed || request.socket.destroyed) return;
    send(response, reply, shuttingDown || context.bodyLeftUnread);
    if (context.bodyLeftUnread) {
      // The rest of the body is still on its way; let the reply out, then drop the socket.
      response.once("finish", () => {
        const socket = request.socket;
        socket.end();
        setTimeout(() => socket.destroy(), UNREAD_BODY_LINGER_MS).unref();
      });
    }
  };

  const server = createServer(
    {
      connectionsCheckingInterval: Math.min(
        MAX_TIMEOUT_CHECK_MS,
        Math.ceil(resolved.headersTimeoutMs / 2),
      ),
    },
    (request, response) => {
      inFlight++;
      response.once("close", () => {
        inFlight--;
        if (inFlight === 0) onDrained?.();
      });
      handle(request, response).catch((error: unknown) => {
        if (!(error instanceof RequestAbortedError)) onError?.(error);
        response.destroy();
      });
    },
  );
  server.headersTimeout = resolved.headersTimeoutMs;
  server.requestTimeout = resolved.requestTimeoutMs;
  server.keepAliveTimeout = resolved.keepAliveTimeoutMs;

  let shutdownPromise: Promise<void> | undefined;
  const shutdown = () => {
    shutdownPromise ??= (async () => {
      shuttingDown = true;
      const deadline = Date.now() + resolved.shutdownGraceMs;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, resolved.shutdownGraceMs);
          onDrained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      server.closeAllConnections();
      // Env calls cut off with their connection may still run; they get what is left of the
      // grace period before their envs are closed under them.
      await pool.closeAll(Math.max(0, deadline - Date.now()));
      await closed;
    })();
    return shutdownPromise;
  };

  return { server, pool, options: resolved, shutdown };
}

export interface StartEnvServerOptions extends EnvServerOptions {
  /** Default 127.0.0.1; pass "0.0.0.0" or "::" only to serve other machines deliberately. */
  host?: string;
  /** Default 0: any free port (read it from `url` / `port`). */
  port?: number;
}

export interface RunningEnvServer extends EnvServer {
  /** "http://HOST:PORT", the base URL AgentGym clients take as env_server_base. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Graceful shutdown (see EnvServer.shutdown). */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Creates the server and listens; resolves once it accepts connections. */
export async function startEnvServer(
  def: EnvDefinition,
  options: StartEnvServerOptions = {},
): Promise<RunningEnvServer> {
  const { host = DEFAULT_HOST, port = 0, ...serverOptions } = options;
  const envServer = createEnvServer(def, serverOptions);
  const { server } = envServer;
  await new Promise<void>((resolve, reject) => {
    const onListenError = (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === "EADDRINUSE"
          ? `port ${port} on ${host} is already in use`
          : error.code === "EACCES"
            ? `no permission to listen on ${host}:${port}`
            : error.message;
      void envServer.pool.closeAll();
      reject(new Error(`cannot start the environment server: ${reason}`, { cause: error }));
    };
    server.once("error", onListenError);
    server.listen(port, host, () => {
      server.off("error", onListenError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    ...envServer,
    host,
    port: address.port,
    url: `http://${urlHost(host)}:${address.port}`,
    close: envServer.shutdown,
  };
}
