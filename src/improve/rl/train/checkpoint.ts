/**
 * Training checkpoints, written atomically so that a run killed at any moment resumes from the
 * last complete one:
 *
 *   DIR/checkpoints/step-00000012/policy.safetensors     the policy (savePolicy), step 12 done
 *   DIR/checkpoints/step-00000012/optimizer.safetensors  Adam's moments "m.<name>", "v.<name>"
 *                                                        (F32, as in memory) and its step count
 *   DIR/checkpoints/step-00000012/state.json             the step, the run's hyperparameters and
 *                                                        the metric curve so far
 *
 * A checkpoint is written into a hidden temporary folder and renamed into place, so a folder
 * named step-N is always complete; leftovers of an interrupted write are removed on the next
 * write. Only the newest `keep` are kept. The numbers are steps completed (the 0-based global
 * step the next step will have), so a resumed run asks the schedule for exactly the step an
 * uninterrupted run would.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Adam, Params, PolicyModel } from "../policy/index.js";
import { loadPolicy, readSafetensors, savePolicy, writeSafetensors } from "../policy/index.js";

export const CHECKPOINT_FORMAT = "clade.rl-checkpoint/1";
const OPTIMIZER_FORMAT = "clade.adam/1";
const STEP_DIR = /^step-(\d+)$/;

/** What state.json holds; `extra` is the trainer's own (hyperparameters, metrics). */
export interface CheckpointState<Extra> {
  format: typeof CHECKPOINT_FORMAT;
  /** Steps completed. */
  step: number;
  extra: Extra;
}

export interface LoadedCheckpoint<Extra> {
  path: string;
  step: number;
  model: PolicyModel;
  /** Adam's moments by parameter name, and its step count. */
  moments: { m: Params; v: Params; t: number };
  extra: Extra;
}

export function checkpointsDir(dir: string): string {
  return join(dir, "checkpoints");
}

function stepDirName(step: number): string {
  return `step-${String(step).padStart(8, "0")}`;
}

/** Saves a checkpoint atomically and prunes all but the newest `keep`; returns its folder. */
export async function saveCheckpoint<Extra>(
  dir: string,
  checkpoint: { step: number; model: PolicyModel; adam: Adam; extra: Extra },
  keep = 3,
): Promise<string> {
  const root = checkpointsDir(dir);
  await mkdir(root, { recursive: true });
  const name = stepDirName(checkpoint.step);
  const temporary = join(root, `.${name}.${process.pid}.${Date.now()}.tmp`);
  await mkdir(temporary);
  await savePolicy(join(temporary, "policy.safetensors"), checkpoint.model);
  const moments: Params = new Map();
  for (const [key, t] of checkpoint.adam.m) moments.set(`m.${key}`, t);
  for (const [key, t] of checkpoint.adam.v) moments.set(`v.${key}`, t);
  await writeSafetensors(join(temporary, "optimizer.safetensors"), moments, {
    format: OPTIMIZER_FORMAT,
    t: String(checkpoint.adam.t),
    options: JSON.stringify(checkpoint.adam.options),
  });
  const state: CheckpointState<Extra> = {
    format: CHECKPOINT_FORMAT,
    step: checkpoint.step,
    extra: checkpoint.extra,
  };
  await writeFile(join(temporary, "state.json"), `${JSON.stringify(state)}\n`);
  const final = join(root, name);
  // A folder of the same step can only be an equal one (re-done after resuming from an older
  // checkpoint): replace it.
  await rm(final, { recursive: true, force: true });
  await rename(temporary, final);
  await prune(root, keep);
  return final;
}

async function prune(root: string, keep: number): Promise<void> {
  const entries = await readdir(root);
  const steps = entries
    .map((entry) => STEP_DIR.exec(entry))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[0], step: Number(m[1]) }))
    .sort((a, b) => b.step - a.step);
  const stale = steps.slice(Math.max(1, keep)).map((s) => s.name);
  // Temporary folders of writes that never finished (a kill mid-write), not this process's.
  const leftovers = entries.filter((e) => e.startsWith(".step-") && e.endsWith(".tmp"));
  await Promise.all(
    [...stale, ...leftovers].map((name) => rm(join(root, name), { recursive: true, force: true })),
  );
}

/** The newest complete checkpoint's folder and step, if any. */
export async function latestCheckpoint(
  dir: string,
): Promise<{ path: string; step: number } | undefined> {
  let entries: string[];
  try {
    entries = await readdir(checkpointsDir(dir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let best: { path: string; step: number } | undefined;
  for (const entry of entries) {
    const m = STEP_DIR.exec(entry);
    if (!m) continue;
    const step = Number(m[1]);
    if (best === undefined || step > best.step) {
      best = { path: join(checkpointsDir(dir), entry), step };
    }
  }
  return best;
}

/** Reads a checkpoint folder; errors name the file. */
export async function loadCheckpoint<Extra>(path: string): Promise<LoadedCheckpoint<Extra>> {
  const statePath = join(path, "state.json");
  const state = JSON.parse(await readFile(statePath, "utf8")) as CheckpointState<Extra>;
  if (state.format !== CHECKPOINT_FORMAT) {
    throw new Error(
      `${statePath}: format ${JSON.stringify(state.format)} is not ${CHECKPOINT_FORMAT}`,
    );
  }
  const model = await loadPolicy(join(path, "policy.safetensors"));
  const optimizerPath = join(path, "optimizer.safetensors");
  const { tensors, metadata } = await readSafetensors(optimizerPath);
  if (metadata.format !== OPTIMIZER_FORMAT) {
    throw new Error(`${optimizerPath}: not an optimizer file (${OPTIMIZER_FORMAT})`);
  }
  const t = Number(metadata.t);
  if (!Number.isSafeInteger(t) || t < 0) throw new Error(`${optimizerPath}: bad step count`);
  const m: Params = new Map();
  const v: Params = new Map();
  for (const [key, tensor] of tensors) {
    if (key.startsWith("m.")) m.set(key.slice(2), tensor);
    else if (key.startsWith("v.")) v.set(key.slice(2), tensor);
    else throw new Error(`${optimizerPath}: unexpected tensor "${key}"`);
  }
  return { path, step: state.step, model, moments: { m, v, t }, extra: state.extra };
}

/** Puts saved moments into an Adam over the same parameters (shapes checked). */
export function restoreAdam(adam: Adam, moments: { m: Params; v: Params; t: number }): void {
  for (const [which, target] of [
    ["m", adam.m],
    ["v", adam.v],
  ] as const) {
    const source = moments[which];
    for (const [name, tensor] of target) {
      const saved = source.get(name);
      if (!saved || saved.data.length !== tensor.data.length) {
        throw new Error(
          `optimizer checkpoint: moment ${which}.${name} is missing or has the wrong size`,
        );
      }
      tensor.data.set(saved.data);
    }
  }
  adam.t = moments.t;
}
