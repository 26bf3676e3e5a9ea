/**
 * createRng's generator (src/env/rng.ts: sfc32 seeded through splitmix32 from mixSeeds), with its
 * state in a typed array and its methods on a class. The numbers are the same (a test checks it);
 * a draw is about ten times faster, because V8 boxes uint32 values held in closure variables and
 * allocates on every step. A decision over 10,000 nodes draws some 40,000 uniforms, and each
 * decision makes a generator of its own, so this matters here.
 */
import { mixSeeds, type Rng } from "../../env/rng.js";

export class FastRng implements Rng {
  private readonly state = new Uint32Array(4);

  constructor(...keys: number[]) {
    let seed = mixSeeds(...keys);
    for (let i = 0; i < 4; i++) {
      seed = (seed + 0x9e3779b9) >>> 0;
      let z = seed;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.state[i] = (z ^ (z >>> 16)) >>> 0;
    }
    for (let i = 0; i < 12; i++) this.next32();
  }

  private next32(): number {
    const state = this.state;
    const a = state[0] as number;
    const b = state[1] as number;
    const c = state[2] as number;
    const d = state[3] as number;
    const t = (((a + b) >>> 0) + d) >>> 0;
    state[3] = d + 1;
    state[0] = b ^ (b >>> 9);
    state[1] = c + (c << 3);
    state[2] = ((c << 21) | (c >>> 11)) + t;
    return t;
  }

  next(): number {
    return this.next32() / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick from an empty list");
    return items[this.int(items.length)] as T;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }
}

/** A generator fixed by the given integer keys: createRng(...keys)'s numbers. */
export function createFastRng(...keys: number[]): Rng {
  return new FastRng(...keys);
}
