/**
 * A task mixture: several environments behind one task-index space, so that anything that takes
 * one environment (the trainer, evaluation) can train or play on mixed tasks. CycleQD's base
 * policy and its multi-task RL baseline are trained on one.
 *
 * Index layout: the test split is the members' test splits one after another, in member order,
 * and the train split follows it with the members' train splits likewise. So mixture task i maps
 * to exactly one (member, member task), and every member task has one mixture index.
 *
 * An episode is the member's own: after reset, the instance's `info` is the member's (its
 * instruction, its step limit), so a policy sees the same instruction and observations as when
 * it plays that member alone. Before any reset it is the mixture's.
 */
import {
  type Env,
  type EnvDefinition,
  type EnvInfo,
  type IndexRange,
  NotResetError,
  type Observation,
  type ResetOptions,
  type StepResult,
  UnknownTaskError,
} from "./types.js";

/** Joins member names (and versions) in a mixture's name and version. */
export const MIXTURE_SEPARATOR = "+";

export interface MixtureTask {
  /** Index of the member environment. */
  readonly member: number;
  /** The task index in the member's own index space. */
  readonly task: number;
}

export interface TaskMixture extends EnvDefinition {
  readonly members: readonly EnvDefinition[];
  /** The mixture index of a member's task; throws when the task is in neither of its splits. */
  indexOf(member: number, task: number): number;
  /** The member and member task behind a mixture index; throws UnknownTaskError outside. */
  locate(index: number): MixtureTask;
}

const size = (range: IndexRange) => range.end - range.start;

/** Mixes two or more environments of equal success threshold; throws one line otherwise. */
export function createTaskMixture(members: readonly EnvDefinition[]): TaskMixture {
  if (members.length < 2) {
    throw new Error(`a task mixture needs ≥ 2 environments, got ${members.length}`);
  }
  const names = members.map((m) => m.info.name);
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) throw new Error(`task mixture: "${repeated}" is listed twice`);
  const bad = names.find((name) => name.includes(MIXTURE_SEPARATOR));
  if (bad !== undefined) {
    throw new Error(`task mixture: member name "${bad}" contains "${MIXTURE_SEPARATOR}"`);
  }
  const threshold = (members[0] as EnvDefinition).info.successThreshold;
  const other = members.find((m) => m.info.successThreshold !== threshold);
  if (other) {
    throw new Error(
      `task mixture: ${other.info.name} succeeds at reward ${other.info.successThreshold}, ` +
        `${names[0]} at ${threshold}; members must share the success threshold`,
    );
  }

  // offsets[split][k]: the mixture index of member k's first task of that split.
  const testTotal = members.reduce((n, m) => n + size(m.info.splits.test), 0);
  const trainTotal = members.reduce((n, m) => n + size(m.info.splits.train), 0);
  const offsets = { test: [] as number[], train: [] as number[] };
  let test = 0;
  let trainStart = testTotal;
  for (const m of members) {
    offsets.test.push(test);
    offsets.train.push(trainStart);
    test += size(m.info.splits.test);
    trainStart += size(m.info.splits.train);
  }

  const info: EnvInfo = {
    name: names.join(MIXTURE_SEPARATOR),
    version: members.map((m) => m.info.version).join(MIXTURE_SEPARATOR),
    description: `Tasks of ${names.join(", ")}, mixed in one index space.`,
    instruction: `Each episode is a task of one of: ${names.join(", ")}; its instruction is that environment's.`,
    splits: {
      test: { start: 0, end: testTotal },
      train: { start: testTotal, end: testTotal + trainTotal },
    },
    successThreshold: threshold,
    maxSteps: Math.max(...members.map((m) => m.info.maxSteps)),
  };

  const locate = (index: number): MixtureTask => {
    if (Number.isInteger(index)) {
      for (const split of ["test", "train"] as const) {
        for (let k = members.length - 1; k >= 0; k--) {
          const start = offsets[split][k] as number;
          const range = (members[k] as EnvDefinition).info.splits[split];
          if (index >= start && index < start + size(range)) {
            return { member: k, task: range.start + (index - start) };
          }
        }
      }
    }
    throw new UnknownTaskError(info.name, index);
  };

  const indexOf = (member: number, task: number): number => {
    const def = members[member];
    if (!def) throw new Error(`task mixture: no member ${member}`);
    for (const split of ["test", "train"] as const) {
      const range = def.info.splits[split];
      if (Number.isInteger(task) && task >= range.start && task < range.end) {
        return (offsets[split][member] as number) + (task - range.start);
      }
    }
    throw new UnknownTaskError(def.info.name, task);
  };

  return {
    info,
    members,
    indexOf,
    locate,
    create: () => new MixtureEnv(info, members, locate),
  };
}

class MixtureEnv implements Env {
  private active: Env | undefined;
  private readonly instances = new Map<number, Env>();

  constructor(
    private readonly mixtureInfo: EnvInfo,
    private readonly members: readonly EnvDefinition[],
    private readonly locateTask: (index: number) => MixtureTask,
  ) {}

  get info(): EnvInfo {
    return this.active?.info ?? this.mixtureInfo;
  }

  async reset(taskIndex: number, options?: ResetOptions): Promise<Observation> {
    const { member, task } = this.locateTask(taskIndex);
    let env = this.instances.get(member);
    if (!env) {
      env = (this.members[member] as EnvDefinition).create();
      this.instances.set(member, env);
    }
    this.active = env;
    return env.reset(task, options);
  }

  async step(action: string): Promise<StepResult> {
    if (!this.active) throw new NotResetError(this.mixtureInfo.name);
    return this.active.step(action);
  }

  async close(): Promise<void> {
    const envs = [...this.instances.values()];
    this.instances.clear();
    this.active = undefined;
    await Promise.all(envs.map((env) => env.close?.()));
  }
}

/**
 * Whether a policy trained on `trained` (an environment or a mixture, as name and version) may
 * play `env`: the same environment, or a member of the mixture at the version it was mixed at.
 */
export function trainedOnEnv(
  trained: { readonly name: string; readonly version: string },
  env: { readonly name: string; readonly version: string },
): boolean {
  if (trained.name === env.name && trained.version === env.version) return true;
  const names = trained.name.split(MIXTURE_SEPARATOR);
  const versions = trained.version.split(MIXTURE_SEPARATOR);
  if (names.length < 2 || names.length !== versions.length) return false;
  const k = names.indexOf(env.name);
  return k >= 0 && versions[k] === env.version;
}
