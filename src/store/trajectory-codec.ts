/**
 * The stored form of an episode's steps: one JSON array per episode. One document per episode
 * costs about a third of one row per step (measured by `npm run bench`), and keeps an episode's
 * steps atomic with it. Each step is an object; defaults are left out to keep documents small:
 * - `turn` is the array index;
 * - `message` only when it differs from `action`;
 * - `reward` only when non-zero, `done` only when true, `info` only when non-empty;
 * - `availableActions` only when it differs from the previous observation's list
 *   ([] means "none from here on");
 * - `ms`: the turn's wall-clock time, to 0.01 ms;
 * - `parseErrors` only when the agent's model gave unusable replies in that turn.
 * SQLite's JSON functions still query it: `json_each(trajectories.steps)`.
 *
 * Encoding goes through StepColumns, parallel arrays of strings and numbers; the writer thread
 * receives them packed (episode-batch.ts) and builds the JSON there.
 */
import type { Observation } from "../env/types.js";
import type { StepRecord } from "../rollout/episode.js";

interface StoredStep {
  action: string;
  message?: string;
  observation: string;
  availableActions?: string[];
  reward?: number;
  done?: boolean;
  ms: number;
  info?: Record<string, unknown>;
  parseErrors?: number;
}

/** An episode's steps as parallel arrays; null marks a left-out default. */
export interface StepColumns {
  actions: string[];
  messages: (string | null)[];
  observations: string[];
  /** Set only where the list changes from the previous observation's. */
  availableActions: (string[] | null)[];
  rewards: number[];
  /** Index of the step that ended the episode, or -1. */
  doneAt: number;
  ms: number[];
  infos: (string | null)[];
  parseErrors: number[];
}

/** Whether two available-action lists are equal (absent counts as empty). */
export function sameActionList(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  if (a === b) return true;
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  for (let i = 0; i < left.length; i++) if (left[i] !== right[i]) return false;
  return true;
}

/** Whether an info object has any key (cheaper than Object.keys on the hot path). */
export function hasKeys(object: Record<string, unknown>): boolean {
  for (const _ in object) return true;
  return false;
}

/** Columns for n steps, to be filled in. */
export function emptyColumns(n: number, doneAt = -1): StepColumns {
  return {
    actions: new Array(n),
    messages: new Array(n),
    observations: new Array(n),
    availableActions: new Array(n),
    rewards: new Array(n),
    doneAt,
    ms: new Array(n),
    infos: new Array(n),
    parseErrors: new Array(n),
  };
}

export function toColumns(steps: readonly StepRecord[], initial?: Observation): StepColumns {
  const n = steps.length;
  const columns = emptyColumns(n);
  let previous = initial?.availableActions;
  for (let i = 0; i < n; i++) {
    const step = steps[i] as StepRecord;
    columns.actions[i] = step.action;
    columns.messages[i] = step.message === step.action ? null : step.message;
    columns.observations[i] = step.observation.text;
    const actions = step.observation.availableActions;
    columns.availableActions[i] = sameActionList(actions, previous) ? null : (actions ?? []);
    previous = actions;
    columns.rewards[i] = step.reward;
    if (step.done) columns.doneAt = i;
    columns.ms[i] = Math.round(step.elapsedMs * 100) / 100;
    columns.infos[i] = hasKeys(step.info) ? JSON.stringify(step.info) : null;
    columns.parseErrors[i] = step.parseErrors ?? 0;
  }
  return columns;
}

/**
 * Hand-assembled JSON: the store's hot path. Parts are joined once at the end, which yields a flat
 * string; growing one string with += builds a rope that SQLite's binding must flatten, slowly.
 */
export function encodeColumns(columns: StepColumns): string {
  const parts: string[] = ["["];
  for (let i = 0; i < columns.actions.length; i++) {
    parts.push(i === 0 ? '{"action":' : ',{"action":', JSON.stringify(columns.actions[i]));
    const message = columns.messages[i];
    if (message != null) parts.push(',"message":', JSON.stringify(message));
    parts.push(',"observation":', JSON.stringify(columns.observations[i]));
    const actions = columns.availableActions[i];
    if (actions != null) parts.push(',"availableActions":', JSON.stringify(actions));
    const reward = columns.rewards[i] as number;
    if (reward !== 0) parts.push(',"reward":', JSON.stringify(reward));
    if (i === columns.doneAt) parts.push(',"done":true');
    parts.push(',"ms":', String(columns.ms[i]));
    const info = columns.infos[i];
    if (info != null) parts.push(',"info":', info);
    const parseErrors = columns.parseErrors[i] as number;
    if (parseErrors > 0) parts.push(',"parseErrors":', String(parseErrors));
    parts.push("}");
  }
  parts.push("]");
  return parts.join("");
}

export function encodeSteps(steps: readonly StepRecord[], initial?: Observation): string {
  return encodeColumns(toColumns(steps, initial));
}

export function decodeSteps(json: string, initial?: Observation | null): StepRecord[] {
  const stored = JSON.parse(json) as StoredStep[];
  let actions = initial?.availableActions;
  return stored.map((entry, turn) => {
    if (entry.availableActions !== undefined) {
      actions = entry.availableActions.length > 0 ? entry.availableActions : undefined;
    }
    return {
      turn,
      action: entry.action,
      message: entry.message ?? entry.action,
      observation: { text: entry.observation, ...(actions ? { availableActions: actions } : {}) },
      reward: entry.reward ?? 0,
      done: entry.done ?? false,
      elapsedMs: entry.ms,
      info: entry.info ?? {},
      ...(entry.parseErrors ? { parseErrors: entry.parseErrors } : {}),
    };
  });
}
