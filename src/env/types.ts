/**
 * The environment API: Gymnasium's reset/step shape, with text observations.
 * Methods are async so that remote environments (HTTP env servers) fit the same interface.
 */

/** What the agent sees after reset or step. */
export interface Observation {
  text: string;
  /** Actions the environment offers right now, when it can enumerate them. */
  availableActions?: string[];
}

export interface StepResult {
  observation: Observation;
  /** Reward after this step. The episode's outcome is judged on the final step's reward. */
  reward: number;
  done: boolean;
  info: Record<string, unknown>;
}

/** A half-open range of task indices: start ≤ i < end. */
export interface IndexRange {
  start: number;
  end: number;
}

export interface EnvInfo {
  name: string;
  /** Bumped whenever task generation or rules change, so stored runs stay comparable. */
  version: string;
  description: string;
  /** The task statement the agent sees first: rules and action format. */
  instruction: string;
  splits: { train: IndexRange; test: IndexRange };
  /** An episode succeeds when its final reward reaches this value. */
  successThreshold: number;
  /** The environment's own step limit; the episode ends (done) when it is reached. */
  maxSteps: number;
}

export interface ResetOptions {
  /** Varies the episode within a task where the environment allows it; defaults to 0. */
  seed?: number;
}

export interface Env {
  readonly info: EnvInfo;
  reset(taskIndex: number, options?: ResetOptions): Promise<Observation>;
  step(action: string): Promise<StepResult>;
  close?(): Promise<void>;
}

/** Draws a random action, like Gymnasium's action_space.sample(); used by the random agent. */
export type ActionSampler = (random: () => number, observation: Observation) => string;

/**
 * A registered environment: metadata, a constructor and, optionally, its action space sampler
 * (only the random agent needs one; an environment of your own may leave it out).
 */
export interface EnvDefinition {
  info: EnvInfo;
  create(): Env;
  sampleAction?: ActionSampler;
}

/** An environment that can also draw random actions: every built-in one. */
export interface SamplingEnvDefinition extends EnvDefinition {
  sampleAction: ActionSampler;
}

export class EnvError extends Error {
  override name = "EnvError";
}

/** The task index is outside every split of the environment. */
export class UnknownTaskError extends EnvError {
  override name = "UnknownTaskError";
  constructor(
    readonly env: string,
    readonly taskIndex: number,
  ) {
    super(`${env}: unknown task index ${taskIndex}`);
  }
}

/** step() was called after the episode ended. */
export class EpisodeDoneError extends EnvError {
  override name = "EpisodeDoneError";
  constructor(readonly env: string) {
    super(`${env}: step() called after the episode ended; call reset() first`);
  }
}

/** step() was called before any reset(). */
export class NotResetError extends EnvError {
  override name = "NotResetError";
  constructor(readonly env: string) {
    super(`${env}: step() called before reset()`);
  }
}

/**
 * The episode a step() may act on: throws NotResetError before any reset and EpisodeDoneError
 * once the episode has ended.
 */
export function activeEpisode<T extends { done: boolean }>(env: string, episode: T | undefined): T {
  if (episode === undefined) throw new NotResetError(env);
  if (episode.done) throw new EpisodeDoneError(env);
  return episode;
}

/** Throws UnknownTaskError unless the index lies in the train or test split. */
export function checkTaskIndex(info: EnvInfo, taskIndex: number): void {
  const inRange = (r: IndexRange) => taskIndex >= r.start && taskIndex < r.end;
  if (!Number.isInteger(taskIndex) || !(inRange(info.splits.train) || inRange(info.splits.test))) {
    throw new UnknownTaskError(info.name, taskIndex);
  }
}
