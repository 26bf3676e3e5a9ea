/**
 * Collecting groups of multi-turn samples for RL (AgentGym-RL's rollout, with its weaknesses
 * fixed):
 *
 * - Per task of the batch, n samples (a group), each with its own environment instance
 *   (env.create()), all reset to the same task instance (same task index and reset seed), so
 *   that GRPO, RLOO and ReMax compare like with like.
 * - Each sample runs up to `horizon` agent turns (the training step's horizon from the
 *   ScalingInter schedule) or until the environment says done.
 * - Mode "independent" (default): every sample steps as soon as its environment answers, up to
 *   `concurrency` samples in flight. Mode "lockstep": the reference's rounds, where the policy
 *   chooses for every unfinished sample, then all environments step together and the next round
 *   waits for the slowest. Both give the same trajectories for the same (seed, step): each sample
 *   draws from its own generator, createRng(seed, step, task, sample, group, ROLLOUT_STREAM) (the
 *   group, the task's position in the batch, keeps a task drawn twice from repeating itself), and
 *   the policy is fixed during a collection; only the timing differs.
 * - Rewards: the outcome reward is AgentGym-RL's, the last step's reward, and it is placed on the
 *   LAST AGENT position (placeOutcomeReward), never on the trailing observation. The environment's
 *   per-step rewards are kept on each turn (`envReward`) for reporting but not trained on: the
 *   built-in environments reward only the outcome, and summing intermediate rewards would count
 *   a final reward that some environments repeat on every step. A trainer that wants shaping adds
 *   it to `sample.rewards` at agent positions itself.
 * - An environment error (reset or step throws) or a policy error (it throws, e.g. the
 *   observation lists no actions) ends the sample as an error: `sample.error` holds the message,
 *   so the estimators exclude it from its group's statistics and report it; it is never scored 0.
 *   Aborting the signal is not an error: the collection rejects with the signal's reason.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { AgentState, Turn } from "../../../agent/types.js";
import { createRng, type Rng } from "../../../env/rng.js";
import type { Env, EnvDefinition, Observation } from "../../../env/types.js";
import type { MaskBit, Sample } from "../estimators/index.js";
import { placeOutcomeReward } from "../estimators/index.js";
import type {
  ActionMode,
  AgentTurnRecord,
  CollectResult,
  PolicyDecision,
  RolloutMode,
  RolloutPolicy,
  SampleEnd,
  Trajectory,
  TrajectoryGroup,
} from "./types.js";

/** Mixed into every sample's key so the rollout stream differs from others drawn from one seed. */
export const ROLLOUT_STREAM = 0x7011;

/** How long samples may run without handing the event loop a turn (timers, signals). */
const YIELD_EVERY_MS = 10;

export interface CollectOptions {
  /** The environment to create instances of (one per sample). */
  env: EnvDefinition;
  policy: RolloutPolicy;
  /** One group per entry; a task may appear twice (its groups stay distinct: the group id is the position). */
  tasks: readonly number[];
  /** Samples per group (n ≥ 1). */
  groupSize: number;
  /** Maximum agent turns per sample (≥ 1). */
  horizon: number;
  /** With `step`, fixes every sample's generator. */
  seed: number;
  /** The 0-based training step (0 outside training). */
  step?: number;
  /** "independent" (default) or "lockstep". */
  mode?: RolloutMode;
  /** Samples in flight at once in independent mode; default all of them. */
  concurrency?: number;
  /** "sample" (default) or "greedy" for the group's samples. */
  actionMode?: ActionMode;
  /** Also run one greedy sample per task (ReMax's baseline), as sample index n. */
  greedyBaseline?: boolean;
  /** The seed passed to env.reset(): a number, or one per task (same for the whole group); 0 by default. */
  resetSeed?: number | ((taskIndex: number, group: number) => number);
  signal?: AbortSignal;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

interface SampleSpec {
  taskIndex: number;
  group: number;
  sampleIndex: number;
  greedy: boolean;
  resetSeed: number;
}

/** One sample's episode as a small state machine, so both modes drive the same code. */
class SampleRun {
  readonly turns: AgentTurnRecord[] = [];
  private readonly history: Turn[] = [];
  private readonly rng: Rng;
  private env: Env | undefined;
  private observation: Observation | undefined;
  private initialObservation: Observation | undefined;
  private reward = 0;
  private end: SampleEnd = "horizon";
  private error: string | undefined;
  private envSteps = 0;
  private envMs = 0;
  private policyMs = 0;
  /** False once the sample has ended (done, horizon or error). */
  live = true;

  constructor(
    readonly spec: SampleSpec,
    private readonly options: CollectOptions,
    trainingStep: number,
  ) {
    this.rng = createRng(
      options.seed,
      trainingStep,
      spec.taskIndex,
      spec.sampleIndex,
      spec.group,
      ROLLOUT_STREAM,
    );
  }

  private fail(error: unknown): void {
    if (this.options.signal?.aborted) throw this.options.signal.reason;
    this.end = "error";
    this.error = describeError(error);
    this.live = false;
  }

  async reset(): Promise<void> {
    const started = performance.now();
    try {
      this.env = this.options.env.create();
      this.observation = await this.env.reset(this.spec.taskIndex, { seed: this.spec.resetSeed });
      this.initialObservation = this.observation;
    } catch (error) {
      this.fail(error);
    } finally {
      this.envMs += performance.now() - started;
    }
  }

  /** The policy's decision for the current observation; undefined when the sample ended. */
  async decide(): Promise<PolicyDecision | undefined> {
    if (!this.live) return undefined;
    this.options.signal?.throwIfAborted();
    const state: AgentState = {
      // The instance's: a task mixture's episode carries its member's instruction.
      instruction: (this.env ?? this.options.env).info.instruction,
      observation: this.observation as Observation,
      history: this.history,
    };
    const mode: ActionMode = this.spec.greedy ? "greedy" : (this.options.actionMode ?? "sample");
    const started = performance.now();
    try {
      const decision = await this.options.policy.decide(state, this.rng, mode);
      if (typeof decision?.action !== "string") {
        throw new TypeError(
          `the policy decided ${JSON.stringify(decision)}, not { action: string }`,
        );
      }
      return decision;
    } catch (error) {
      this.fail(error);
      return undefined;
    } finally {
      this.policyMs += performance.now() - started;
    }
  }

  async step(decision: PolicyDecision): Promise<void> {
    const env = this.env as Env;
    const started = performance.now();
    try {
      const result = await env.step(decision.action);
      this.envSteps++;
      const turn = this.turns.length;
      this.turns.push({
        ...decision,
        turn,
        envReward: result.reward,
        observation: result.observation,
      });
      this.history.push({
        action: decision.action,
        message: decision.reply ?? decision.action,
        observation: result.observation,
        reward: result.reward,
      });
      this.observation = result.observation;
      this.reward = result.reward;
      if (result.done) {
        this.end = "done";
        this.live = false;
      } else if (this.turns.length >= this.options.horizon) {
        this.end = "horizon";
        this.live = false;
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.envMs += performance.now() - started;
    }
  }

  async close(): Promise<void> {
    try {
      await this.env?.close?.();
    } catch {
      // A failure to release an instance says nothing about the sample.
    }
  }

  finish(successThreshold: number): Trajectory {
    const { taskIndex, sampleIndex, group, greedy, resetSeed } = this.spec;
    const sample = layoutSample(
      group,
      this.turns,
      this.observation !== undefined,
      this.reward,
      this.error,
    );
    return {
      taskIndex,
      sampleIndex,
      group,
      greedy,
      resetSeed,
      ...(this.initialObservation ? { initialObservation: this.initialObservation } : {}),
      turns: this.turns,
      reward: this.error === undefined ? this.reward : 0,
      success: this.error === undefined && this.reward >= successThreshold,
      end: this.end,
      ...(this.error !== undefined ? { error: this.error } : {}),
      sample,
      envSteps: this.envSteps,
      envMs: this.envMs,
      policyMs: this.policyMs,
    };
  }
}

/**
 * The estimators' layout of a trajectory: obs₀, act₀, obs₁, …, act_{T−1}, obs_T (masks 0, 1, …,
 * 1, 0) with the outcome reward on the last agent position. Per-position arrays are given only
 * when every turn has the number; an errored sample keeps its positions and zero rewards.
 */
export function layoutSample(
  group: number,
  turns: readonly PolicyDecision[],
  reset: boolean,
  reward: number,
  error?: string,
): Sample {
  const positions = reset ? 2 * turns.length + 1 : 0;
  const mask: MaskBit[] = Array.from({ length: positions }, (_, p) => (p % 2 === 1 ? 1 : 0));
  const rewards =
    error === undefined && turns.length > 0
      ? placeOutcomeReward(mask, reward)
      : new Array<number>(positions).fill(0);
  const perTurn = (pick: (d: PolicyDecision) => number | undefined): number[] | undefined => {
    if (turns.length === 0 || turns.some((d) => pick(d) === undefined)) return undefined;
    const out = new Array<number>(positions).fill(0);
    turns.forEach((d, t) => {
      out[2 * t + 1] = pick(d) as number;
    });
    return out;
  };
  const sample: Sample = { group, rewards, mask };
  const values = perTurn((d) => d.value);
  const logprobs = perTurn((d) => d.logprob);
  const refLogprobs = perTurn((d) => d.refLogprob);
  if (values) sample.values = values;
  if (logprobs) sample.logprobs = logprobs;
  if (refLogprobs) sample.refLogprobs = refLogprobs;
  if (error !== undefined) sample.error = error;
  else if (turns.length === 0) sample.error = "the sample ended before the policy acted";
  return sample;
}

function checkCount(what: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`${what} must be a whole number ≥ ${min}, got ${value}`);
  }
}

/** Collects one group per task of the batch. */
export async function collectGroups(options: CollectOptions): Promise<CollectResult> {
  const { tasks, groupSize, horizon, signal } = options;
  checkCount("groupSize", groupSize, 1);
  checkCount("horizon", horizon, 1);
  const step = options.step ?? 0;
  const mode = options.mode ?? "independent";
  const started = performance.now();
  signal?.throwIfAborted();

  const seedOf = options.resetSeed;
  const runs: SampleRun[] = [];
  tasks.forEach((taskIndex, group) => {
    const resetSeed = typeof seedOf === "function" ? seedOf(taskIndex, group) : (seedOf ?? 0);
    const count = groupSize + (options.greedyBaseline ? 1 : 0);
    for (let sampleIndex = 0; sampleIndex < count; sampleIndex++) {
      const greedy = sampleIndex === groupSize;
      runs.push(new SampleRun({ taskIndex, group, sampleIndex, greedy, resetSeed }, options, step));
    }
  });

  try {
    if (mode === "lockstep") await runLockstep(runs);
    else await runIndependent(runs, options.concurrency ?? runs.length);
  } finally {
    await Promise.all(runs.map((run) => run.close()));
  }

  const threshold = options.env.info.successThreshold;
  const groups: TrajectoryGroup[] = tasks.map((taskIndex, group) => ({
    taskIndex,
    group,
    samples: [],
  }));
  const result: CollectResult = {
    groups,
    trajectories: [],
    envSteps: 0,
    errors: [],
    timing: { wallMs: 0, envMs: 0, policyMs: 0 },
  };
  for (const run of runs) {
    const trajectory = run.finish(threshold);
    const group = groups[trajectory.group] as TrajectoryGroup;
    if (trajectory.greedy) group.baseline = trajectory;
    else {
      group.samples.push(trajectory);
      result.trajectories.push(trajectory);
    }
    result.envSteps += trajectory.envSteps;
    result.timing.envMs += trajectory.envMs;
    result.timing.policyMs += trajectory.policyMs;
    if (trajectory.error !== undefined) {
      result.errors.push({
        taskIndex: trajectory.taskIndex,
        sampleIndex: trajectory.sampleIndex,
        greedy: trajectory.greedy,
        message: trajectory.error,
      });
    }
  }
  result.timing.wallMs = performance.now() - started;
  return result;
}

/** One task's group (collectGroups with a batch of one). */
export async function collectGroup(
  options: Omit<CollectOptions, "tasks"> & { task: number },
): Promise<TrajectoryGroup> {
  const { task, ...rest } = options;
  const result = await collectGroups({ ...rest, tasks: [task] });
  return result.groups[0] as TrajectoryGroup;
}

/** Samples step on their own; a pool keeps at most `concurrency` in flight. */
async function runIndependent(runs: readonly SampleRun[], concurrency: number): Promise<void> {
  checkCount("concurrency", concurrency, 1);
  let next = 0;
  let lastYield = performance.now();
  const worker = async () => {
    while (next < runs.length) {
      const run = runs[next++] as SampleRun;
      await run.reset();
      while (run.live) {
        const decision = await run.decide();
        if (decision === undefined) break;
        await run.step(decision);
        // In-process environments never wait on I/O: let timers and signals in now and then.
        if (performance.now() - lastYield > YIELD_EVERY_MS) {
          lastYield = performance.now();
          await yieldToEventLoop();
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, runs.length) }, worker));
}

/** The reference's rounds: every live sample chooses, then all step; a round waits for all. */
async function runLockstep(runs: readonly SampleRun[]): Promise<void> {
  await Promise.all(runs.map((run) => run.reset()));
  let live = runs.filter((run) => run.live);
  while (live.length > 0) {
    // The round's decisions are asked for together (an LLM policy's calls overlap); each sample
    // draws from its own stream, so the order they finish in changes nothing.
    const decisions: (PolicyDecision | undefined)[] = await Promise.all(
      live.map((run) => run.decide()),
    );
    await Promise.all(
      live.map((run, i) => {
        const decision = decisions[i];
        return decision === undefined ? undefined : run.step(decision);
      }),
    );
    live = live.filter((run) => run.live);
    await yieldToEventLoop();
  }
}
