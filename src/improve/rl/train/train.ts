/**
 * RL training of the embedded policy, CleanRL-style: every hyperparameter is named at the top,
 * and `train` reads top to bottom as the algorithm runs.
 *
 *   for step = 0, 1, …:
 *     horizon = horizonAt(schedule, step)                      (ScalingInter-RL's curriculum)
 *     tasks   = the step's batch of train tasks                (a pure function of seed and step)
 *     rollout = collectGroups(tasks × n samples, up to horizon)
 *     advantages = computeAdvantages(estimator, samples)       (errored samples excluded)
 *     for epoch in 1..epochs, for each minibatch:               (PPO's clipped surrogate)
 *       loss = pg_loss − entropyCoef · entropy + klCoef · kl(π ‖ π_ref) [+ valueCoef · value loss]
 *       clip each head's gradient to maxGradNorm; Adam step
 *     metrics, checkpoint every K steps, onStep
 *
 * Resuming: everything random is keyed by (seed, step, …) and the checkpoint holds the weights,
 * Adam's moments (F32 in memory and on disk, so bit-exact) and the metric curve, so a run killed
 * and resumed gives the same curve and weights as one that never stopped.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createRng } from "../../../env/rng.js";
import type { EnvDefinition } from "../../../env/types.js";
import { parseTaskRange } from "../../../eval/task-range.js";
import {
  type AdvantageEstimator,
  type AdvantageResult,
  computeAdvantages,
  DEFAULTS,
  type GroupId,
  klDivergence,
  klLoss,
  ppoClippedSurrogate,
  type Sample,
  sampleScore,
  valueLoss,
} from "../estimators/index.js";
import {
  Adam,
  clipGradNorm,
  cloneParams,
  createPolicyModel,
  entropyGradToLogits,
  type FeatureOverrides,
  Featurizer,
  loadPolicy,
  logProbGradToLogits,
  PARAM_NAMES,
  type Params,
  type PolicyForward,
  type PolicyModel,
  policyBackward,
  policyForward,
  savePolicy,
  type TurnFeatures,
  type ValueForward,
  valueBackward,
  valueForward,
  zeroGrads,
  zerosLike,
} from "../policy/index.js";
import { collectGroups } from "../rollout/collect.js";
import { checkTemperature, embeddedPolicy, temperForward } from "../rollout/embedded.js";
import type { CollectResult, RolloutMode, Trajectory } from "../rollout/types.js";
import { horizonAt, parseSchedule } from "../schedule.js";
import { latestCheckpoint, loadCheckpoint, restoreAdam, saveCheckpoint } from "./checkpoint.js";
import { type EvaluationResult, evaluatePolicy } from "./evaluate.js";

// ---- Hyperparameters -------------------------------------------------------------------------

export type Algorithm = "grpo" | "ppo" | "rloo" | "reinforce++" | "remax";

/** The advantage estimator behind each algorithm (verl's adv_estimator names). */
export const ESTIMATOR_OF: Readonly<Record<Algorithm, AdvantageEstimator>> = {
  grpo: "grpo",
  ppo: "gae",
  rloo: "rloo",
  "reinforce++": "reinforce_plus_plus",
  remax: "remax",
};

export interface TrainHyperparameters {
  /** grpo | ppo (GAE with the value head) | rloo | reinforce++ | remax (greedy baseline per group). */
  algo: Algorithm;
  /** Adam's step size. */
  lr: number;
  /** Samples per task (n): a group. */
  groupSize: number;
  /** Tasks per step: each step collects batchTasks × groupSize samples. */
  batchTasks: number;
  /** Passes over each step's batch. */
  epochs: number;
  /** Minibatches (optimizer steps) per epoch. */
  minibatches: number;
  /** PPO's ε: the probability ratio is clipped to [1 − ε, 1 + ε]. */
  clipRatio: number;
  /** Discount per agent turn (PPO's GAE, REINFORCE++). */
  gamma: number;
  /** GAE's λ. */
  lam: number;
  /** Weight of the entropy bonus. */
  entropyCoef: number;
  /**
   * Weight of the KL loss (low-variance k3) to the reference policy, which is the policy training
   * started from. 0 by default: the embedded policy starts from random weights, and a KL towards a
   * near-uniform random policy only slows learning; set it when starting from trained weights
   * (imitation, say) that RL should not wander far from.
   */
  klCoef: number;
  /** Weight of the value loss (PPO only). */
  valueCoef: number;
  /** How far a new value may move from the rollout's before its loss is clipped (PPO only). */
  cliprangeValue: number;
  /** Each head's global gradient norm is clipped to this before the Adam step. */
  maxGradNorm: number;
  /** Sampling temperature of the rollouts (the ratio is computed at the same temperature). */
  temperature: number;
  /** Horizon schedule (src/improve/rl/schedule.ts), e.g. "fixed:50" or "scaling:10,20,30@100". */
  schedule: string;
  /** Training steps in all (a resumed run counts the steps already done). */
  steps: number;
  /** Write a checkpoint every K steps (0: only when the run ends or stops). */
  checkpointEvery: number;
  /** Checkpoints kept (the newest). */
  keepCheckpoints: number;
  /** Fixes the initial weights, the task batches, every sample's actions and the minibatches. */
  seed: number;
  /** Hashed feature dimension D of a fresh policy. */
  featureDim: number;
  /** Hidden units of a fresh policy's scorer and value head. */
  hidden: number;
  valueHidden: number;
  /** "independent" (each sample steps on its own) or "lockstep" (the reference's rounds). */
  rolloutMode: RolloutMode;
  /** Evaluate on the evaluation tasks every this many steps (0: never), greedily. */
  evalEvery: number;
  /**
   * Episodic novelty bonus (an intrinsic reward, not the environment's): added at an agent turn
   * whose resulting observation's key was not seen before in the episode, in episodes that did
   * not succeed, up to noveltyCap in all. So a success (reward 1) always outscores exploring, and
   * among failures the one that saw more is better. 0 turns it off.
   */
  noveltyBonus: number;
  /** The most bonus one episode can earn (keep it below the success reward). */
  noveltyCap: number;
  /** What makes two observations "the same state" for the bonus (see noveltyKeyOf). */
  noveltyKey: NoveltyKey;
}

/**
 * "numbers": the sequence of numbers in the observation's text (positions, distances, counts),
 * so that the wording of how one got there does not make a state new; "text": the whole text.
 */
export type NoveltyKey = "numbers" | "text";

/**
 * Defaults that learn on maze and gridworld from random weights, chosen by measurement on one
 * core (greedy success on the 100 test tasks): PPO with the value head (GAE γ = 0.99, λ = 0.95),
 * whose per-turn credit learned faster than GRPO's outcome-level advantages (maze, 60 steps: 0.62
 * against 0.52); two epochs of four minibatches per batch of 16 tasks × 8 samples (four epochs
 * learned no more per CPU second); the entropy bonus; the novelty bonus, without which maze's
 * 1–3 % random successes give almost no signal (60 steps of GRPO: still ~1 %); ScalingInter's
 * horizons 16 → 32 → 64 (maze's own limit of 50 caps the last); and a small policy (D = 4096,
 * H = 32), three times faster per step than the policy's default size for the same success.
 */
export const TRAIN_DEFAULTS: Readonly<TrainHyperparameters> = Object.freeze({
  algo: "ppo",
  lr: 3e-3,
  groupSize: 8,
  batchTasks: 16,
  epochs: 2,
  minibatches: 4,
  clipRatio: DEFAULTS.clipRatio,
  gamma: 0.99,
  lam: 0.95,
  entropyCoef: 0.01,
  klCoef: 0,
  valueCoef: 0.5,
  cliprangeValue: DEFAULTS.cliprangeValue,
  maxGradNorm: DEFAULTS.gradClip,
  temperature: 1,
  schedule: "scaling:16,32,64@15",
  steps: 100,
  checkpointEvery: 10,
  keepCheckpoints: 3,
  seed: 0,
  featureDim: 4096,
  hidden: 32,
  valueHidden: 32,
  rolloutMode: "independent",
  evalEvery: 0,
  noveltyBonus: 0.02,
  noveltyCap: 0.5,
  noveltyKey: "numbers",
});

/**
 * Hyperparameters that do not change the curve: a run may be resumed with other values of them
 * (more steps, another checkpoint interval, lockstep rollouts, which give the same trajectories).
 */
const FREE_ON_RESUME: readonly (keyof TrainHyperparameters)[] = [
  "steps",
  "checkpointEvery",
  "keepCheckpoints",
  "rolloutMode",
];

// Streams mixed into the seed so that each use of randomness is independent of the others.
const TASK_STREAM = 0x7a5c;
const SHUFFLE_STREAM = 0x5f1e;

// ---- API -------------------------------------------------------------------------------------

export interface StepMetrics {
  /** 0-based global step (the schedule's); the run has completed step + 1 steps after it. */
  step: number;
  horizon: number;
  /** Mean outcome reward of the step's samples (errored ones left out). */
  meanReward: number;
  /** Share of the step's samples that succeeded (errored ones left out). */
  successRate: number;
  /** Mean novelty bonus per sample (the intrinsic reward; 0 when noveltyBonus is 0). */
  meanBonus: number;
  /** Mean agent turns per sample. */
  meanTurns: number;
  /** Mean entropy of the behaviour policy over the step's agent turns (nats). */
  entropy: number;
  /** Mean k3 estimate of KL(π_old ‖ π_new) over the update's minibatches (drift per step). */
  kl: number;
  /**
   * Mean KL of the rollout policy to the reference (k3 over the step's agent turns, before the
   * update), when klCoef > 0; else 0.
   */
  refKl: number;
  /** Share of trained turns whose ratio was clipped, over all minibatches. */
  clipFraction: number;
  /** Mean policy gradient norm before clipping, over minibatches. */
  gradNorm: number;
  policyLoss: number;
  /** PPO's value loss (0 for the other algorithms). */
  valueLoss: number;
  /** env.step() calls this step (greedy baselines included) and in the whole run so far. */
  envSteps: number;
  totalEnvSteps: number;
  /** Samples that ended in an error (excluded from their groups' statistics), and why. */
  errors: number;
  errorMessages: string[];
  /** Samples the estimator left out (errors, ReMax groups without a baseline). */
  excluded: number;
  /** Agent turns trained on. */
  trainedTurns: number;
  /** Wall-clock seconds of the step and its parts (not reproducible, unlike everything else). */
  seconds: number;
  /**
   * envMs and policyMs are the collector's sums over samples, which overlap while samples are
   * in flight together (see CollectTiming): not shares of the step's wall clock.
   */
  timing: { rolloutMs: number; envMs: number; policyMs: number; updateMs: number; evalMs: number };
  /** Greedy evaluation on the evaluation tasks, on the steps asked for. */
  eval?: EvaluationResult;
}

export interface TrainOptions extends Partial<TrainHyperparameters> {
  env: EnvDefinition;
  /** Where checkpoints and the final policy (DIR/policy.safetensors) go; nothing is written without it. */
  dir?: string;
  /** Continue from DIR's newest checkpoint (a fresh start when there is none). */
  resume?: boolean;
  /** Starting weights (e.g. from imitation); a fresh policy from the seed otherwise. */
  model?: PolicyModel;
  /** Feature settings of a fresh policy besides featureDim (e.g. feature groups turned off). */
  features?: Omit<FeatureOverrides, "dim">;
  /** Tasks to train on; the environment's train split by default. */
  trainTasks?: readonly number[];
  /** Tasks of the periodic evaluation (evalEvery); the test split by default. */
  evalTasks?: readonly number[];
  /** Samples in flight at once during rollouts (independent mode); all by default. */
  concurrency?: number;
  /** Aborting stops after the current step's rollout or update: a checkpoint is written, then it resolves. */
  signal?: AbortSignal;
  /** After every step (and its checkpoint). A throw stops the run and rejects. */
  onStep?: (metrics: StepMetrics, model: PolicyModel) => void | Promise<void>;
}

export interface TrainResult {
  model: PolicyModel;
  /** The whole curve from step 0 (a resumed run includes the steps before it). */
  metrics: StepMetrics[];
  /** Steps completed. */
  steps: number;
  /** True when the signal stopped the run before `steps`. */
  stopped: boolean;
  /** The step the run resumed from, if it did. */
  resumedFrom?: number;
  /** DIR/policy.safetensors, when a dir was given. */
  policyPath?: string;
  hyperparameters: TrainHyperparameters;
}

/** What a checkpoint's state.json keeps besides the step. */
interface TrainState {
  env: { name: string; version: string };
  hyperparameters: TrainHyperparameters;
  metrics: StepMetrics[];
}

// ---- Training --------------------------------------------------------------------------------

export async function train(options: TrainOptions): Promise<TrainResult> {
  const hp = resolveHyperparameters(options);
  const { env } = options;
  const schedule = parseSchedule(hp.schedule);
  const trainTasks = options.trainTasks ?? parseTaskRange("train", env.info);
  const evalTasks = options.evalTasks ?? parseTaskRange("test", env.info);
  if (trainTasks.length === 0) throw new Error("train: no train tasks");

  // -- The policy, the optimizer and where we start: a checkpoint or step 0 --
  let model = options.model ? copyModel(options.model) : freshModel(env, hp, options.features);
  let startStep = 0;
  let metrics: StepMetrics[] = [];
  let resumedFrom: number | undefined;
  const latest = options.resume && options.dir ? await latestCheckpoint(options.dir) : undefined;
  const adam = (m: PolicyModel) => new Adam(m.params, { lr: hp.lr });
  let optimizer = adam(model);
  if (latest) {
    const saved = await loadCheckpoint<TrainState>(latest.path);
    checkResumable(saved.extra, env, hp, latest.path);
    model = inCanonicalOrder(saved.model);
    optimizer = adam(model);
    restoreAdam(optimizer, saved.moments);
    startStep = saved.step;
    metrics = saved.extra.metrics;
    resumedFrom = saved.step;
  }
  // The reference for the KL loss: the weights training started from, kept beside the run.
  let reference: PolicyModel | undefined;
  if (hp.klCoef > 0) reference = await referencePolicy(options.dir, model, latest !== undefined);

  const featurizer = new Featurizer(model.features);
  const grads = zerosLike(model.params);
  const extra = (): TrainState => ({
    env: { name: env.info.name, version: env.info.version },
    hyperparameters: hp,
    metrics,
  });
  let checkpointed = startStep;
  const checkpoint = async (step: number) => {
    if (!options.dir || checkpointed === step) return;
    await saveCheckpoint(
      options.dir,
      { step, model, adam: optimizer, extra: extra() },
      hp.keepCheckpoints,
    );
    checkpointed = step;
  };

  let stopped = false;
  let done = startStep;
  let totalEnvSteps = metrics.at(-1)?.totalEnvSteps ?? 0;
  for (let step = startStep; step < hp.steps; step++) {
    if (options.signal?.aborted) {
      stopped = true;
      break;
    }
    const started = performance.now();
    const horizon = horizonAt(schedule, step);
    const tasks = tasksForStep(trainTasks, hp.batchTasks, hp.seed, step);

    // -- Rollout: n samples per task, each its own environment, up to the horizon --
    let rollout: CollectResult;
    try {
      rollout = await collectGroups({
        env: env,
        policy: embeddedPolicy(model, {
          temperature: hp.temperature,
          values: hp.algo === "ppo",
          featurizer,
          envName: env.info.name,
          ...(reference ? { reference } : {}),
        }),
        tasks,
        groupSize: hp.groupSize,
        horizon,
        seed: hp.seed,
        step,
        mode: hp.rolloutMode,
        greedyBaseline: hp.algo === "remax",
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) {
        stopped = true;
        break;
      }
      throw error;
    }
    const rolloutMs = performance.now() - started;

    // -- Advantages: errored samples are excluded from their group and reported --
    const { samples, advantages } = rolloutAdvantages(rollout, hp);
    const batch: TrainTurn[] = [];
    rollout.trajectories.forEach((trajectory, i) => {
      const estimate = advantages.estimates[i];
      if (estimate) batch.push(...trainTurns(trajectory, estimate.advantages, estimate.returns));
    });

    // -- Update: epochs × minibatches of PPO's clipped surrogate --
    const updateStarted = performance.now();
    const update = updatePolicy(model, optimizer, grads, batch, hp, step, reference !== undefined);
    model.provenance.step = step + 1;
    done = step + 1;
    const updateMs = performance.now() - updateStarted;

    // -- Metrics, evaluation, checkpoint --
    let evaluation: EvaluationResult | undefined;
    let evalMs = 0;
    if (hp.evalEvery > 0 && (step + 1) % hp.evalEvery === 0 && evalTasks.length > 0) {
      const evalStarted = performance.now();
      evaluation = await evaluatePolicy({ env, policy: model, tasks: evalTasks, featurizer });
      evalMs = performance.now() - evalStarted;
    }
    totalEnvSteps += rollout.envSteps;
    const row = stepMetrics(step, horizon, rollout, update, advantages.excluded.length, batch);
    row.meanBonus = meanBonus(rollout.trajectories, samples);
    row.totalEnvSteps = totalEnvSteps;
    row.timing = {
      rolloutMs,
      envMs: rollout.timing.envMs,
      policyMs: rollout.timing.policyMs,
      updateMs,
      evalMs,
    };
    row.seconds = (performance.now() - started) / 1000;
    if (evaluation) row.eval = evaluation;
    metrics.push(row);
    if (hp.checkpointEvery > 0 && (step + 1) % hp.checkpointEvery === 0) await checkpoint(step + 1);
    await options.onStep?.(row, model);
  }

  // -- The end (or a stop): checkpoint the last completed step, write the final policy --
  await checkpoint(done);
  let policyPath: string | undefined;
  if (options.dir) {
    policyPath = join(options.dir, "policy.safetensors");
    await savePolicy(policyPath, model);
  }
  return {
    model,
    metrics,
    steps: done,
    stopped,
    ...(resumedFrom !== undefined ? { resumedFrom } : {}),
    ...(policyPath ? { policyPath } : {}),
    hyperparameters: hp,
  };
}

// ---- Advantages ------------------------------------------------------------------------------

/** What a rollout's advantages depend on besides the rollout itself. */
export type AdvantageSettings = Pick<
  TrainHyperparameters,
  "algo" | "gamma" | "lam" | "noveltyBonus" | "noveltyKey" | "noveltyCap"
>;

export interface RolloutAdvantages {
  /** The samples the estimator saw, one per `rollout.trajectories` entry (novelty bonus added). */
  samples: Sample[];
  /** `estimates[i]` belongs to `rollout.trajectories[i]`; null for an excluded sample. */
  advantages: AdvantageResult;
}

/**
 * A collection's advantages as a training step computes them: the algorithm's estimator over
 * every training sample (errored ones excluded and reported), the novelty bonus when asked for,
 * and for ReMax each group's greedy rollout scored on the same reward as its samples. Exported
 * so that `clade rollouts` writes the advantages training would have used, from the same code.
 */
export function rolloutAdvantages(
  rollout: CollectResult,
  settings: AdvantageSettings,
): RolloutAdvantages {
  const rewarded = (t: Trajectory): Sample =>
    settings.noveltyBonus > 0
      ? withNoveltyBonus(t, settings.noveltyBonus, settings.noveltyKey, settings.noveltyCap)
      : t.sample;
  const samples = rollout.trajectories.map(rewarded);
  // ReMax: the greedy rollout's score, on the same reward as the samples'.
  const baselines = new Map<GroupId, number>();
  for (const group of rollout.groups) {
    if (group.baseline && group.baseline.error === undefined) {
      baselines.set(group.group, sampleScore(rewarded(group.baseline)));
    }
  }
  const advantages = computeAdvantages(ESTIMATOR_OF[settings.algo], samples, {
    gamma: settings.gamma,
    lam: settings.lam,
    // The KL, when any, is a loss term of the update, never folded into REINFORCE++'s rewards.
    klCoef: 0,
    ...(settings.algo === "remax" ? { baselines } : {}),
  });
  return { samples, advantages };
}

// ---- The update ------------------------------------------------------------------------------

/** One agent turn to train on. */
interface TrainTurn {
  features: TurnFeatures;
  action: number;
  oldLogprob: number;
  advantage: number;
  /** GAE's return (the value target) and the rollout's value (PPO). */
  return: number;
  oldValue: number;
  refLogprob: number;
}

function trainTurns(
  trajectory: Trajectory,
  advantages: readonly number[],
  returns: readonly number[],
): TrainTurn[] {
  return trajectory.turns.map((turn, t) => {
    if (
      turn.features === undefined ||
      turn.actionIndex === undefined ||
      turn.logprob === undefined
    ) {
      throw new Error("train: the rollout policy did not report features, action and log-prob");
    }
    return {
      features: turn.features,
      action: turn.actionIndex,
      oldLogprob: turn.logprob,
      advantage: advantages[2 * t + 1] as number,
      return: returns[2 * t + 1] as number,
      oldValue: turn.value ?? 0,
      refLogprob: turn.refLogprob ?? 0,
    };
  });
}

interface UpdateStats {
  kl: number;
  clipFraction: number;
  gradNorm: number;
  policyLoss: number;
  valueLoss: number;
}

/**
 * epochs × minibatches Adam steps on the batch. Per minibatch (m turns, losses averaged over its
 * turns, verl's token-mean):
 *   policy: ∂/∂log π of the clipped surrogate (and of klCoef · k3 to the reference), through
 *           logProbGradToLogits; minus entropyCoef · ∂H/∂z; divided by the temperature
 *           (z / T feeds the softmax); back through policyBackward
 *   value:  valueCoef · ∂(clipped value loss)/∂V through valueBackward (PPO)
 * The policy and value heads are separate networks (verl's actor and critic): each one's
 * gradient is clipped to maxGradNorm on its own; a non-finite norm skips the step.
 */
function updatePolicy(
  model: PolicyModel,
  adam: Adam,
  grads: Params,
  batch: readonly TrainTurn[],
  hp: TrainHyperparameters,
  step: number,
  withReference: boolean,
): UpdateStats {
  const stats = { kl: 0, clipFraction: 0, gradNorm: 0, policyLoss: 0, valueLoss: 0 };
  if (batch.length === 0) return stats;
  const params = model.params;
  const heads = splitHeads(grads);
  const ppo = hp.algo === "ppo";
  const T = hp.temperature;
  let passes = 0;
  for (let epoch = 0; epoch < hp.epochs; epoch++) {
    const order = createRng(hp.seed, step, epoch, SHUFFLE_STREAM).shuffle(Array.from(batch.keys()));
    const count = Math.min(hp.minibatches, batch.length);
    for (let b = 0; b < count; b++) {
      const members = order.slice(
        Math.floor((b * order.length) / count),
        Math.floor(((b + 1) * order.length) / count),
      );
      const m = members.length;
      zeroGrads(grads);
      const raw: PolicyForward[] = [];
      const tempered: PolicyForward[] = [];
      for (const i of members) {
        const forward = policyForward(params, (batch[i] as TrainTurn).features);
        raw.push(forward);
        tempered.push(temperForward(forward, T));
      }
      const logprobs = members.map((i, k) => {
        const turn = batch[i] as TrainTurn;
        return (tempered[k] as PolicyForward).logProbs[turn.action] as number;
      });
      const mask = new Array<0 | 1>(m).fill(1);
      const surrogate = ppoClippedSurrogate(
        {
          logprobs,
          oldLogprobs: members.map((i) => (batch[i] as TrainTurn).oldLogprob),
          advantages: members.map((i) => (batch[i] as TrainTurn).advantage),
          mask,
        },
        hp.clipRatio,
      );
      const kl = withReference
        ? klLoss({
            logprobs,
            refLogprobs: members.map((i) => (batch[i] as TrainTurn).refLogprob),
            mask,
          })
        : undefined;
      members.forEach((i, k) => {
        const turn = batch[i] as TrainTurn;
        const forward = tempered[k] as PolicyForward;
        let gLogprob = surrogate.gradLogprobs[k] as number;
        if (kl) gLogprob += hp.klCoef * (kl.gradLogprobs[k] as number);
        const dz = logProbGradToLogits(forward, turn.action, gLogprob);
        if (hp.entropyCoef !== 0) {
          const dH = entropyGradToLogits(forward);
          for (let c = 0; c < dz.length; c++) {
            dz[c] = (dz[c] as number) - (hp.entropyCoef / m) * (dH[c] as number);
          }
        }
        policyBackward(params, grads, turn.features, raw[k] as PolicyForward, dz, 1 / T);
      });
      let vLoss = 0;
      if (ppo) {
        const values: ValueForward[] = members.map((i) =>
          valueForward(params, (batch[i] as TrainTurn).features.state),
        );
        const result = valueLoss(
          {
            values: values.map((v) => v.value),
            oldValues: members.map((i) => (batch[i] as TrainTurn).oldValue),
            returns: members.map((i) => (batch[i] as TrainTurn).return),
            mask,
          },
          hp.cliprangeValue,
        );
        vLoss = result.loss;
        members.forEach((i, k) => {
          const g = hp.valueCoef * (result.gradValues[k] as number);
          valueBackward(
            params,
            grads,
            (batch[i] as TrainTurn).features.state,
            values[k] as ValueForward,
            g,
          );
        });
      }
      const policyClip = clipGradNorm(heads.policy, hp.maxGradNorm);
      const valueClip = clipGradNorm(heads.value, hp.maxGradNorm);
      if (policyClip.finite && valueClip.finite) adam.step(grads);

      let k3 = 0;
      for (let k = 0; k < m; k++) {
        const logRatio =
          (logprobs[k] as number) - (batch[members[k] as number] as TrainTurn).oldLogprob;
        k3 += Math.exp(logRatio) - 1 - logRatio;
      }
      stats.kl += k3 / m;
      stats.clipFraction += surrogate.clipFraction;
      stats.gradNorm += policyClip.totalNorm;
      stats.policyLoss += surrogate.loss - hp.entropyCoef * meanEntropy(tempered);
      stats.valueLoss += vLoss;
      passes++;
    }
  }
  for (const key of Object.keys(stats) as (keyof UpdateStats)[]) stats[key] /= passes;
  return stats;
}

function meanEntropy(forwards: readonly PolicyForward[]): number {
  let sum = 0;
  for (const f of forwards) sum += f.entropy;
  return forwards.length === 0 ? 0 : sum / forwards.length;
}

/** Views of the gradient map by head (the same tensors). */
function splitHeads(grads: Params): { policy: Params; value: Params } {
  const policy: Params = new Map();
  const value: Params = new Map();
  for (const [name, t] of grads) (name.startsWith("value.") ? value : policy).set(name, t);
  return { policy, value };
}

// ---- Rewards --------------------------------------------------------------------------------

const NUMBER_RE = /\p{N}+/gu;

/** The state key of an observation for the novelty bonus. */
export function noveltyKeyOf(text: string, key: NoveltyKey): string {
  return key === "text" ? text : (text.match(NUMBER_RE) ?? []).join(",");
}

/**
 * The sample of an episode that did not succeed with `bonus` added at each agent turn that
 * reached a state new to the episode, until `cap` is paid; other samples unchanged.
 */
export function withNoveltyBonus(
  trajectory: Trajectory,
  bonus: number,
  key: NoveltyKey,
  cap = Number.POSITIVE_INFINITY,
): Sample {
  const { sample } = trajectory;
  if (sample.error !== undefined || trajectory.success) return sample;
  if (trajectory.initialObservation === undefined) return sample;
  const seen = new Set([noveltyKeyOf(trajectory.initialObservation.text, key)]);
  const rewards = [...sample.rewards];
  let left = cap;
  trajectory.turns.forEach((turn, t) => {
    const k = noveltyKeyOf(turn.observation.text, key);
    if (seen.has(k) || left <= 0) return;
    seen.add(k);
    const paid = Math.min(bonus, left);
    left -= paid;
    rewards[2 * t + 1] = (rewards[2 * t + 1] as number) + paid;
  });
  return { ...sample, rewards };
}

/** Mean over the samples that did not error of (score with the bonus − outcome reward). */
function meanBonus(trajectories: readonly Trajectory[], samples: readonly Sample[]): number {
  let sum = 0;
  let count = 0;
  trajectories.forEach((t, i) => {
    if (t.error !== undefined) return;
    sum += sampleScore(samples[i] as Sample) - t.reward;
    count++;
  });
  return count === 0 ? 0 : sum / count;
}

// ---- Pieces ----------------------------------------------------------------------------------

/**
 * The step's tasks: the train tasks are dealt in a fresh random order each pass over them, so
 * every task comes up once per pass; a pure function of (seed, step).
 */
export function tasksForStep(
  pool: readonly number[],
  batchTasks: number,
  seed: number,
  step: number,
): number[] {
  const permutations = new Map<number, number[]>();
  const out: number[] = [];
  for (let j = 0; j < batchTasks; j++) {
    const position = step * batchTasks + j;
    const pass = Math.floor(position / pool.length);
    let order = permutations.get(pass);
    if (!order) {
      order = createRng(seed, pass, TASK_STREAM).shuffle(pool);
      permutations.set(pass, order);
    }
    out.push(order[position % pool.length] as number);
  }
  return out;
}

function resolveHyperparameters(options: TrainOptions): TrainHyperparameters {
  const hp = { ...TRAIN_DEFAULTS } as TrainHyperparameters;
  for (const key of Object.keys(TRAIN_DEFAULTS) as (keyof TrainHyperparameters)[]) {
    const value = options[key];
    if (value !== undefined) (hp as unknown as Record<string, unknown>)[key] = value;
  }
  if (!(hp.algo in ESTIMATOR_OF))
    throw new Error(`train: unknown algorithm ${JSON.stringify(hp.algo)}`);
  const counts: (keyof TrainHyperparameters)[] = [
    "groupSize",
    "batchTasks",
    "epochs",
    "minibatches",
    "featureDim",
    "hidden",
    "valueHidden",
  ];
  for (const key of counts) {
    const v = hp[key] as number;
    if (!Number.isInteger(v) || v < 1)
      throw new RangeError(`train: ${key} must be a whole number ≥ 1, got ${v}`);
  }
  for (const key of ["steps", "checkpointEvery", "keepCheckpoints", "evalEvery", "seed"] as const) {
    const v = hp[key];
    if (!Number.isSafeInteger(v) || v < 0)
      throw new RangeError(`train: ${key} must be a whole number ≥ 0, got ${v}`);
  }
  for (const key of ["lr", "clipRatio", "maxGradNorm", "cliprangeValue"] as const) {
    if (!(hp[key] > 0)) throw new RangeError(`train: ${key} must be positive, got ${hp[key]}`);
  }
  for (const key of [
    "entropyCoef",
    "klCoef",
    "valueCoef",
    "gamma",
    "lam",
    "noveltyBonus",
    "noveltyCap",
  ] as const) {
    if (!(hp[key] >= 0)) throw new RangeError(`train: ${key} must be ≥ 0, got ${hp[key]}`);
  }
  checkTemperature(hp.temperature);
  if (hp.algo === "grpo" || hp.algo === "rloo") {
    if (hp.groupSize < 2)
      throw new RangeError(
        `train: ${hp.algo} compares samples within a group: groupSize must be ≥ 2`,
      );
  }
  parseSchedule(hp.schedule);
  return hp;
}

function freshModel(
  env: EnvDefinition,
  hp: TrainHyperparameters,
  features: Omit<FeatureOverrides, "dim"> = {},
): PolicyModel {
  return createPolicyModel({
    env: env.info.name,
    envVersion: env.info.version,
    seed: hp.seed,
    features: { ...features, dim: hp.featureDim },
    hidden: hp.hidden,
    valueHidden: hp.valueHidden,
  });
}

function copyModel(model: PolicyModel): PolicyModel {
  return inCanonicalOrder({
    network: { ...model.network },
    features: model.features,
    params: cloneParams(model.params, "F32"),
    provenance: { ...model.provenance },
  });
}

/**
 * The parameters in the network's own order (a file lists them by name). Sums over tensors (the
 * gradient norm) run in map order, so a resumed run must iterate as a fresh one does to stay
 * bit-exact.
 */
function inCanonicalOrder(model: PolicyModel): PolicyModel {
  const params: Params = new Map();
  for (const name of PARAM_NAMES) {
    const t = model.params.get(name);
    if (t) params.set(name, t);
  }
  for (const [name, t] of model.params) if (!params.has(name)) params.set(name, t);
  return { ...model, params };
}

/** Throws one line naming every difference that would make a resumed curve differ. */
function checkResumable(
  saved: TrainState,
  env: EnvDefinition,
  hp: TrainHyperparameters,
  path: string,
): void {
  const problems: string[] = [];
  if (saved.env.name !== env.info.name || saved.env.version !== env.info.version) {
    problems.push(
      `env ${saved.env.name}@${saved.env.version}, now ${env.info.name}@${env.info.version}`,
    );
  }
  for (const key of Object.keys(hp) as (keyof TrainHyperparameters)[]) {
    if (FREE_ON_RESUME.includes(key)) continue;
    const before = saved.hyperparameters[key];
    if (before !== hp[key])
      problems.push(`${key} ${JSON.stringify(before)}, now ${JSON.stringify(hp[key])}`);
  }
  if (problems.length > 0) {
    throw new Error(
      `cannot resume from ${path}: it was trained with other settings (${problems.join("; ")}); use the same settings or another directory`,
    );
  }
}

/** The KL reference: DIR/reference.safetensors once written, else the starting weights. */
async function referencePolicy(
  dir: string | undefined,
  start: PolicyModel,
  resumed: boolean,
): Promise<PolicyModel> {
  if (!dir) return copyModel(start);
  const path = join(dir, "reference.safetensors");
  if (resumed) return inCanonicalOrder(await loadPolicy(path));
  const reference = copyModel(start);
  await mkdir(dir, { recursive: true });
  await savePolicy(path, reference);
  return reference;
}

function stepMetrics(
  step: number,
  horizon: number,
  rollout: CollectResult,
  update: UpdateStats,
  excluded: number,
  batch: readonly TrainTurn[],
): StepMetrics {
  let played = 0;
  let reward = 0;
  let successes = 0;
  let turns = 0;
  let entropy = 0;
  let agentTurns = 0;
  let refKl = 0;
  for (const t of rollout.trajectories) {
    turns += t.turns.length;
    for (const turn of t.turns) {
      entropy += turn.entropy ?? 0;
      if (turn.refLogprob !== undefined && turn.logprob !== undefined) {
        refKl += klDivergence(turn.logprob, turn.refLogprob, "low_var_kl");
      }
      agentTurns++;
    }
    if (t.error !== undefined) continue;
    played++;
    reward += t.reward;
    if (t.success) successes++;
  }
  const messages = [...new Set(rollout.errors.map((e) => e.message))].slice(0, 5);
  return {
    step,
    horizon,
    meanReward: played === 0 ? 0 : reward / played,
    meanBonus: 0,
    successRate: played === 0 ? 0 : successes / played,
    meanTurns: rollout.trajectories.length === 0 ? 0 : turns / rollout.trajectories.length,
    entropy: agentTurns === 0 ? 0 : entropy / agentTurns,
    kl: update.kl,
    refKl: agentTurns === 0 ? 0 : refKl / agentTurns,
    clipFraction: update.clipFraction,
    gradNorm: update.gradNorm,
    policyLoss: update.policyLoss,
    valueLoss: update.valueLoss,
    envSteps: rollout.envSteps,
    totalEnvSteps: 0,
    errors: rollout.errors.length,
    errorMessages: messages,
    excluded,
    trainedTurns: batch.length,
    seconds: 0,
    timing: { rolloutMs: 0, envMs: 0, policyMs: 0, updateMs: 0, evalMs: 0 },
  };
}
