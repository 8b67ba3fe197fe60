/**
 * A 64-bit non-cryptographic hash of bytes in plain 32-bit JS arithmetic
 * (Math.imul, shifts, adds), so every Node line and every platform gives the
 * same result, without BigInt or a string.
 *
 * xxHash32's layout, widened: the bytes are read in 16-byte stripes of four
 * little-endian words, one per lane (the last stripe padded with zeros, the
 * length mixed in at the end); each lane takes xxHash32's round (add the
 * word times a prime, rotate, multiply). After each stripe the lanes are
 * added into one another (a += d, b += a, c += b, d += c), so a change in
 * any word reaches all 128 bits of state before the next stripe: two inputs
 * collide only if a later stripe cancels the difference in every lane at
 * once (about 2^-128 for data not made for it), or in the final fold to 64
 * bits (2^-64). One round per word and four independent chains keep it to
 * about a quarter of a nanosecond per byte in V8.
 */

import { DataViewCache } from './data-view-cache.js';

const PRIME_1 = 0x9e3779b1;
const PRIME_2 = 0x85ebca77;
/** Start values of the lanes: the first digits of pi, as any fixed distinct words would do. */
const SEED_A = 0x243f6a88;
const SEED_B = 0x85a308d3;
const SEED_C = 0x13198a2e;
const SEED_D = 0x03707344;
const STRIPE = 16;

function round(lane: number, word: number): number {
  const x = (lane + Math.imul(word, PRIME_2)) | 0;
  return Math.imul((x << 13) | (x >>> 19), PRIME_1);
}

function rotl(x: number, bits: number): number {
  return (x << bits) | (x >>> (32 - bits));
}

/** The little-endian word of bytes[i, i + 4), zeros past `end`: the last stripe's. */
function tailWord(bytes: Uint8Array, i: number, end: number): number {
  let word = 0;
  for (let k = 0; k < 4 && i + k < end; k++) word |= bytes[i + k] << (8 * k);
  return word;
}

/** murmur3's finaliser: every input bit reaches every output bit. */
function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * The hash of a byte sequence given in pieces: `begin`, `add` each range,
 * `end`; then `hi` and `lo` hold it (unsigned). Pieces hash as their
 * concatenation, so bytes left out between two ranges leave no trace. Holds
 * its lanes and a view of the last buffer read: reuse one per stream, and
 * hashing allocates nothing.
 */
export class Hash64 {
  hi = 0;
  lo = 0;
  private a = SEED_A;
  private b = SEED_B;
  private c = SEED_C;
  private d = SEED_D;
  private length = 0;
  /** Bytes of a stripe not complete yet (a range ended inside it). */
  private readonly pending = new Uint8Array(STRIPE);
  private readonly pendingView = new DataView(this.pending.buffer);
  private pendingLength = 0;
  private readonly views = new DataViewCache();

  /** The hash of bytes[start, end) alone: the per-record path, in one loop with the lanes in locals. */
  of(bytes: Uint8Array, start: number, end: number): void {
    const view = this.views.of(bytes);
    const base = bytes.byteOffset;
    let a = SEED_A;
    let b = SEED_B;
    let c = SEED_C;
    let d = SEED_D;
    let p = base + start;
    for (const last = base + end - STRIPE; p <= last; p += STRIPE) {
      a = round(a, view.getInt32(p, true));
      b = round(b, view.getInt32(p + 4, true));
      c = round(c, view.getInt32(p + 8, true));
      d = round(d, view.getInt32(p + 12, true));
      a = (a + d) | 0;
      b = (b + a) | 0;
      c = (c + b) | 0;
      d = (d + c) | 0;
    }
    const i = p - base;
    if (i < end) {
      a = round(a, tailWord(bytes, i, end));
      b = round(b, tailWord(bytes, i + 4, end));
      c = round(c, tailWord(bytes, i + 8, end));
      d = round(d, tailWord(bytes, i + 12, end));
      a = (a + d) | 0;
      b = (b + a) | 0;
      c = (c + b) | 0;
      d = (d + c) | 0;
    }
    this.finish(a, b, c, d, end - start);
  }

  begin(): void {
    this.a = SEED_A;
    this.b = SEED_B;
    this.c = SEED_C;
    this.d = SEED_D;
    this.length = 0;
    this.pendingLength = 0;
  }

  add(bytes: Uint8Array, start: number, end: number): void {
    if (end <= start) return;
    this.length += end - start;
    const pending = this.pending;
    let n = this.pendingLength;
    let i = start;
    if (n > 0) {
      while (i < end && n < STRIPE) pending[n++] = bytes[i++];
      if (n < STRIPE) {
        this.pendingLength = n;
        return;
      }
      this.stripes(this.pendingView, 0, 0);
      n = 0;
    }
    if (end - i >= STRIPE) {
      const base = bytes.byteOffset;
      i = this.stripes(this.views.of(bytes), base + i, base + end - STRIPE) - base;
    }
    while (i < end) pending[n++] = bytes[i++];
    this.pendingLength = n;
  }

  end(): void {
    if (this.pendingLength > 0) {
      for (let k = this.pendingLength; k < STRIPE; k++) this.pending[k] = 0;
      this.stripes(this.pendingView, 0, 0);
    }
    this.finish(this.a, this.b, this.c, this.d, this.length);
  }

  /** Folds the lanes and the length into hi and lo. */
  private finish(a: number, b: number, c: number, d: number, length: number): void {
    let h = avalanche((rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + length) | 0);
    let l = avalanche((rotl(a, 18) + rotl(b, 12) + rotl(c, 7) + rotl(d, 1)) ^ length ^ PRIME_1);
    h = (h + l) | 0;
    l = (l + h) | 0;
    this.hi = h >>> 0;
    this.lo = l >>> 0;
  }

  /** Hashes the stripes at view offsets p, p + 16, ... up to `last` (included): where they stop. The per-record loop: lanes in locals. */
  private stripes(view: DataView<ArrayBufferLike>, p: number, last: number): number {
    let a = this.a;
    let b = this.b;
    let c = this.c;
    let d = this.d;
    for (; p <= last; p += STRIPE) {
      a = round(a, view.getInt32(p, true));
      b = round(b, view.getInt32(p + 4, true));
      c = round(c, view.getInt32(p + 8, true));
      d = round(d, view.getInt32(p + 12, true));
      a = (a + d) | 0;
      b = (b + a) | 0;
      c = (c + b) | 0;
      d = (d + c) | 0;
    }
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
    return p;
  }
}

/** The hash of bytes[start, end) into `out`; for occasional use (it makes a Hash64): a stream's loop keeps one. */
export function hash64(bytes: Uint8Array, start: number, end: number, out: { hi: number; lo: number }): void {
  const hash = new Hash64();
  hash.of(bytes, start, end);
  out.hi = hash.hi;
  out.lo = hash.lo;
}
