/**
 * Packing finished episodes for the writer thread. Structured cloning thousands of small strings
 * and objects costs more than the SQLite work it hands off, so a batch crosses as transferred
 * buffers (no copy): every text field as UTF-8 bytes in one buffer, their byte lengths, the step
 * numbers, and a small JSON header with the other episode fields.
 */
import type { EpisodeRecord } from "../rollout/episode.js";
import type { EncodedEpisode } from "./run-store.js";
import { emptyColumns, hasKeys, sameActionList } from "./trajectory-codec.js";

export interface PackedBatch {
  /** Episode fields other than steps, as JSON. */
  header: string;
  /** Every text field of every step, UTF-8, back to back. */
  text: Uint8Array;
  /** Per text field (five per step), its byte length, or ABSENT. */
  lengths: Int32Array;
  /** Per step, its reward, its milliseconds and its parse errors. */
  numbers: Float64Array;
}

/** Length marker for a left-out (null) text field. */
const ABSENT = -1;
const FIELDS_PER_STEP = 5;
const NUMBERS_PER_STEP = 3;

type EpisodeHeader = Omit<EncodedEpisode, "columns"> & { doneAt: number };

/** A byte buffer that grows by doubling. */
class GrowableBytes {
  bytes = Buffer.alloc(1 << 16);
  used = 0;

  write(text: string): number {
    // UTF-8 needs at most three bytes per UTF-16 unit.
    const worst = text.length * 3;
    if (this.used + worst > this.bytes.length) {
      const next = Buffer.alloc(Math.max(this.bytes.length * 2, this.used + worst));
      this.bytes.copy(next, 0, 0, this.used);
      this.bytes = next;
    }
    const written = this.bytes.write(text, this.used, "utf8");
    this.used += written;
    return written;
  }
}

/** A typed array that grows by doubling. */
function grow<T extends Int32Array | Float64Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const next = new (array.constructor as new (n: number) => T)(Math.max(array.length * 2, needed));
  next.set(array);
  return next;
}

/**
 * Accumulates a batch. Each episode is packed as it arrives, so its step objects die young
 * (the garbage collector promotes whatever a batch holds on to).
 */
export class BatchPacker {
  private episodes: EpisodeHeader[] = [];
  private text = new GrowableBytes();
  private lengths = new Int32Array(1 << 12);
  private numbers = new Float64Array(1 << 11);
  private fieldCount = 0;
  private numberCount = 0;

  get size(): number {
    return this.episodes.length;
  }

  add(record: EpisodeRecord): void {
    const { steps, ...rest } = record;
    this.lengths = grow(this.lengths, this.fieldCount + steps.length * FIELDS_PER_STEP);
    this.numbers = grow(this.numbers, this.numberCount + steps.length * NUMBERS_PER_STEP);
    const { lengths, numbers, text } = this;
    let field = this.fieldCount;
    let number = this.numberCount;
    let doneAt = -1;
    let previous = record.initialObservation?.availableActions;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as (typeof steps)[number];
      lengths[field++] = text.write(step.action);
      lengths[field++] = step.message === step.action ? ABSENT : text.write(step.message);
      lengths[field++] = text.write(step.observation.text);
      const actions = step.observation.availableActions;
      lengths[field++] = sameActionList(actions, previous)
        ? ABSENT
        : text.write(JSON.stringify(actions ?? []));
      previous = actions;
      lengths[field++] = hasKeys(step.info) ? text.write(JSON.stringify(step.info)) : ABSENT;
      numbers[number++] = step.reward;
      numbers[number++] = Math.round(step.elapsedMs * 100) / 100;
      numbers[number++] = step.parseErrors ?? 0;
      if (step.done) doneAt = i;
    }
    this.fieldCount = field;
    this.numberCount = number;
    this.episodes.push({ ...rest, turns: steps.length, doneAt });
  }

  /** The packed batch (its buffers are owned by the caller); the packer starts empty again. */
  take(): PackedBatch {
    const batch: PackedBatch = {
      header: JSON.stringify(this.episodes),
      text: this.text.bytes.subarray(0, this.text.used),
      lengths: this.lengths.subarray(0, this.fieldCount),
      numbers: this.numbers.subarray(0, this.numberCount),
    };
    this.episodes = [];
    this.text = new GrowableBytes();
    this.lengths = new Int32Array(this.lengths.length);
    this.numbers = new Float64Array(this.numbers.length);
    this.fieldCount = 0;
    this.numberCount = 0;
    return batch;
  }
}

/** The buffers to list as transferable when posting a batch. */
export function transferList(batch: PackedBatch): ArrayBuffer[] {
  return [batch.text.buffer, batch.lengths.buffer, batch.numbers.buffer] as ArrayBuffer[];
}

export function unpackBatch(batch: PackedBatch): EncodedEpisode[] {
  const episodes = JSON.parse(batch.header) as EpisodeHeader[];
  const { lengths, numbers } = batch;
  const text = Buffer.from(batch.text.buffer, batch.text.byteOffset, batch.text.byteLength);
  let offset = 0;
  let field = 0;
  let number = 0;
  const take = (): string | null => {
    const length = lengths[field++] as number;
    if (length === ABSENT) return null;
    const value = text.toString("utf8", offset, offset + length);
    offset += length;
    return value;
  };
  return episodes.map(({ doneAt, ...rest }) => {
    const n = rest.turns;
    const columns = emptyColumns(n, doneAt);
    for (let i = 0; i < n; i++) {
      columns.actions[i] = take() as string;
      columns.messages[i] = take();
      columns.observations[i] = take() as string;
      const actions = take();
      columns.availableActions[i] = actions === null ? null : (JSON.parse(actions) as string[]);
      columns.infos[i] = take();
      columns.rewards[i] = numbers[number++] as number;
      columns.ms[i] = numbers[number++] as number;
      columns.parseErrors[i] = numbers[number++] as number;
    }
    return { ...rest, columns };
  });
}
