/**
 * Seeded pseudo-random numbers, so that (env version, task index, seed) fixes an episode.
 * sfc32 seeded through splitmix32: fast, small state, good statistical quality.
 */

export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
}

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** Mixes any number of integer keys (e.g. task index, seed, a purpose tag) into one 32-bit seed. */
export function mixSeeds(...keys: number[]): number {
  let h = 0x811c9dc5;
  for (const key of keys) {
    const next = splitmix32(h ^ (key >>> 0) ^ Math.floor(key / 2 ** 32));
    h = next();
  }
  return h >>> 0;
}

/** A generator fixed by the given integer keys. */
export function createRng(...keys: number[]): Rng {
  const seedWords = splitmix32(mixSeeds(...keys));
  let a = seedWords();
  let b = seedWords();
  let c = seedWords();
  let d = seedWords();
  const next32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) next32();
  const next = () => next32() / 2 ** 32;
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError("pick from an empty list");
      return items[int(items.length)] as T;
    },
    shuffle: <T>(items: readonly T[]): T[] => {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(i + 1);
        [out[i], out[j]] = [out[j] as T, out[i] as T];
      }
      return out;
    },
  };
}
