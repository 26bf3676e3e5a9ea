/**
 * The env instances a server holds. Each client gets its own instance under a random id that
 * other clients cannot guess and that is never handed out again; calls to one instance run one
 * at a time, in arrival order. When a new instance needs room (the server, or the asking client,
 * holds its maximum), the least recently used instance that has been left alone long enough is
 * closed to make it; only when none qualifies is creation refused (instances are never shared).
 * Instances left idle past the (long) idle timeout are closed too. Every such closing is logged
 * with the instance, its episode and the reason.
 */
import { getRandomValues } from "node:crypto";
import type { Env, EnvDefinition, Observation, StepResult } from "../env/types.js";
import { ServeError, toServeError } from "./errors.js";

/**
 * Ids are drawn uniformly from [MIN_INSTANCE_ID, MAX_INSTANCE_ID]: random, so holding an id is
 * what lets a client use an instance (about 2^53 values against at most a few thousand live
 * ones); at least 2^31, so they never meet the small sequential ids of AgentGym's own servers
 * or of older clade servers; at most 2^53 - 1, so every JSON parser (JavaScript's included)
 * reads them exactly and AgentGym's Python clients pass them back as plain integers.
 */
export const MIN_INSTANCE_ID = 2 ** 31;
export const MAX_INSTANCE_ID = Number.MAX_SAFE_INTEGER;
/**
 * Closed ids remembered, so a late call hears "closed or expired" rather than "never existed"
 * and the id is not drawn again; older ones are forgotten (a repeat draw is then a 1 in 2^53
 * chance).
 */
const RETIRED_IDS_KEPT = 65_536;
/** The client of instances created without one (embedding code calling the pool directly). */
export const LOCAL_CLIENT = "local";
/**
 * An instance whose episode has ended may make room for a new one once it has been left alone
 * this long: its client already has the final reward, and a client that starts its next episode
 * at once (AgentGym's evaluation loop does) is not cut off between the two.
 */
export const FINISHED_EVICTION_GRACE_MS = 1_000;

/** A uniform random integer in [MIN_INSTANCE_ID, MAX_INSTANCE_ID], from the CSPRNG. */
export function randomInstanceId(): number {
  const words = new Uint32Array(2);
  for (;;) {
    getRandomValues(words);
    const [high = 0, low = 0] = words;
    // 21 + 32 bits: uniform in [0, 2^53); draws below the range (1 in 4 million) are redrawn.
    const id = (high & 0x1f_ffff) * 2 ** 32 + low;
    if (id >= MIN_INSTANCE_ID) return id;
  }
}

/** Sweeps for idle instances this often, relative to the idle timeout... */
const SWEEP_FRACTION = 4;
/** ...but never more often or more rarely than these. */
const MIN_SWEEP_MS = 10;
const MAX_SWEEP_MS = 30_000;

export interface InstancePoolOptions {
  maxInstances: number;
  /** Live instances one client (remote address) may hold; default: maxInstances. */
  maxInstancesPerClient?: number;
  /** An instance with no call for this long is closed; 0 keeps instances forever. */
  idleTimeoutMs: number;
  /**
   * When a new instance needs room, an instance in an unfinished episode (or never reset) may be
   * closed to make it once it has had no call for this long (least recently used first);
   * finished ones after FINISHED_EVICTION_GRACE_MS (or this, if shorter). Unset: nothing is
   * evicted, creation is refused.
   */
  evictIdleAfterMs?: number;
  /** One line per instance the pool closes on its own (idle timeout, room for a new one). */
  log?: (line: string) => void;
  /** Suggested wait (Retry-After) when the pool is full. */
  retryAfterSeconds: number;
  /** Told about failures nobody is waiting for (an env's close() throwing). */
  onBackgroundError?: (error: unknown) => void;
  /** Draws a candidate id; tests inject collisions here. Default: randomInstanceId. */
  randomId?: () => number;
}

/** The current episode of an instance, as the server last reported it. */
export interface EpisodeState {
  taskIndex: number;
  seed: number;
  observation: Observation;
  reward: number;
  done: boolean;
  steps: number;
  info: Record<string, unknown>;
  /** Text an API shows before the first observation (AgentGym's: the instruction). */
  introduction?: string;
}

export interface Instance {
  readonly id: number;
  /** Who created it (the remote address), for the per-client cap. */
  readonly client: string;
  readonly env: Env;
  readonly createdAt: number;
  lastUsedAt: number;
  /** Calls queued or running. */
  pending: number;
  /** Settles when the last queued call has. */
  tail: Promise<unknown>;
  episode?: EpisodeState;
}

export class InstancePool {
  private readonly instances = new Map<number, Instance>();
  /** Live instances per client. */
  private readonly perClient = new Map<string, number>();
  /** Recently closed ids and why they were closed, oldest first (a Map keeps insertion order). */
  private readonly retired = new Map<number, string>();
  private sweeper: NodeJS.Timeout | undefined;
  private closing = false;
  /** env.close() calls still running, so shutdown can wait for them. */
  private readonly closings = new Set<Promise<void>>();

  constructor(
    private readonly def: EnvDefinition,
    private readonly options: InstancePoolOptions,
  ) {
    if (options.idleTimeoutMs > 0) {
      const every = Math.min(
        MAX_SWEEP_MS,
        Math.max(MIN_SWEEP_MS, Math.floor(options.idleTimeoutMs / SWEEP_FRACTION)),
      );
      this.sweeper = setInterval(() => this.closeIdle(), every);
      this.sweeper.unref();
    }
  }

  get size(): number {
    return this.instances.size;
  }

  get maxInstances(): number {
    return this.options.maxInstances;
  }

  get maxInstancesPerClient(): number {
    return this.options.maxInstancesPerClient ?? this.options.maxInstances;
  }

  /** Live instances created by this client. */
  countOf(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  /** Ids of the live instances, oldest first. */
  ids(): number[] {
    return [...this.instances.keys()];
  }

  /**
   * A new instance for `client`. When the server or that client is at its cap, the least recently
   * used instance that may be evicted (see evictionCandidate) is closed to make room: one of the
   * client's own when the client is at its cap, anyone's when only the server is full. Refused
   * when there is none: 503 (capacity) when the server is full, else 429 (client_capacity).
   */
  create(client: string = LOCAL_CLIENT): Instance {
    if (this.closing) {
      throw new ServeError("shutting_down", "the server is shutting down", 1);
    }
    const serverFull = this.instances.size >= this.options.maxInstances;
    const clientFull = this.countOf(client) >= this.maxInstancesPerClient;
    if (serverFull || clientFull) {
      const now = Date.now();
      const victim = this.evictionCandidate(clientFull ? client : undefined, now);
      if (!victim) throw this.refusal(client, serverFull);
      const why = clientFull
        ? `client ${client} holds its maximum of ${this.maxInstancesPerClient} instances`
        : `the server holds its maximum of ${this.options.maxInstances} instances`;
      this.closeOnItsOwn(
        victim,
        `evicted after ${seconds(now - victim.lastUsedAt)} s without calls, to make room for ` +
          `a new instance (${why})`,
        "closed to make room for a new instance after " +
          `${seconds(now - victim.lastUsedAt)} s without calls`,
      );
    }
    const now = Date.now();
    const instance: Instance = {
      id: this.freshId(),
      client,
      env: this.def.create(),
      createdAt: now,
      lastUsedAt: now,
      pending: 0,
      tail: Promise.resolve(),
    };
    this.instances.set(instance.id, instance);
    this.perClient.set(client, this.countOf(client) + 1);
    return instance;
  }

  private refusal(client: string, serverFull: boolean): ServeError {
    if (serverFull) {
      return new ServeError(
        "capacity",
        `all ${this.options.maxInstances} environment instances are in use; ` +
          "close finished ones or retry later",
        this.options.retryAfterSeconds,
      );
    }
    return new ServeError(
      "client_capacity",
      `this client (${client}) already holds ${this.countOf(client)} environment instances, ` +
        "the most one client may hold; close finished ones or retry later",
      this.options.retryAfterSeconds,
    );
  }

  /**
   * The least recently used instance (of `client`, or of anyone) that may be closed to make room:
   * no call queued or running, and left alone for FINISHED_EVICTION_GRACE_MS when its episode
   * has ended, for evictIdleAfterMs otherwise (unfinished or never reset).
   */
  private evictionCandidate(client: string | undefined, now: number): Instance | undefined {
    const unfinishedAfter = this.options.evictIdleAfterMs;
    if (unfinishedAfter === undefined) return undefined;
    const finishedAfter = Math.min(FINISHED_EVICTION_GRACE_MS, unfinishedAfter);
    let best: Instance | undefined;
    for (const instance of this.instances.values()) {
      if (instance.pending > 0 || (client !== undefined && instance.client !== client)) continue;
      const idle = now - instance.lastUsedAt;
      const eligible = idle >= (instance.episode?.done ? finishedAfter : unfinishedAfter);
      if (eligible && (best === undefined || instance.lastUsedAt < best.lastUsedAt)) {
        best = instance;
      }
    }
    return best;
  }

  /** Closes an instance nobody asked to close, logging which one and why. */
  private closeOnItsOwn(instance: Instance, logReason: string, clientReason: string): void {
    this.options.log?.(`instance ${instance.id} (${describe(instance)}) ${logReason}`);
    void this.close(instance.id, undefined, clientReason);
  }

  /** A random id that is neither live nor recently closed. */
  private freshId(): number {
    const draw = this.options.randomId ?? randomInstanceId;
    for (;;) {
      const id = draw();
      if (!this.instances.has(id) && !this.retired.has(id)) return id;
    }
  }

  private retire(instance: Instance, reason: string): void {
    this.instances.delete(instance.id);
    const held = this.countOf(instance.client) - 1;
    if (held > 0) this.perClient.set(instance.client, held);
    else this.perClient.delete(instance.client);
    this.retired.set(instance.id, reason);
    if (this.retired.size > RETIRED_IDS_KEPT) {
      const oldest = this.retired.keys().next().value;
      if (oldest !== undefined) this.retired.delete(oldest);
    }
  }

  /** The live instance with this id; unknown_instance otherwise. */
  get(id: number): Instance {
    const instance = this.instances.get(id);
    if (instance) return instance;
    const reason = this.retired.get(id);
    if (reason !== undefined) {
      throw new ServeError("unknown_instance", `instance ${id} no longer exists (${reason})`);
    }
    throw new ServeError("unknown_instance", `no instance with id ${id}; create one first`);
  }

  /** Runs `call` after the instance's earlier calls have settled. */
  run<T>(id: number, call: (instance: Instance) => Promise<T>): Promise<T> {
    let instance: Instance;
    try {
      instance = this.get(id);
    } catch (error) {
      return Promise.reject(error);
    }
    instance.pending++;
    instance.lastUsedAt = Date.now();
    const result = instance.tail.then(() => call(instance));
    const settle = () => {
      instance.pending--;
      instance.lastUsedAt = Date.now();
    };
    instance.tail = result.then(settle, settle);
    return result;
  }

  reset(id: number, taskIndex: number, seed: number): Promise<EpisodeState> {
    return this.run(id, async (instance) => {
      let observation: Observation;
      try {
        observation = await instance.env.reset(taskIndex, { seed });
      } catch (error) {
        throw toServeError(error);
      }
      const episode: EpisodeState = {
        taskIndex,
        seed,
        observation,
        reward: 0,
        done: false,
        steps: 0,
        info: {},
      };
      instance.episode = episode;
      return episode;
    });
  }

  step(id: number, action: string): Promise<StepResult> {
    return this.run(id, async (instance) => {
      const episode = instance.episode;
      if (!episode) {
        throw new ServeError("not_reset", `instance ${id} has no episode yet; call reset first`);
      }
      if (episode.done) {
        throw new ServeError(
          "episode_done",
          `the episode of instance ${id} has finished; call reset to start another`,
        );
      }
      let result: StepResult;
      try {
        result = await instance.env.step(action);
      } catch (error) {
        throw toServeError(error);
      }
      episode.observation = result.observation;
      episode.reward = result.reward;
      episode.done = result.done;
      episode.steps++;
      episode.info = result.info;
      return result;
    });
  }

  /**
   * Closes the instance once its queued calls are done (or after `waitMs`, for a call that
   * hangs); false when there is no such instance. `reason` is what later calls with its id hear.
   */
  close(id: number, waitMs?: number, reason = "closed"): Promise<boolean> {
    const instance = this.instances.get(id);
    if (!instance) return Promise.resolve(false);
    this.retire(instance, reason);
    const settled = waitMs === undefined ? instance.tail : withDeadline(instance.tail, waitMs);
    const closing = settled
      .then(() => instance.env.close?.())
      .catch((error: unknown) => this.options.onBackgroundError?.(error))
      .finally(() => this.closings.delete(closing));
    this.closings.add(closing);
    return closing.then(() => true);
  }

  /** Closes instances that have had no call for the idle timeout (none when it is 0). */
  closeIdle(now: number = Date.now()): number[] {
    const timeout = this.options.idleTimeoutMs;
    if (timeout <= 0) return [];
    const expired: Instance[] = [];
    for (const instance of this.instances.values()) {
      if (instance.pending === 0 && now - instance.lastUsedAt >= timeout) expired.push(instance);
    }
    for (const instance of expired) {
      this.closeOnItsOwn(
        instance,
        `expired after ${seconds(now - instance.lastUsedAt)} s without calls ` +
          `(idle timeout ${seconds(timeout)} s)`,
        `expired after ${seconds(timeout)} s without calls`,
      );
    }
    return expired.map((instance) => instance.id);
  }

  /**
   * Refuses new instances from now on and closes every instance after its queued calls, waiting
   * at most `waitMs` for them when given.
   */
  async closeAll(waitMs?: number): Promise<void> {
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all(this.ids().map((id) => this.close(id, waitMs)));
    await Promise.all([...this.closings]);
  }
}

/** Milliseconds as seconds for people: whole seconds from 10 s on, else one decimal. */
function seconds(ms: number): string {
  const value = ms / 1000;
  return value >= 10 ? String(Math.round(value)) : String(Math.round(value * 10) / 10);
}

/** The instance's owner and episode, for log lines. */
function describe(instance: Instance): string {
  const episode = instance.episode;
  const state = episode
    ? `task ${episode.taskIndex}, ${episode.steps} step${episode.steps === 1 ? "" : "s"}, ` +
      (episode.done ? `episode finished with reward ${episode.reward}` : "episode unfinished")
    : "never reset";
  return `client ${instance.client}, ${state}`;
}

/** Settles when the promise does or after `ms`, whichever comes first. */
function withDeadline(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
