/**
 * Small, fast, seedable PRNG. Every synthetic record is generated from its own
 * generator seeded by (seed, salt, index), so any record can be produced on
 * its own, in any order, without state shared between records.
 */

/** murmur3 finaliser: a cheap 32-bit avalanche mix. */
export function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hashes a list of non-negative integers (each up to 2^53) into 32 bits. */
export function hashInts(...values: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const v of values) {
    const lo = v >>> 0;
    const hi = Math.floor(v / 0x1_0000_0000) >>> 0;
    h = mix32(h ^ lo);
    h = mix32((h + 0x7f4a7c15) ^ hi);
  }
  return h;
}

/** Stable 32-bit hash of a string (salts are written as names, not numbers). */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  }
  return mix32(h);
}

/** mulberry32: good enough statistical quality for synthetic data, very fast. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
}

/** Generator for one (seed, salt, index) triple. */
export function rngFor(seed: number, salt: string, index: number): Rng {
  return new Rng(hashInts(seed >>> 0, hashString(salt), index));
}
