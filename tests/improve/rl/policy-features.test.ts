/**
 * The policy's text features: the documented tokeniser and hash, stable buckets, determinism,
 * the interaction and history features doing what they claim, and genericity (no environment's
 * names or words in the featuriser, and features that depend on text only up to renaming).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AgentState, Turn } from "../../../src/agent/types.js";
import { BUILTIN_ENVS } from "../../../src/env/registry.js";
import {
  defaultFeatureSettings,
  FEATURE_TAGS,
  Featurizer,
  fmix32,
  fnv1a32,
  type SparseVector,
  tokenize,
} from "../../../src/improve/rl/policy/features.js";

const SETTINGS = defaultFeatureSettings();

function state(text: string, history: Turn[] = [], instruction = "Pick a door."): AgentState {
  return { instruction, observation: { text }, history };
}

function turn(action: string, text: string): Turn {
  return { action, message: action, observation: { text }, reward: 0 };
}

/** Index → summed value, so vectors compare regardless of order. */
function asMap(v: SparseVector): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i < v.indices.length; i++) {
    m.set(v.indices[i] as number, (m.get(v.indices[i] as number) ?? 0) + (v.values[i] as number));
  }
  return m;
}

function has(f: Featurizer, v: SparseVector, tag: number, ...words: number[]): boolean {
  const bucket = f.bucket(f.key(tag, ...words));
  return Array.from(v.indices).includes(bucket);
}

describe("tokens and hashes", () => {
  it("tokenises into lowercase runs of letters or digits", () => {
    expect(tokenize("The light is RED, 6x6 go-left! Élan 42.")).toEqual([
      "the",
      "light",
      "is",
      "red",
      "6",
      "x",
      "6",
      "go",
      "left",
      "élan",
      "42",
    ]);
    expect(tokenize("  ...  ")).toEqual([]);
  });

  it("is FNV-1a 32-bit over UTF-8 (published test vectors)", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    let h = 0x811c9dc5;
    for (const byte of Buffer.from("é😀x", "utf8")) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    expect(fnv1a32("é😀x")).toBe(h);
    expect(fmix32(0)).toBe(0);
  });

  it("puts a fixed input in fixed buckets (changing the recipe breaks saved policies)", () => {
    const f = new Featurizer(SETTINGS);
    const features = f.turn(
      {
        instruction: "Pick a door.",
        observation: { text: "The red door is 2 steps ahead." },
        history: [],
      },
      ["open red door", "wait"],
    );
    expect(Array.from(features.state.indices)).toEqual([
      23540, 15028, 8969, 10447, 26271, 6991, 15312, 25219, 4215, 6342, 6193, 3205, 14749, 29856,
      13898, 4110, 16900, 19579,
    ]);
    expect(Array.from(features.state.values.subarray(0, 3))).toEqual([
      Math.fround(1 / Math.sqrt(3)),
      Math.fround(1 / Math.sqrt(3)),
      Math.fround(1 / Math.sqrt(3)),
    ]);
    // The number slot: 2 / numberScale, alone in its block.
    expect(features.state.values[16]).toBe(Math.fround(0.2));
  });

  it("a different salt gives different buckets", () => {
    const a = new Featurizer(SETTINGS).turn(state("the light is red"), ["go"]);
    const b = new Featurizer(defaultFeatureSettings({ salt: 1 })).turn(state("the light is red"), [
      "go",
    ]);
    expect(Array.from(a.state.indices)).not.toEqual(Array.from(b.state.indices));
  });
});

describe("featurising turns", () => {
  const history = [
    turn("go north", "You are in the hall at 1, 2. Exits: north, south."),
    turn("go south", "You are in the yard at 2, 2. Exits: north."),
  ];
  const s = state("You are in the yard at 2, 2. Exits: north.", history);
  const candidates = ["go north", "go south", "wait"];

  it("is deterministic, and caches never change the result", () => {
    const warm = new Featurizer(SETTINGS);
    for (let i = 0; i < 3; i++) warm.turn(s, candidates);
    const a = warm.turn(s, candidates);
    const b = new Featurizer(SETTINGS).turn(s, candidates);
    expect(Array.from(a.state.indices)).toEqual(Array.from(b.state.indices));
    expect(Array.from(a.state.values)).toEqual(Array.from(b.state.values));
    expect(a.candidates.map((c) => Array.from(c.indices))).toEqual(
      b.candidates.map((c) => Array.from(c.indices)),
    );
    expect(a.candidates.map((c) => Array.from(c.values))).toEqual(
      b.candidates.map((c) => Array.from(c.values)),
    );
  });

  it("gives every candidate its own vector and keeps indices in range", () => {
    const f = new Featurizer(defaultFeatureSettings({ dim: 1000 }));
    const features = f.turn(s, candidates);
    expect(features.candidates).toHaveLength(3);
    for (const v of [features.state, ...features.candidates]) {
      expect(v.indices.length).toBeGreaterThan(0);
      expect(v.indices.length).toBe(v.values.length);
      for (const i of v.indices) expect(i >= 0 && i < 1000).toBe(true);
      for (const x of v.values) expect(Number.isFinite(x)).toBe(true);
    }
    expect(asMap(features.candidates[0] as SparseVector)).not.toEqual(
      asMap(features.candidates[1] as SparseVector),
    );
    expect(f.state(s).indices).toEqual(features.state.indices);
  });

  it("scales each feature block to unit norm", () => {
    const f = new Featurizer(
      defaultFeatureSettings({
        groups: {
          instruction: false,
          observation: true,
          numbers: false,
          history: false,
          action: false,
          observationAction: false,
          bigramAction: false,
          numberAction: false,
          historyAction: false,
          overlap: false,
          novelty: false,
        },
      }),
    );
    const v = f.state(state("one two three four")); // 4 unigrams, 3 bigrams
    let squares = 0;
    for (const x of v.values) squares += x * x;
    expect(squares).toBeCloseTo(2, 6);
  });

  it("observation × action interactions tell 'blocked on the left' from 'blocked on the right'", () => {
    const f = new Featurizer(SETTINGS);
    const left = f.turn(state("There is a rock to your left."), ["step left"]);
    const right = f.turn(state("There is a rock to your right."), ["step left"]);
    expect(asMap(left.candidates[0] as SparseVector)).not.toEqual(
      asMap(right.candidates[0] as SparseVector),
    );
    const left0 = left.candidates[0] as SparseVector;
    const t = (x: string) => f.hashToken(x);
    expect(has(f, left0, FEATURE_TAGS.obsAction as number, t("left"), t("left"))).toBe(true);
    expect(
      has(f, left0, FEATURE_TAGS.bigramAction as number, t("your"), t("left"), t("left")),
    ).toBe(true);

    // Without the interaction groups the candidate's own features ignore the observation.
    const plain = new Featurizer(
      defaultFeatureSettings({
        groups: {
          ...SETTINGS.groups,
          observationAction: false,
          bigramAction: false,
          numberAction: false,
          overlap: false,
        },
      }),
    );
    expect(
      asMap(
        plain.turn(state("There is a rock to your left."), ["step left"])
          .candidates[0] as SparseVector,
      ),
    ).toEqual(
      asMap(
        plain.turn(state("There is a rock to your right."), ["step left"])
          .candidates[0] as SparseVector,
      ),
    );
  });

  it("numbers become slots valued n / numberScale, keyed by context word and order", () => {
    const f = new Featurizer(SETTINGS);
    const v = f.state(state("Target at 5, 1. You at 4, 4."));
    const at = f.hashToken("at");
    const slot = (occurrence: number, index: number) =>
      asMap(v).get(f.bucket(f.key(FEATURE_TAGS.number as number, at, occurrence, index)));
    // Four numbers in the block: each value is n / 10 / √4.
    expect(slot(0, 0)).toBeCloseTo(0.5 / 2, 6);
    expect(slot(0, 1)).toBeCloseTo(0.1 / 2, 6);
    expect(slot(1, 0)).toBeCloseTo(0.4 / 2, 6);
    expect(slot(1, 1)).toBeCloseTo(0.4 / 2, 6);
  });

  it("compares number tuples element by element (which way is the target?)", () => {
    const f = new Featurizer(SETTINGS);
    const features = f.turn(state("Target at 5, 1. You at 3, 4."), ["step"]);
    const at = f.hashToken("at");
    const fnvWord = (h: number, w: number) => {
      let x = h;
      for (let k = 0; k < 4; k++) x = Math.imul(x ^ ((w >>> (8 * k)) & 0xff), 0x01000193) >>> 0;
      return x;
    };
    const pair = fnvWord(fnvWord(at, 0), fnvWord(at, 1));
    const tag = FEATURE_TAGS.tupleCompare;
    // 3 − 5 < 0 → sign code 0; 4 − 1 > 0 → sign code 2.
    expect(has(f, features.state, tag, pair, 0, 0)).toBe(true);
    expect(has(f, features.state, tag, pair, 1, 2)).toBe(true);
    expect(has(f, features.state, tag, pair, 0, 2)).toBe(false);
    const step = features.candidates[0] as SparseVector;
    expect(has(f, step, FEATURE_TAGS.tupleCompareAction, pair, 0, 0, f.hashToken("step"))).toBe(
      true,
    );
  });

  it("history features: recency-tagged actions, repeats and pairs with the candidate", () => {
    const f = new Featurizer(SETTINGS);
    const features = f.turn(s, candidates);
    const whole = (a: string) => f.hashToken(a);
    const [north, south, wait] = features.candidates as SparseVector[];
    expect(has(f, features.state, FEATURE_TAGS.historyWhole as number, 1, whole("go south"))).toBe(
      true,
    );
    expect(has(f, features.state, FEATURE_TAGS.historyWhole as number, 2, whole("go north"))).toBe(
      true,
    );
    expect(has(f, south as SparseVector, FEATURE_TAGS.repeat as number, 1)).toBe(true);
    expect(has(f, north as SparseVector, FEATURE_TAGS.repeat as number, 2)).toBe(true);
    expect(has(f, wait as SparseVector, FEATURE_TAGS.repeat as number, 1)).toBe(false);
    expect(
      has(
        f,
        wait as SparseVector,
        FEATURE_TAGS.historyPair as number,
        1,
        whole("go south"),
        whole("wait"),
      ),
    ).toBe(true);
    expect(has(f, north as SparseVector, FEATURE_TAGS.takenBefore as number, 1)).toBe(true);
    expect(has(f, wait as SparseVector, FEATURE_TAGS.takenBefore as number, 0)).toBe(true);
  });

  it("novelty: knows an action already tried in this very observation", () => {
    const f = new Featurizer(SETTINGS);
    const here = "You are in the yard at 2, 2. Exits: north.";
    const loop = [
      turn("go north", here),
      turn("go north", "You are in the hall at 1, 2. Exits: south."),
      turn("go south", here),
    ];
    // "go north" was taken in `here` (turn 1's action, taken after turn 0's observation).
    const features = f.turn(state(here, loop), ["go north", "wait"]);
    const [north, wait] = features.candidates as SparseVector[];
    expect(has(f, north as SparseVector, FEATURE_TAGS.triedText as number, 1)).toBe(true);
    expect(has(f, wait as SparseVector, FEATURE_TAGS.triedText as number, 0)).toBe(true);
    expect(has(f, features.state, FEATURE_TAGS.seenBefore as number, 1)).toBe(true);
  });

  it("overlap: an action naming what a line mentions, and an action quoted verbatim", () => {
    const f = new Featurizer(SETTINGS);
    const text =
      "Target: fetch the blue cup.\nYou see a red jar and a blue cup.\nrecipes:\nmix 1 tea using 2 leaf";
    const features = f.turn(state(text), [
      "take blue cup",
      "take red jar",
      "mix 1 tea using 2 leaf",
    ]);
    const t = (x: string) => f.hashToken(x);
    const [blue, red, mix] = features.candidates as SparseVector[];
    expect(
      has(f, blue as SparseVector, FEATURE_TAGS.overlapLine as number, t("take"), t("target")),
    ).toBe(true);
    expect(
      has(f, red as SparseVector, FEATURE_TAGS.overlapLine as number, t("take"), t("target")),
    ).toBe(false);
    expect(
      has(f, red as SparseVector, FEATURE_TAGS.overlapLine as number, t("take"), t("you")),
    ).toBe(true);
    expect(has(f, mix as SparseVector, FEATURE_TAGS.verbatim as number, t("mix"), t("mix"))).toBe(
      true,
    );
    expect(has(f, blue as SparseVector, FEATURE_TAGS.verbatim as number, t("take"), t("you"))).toBe(
      false,
    );
  });

  it("history length 0 and no candidates are fine", () => {
    const f = new Featurizer(defaultFeatureSettings({ historyLength: 0 }));
    const features = f.turn(s, []);
    expect(features.candidates).toEqual([]);
    expect(features.state.indices.length).toBeGreaterThan(0);
  });

  it("overrides keep the other groups on", () => {
    const settings = defaultFeatureSettings({ dim: 64, groups: { instruction: false } });
    expect(settings.groups).toEqual({ ...SETTINGS.groups, instruction: false });
    expect(settings.dim).toBe(64);
  });

  it("refuses bad settings with one line", () => {
    expect(() => defaultFeatureSettings({ dim: 0 })).toThrow(/^feature settings: bad dim 0$/);
    expect(() => new Featurizer({ ...SETTINGS, scheme: "x" } as never)).toThrow(/unknown scheme/);
    expect(
      () => new Featurizer({ ...SETTINGS, groups: { ...SETTINGS.groups, novelty: 1 } } as never),
    ).toThrow(/group novelty/);
  });
});

describe("genericity", () => {
  it("the featuriser's source names no environment and none of their words", () => {
    const source = readFileSync(
      new URL("../../../src/improve/rl/policy/features.ts", import.meta.url),
      "utf8",
    ).toLowerCase();
    const names = BUILTIN_ENVS.map((def) => def.info.name.toLowerCase());
    expect(names.length).toBeGreaterThan(3);
    const words = [
      ...names,
      "echo",
      "wall",
      "walls",
      "goal",
      "maze",
      "grid",
      "craft",
      "crafting",
      "inventory",
      "door",
      "ball",
      "box",
      "guess",
      "query",
      "todo",
      "north",
      "south",
      "move",
    ];
    for (const word of words) expect(source).not.toMatch(new RegExp(`\\b${word}\\b`));
  });

  it("features depend on the text only up to a renaming of its words", () => {
    // A consistent renaming of every word keeps the number of features and their values.
    const rename = (text: string) =>
      text.replace(/\p{L}+/gu, (w) => `z${[...w.toLowerCase()].reverse().join("")}`);
    const history = [
      turn("go north", "You are in the hall at 1, 2."),
      turn("go south", "You are in the yard at 2, 2."),
    ];
    const original = state(
      "You are in the yard at 2, 2.\nA lamp lies here.",
      history,
      "Find the lamp.",
    );
    const renamed: AgentState = {
      instruction: rename(original.instruction),
      observation: { text: rename(original.observation.text) },
      history: history.map((h) => turn(rename(h.action), rename(h.observation.text))),
    };
    const f = new Featurizer(SETTINGS);
    const a = f.turn(original, ["go north", "take lamp"]);
    const b = f.turn(renamed, ["go north", "take lamp"].map(rename));
    const sorted = (v: SparseVector) => Array.from(v.values).sort();
    expect(sorted(b.state)).toEqual(sorted(a.state));
    for (let c = 0; c < 2; c++) {
      expect(sorted(b.candidates[c] as SparseVector)).toEqual(
        sorted(a.candidates[c] as SparseVector),
      );
    }
  });
});
