/**
 * Generic text features for the embedded policy: one sparse vector for the state (instruction,
 * observation, recent history) and one per candidate action (its tokens and their interactions
 * with the state). Nothing here knows any environment: every feature is built from tokens,
 * numbers, line structure and text equality, so the features hold no solution; the network has
 * to learn which of them matter.
 *
 * The recipe, exactly (so that another tool can recompute the features):
 *
 * - Tokens: the text lowercased (String.prototype.toLowerCase), then every maximal run of
 *   letters (\p{L}) or of digits (\p{N}); "6x6" gives "6", "x", "6". Lines split on "\n"; a
 *   line's head is its first token.
 * - Token hash: FNV-1a 32-bit (offset basis 0x811c9dc5, prime 0x01000193) over the salt's 4
 *   little-endian bytes followed by the token's UTF-8 bytes. A whole action is hashed the same
 *   way as its tokens joined by one space.
 * - Feature key: FNV-1a continued from the salt's 4 bytes over the 4 little-endian bytes of each
 *   word of [tag, ...arguments] (tags below); the bucket is murmur3's fmix32 of the key modulo
 *   `dim`. Collisions simply add up.
 * - Values: 1 per feature (a number slot carries min(n / numberScale, NUMBER_VALUE_CAP)); then
 *   every tag's features are scaled by 1/sqrt(count of that tag's features in the vector), so
 *   that each tag contributes a unit-norm block however long the text is.
 *
 * State features (shared by all candidates of a turn; the value head sees only these):
 *   1 instruction unigram · 2 observation unigram · 3 observation bigram (within a line)
 *   4 number slot (context word, its occurrence index, numbers since it) with the number's value
 *   5 history action token (recency i, token) · 6 history whole action (i, action)
 *   7 history observation unigram (i ≥ 2, token): the observation that action i produced;
 *     i = 1 produced the current observation, which has its own features
 *   8 times the current observation's text was seen before in the episode (bucket 0..3)
 *   9 tuple comparison: for two number tuples of equal length (two or more numbers after one
 *     context word, e.g. "at 3, 4"; the first 8 tuples), per element the sign of the
 *     difference: (pair, element index, sign + 1), where a tuple's slot is FNV-1a continued
 *     from its context word's hash over its occurrence index, and the pair is FNV-1a
 *     continued from the first slot over the second
 * Candidate features:
 *   10 action unigram · 11 whole action
 *   12 observation unigram × action token · 13 observation bigram × action token
 *   14 number slot × action token (with the number's value)
 *   23 tuple comparison × action token
 *   15 recent whole action (i) × candidate whole action · 16 candidate repeats action i
 *   22 times the candidate was taken in the episode (bucket 0..3)
 *   17 action head × head of each line holding one of the action's tokens
 *   18 action head, valued by the fraction of the action's tokens present in the observation
 *   19 action head × head of a line holding the whole action verbatim (as a token sequence)
 *   20 times the candidate was taken before in an observation with the same text (bucket 0..3)
 *   21 the same, comparing only the sequence of numbers in the observations (texts and number
 *     sequences are compared through 32-bit hashes)
 * History recency i counts back from the latest turn (i = 1) up to `historyLength`.
 */
import type { AgentState, Turn } from "../../../agent/types.js";
import type { Observation } from "../../../env/types.js";

export const FEATURE_SCHEME = "clade.hashed-text.v1";

// ---- Hyperparameters of the featuriser (saved with the weights through FeatureSettings) ----
/** Hashed input dimension D: rows of the first layers. */
export const DEFAULT_DIM = 1 << 15;
/** Turns of history the features look back on (k). */
export const DEFAULT_HISTORY_LENGTH = 3;
/** Salt mixed into every hash; change it to draw a fresh set of collisions. */
export const DEFAULT_SALT = 0x5eed;
/** A number n in the observation is fed as n / numberScale ... */
export const DEFAULT_NUMBER_SCALE = 10;
// The constants from here to the caches are part of the scheme: changing one means a new
// FEATURE_SCHEME, since saved policies were trained on the old features.
/** ... capped here (numbers are unsigned in the tokeniser). */
export const NUMBER_VALUE_CAP = 10;
/** Count features (seen-before, tried-here, taken-before) are bucketed as 0, 1, 2, 3+. */
const COUNT_BUCKETS = 3;
/** Number tuples compared per observation (the first ones); pairs grow as its square. */
const MAX_TUPLES = 8;
/** Texts whose analysis is cached by the featuriser before the cache is cleared. */
const TEXT_CACHE_SIZE = 512;
/** Token hashes cached before the cache is cleared. */
const TOKEN_CACHE_SIZE = 100_000;

/** Which feature groups are on; each group names the tags above it controls. */
export interface FeatureGroups {
  /** Tag 1. */
  instruction: boolean;
  /** Tags 2, 3. */
  observation: boolean;
  /** Tags 4, 9. */
  numbers: boolean;
  /** Tags 5, 6, 7. */
  history: boolean;
  /** Tags 10, 11. */
  action: boolean;
  /** Tag 12. */
  observationAction: boolean;
  /** Tag 13 (the most numerous candidate features: off halves a long text's cost). */
  bigramAction: boolean;
  /** Tags 14, 23. */
  numberAction: boolean;
  /** Tags 15, 16, 22. */
  historyAction: boolean;
  /** Tags 17, 18, 19. */
  overlap: boolean;
  /** Tags 8, 20, 21. */
  novelty: boolean;
}

/** Everything that fixes the features; stored as JSON in the weights file's metadata. */
export interface FeatureSettings {
  scheme: typeof FEATURE_SCHEME;
  dim: number;
  historyLength: number;
  salt: number;
  numberScale: number;
  groups: FeatureGroups;
}

export const ALL_GROUPS: FeatureGroups = {
  instruction: true,
  observation: true,
  numbers: true,
  history: true,
  action: true,
  observationAction: true,
  bigramAction: true,
  numberAction: true,
  historyAction: true,
  overlap: true,
  novelty: true,
};

/** Settings to change from the defaults; groups left out stay on. */
export type FeatureOverrides = Partial<Omit<FeatureSettings, "groups">> & {
  groups?: Partial<FeatureGroups>;
};

export function defaultFeatureSettings(overrides: FeatureOverrides = {}): FeatureSettings {
  const settings: FeatureSettings = {
    scheme: FEATURE_SCHEME,
    dim: DEFAULT_DIM,
    historyLength: DEFAULT_HISTORY_LENGTH,
    salt: DEFAULT_SALT,
    numberScale: DEFAULT_NUMBER_SCALE,
    ...overrides,
    groups: { ...ALL_GROUPS, ...overrides.groups },
  };
  checkFeatureSettings(settings);
  return settings;
}

/** Throws a one-line error unless the settings are usable (e.g. read back from a file). */
export function checkFeatureSettings(value: unknown): asserts value is FeatureSettings {
  const s = value as FeatureSettings;
  const fail = (why: string): never => {
    throw new Error(`feature settings: ${why}`);
  };
  if (typeof s !== "object" || s === null) fail("not an object");
  if (s.scheme !== FEATURE_SCHEME) fail(`unknown scheme ${JSON.stringify(s.scheme)}`);
  if (!Number.isInteger(s.dim) || s.dim < 1 || s.dim > 2 ** 30) fail(`bad dim ${s.dim}`);
  if (!Number.isInteger(s.historyLength) || s.historyLength < 0 || s.historyLength > 64) {
    fail(`bad historyLength ${s.historyLength}`);
  }
  if (!Number.isInteger(s.salt) || s.salt < 0 || s.salt > 0xffffffff) fail(`bad salt ${s.salt}`);
  if (!(s.numberScale > 0)) fail(`bad numberScale ${s.numberScale}`);
  if (typeof s.groups !== "object" || s.groups === null) fail("no groups");
  for (const key of Object.keys(ALL_GROUPS) as (keyof FeatureGroups)[]) {
    if (typeof s.groups[key] !== "boolean") fail(`group ${key} is not true or false`);
  }
}

// ---- Hashing ----

export const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the 4 little-endian bytes of a 32-bit word, continuing from `h`. */
export function fnvWord(h: number, word: number): number {
  let x = h;
  x = Math.imul(x ^ (word & 0xff), FNV_PRIME);
  x = Math.imul(x ^ ((word >>> 8) & 0xff), FNV_PRIME);
  x = Math.imul(x ^ ((word >>> 16) & 0xff), FNV_PRIME);
  x = Math.imul(x ^ (word >>> 24), FNV_PRIME);
  return x >>> 0;
}

/** FNV-1a 32-bit over the string's UTF-8 bytes, continuing from `start` (the offset basis). */
export function fnv1a32(text: string, start = FNV_OFFSET): number {
  let h = start;
  const byte = (b: number) => {
    h = Math.imul(h ^ b, FNV_PRIME);
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      byte(c);
      continue;
    }
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (c < 0x800) {
      byte(0xc0 | (c >> 6));
    } else if (c < 0x10000) {
      byte(0xe0 | (c >> 12));
      byte(0x80 | ((c >> 6) & 0x3f));
    } else {
      byte(0xf0 | (c >> 18));
      byte(0x80 | ((c >> 12) & 0x3f));
      byte(0x80 | ((c >> 6) & 0x3f));
    }
    byte(0x80 | (c & 0x3f));
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finaliser: spreads FNV's weak low bits before the modulo. */
export function fmix32(h: number): number {
  let x = h >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

// ---- Tokens and text analysis ----

const TOKEN_RE = /\p{L}+|\p{N}+/gu;
const DIGITS_RE = /^[0-9]+$/;

/** Lowercase runs of letters or of digits, in order. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN_RE) ?? [];
}

/** What the features need from one text, computed once per distinct text. */
interface TextAnalysis {
  /** Distinct unigram hashes, first appearance first. */
  unigrams: number[];
  /** Distinct (previous, current) pairs within lines, flattened. */
  bigrams: number[];
  /** Number slots: key words [context, occurrence, index] flattened by 3, and values. */
  numberSlots: number[];
  numberValues: number[];
  /** Tuple comparisons: [pair, element index, sign of the difference + 1] flattened by 3. */
  comparisons: number[];
  /** For each token hash: the distinct heads of the lines it appears in. */
  lineHeads: Map<number, number[]>;
  /** Each line's tokens joined by single spaces, padded with a space on both sides. */
  paddedLines: string[];
  /** Hash of the whole text and of its sequence of numbers (for "seen before"). */
  textHash: number;
  numbersHash: number;
}

/** A candidate action, tokenised and hashed. */
interface ActionAnalysis {
  tokens: number[];
  whole: number;
  head: number;
  /** " tok tok " for verbatim search. */
  padded: string;
}

const TAG = {
  instruction: 1,
  obsUnigram: 2,
  obsBigram: 3,
  number: 4,
  tupleCompare: 9,
  historyToken: 5,
  historyWhole: 6,
  historyObs: 7,
  seenBefore: 8,
  actionUnigram: 10,
  actionWhole: 11,
  obsAction: 12,
  bigramAction: 13,
  numberAction: 14,
  tupleCompareAction: 23,
  historyPair: 15,
  repeat: 16,
  overlapLine: 17,
  overlapFraction: 18,
  verbatim: 19,
  triedText: 20,
  triedNumbers: 21,
  takenBefore: 22,
} as const;

/** A sparse vector: `indices` in [0, dim) (repeats allowed; they add up) and their values. */
export interface SparseVector {
  readonly indices: Int32Array;
  readonly values: Float32Array;
}

/** One turn's features: the state's, and each candidate's own (its full input is both). */
export interface TurnFeatures {
  readonly state: SparseVector;
  readonly candidates: readonly SparseVector[];
}

/** Growable index/value buffers, reused across turns; one tag's block is scaled as it closes. */
class SparseBuilder {
  indices = new Int32Array(1024);
  values = new Float32Array(1024);
  length = 0;
  private blockStart = 0;
  private blockTag = -1;

  constructor(private readonly dim: number) {}

  reset(): void {
    this.length = 0;
    this.blockStart = 0;
    this.blockTag = -1;
  }

  /** Starts a tag's block; features pushed until the next begin() are normalised together. */
  begin(tag: number): void {
    this.close();
    this.blockStart = this.length;
    this.blockTag = tag;
  }

  push(key: number, value: number): void {
    if (this.length === this.indices.length) {
      const indices = new Int32Array(this.length * 2);
      indices.set(this.indices);
      this.indices = indices;
      const values = new Float32Array(this.length * 2);
      values.set(this.values);
      this.values = values;
    }
    this.indices[this.length] = fmix32(key) % this.dim;
    this.values[this.length] = value;
    this.length++;
  }

  /** Scales the open block by 1/sqrt(its feature count). */
  close(): void {
    if (this.blockTag < 0) return;
    const n = this.length - this.blockStart;
    if (n > 1) {
      const scale = 1 / Math.sqrt(n);
      for (let i = this.blockStart; i < this.length; i++) {
        this.values[i] = (this.values[i] as number) * scale;
      }
    }
    this.blockTag = -1;
  }

  mark(): number {
    this.close();
    return this.length;
  }
}

function countBucket(n: number): number {
  return n < COUNT_BUCKETS ? n : COUNT_BUCKETS;
}

/**
 * Turns agent states into features. Pure (same settings and state give the same features); it
 * only caches token hashes and text analyses, which never change the result.
 */
export class Featurizer {
  readonly settings: FeatureSettings;
  private readonly saltKey: number;
  private readonly tokenCache = new Map<string, number>();
  private readonly textCache = new Map<string, TextAnalysis>();
  private readonly builder: SparseBuilder;
  private instructionText: string | undefined;
  private instructionHashes: number[] = [];

  constructor(settings: FeatureSettings) {
    checkFeatureSettings(settings);
    this.settings = settings;
    this.saltKey = fnvWord(FNV_OFFSET, settings.salt >>> 0);
    this.builder = new SparseBuilder(settings.dim);
  }

  /** Hash of one token (or of a whole action as its tokens joined by spaces). */
  hashToken(token: string): number {
    let h = this.tokenCache.get(token);
    if (h === undefined) {
      if (this.tokenCache.size >= TOKEN_CACHE_SIZE) this.tokenCache.clear();
      h = fnv1a32(token, this.saltKey);
      this.tokenCache.set(token, h);
    }
    return h;
  }

  /** The feature key of [tag, ...words] (before fmix32 and the modulo). */
  key(tag: number, a?: number, b?: number, c?: number, d?: number): number {
    let h = fnvWord(this.saltKey, tag);
    if (a !== undefined) h = fnvWord(h, a);
    if (b !== undefined) h = fnvWord(h, b);
    if (c !== undefined) h = fnvWord(h, c);
    if (d !== undefined) h = fnvWord(h, d);
    return h;
  }

  /** The bucket in [0, dim) a feature key lands in. */
  bucket(key: number): number {
    return fmix32(key) % this.settings.dim;
  }

  /** State features only (what the value head reads). */
  state(state: AgentState): SparseVector {
    return this.turn(state, []).state;
  }

  /** The state's features and each candidate's. */
  turn(state: AgentState, candidates: readonly string[]): TurnFeatures {
    const { groups, historyLength } = this.settings;
    const out = this.builder;
    out.reset();
    const obs = this.analyse(state.observation.text);
    const history = state.history;

    // -- State --
    if (groups.instruction) {
      out.begin(TAG.instruction);
      for (const t of this.instructionTokens(state.instruction)) {
        out.push(this.key(TAG.instruction, t), 1);
      }
    }
    if (groups.observation) {
      out.begin(TAG.obsUnigram);
      for (const t of obs.unigrams) out.push(this.key(TAG.obsUnigram, t), 1);
      out.begin(TAG.obsBigram);
      for (let i = 0; i < obs.bigrams.length; i += 2) {
        out.push(this.key(TAG.obsBigram, obs.bigrams[i], obs.bigrams[i + 1]), 1);
      }
    }
    if (groups.numbers) {
      out.begin(TAG.number);
      const slots = obs.numberSlots;
      for (let i = 0; i < obs.numberValues.length; i++) {
        const key = this.key(TAG.number, slots[3 * i], slots[3 * i + 1], slots[3 * i + 2]);
        out.push(key, obs.numberValues[i] as number);
      }
      out.begin(TAG.tupleCompare);
      const cmp = obs.comparisons;
      for (let i = 0; i < cmp.length; i += 3) {
        out.push(this.key(TAG.tupleCompare, cmp[i], cmp[i + 1], cmp[i + 2]), 1);
      }
    }
    const recent = Math.min(historyLength, history.length);
    if (groups.history && recent > 0) {
      out.begin(TAG.historyToken);
      for (let i = 1; i <= recent; i++) {
        const action = this.analyseAction(historyTurn(history, i).action);
        for (const t of action.tokens) out.push(this.key(TAG.historyToken, i, t), 1);
      }
      out.begin(TAG.historyWhole);
      for (let i = 1; i <= recent; i++) {
        const action = this.analyseAction(historyTurn(history, i).action);
        out.push(this.key(TAG.historyWhole, i, action.whole), 1);
      }
      out.begin(TAG.historyObs);
      for (let i = 2; i <= recent; i++) {
        const produced = this.analyse(historyTurn(history, i).observation.text);
        for (const t of produced.unigrams) out.push(this.key(TAG.historyObs, i, t), 1);
      }
    }
    // Actions taken in an observation like the current one (for the "tried here" features).
    let triedText: Map<number, number> | undefined;
    let triedNumbers: Map<number, number> | undefined;
    if (groups.novelty) {
      let seen = 0;
      for (let j = 0; j + 1 < history.length; j++) {
        if (this.sameText(observationOf(history, j), state.observation, obs)) seen++;
      }
      out.begin(TAG.seenBefore);
      out.push(this.key(TAG.seenBefore, countBucket(seen)), 1);
      triedText = new Map();
      triedNumbers = new Map();
      // history[j]'s action was taken in history[j - 1]'s observation (j = 0's is not known).
      for (let j = 1; j < history.length; j++) {
        const before = this.analyse(observationOf(history, j - 1).text);
        const whole = this.analyseAction((history[j] as Turn).action).whole;
        if (before.textHash === obs.textHash) triedText.set(whole, (triedText.get(whole) ?? 0) + 1);
        if (before.numbersHash === obs.numbersHash) {
          triedNumbers.set(whole, (triedNumbers.get(whole) ?? 0) + 1);
        }
      }
    }
    let takenBefore: Map<number, number> | undefined;
    if (groups.historyAction) {
      takenBefore = new Map();
      for (const turn of history) {
        const whole = this.analyseAction(turn.action).whole;
        takenBefore.set(whole, (takenBefore.get(whole) ?? 0) + 1);
      }
    }
    const stateEnd = out.mark();

    // -- Candidates --
    const ends: number[] = [];
    for (const candidate of candidates) {
      const action = this.analyseAction(candidate);
      if (groups.action) {
        out.begin(TAG.actionUnigram);
        for (const t of action.tokens) out.push(this.key(TAG.actionUnigram, t), 1);
        out.begin(TAG.actionWhole);
        out.push(this.key(TAG.actionWhole, action.whole), 1);
      }
      if (groups.observationAction) {
        out.begin(TAG.obsAction);
        for (const o of obs.unigrams) {
          for (const t of action.tokens) out.push(this.key(TAG.obsAction, o, t), 1);
        }
      }
      if (groups.bigramAction) {
        out.begin(TAG.bigramAction);
        for (let i = 0; i < obs.bigrams.length; i += 2) {
          for (const t of action.tokens) {
            out.push(this.key(TAG.bigramAction, obs.bigrams[i], obs.bigrams[i + 1], t), 1);
          }
        }
      }
      if (groups.numberAction) {
        out.begin(TAG.numberAction);
        const slots = obs.numberSlots;
        for (let i = 0; i < obs.numberValues.length; i++) {
          const value = obs.numberValues[i] as number;
          for (const t of action.tokens) {
            const key = this.key(
              TAG.numberAction,
              slots[3 * i],
              slots[3 * i + 1],
              slots[3 * i + 2],
              t,
            );
            out.push(key, value);
          }
        }
        out.begin(TAG.tupleCompareAction);
        const cmp = obs.comparisons;
        for (let i = 0; i < cmp.length; i += 3) {
          for (const t of action.tokens) {
            out.push(this.key(TAG.tupleCompareAction, cmp[i], cmp[i + 1], cmp[i + 2], t), 1);
          }
        }
      }
      if (groups.historyAction && takenBefore) {
        out.begin(TAG.historyPair);
        for (let i = 1; i <= recent; i++) {
          const previous = this.analyseAction(historyTurn(history, i).action).whole;
          out.push(this.key(TAG.historyPair, i, previous, action.whole), 1);
        }
        out.begin(TAG.repeat);
        for (let i = 1; i <= recent; i++) {
          const previous = this.analyseAction(historyTurn(history, i).action).whole;
          if (previous === action.whole) out.push(this.key(TAG.repeat, i), 1);
        }
        out.begin(TAG.takenBefore);
        out.push(this.key(TAG.takenBefore, countBucket(takenBefore.get(action.whole) ?? 0)), 1);
      }
      if (groups.overlap) this.overlapFeatures(obs, action);
      if (groups.novelty && triedText && triedNumbers) {
        out.begin(TAG.triedText);
        out.push(this.key(TAG.triedText, countBucket(triedText.get(action.whole) ?? 0)), 1);
        out.begin(TAG.triedNumbers);
        out.push(this.key(TAG.triedNumbers, countBucket(triedNumbers.get(action.whole) ?? 0)), 1);
      }
      ends.push(out.mark());
    }

    // One allocation for all vectors of the turn; each vector is a view into it.
    const indices = out.indices.slice(0, out.length);
    const values = out.values.slice(0, out.length);
    const view = (start: number, end: number): SparseVector => ({
      indices: indices.subarray(start, end),
      values: values.subarray(start, end),
    });
    let start = stateEnd;
    const candidateVectors = ends.map((end) => {
      const v = view(start, end);
      start = end;
      return v;
    });
    return { state: view(0, stateEnd), candidates: candidateVectors };
  }

  private overlapFeatures(obs: TextAnalysis, action: ActionAnalysis): void {
    const out = this.builder;
    out.begin(TAG.overlapLine);
    let present = 0;
    const seenHeads = new Set<number>();
    for (const t of new Set(action.tokens)) {
      const heads = obs.lineHeads.get(t);
      if (!heads) continue;
      present++;
      for (const head of heads) {
        if (seenHeads.has(head)) continue;
        seenHeads.add(head);
        out.push(this.key(TAG.overlapLine, action.head, head), 1);
      }
    }
    out.begin(TAG.overlapFraction);
    if (present > 0) {
      out.push(this.key(TAG.overlapFraction, action.head), present / new Set(action.tokens).size);
    }
    out.begin(TAG.verbatim);
    if (action.tokens.length > 0) {
      for (const line of obs.paddedLines) {
        if (line.includes(action.padded)) {
          const head = this.hashToken(line.slice(1, line.indexOf(" ", 1)));
          out.push(this.key(TAG.verbatim, action.head, head), 1);
        }
      }
    }
  }

  private sameText(a: Observation, b: Observation, bAnalysis: TextAnalysis): boolean {
    return a.text === b.text || this.analyse(a.text).textHash === bAnalysis.textHash;
  }

  private instructionTokens(instruction: string): number[] {
    if (instruction !== this.instructionText) {
      this.instructionText = instruction;
      this.instructionHashes = [...new Set(tokenize(instruction).map((t) => this.hashToken(t)))];
    }
    return this.instructionHashes;
  }

  private readonly actionCache = new Map<string, ActionAnalysis>();

  private analyseAction(action: string): ActionAnalysis {
    let found = this.actionCache.get(action);
    if (found === undefined) {
      if (this.actionCache.size >= TEXT_CACHE_SIZE) this.actionCache.clear();
      const tokens = tokenize(action);
      const joined = tokens.join(" ");
      found = {
        tokens: tokens.map((t) => this.hashToken(t)),
        whole: this.hashToken(joined),
        head: this.hashToken(tokens[0] ?? ""),
        padded: ` ${joined} `,
      };
      this.actionCache.set(action, found);
    }
    return found;
  }

  private analyse(text: string): TextAnalysis {
    let found = this.textCache.get(text);
    if (found === undefined) {
      if (this.textCache.size >= TEXT_CACHE_SIZE) this.textCache.clear();
      found = this.analyseText(text);
      this.textCache.set(text, found);
    }
    return found;
  }

  private analyseText(text: string): TextAnalysis {
    const unigramSet = new Set<number>();
    const bigramSet = new Set<string>();
    const bigrams: number[] = [];
    const numberSlots: number[] = [];
    const numberValues: number[] = [];
    const numberGroups: { id: number; values: number[] }[] = [];
    const lineHeads = new Map<number, number[]>();
    const paddedLines: string[] = [];
    const contextSeen = new Map<number, number>();
    let context = this.hashToken("");
    let contextOccurrence = 0;
    let sinceContext = 0;
    let numbersHash = FNV_OFFSET;
    for (const line of text.split("\n")) {
      const tokens = tokenize(line);
      if (tokens.length === 0) continue;
      paddedLines.push(` ${tokens.join(" ")} `);
      const head = this.hashToken(tokens[0] as string);
      let previous: number | undefined;
      for (const token of tokens) {
        const h = this.hashToken(token);
        unigramSet.add(h);
        const heads = lineHeads.get(h);
        if (!heads) lineHeads.set(h, [head]);
        else if (!heads.includes(head)) heads.push(head);
        if (previous !== undefined) {
          const pair = `${previous},${h}`;
          if (!bigramSet.has(pair)) {
            bigramSet.add(pair);
            bigrams.push(previous, h);
          }
        }
        previous = h;
        if (DIGITS_RE.test(token)) {
          const n = Number(token);
          numberSlots.push(context, contextOccurrence, sinceContext);
          numberValues.push(Math.min(n / this.settings.numberScale, NUMBER_VALUE_CAP));
          if (sinceContext === 0)
            numberGroups.push({ id: fnvWord(context, contextOccurrence), values: [] });
          numberGroups[numberGroups.length - 1]?.values.push(n);
          sinceContext++;
          numbersHash = fnvWord(numbersHash, Math.min(n, 0xffffffff));
        } else {
          contextOccurrence = contextSeen.get(h) ?? 0;
          contextSeen.set(h, contextOccurrence + 1);
          context = h;
          sinceContext = 0;
        }
      }
    }
    return {
      unigrams: [...unigramSet],
      bigrams,
      numberSlots,
      numberValues,
      comparisons: compareTuples(numberGroups),
      lineHeads,
      paddedLines,
      textHash: fnv1a32(text, this.saltKey),
      numbersHash,
    };
  }
}

/**
 * Compares tuples (two or more numbers after one context word, like "3, 4") of equal length
 * element by element: the sign of each difference, for the first MAX_TUPLES tuples.
 */
function compareTuples(groups: readonly { id: number; values: number[] }[]): number[] {
  const tuples = groups.filter((g) => g.values.length >= 2).slice(0, MAX_TUPLES);
  const out: number[] = [];
  for (let a = 0; a < tuples.length; a++) {
    for (let b = a + 1; b < tuples.length; b++) {
      const first = tuples[a] as { id: number; values: number[] };
      const second = tuples[b] as { id: number; values: number[] };
      if (first.values.length !== second.values.length) continue;
      const pair = fnvWord(first.id, second.id);
      for (let i = 0; i < first.values.length; i++) {
        out.push(
          pair,
          i,
          Math.sign((second.values[i] as number) - (first.values[i] as number)) + 1,
        );
      }
    }
  }
  return out;
}

/** The turn i steps back from the latest (i = 1 is the latest). */
function historyTurn(history: readonly Turn[], i: number): Turn {
  return history[history.length - i] as Turn;
}

/** The observation history[j]'s action produced. */
function observationOf(history: readonly Turn[], j: number): Observation {
  return (history[j] as Turn).observation;
}

/** The tags of the feature groups (module comment), for tools that recompute features. */
export const FEATURE_TAGS = TAG;
