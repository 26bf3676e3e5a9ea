/**
 * A remote environment: an env served over HTTP (by AgentGym, AgentGym-RL or `clade serve-env`)
 * used as a clade Env. One remote instance per RemoteEnv, created on the first reset and
 * closed by close(). Create and reset are retried on 503/429, gateway errors and dropped
 * connections; a step only when the server cannot have acted on it (connection refused, 503,
 * 429), since stepping twice is not stepping once.
 */
import { z } from "zod";
import {
  type Env,
  type EnvInfo,
  EpisodeDoneError,
  NotResetError,
  type Observation,
  type ResetOptions,
  type SamplingEnvDefinition,
  type StepResult,
} from "../types.js";
import { guessAgentgymServer } from "./agentgym.js";
import {
  DEFAULT_TASK_FIELDS,
  DIALECTS,
  type Dialect,
  type DialectRequest,
  type DialectSettings,
  type RemoteDialect,
  UnexpectedReplyError,
} from "./dialects.js";
import {
  RemoteEnvError,
  RemoteInstanceLostError,
  RemoteProtocolError,
  serverError,
  unavailableError,
} from "./errors.js";
import { TaskFieldCheck } from "./task-check.js";
import { type JsonReply, quote, requestJson, TransportError } from "./transport.js";

export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;
/** GET /v1/info is a probe: a server that does not answer it quickly is not clade's. */
const INFO_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RETRIES = 5;
export const DEFAULT_BASE_DELAY_MS = 200;
export const DEFAULT_MAX_DELAY_MS = 5_000;
/** A server asking for a longer wait than this gets an error instead of a stalled run. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;
/** Defaults for what a non-clade server cannot tell us. */
export const DEFAULT_REMOTE_MAX_STEPS = 100;
const DEFAULT_TEST_SPLIT_END = 1_000_000;

/** Statuses that say "not processed, try again later". */
const RETRY_LATER_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** Gateway failures: safe to retry for idempotent calls only. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 504]);
/** Transport failures after which an idempotent call may be retried. */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

export interface RemoteRetryPolicy {
  /** Retries after the first attempt. */
  maxRetries?: number;
  /** Backoff ceiling of the first retry, doubled for each further one (full jitter). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxRetryAfterMs?: number;
}

export interface RemoteEnvOptions {
  /** The server's base URL, e.g. "http://127.0.0.1:36001". */
  url: string;
  /** Default "id" (AgentGym's TextCraft/BabyAI/Maze servers and `clade serve-env`). */
  dialect?: RemoteDialect;
  /**
   * Path prefix of the environment on the server ("/maze", or "maze"), for servers that host
   * several environments; not used by the "clade" dialect.
   */
  env?: string;
  /** EnvInfo fields; a clade server supplies them (see connectRemoteEnv), others cannot. */
  info?: Partial<EnvInfo>;
  /** Extra /create fields (TextCraft: {commands, goal}; the tool servers: {id: 0}). */
  createBody?: Record<string, unknown>;
  /**
   * Field(s) the task index is sent under on reset. Defaults: "data_idx" ("id" dialect; use
   * "game" for AgentGym's Maze server, "seed" for its Wordle server); "id", "item_id" and
   * "session_id" together ("env_idx" dialect).
   */
  taskField?: string | readonly string[];
  /** Per request (default 5 min: some environments run tests or browsers). */
  requestTimeoutMs?: number;
  retry?: RemoteRetryPolicy;
  /** On reset, replace an instance the server forgot (idle expiry, restart). Default true. */
  recreateLostInstances?: boolean;
  /**
   * Called with a one-line warning when something looks wrong without failing: three different
   * tasks that began alike and answered the same first action alike, as when the server
   * ignores the task field (see task-check.ts). Default: process.emitWarning.
   */
  onWarning?: (message: string) => void;
  /** Sleep used between retries; injected by tests. */
  sleep?: (ms: number) => Promise<void>;
}

type RetryMode = "idempotent" | "unsent-only";

interface ResolvedRemote {
  baseUrl: string;
  /** Base URL plus env prefix, without trailing slash. */
  endpoint: string;
  dialect: Dialect;
  dialectName: RemoteDialect;
  settings: DialectSettings;
  timeoutMs: number;
  retry: Required<RemoteRetryPolicy>;
  recreateLostInstances: boolean;
  sleep: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function trimSlashes(text: string): string {
  return text.replace(/^\/+|\/+$/g, "");
}

function resolveRemote(options: RemoteEnvOptions): ResolvedRemote {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    throw new RemoteEnvError(`not a URL: ${quote(options.url)}`, { url: options.url });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new RemoteEnvError(`the environment server URL must be http(s): ${options.url}`, {
      url: options.url,
    });
  }
  const baseUrl = options.url.replace(/\/+$/, "");
  const dialectName = options.dialect ?? "id";
  const prefix = dialectName === "clade" || !options.env ? "" : trimSlashes(options.env);
  const taskField = options.taskField ?? DEFAULT_TASK_FIELDS[dialectName];
  return {
    baseUrl,
    endpoint: prefix ? `${baseUrl}/${prefix}` : baseUrl,
    dialect: DIALECTS[dialectName],
    dialectName,
    settings: {
      taskFields: typeof taskField === "string" ? [taskField] : taskField,
      createBody: options.createBody ?? {},
    },
    timeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    retry: {
      maxRetries: options.retry?.maxRetries ?? DEFAULT_MAX_RETRIES,
      baseDelayMs: options.retry?.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
      maxDelayMs: options.retry?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
      maxRetryAfterMs: options.retry?.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS,
    },
    recreateLostInstances: options.recreateLostInstances ?? true,
    sleep: options.sleep ?? sleepFor,
  };
}

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date). */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  if (!/[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function backoffMs(retryIndex: number, policy: Required<RemoteRetryPolicy>): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return Math.floor(Math.random() * ceiling);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One HTTP call with the retry policy. Resolves with any HTTP reply that is not worth retrying
 * (errors included: the caller reads them); rejects on transport failure.
 */
async function callWithRetry(
  remote: ResolvedRemote,
  request: DialectRequest,
  mode: RetryMode,
  base: string = remote.endpoint,
): Promise<JsonReply> {
  const url = new URL(base + request.path);
  const { retry } = remote;
  for (let attempt = 0; ; attempt++) {
    const canRetry = attempt < retry.maxRetries;
    let waitMs: number;
    try {
      const reply = await requestJson({
        method: request.method,
        url,
        body: request.body,
        timeoutMs: remote.timeoutMs,
      });
      const laterStatus = RETRY_LATER_STATUSES.has(reply.status);
      const gatewayStatus = mode === "idempotent" && GATEWAY_STATUSES.has(reply.status);
      if (!canRetry || !(laterStatus || gatewayStatus)) return reply;
      const asked = retryAfterMs(reply.headers["retry-after"] as string | undefined);
      if (asked !== undefined && asked > retry.maxRetryAfterMs) return reply;
      waitMs = asked ?? backoffMs(attempt, retry);
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      const retryable =
        error.code !== undefined &&
        RETRYABLE_CODES.has(error.code) &&
        (mode === "idempotent" || !error.maybeSent);
      if (!canRetry || !retryable) throw transportFailure(remote, url, error, attempt + 1);
      waitMs = backoffMs(attempt, retry);
    }
    await remote.sleep(waitMs);
  }
}

function transportFailure(
  remote: ResolvedRemote,
  url: URL,
  error: TransportError,
  attempts: number,
): RemoteEnvError {
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  if (error.code === "ECONNREFUSED" || error.code === "ENOTFOUND") {
    const reason = error.code === "ENOTFOUND" ? "host not found" : `connection refused, ${tries}`;
    return unavailableError(remote.baseUrl, url.href, reason, error);
  }
  const sent = error.maybeSent ? "" : " before the request was sent";
  return new RemoteEnvError(
    `environment server at ${remote.baseUrl}: ${error.message}${sent} (${url.pathname}, ${tries})`,
    { url: url.href, ...(error.code ? { code: error.code } : {}) },
    { cause: error },
  );
}

/** EnvInfo from what the caller gave, with neutral defaults for what nobody said. */
export function remoteEnvInfo(options: RemoteEnvOptions, discovered?: EnvInfo): EnvInfo {
  const name =
    options.info?.name ?? discovered?.name ?? (trimSlashes(options.env ?? "") || "remote");
  const base: EnvInfo = discovered ?? {
    name,
    version: "unknown",
    description: `environment served at ${options.url}`,
    instruction: "",
    splits: {
      train: { start: 0, end: 0 },
      test: { start: 0, end: DEFAULT_TEST_SPLIT_END },
    },
    successThreshold: 1,
    maxSteps: DEFAULT_REMOTE_MAX_STEPS,
  };
  return { ...base, ...options.info, name };
}

/**
 * The watch for a task field the server ignores, for the AgentGym dialects (the clade dialect
 * names its task in a field every clade server reads).
 */
function taskFieldCheck(options: RemoteEnvOptions, info: EnvInfo): TaskFieldCheck | null {
  const dialect = options.dialect ?? "id";
  if (dialect === "clade") return null;
  const taskField = options.taskField ?? DEFAULT_TASK_FIELDS[dialect];
  return new TaskFieldCheck({
    envName: info.name,
    dialect,
    taskFields: typeof taskField === "string" ? [taskField] : taskField,
    server: guessAgentgymServer({ dialect, envPath: options.env, name: info.name }),
    warn: options.onWarning ?? ((message) => process.emitWarning(message, "CladeWarning")),
  });
}

export class RemoteEnv implements Env {
  readonly info: EnvInfo;
  private readonly remote: ResolvedRemote;
  private readonly check: TaskFieldCheck | null;
  private instance: number | undefined;
  private creating: Promise<number> | undefined;
  private episode: "none" | "running" | "done" = "none";
  /** The task of the episode under way, and whether it has taken a step. */
  private task = 0;
  private stepped = false;

  /**
   * `check` is shared by the instances of one connected env (connectRemoteEnv), so that tasks
   * played on different instances are compared; by default each RemoteEnv has its own; null:
   * none (a clade server, which refuses a reset without its task).
   */
  constructor(
    options: RemoteEnvOptions,
    info: EnvInfo = remoteEnvInfo(options),
    check: TaskFieldCheck | null = taskFieldCheck(options, info),
  ) {
    this.remote = resolveRemote(options);
    this.info = info;
    this.check = check;
  }

  /** The server's id of this env's instance, once created. */
  get instanceId(): number | undefined {
    return this.instance;
  }

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    const seed = options.seed ?? 0;
    this.episode = "none";
    let observation: Observation;
    try {
      observation = await this.resetOn(await this.ensureInstance(), taskIndex, seed);
    } catch (error) {
      if (!(error instanceof RemoteInstanceLostError) || !this.remote.recreateLostInstances) {
        throw error;
      }
      this.instance = undefined;
      observation = await this.resetOn(await this.ensureInstance(), taskIndex, seed);
    }
    this.episode = "running";
    this.task = taskIndex;
    this.stepped = false;
    this.check?.reset(taskIndex, observation.text);
    return observation;
  }

  async step(action: string): Promise<StepResult> {
    if (this.instance === undefined || this.episode === "none") {
      throw new NotResetError(this.info.name);
    }
    if (this.episode === "done") throw new EpisodeDoneError(this.info.name);
    const { dialect } = this.remote;
    const body = await this.call(dialect.step(this.instance, action), "unsent-only");
    const result = this.read(() => dialect.readStep(body), "/step");
    if (result.done) this.episode = "done";
    if (!this.stepped) {
      this.stepped = true;
      this.check?.firstStep(this.task, action, result.observation.text);
    }
    return result;
  }

  /** Closes the remote instance. Never throws: an unreachable server has lost it anyway. */
  async close(): Promise<void> {
    const id = this.instance ?? (await this.creating?.catch(() => undefined));
    this.instance = undefined;
    this.creating = undefined;
    this.episode = "none";
    if (id === undefined) return;
    try {
      await callWithRetry(this.remote, this.remote.dialect.close(id), "idempotent");
    } catch {
      // The server's idle timeout reclaims instances nobody closes.
    }
  }

  private ensureInstance(): Promise<number> {
    if (this.instance !== undefined) return Promise.resolve(this.instance);
    this.creating ??= (async () => {
      try {
        const { dialect, settings } = this.remote;
        const body = await this.call(dialect.create(settings), "idempotent");
        const id = this.read(() => dialect.readCreate(body), "/create");
        this.instance = id;
        return id;
      } finally {
        this.creating = undefined;
      }
    })();
    return this.creating;
  }

  private async resetOn(id: number, taskIndex: number, seed: number): Promise<Observation> {
    const { dialect, settings } = this.remote;
    const body = await this.call(dialect.reset(id, taskIndex, seed, settings), "idempotent", {
      taskIndex,
    });
    const observation = this.read(() => dialect.readReset(body), "/reset");
    if (observation) return observation;
    const observed = await this.call(dialect.observe(id), "idempotent");
    return this.read(() => dialect.readObservation(observed), "/observation");
  }

  /** The reply body of a successful call; server-reported errors become typed errors. */
  private async call(
    request: DialectRequest,
    mode: RetryMode,
    context: { taskIndex?: number } = {},
  ): Promise<unknown> {
    const reply = await callWithRetry(this.remote, request, mode);
    const url = `${this.remote.endpoint}${request.path}`;
    const errorContext = { env: this.info.name, url, status: reply.status, ...context };
    if (isRecord(reply.body) && reply.body.error !== undefined && reply.body.error !== null) {
      const message =
        typeof reply.body.error === "string" ? reply.body.error : quote(reply.body.error);
      const code = typeof reply.body.code === "string" ? reply.body.code : undefined;
      throw serverError(message, code, errorContext);
    }
    if (reply.status < 200 || reply.status >= 300) {
      throw new RemoteEnvError(this.statusMessage(reply, request), {
        url,
        status: reply.status,
      });
    }
    return reply.body;
  }

  private statusMessage(reply: JsonReply, request: DialectRequest): string {
    const where = `${request.method} ${this.remote.endpoint}${request.path.split("?")[0]}`;
    const detail = reply.body === undefined ? "" : `: ${quote(reply.body)}`;
    const hint =
      reply.status === 404
        ? " (check the URL, the env path prefix and the dialect)"
        : reply.status === 422
          ? " (the server rejected the request's fields; check the dialect and task field)"
          : "";
    return `${this.info.name}: ${where} answered HTTP ${reply.status}${detail}${hint}`;
  }

  private read<T>(reader: () => T, endpoint: string): T {
    try {
      return reader();
    } catch (error) {
      if (!(error instanceof UnexpectedReplyError)) throw error;
      throw new RemoteProtocolError(
        `${this.info.name}: unexpected reply from ${this.remote.endpoint}${endpoint} ` +
          `(is the dialect "${this.remote.dialectName}" right?): ${error.message}`,
        { url: `${this.remote.endpoint}${endpoint}` },
      );
    }
  }
}

/** A remote env with EnvInfo from the options (see connectRemoteEnv to ask a clade server). */
export function createRemoteEnv(options: RemoteEnvOptions): RemoteEnv {
  return new RemoteEnv(options);
}

const indexRange = z.object({ start: z.number().int(), end: z.number().int() });
const envInfoSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  instruction: z.string(),
  splits: z.object({ train: indexRange, test: indexRange }),
  successThreshold: z.number(),
  maxSteps: z.number().int().positive(),
});
const cladeInfoSchema = z.object({ server: z.literal("clade"), env: envInfoSchema });

/**
 * The EnvInfo a clade server publishes at GET /v1/info, or undefined when the server is not
 * clade's. Throws EnvServerUnavailableError when nothing listens.
 */
export async function fetchCladeEnvInfo(
  options: Pick<RemoteEnvOptions, "url" | "retry" | "sleep">,
): Promise<EnvInfo | undefined> {
  const remote = resolveRemote({ ...options, requestTimeoutMs: INFO_TIMEOUT_MS });
  const reply = await callWithRetry(
    remote,
    { method: "GET", path: "/v1/info" },
    "idempotent",
    remote.baseUrl,
  );
  if (reply.status !== 200) return undefined;
  const parsed = cladeInfoSchema.safeParse(reply.body);
  return parsed.success ? parsed.data.env : undefined;
}

/** Uniform over the actions the server lists; remote envs that list none get "look". */
function sampleRemoteAction(random: () => number, observation: Observation): string {
  const actions = observation.availableActions;
  if (!actions?.length) return "look";
  return actions[Math.floor(random() * actions.length)] ?? "look";
}

/**
 * An EnvDefinition for an environment server: EnvInfo from the server when it is clade's
 * (GET /v1/info), otherwise from `options.info` with neutral defaults; fields given in
 * `options.info` always win. Fails with a clear message when no server is listening.
 */
export async function connectRemoteEnv(options: RemoteEnvOptions): Promise<SamplingEnvDefinition> {
  resolveRemote(options);
  const discovered = await fetchCladeEnvInfo(options);
  const info = remoteEnvInfo(options, discovered);
  // A clade server reads every task field clade sends, and refuses a reset without one.
  const check = discovered ? null : taskFieldCheck(options, info);
  return {
    info,
    create: () => new RemoteEnv(options, info, check),
    sampleAction: sampleRemoteAction,
  };
}
