/**
 * Packing finished episodes for the writer thread. Structured cloning thousands of small arrays
 * and objects costs more than the SQLite work it hands off, so a batch crosses as two strings:
 * every text field concatenated into one, and a JSON header with the numbers and text lengths.
 * Cloning a long flat string is a single copy.
 */
import type { EpisodeRecord } from "../rollout/episode.js";
import type { EncodedEpisode } from "./run-store.js";
import { type StepColumns, sameActionList } from "./trajectory-codec.js";

export interface PackedBatch {
  /** Episode fields other than steps, as JSON. */
  header: string;
  /** Every text field of every step, concatenated. */
  text: string;
  /** Per text field, its length, or ABSENT. */
  lengths: Int32Array;
  /** Per step, its reward then its milliseconds (numbers as text would cost more than SQLite). */
  numbers: Float64Array;
}

/** Length marker for a left-out (null) text field. */
const ABSENT = -1;

type EpisodeHeader = Omit<EncodedEpisode, "columns"> & { doneAt: number };

/**
 * Accumulates a batch. Each episode is packed as it arrives, so its step objects die young (the
 * garbage collector promotes whatever a batch holds on to; one string per episode is cheap).
 */
export class BatchPacker {
  private episodes: EpisodeHeader[] = [];
  private lengths: number[] = [];
  private numbers: number[] = [];
  private texts: string[] = [];

  get size(): number {
    return this.episodes.length;
  }

  add(record: EpisodeRecord): void {
    const { steps, ...rest } = record;
    const parts: string[] = [];
    const lengths = this.lengths;
    const put = (value: string | null) => {
      if (value === null) {
        lengths.push(ABSENT);
      } else {
        parts.push(value);
        lengths.push(value.length);
      }
    };
    const numbers = this.numbers;
    let doneAt = -1;
    let previous = record.initialObservation?.availableActions;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as (typeof steps)[number];
      put(step.action);
      put(step.message === step.action ? null : step.message);
      put(step.observation.text);
      const actions = step.observation.availableActions;
      put(sameActionList(actions, previous) ? null : JSON.stringify(actions ?? []));
      previous = actions;
      let info: string | null = null;
      for (const _ in step.info) {
        info = JSON.stringify(step.info);
        break;
      }
      put(info);
      numbers.push(step.reward, Math.round(step.elapsedMs * 100) / 100);
      if (step.done) doneAt = i;
    }
    this.texts.push(parts.join(""));
    this.episodes.push({ ...rest, turns: steps.length, doneAt });
  }

  /** The packed batch; the packer starts empty again. */
  take(): PackedBatch {
    const batch = {
      header: JSON.stringify(this.episodes),
      text: this.texts.join(""),
      lengths: Int32Array.from(this.lengths),
      numbers: Float64Array.from(this.numbers),
    };
    this.episodes = [];
    this.lengths = [];
    this.numbers = [];
    this.texts = [];
    return batch;
  }
}

export function unpackBatch(batch: PackedBatch): EncodedEpisode[] {
  const episodes = JSON.parse(batch.header) as EpisodeHeader[];
  const { lengths, numbers } = batch;
  let offset = 0;
  let field = 0;
  let number = 0;
  const take = (): string | null => {
    const length = lengths[field++] as number;
    if (length === ABSENT) return null;
    const value = batch.text.slice(offset, offset + length);
    offset += length;
    return value;
  };
  return episodes.map(({ doneAt, ...rest }) => {
    const n = rest.turns;
    const rewards: number[] = new Array(n);
    const ms: number[] = new Array(n);
    const columns: StepColumns = {
      actions: new Array(n),
      messages: new Array(n),
      observations: new Array(n),
      availableActions: new Array(n),
      rewards,
      doneAt,
      ms,
      infos: new Array(n),
    };
    for (let i = 0; i < n; i++) {
      columns.actions[i] = take() as string;
      columns.messages[i] = take();
      columns.observations[i] = take() as string;
      const actions = take();
      columns.availableActions[i] = actions === null ? null : (JSON.parse(actions) as string[]);
      columns.infos[i] = take();
      rewards[i] = numbers[number++] as number;
      ms[i] = numbers[number++] as number;
    }
    return { ...rest, columns };
  });
}
