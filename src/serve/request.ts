/**
 * What a route handler sees of a request and gives back, and the input checks both APIs share.
 */
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import type { EnvDefinition } from "../env/types.js";
import { type BodyLimits, BodyTooLargeError, readJsonBody } from "./body.js";
import { ServeError } from "./errors.js";
import type { InstancePool } from "./instances.js";

export interface Reply {
  status: number;
  /** Serialised as JSON; undefined sends no body (204). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RequestContext {
  method: string;
  /** Path without query, without trailing slash ("/" for the root). */
  path: string;
  query: URLSearchParams;
  /** Who is asking: the remote address (see clientOf), the unit of the per-client cap. */
  client: string;
  /** The body as JSON (undefined when empty); read on first call. */
  body(): Promise<unknown>;
  /** True once the body was refused without being read to its end: the socket must close. */
  readonly bodyLeftUnread: boolean;
}

/** What the APIs serve: the environment, its instances and a few presentation choices. */
export interface ServeApp {
  def: EnvDefinition;
  pool: InstancePool;
  /** AgentGym API: put the env's instruction before the first observation of an episode. */
  instructionInFirstObservation: boolean;
  idleTimeoutMs: number;
  evictIdleAfterMs: number;
  maxBodyBytes: number;
}

/** A route answers the request, or returns undefined when the path is not its own. */
export type Route = (context: RequestContext) => Promise<Reply> | undefined;

/**
 * The client a request comes from: its remote address, with IPv4-mapped IPv6 addresses
 * ("::ffff:10.0.0.5", what a dual-stack listener reports) written as IPv4, so one machine is one
 * client whichever way it connects.
 */
export function clientOf(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === "") return "unknown";
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(remoteAddress);
  return mapped?.[1] ?? remoteAddress.toLowerCase();
}

export function requestContext(request: IncomingMessage, limits: BodyLimits): RequestContext {
  const url = new URL(request.url ?? "/", "http://localhost");
  let path = url.pathname.replace(/\/+$/, "");
  if (path === "") path = "/";
  let body: Promise<unknown> | undefined;
  let bodyLeftUnread = false;
  return {
    method: request.method ?? "GET",
    path,
    query: url.searchParams,
    client: clientOf(request.socket.remoteAddress),
    body: () => {
      body ??= readJsonBody(request, limits).catch((error: unknown) => {
        if (error instanceof BodyTooLargeError && !error.drained) bodyLeftUnread = true;
        throw error;
      });
      return body;
    },
    get bodyLeftUnread() {
      return bodyLeftUnread;
    },
  };
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers ? { status, body, headers } : { status, body };
}

/**
 * Instance ids: non-negative safe integers (zod's int() is the safe range), also as digit
 * strings (query strings, lax clients). Any such id is well-formed; only live ones are found.
 */
export const instanceIdSchema = z.union(
  [
    z.number().int().nonnegative(),
    z
      .string()
      .regex(/^\d{1,16}$/)
      .transform(Number)
      .pipe(z.number().int()),
  ],
  { error: "expected a non-negative integer" },
);

/** Task indices and seeds: any integer (the env says which task indices exist). */
export const integerSchema = z.number().int();

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const field = issue.path.map(String).join(".");
  if (field === "") {
    return issue.code === "invalid_type" ? "the request body must be a JSON object" : issue.message;
  }
  if (valueAt(input, issue.path) === undefined) return `missing field "${field}"`;
  return `field "${field}": ${issue.message.replace(/^Invalid input: /, "")}`;
}

/** The body checked against a schema; invalid_request naming every problem otherwise. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const value = input ?? {};
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = [...new Set(result.error.issues.map((issue) => describeIssue(issue, value)))];
  throw new ServeError("invalid_request", problems.join("; "));
}

/** The `id` query parameter of GET routes. */
export function queryInstanceId(query: URLSearchParams, name = "id"): number {
  const raw = query.get(name);
  if (raw === null) throw new ServeError("invalid_request", `missing query parameter "${name}"`);
  return parseInput(z.object({ [name]: instanceIdSchema }), { [name]: raw })[name] as number;
}
