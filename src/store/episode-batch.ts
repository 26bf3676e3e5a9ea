/**
 * Packing finished episodes for the writer thread. Structured cloning thousands of small strings
 * and objects costs more than the SQLite work it hands off, so a batch crosses as transferred
 * buffers (no copy): every text field as UTF-8 bytes in one buffer, their byte lengths, the step
 * numbers, and each episode's other fields as its own JSON document.
 *
 * Nothing an episode holds may take the writer down: an episode that cannot be encoded (a string
 * past V8's limit, a value JSON cannot express) or committed is stored instead as an `error`
 * without its steps and call bodies (unstorableEpisode), and the rest of its batch is kept.
 * Each episode's header is its own JSON document, so one large episode never makes the batch's
 * JSON too long to build.
 */
import type { ModelCallRecord } from "../model/call-record.js";
import type { EpisodeRecord } from "../rollout/episode.js";
import type { EncodedEpisode, RunStore } from "./run-store.js";
import { emptyColumns, hasKeys, sameActionList } from "./trajectory-codec.js";

export interface PackedBatch {
  /** Per episode, its fields other than steps as JSON, UTF-8, back to back. */
  headers: Uint8Array;
  /** Per episode, the byte length of its header. */
  headerLengths: Int32Array;
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
/** Longest piece of an original error quoted in an unstorable episode's message. */
const MAX_QUOTED_CHARS = 300;

type EpisodeHeader = Omit<EncodedEpisode, "columns"> & { doneAt: number };

function clip(text: string): string {
  return text.length <= MAX_QUOTED_CHARS ? text : `${text.slice(0, MAX_QUOTED_CHARS)}…`;
}

function describe(error: unknown): string {
  return clip(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}

const finite = (value: number): number => (Number.isFinite(value) ? value : 0);

/** A call's accounting without its bodies (request, response), which may be what failed. */
function bareCall(call: ModelCallRecord): ModelCallRecord {
  return {
    turn: finite(call.turn),
    model: clip(String(call.model)),
    request: { messages: [] },
    ...(call.error !== undefined ? { error: clip(String(call.error)) } : {}),
    usage: {
      inputTokens: finite(call.usage.inputTokens),
      outputTokens: finite(call.usage.outputTokens),
    },
    costUsd: finite(call.costUsd),
    latencyMs: call.latencyMs === null ? null : finite(call.latencyMs),
    cacheHit: call.cacheHit === true,
    ...(call.unpriced ? { unpriced: true } : {}),
    ...(call.queueMs !== undefined ? { queueMs: finite(call.queueMs) } : {}),
    ...(call.retryMs !== undefined ? { retryMs: finite(call.retryMs) } : {}),
    attempts: finite(call.attempts),
    ...(call.attemptErrors?.length
      ? { attemptErrors: call.attemptErrors.map((e) => clip(String(e))) }
      : {}),
    startedAt: String(call.startedAt),
  };
}

/** The fields of an episode that could not be stored as it was: an error, run again on resume. */
function unstorableFields(
  record: Omit<EpisodeRecord, "steps">,
  error: unknown,
): Omit<EpisodeRecord, "steps"> {
  const had = record.error === undefined ? "" : `; it had ended in: ${clip(String(record.error))}`;
  return {
    taskIndex: record.taskIndex,
    sampleIndex: record.sampleIndex,
    seed: record.seed,
    outcome: "error",
    reward: 0,
    endReason: "store_error",
    error:
      `the episode could not be stored (${describe(error)}), so its steps and the bodies of ` +
      `its model calls were left out; a resume runs it again${had}`,
    ...(record.calls?.length ? { calls: record.calls.map(bareCall) } : {}),
    parseErrors: finite(record.parseErrors),
    startedAt: String(record.startedAt),
    durationMs: finite(record.durationMs),
  };
}

/** What is stored in place of an episode that cannot be encoded. */
export function unstorableEpisode(record: EpisodeRecord, error: unknown): EpisodeRecord {
  return { ...unstorableFields(record, error), steps: [] };
}

/** What is stored in place of an encoded episode that cannot be committed. */
export function unstorableEncoded(record: EncodedEpisode, error: unknown): EncodedEpisode {
  return { ...unstorableFields(record, error), turns: 0, columns: emptyColumns(0) };
}

/**
 * Commits a batch in one transaction; when that fails, episode by episode, storing any episode
 * that still fails as unstorable. Throws only when even that cannot be written (the store
 * itself is failing).
 */
export function saveBatch(store: RunStore, runId: string, episodes: EncodedEpisode[]): void {
  try {
    store.saveEncoded(runId, episodes);
    return;
  } catch (error) {
    if (episodes.length === 0) throw error;
  }
  for (const episode of episodes) {
    try {
      store.saveEncoded(runId, [episode]);
    } catch (error) {
      store.saveEncoded(runId, [unstorableEncoded(episode, error)]);
    }
  }
}

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
  private headers = new GrowableBytes();
  private headerLengths = new Int32Array(64);
  private episodeCount = 0;
  private text = new GrowableBytes();
  private lengths = new Int32Array(1 << 12);
  private numbers = new Float64Array(1 << 11);
  private fieldCount = 0;
  private numberCount = 0;

  get size(): number {
    return this.episodeCount;
  }

  /** Packs the episode, or, when it cannot be encoded, the unstorable error that replaces it. */
  add(record: EpisodeRecord): void {
    const mark = {
      headers: this.headers.used,
      text: this.text.used,
      fields: this.fieldCount,
      numbers: this.numberCount,
    };
    try {
      this.pack(record);
    } catch (error) {
      // Whatever the failed attempt wrote is discarded by moving the cursors back.
      this.headers.used = mark.headers;
      this.text.used = mark.text;
      this.fieldCount = mark.fields;
      this.numberCount = mark.numbers;
      this.pack(unstorableEpisode(record, error));
    }
  }

  private pack(record: EpisodeRecord): void {
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
    const header: EpisodeHeader = { ...rest, turns: steps.length, doneAt };
    const headerLength = this.headers.write(JSON.stringify(header));
    this.headerLengths = grow(this.headerLengths, this.episodeCount + 1);
    this.headerLengths[this.episodeCount++] = headerLength;
    this.fieldCount = field;
    this.numberCount = number;
  }

  /** The packed batch (its buffers are owned by the caller); the packer starts empty again. */
  take(): PackedBatch {
    const batch: PackedBatch = {
      headers: this.headers.bytes.subarray(0, this.headers.used),
      headerLengths: this.headerLengths.subarray(0, this.episodeCount),
      text: this.text.bytes.subarray(0, this.text.used),
      lengths: this.lengths.subarray(0, this.fieldCount),
      numbers: this.numbers.subarray(0, this.numberCount),
    };
    this.headers = new GrowableBytes();
    this.headerLengths = new Int32Array(this.headerLengths.length);
    this.episodeCount = 0;
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
  return [
    batch.headers.buffer,
    batch.headerLengths.buffer,
    batch.text.buffer,
    batch.lengths.buffer,
    batch.numbers.buffer,
  ] as ArrayBuffer[];
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function unpackBatch(batch: PackedBatch): EncodedEpisode[] {
  const { lengths, numbers, headerLengths } = batch;
  const headers = asBuffer(batch.headers);
  const text = asBuffer(batch.text);
  let headerOffset = 0;
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
  const episodes: EncodedEpisode[] = [];
  for (let e = 0; e < headerLengths.length; e++) {
    const headerLength = headerLengths[e] as number;
    const header = headers.toString("utf8", headerOffset, headerOffset + headerLength);
    headerOffset += headerLength;
    const { doneAt, ...rest } = JSON.parse(header) as EpisodeHeader;
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
    episodes.push({ ...rest, columns });
  }
  return episodes;
}
