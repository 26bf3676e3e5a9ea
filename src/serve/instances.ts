/**
 * The env instances a server holds. Each client gets its own instance under a random id that
 * other clients cannot guess and that is never handed out again; calls to one instance run one
 * at a time, in arrival order; instances left idle too long are closed; past the maximum count,
 * overall or for one client, creation is refused (never shared).
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
  /** Recently closed ids, oldest first (a Set keeps insertion order). */
  private readonly retired = new Set<number>();
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

  /** A new instance for `client`; refused when the server or that client is at its cap. */
  create(client: string = LOCAL_CLIENT): Instance {
    if (this.closing) {
      throw new ServeError("shutting_down", "the server is shutting down", 1);
    }
    if (this.instances.size >= this.options.maxInstances) {
      throw new ServeError(
        "capacity",
        `all ${this.options.maxInstances} environment instances are in use; ` +
          "close finished ones or retry later",
        this.options.retryAfterSeconds,
      );
    }
    const held = this.countOf(client);
    if (held >= this.maxInstancesPerClient) {
      throw new ServeError(
        "client_capacity",
        `this client (${client}) already holds ${held} environment instances, the most one ` +
          "client may hold; close finished ones or retry later",
        this.options.retryAfterSeconds,
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
    this.perClient.set(client, held + 1);
    return instance;
  }

  /** A random id that is neither live nor recently closed. */
  private freshId(): number {
    const draw = this.options.randomId ?? randomInstanceId;
    for (;;) {
      const id = draw();
      if (!this.instances.has(id) && !this.retired.has(id)) return id;
    }
  }

  private retire(instance: Instance): void {
    this.instances.delete(instance.id);
    const held = this.countOf(instance.client) - 1;
    if (held > 0) this.perClient.set(instance.client, held);
    else this.perClient.delete(instance.client);
    this.retired.add(instance.id);
    if (this.retired.size > RETIRED_IDS_KEPT) {
      const oldest = this.retired.values().next().value;
      if (oldest !== undefined) this.retired.delete(oldest);
    }
  }

  /** The live instance with this id; unknown_instance otherwise. */
  get(id: number): Instance {
    const instance = this.instances.get(id);
    if (instance) return instance;
    if (this.retired.has(id)) {
      const idle =
        this.options.idleTimeoutMs > 0
          ? `, or expired after ${this.options.idleTimeoutMs / 1000} s without calls`
          : "";
      throw new ServeError("unknown_instance", `instance ${id} no longer exists (closed${idle})`);
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
   * hangs); false when there is no such instance.
   */
  close(id: number, waitMs?: number): Promise<boolean> {
    const instance = this.instances.get(id);
    if (!instance) return Promise.resolve(false);
    this.retire(instance);
    const settled = waitMs === undefined ? instance.tail : withDeadline(instance.tail, waitMs);
    const closing = settled
      .then(() => instance.env.close?.())
      .catch((error: unknown) => this.options.onBackgroundError?.(error))
      .finally(() => this.closings.delete(closing));
    this.closings.add(closing);
    return closing.then(() => true);
  }

  /** Closes instances that have had no call for the idle timeout. */
  closeIdle(now: number = Date.now()): number[] {
    const expired: number[] = [];
    for (const instance of this.instances.values()) {
      if (instance.pending === 0 && now - instance.lastUsedAt >= this.options.idleTimeoutMs) {
        expired.push(instance.id);
      }
    }
    for (const id of expired) void this.close(id);
    return expired;
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

/** Settles when the promise does or after `ms`, whichever comes first. */
function withDeadline(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
