import { describe, expect, it } from 'vitest';
import { Hash64, hash64 } from '../../src/records/hash64.js';
import { seeded } from '../helpers/random.js';

function hex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const out = { hi: 0, lo: 0 };
  hash64(bytes, start, end, out);
  return `${out.hi.toString(16).padStart(8, '0')}${out.lo.toString(16).padStart(8, '0')}`;
}

function randomBytes(random: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
}

/** The hash as its comment defines it, a byte at a time: what the DataView loops must equal. */
function reference(bytes: Uint8Array): string {
  const round = (lane: number, word: number): number => {
    const x = (lane + Math.imul(word, 0x85ebca77)) | 0;
    return Math.imul((x << 13) | (x >>> 19), 0x9e3779b1);
  };
  const rotl = (x: number, n: number): number => (x << n) | (x >>> (32 - n));
  const avalanche = (h: number): number => {
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return h ^ (h >>> 16);
  };
  const lanes = [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344];
  const word = (i: number): number => (bytes[i] ?? 0) | ((bytes[i + 1] ?? 0) << 8) | ((bytes[i + 2] ?? 0) << 16) | ((bytes[i + 3] ?? 0) << 24);
  for (let p = 0; p < bytes.length; p += 16) {
    for (let k = 0; k < 4; k++) lanes[k] = round(lanes[k], word(p + 4 * k));
    for (let k = 0; k < 4; k++) lanes[k] = (lanes[k] + lanes[(k + 3) % 4]) | 0;
  }
  const [a, b, c, d] = lanes;
  let h = avalanche((rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + bytes.length) | 0);
  let l = avalanche((rotl(a, 18) + rotl(b, 12) + rotl(c, 7) + rotl(d, 1)) ^ bytes.length ^ 0x9e3779b1);
  h = (h + l) | 0;
  l = (l + h) | 0;
  return `${(h >>> 0).toString(16).padStart(8, '0')}${(l >>> 0).toString(16).padStart(8, '0')}`;
}

describe('hash64', () => {
  it('gives the pinned values, so a change store written by one tap version or Node line is read alike by another', () => {
    const pinned: Array<[string, string]> = [
      ['', '83c4010bd57d88b3'],
      ['a', '920e4c82c5088bc1'],
      ['0123456789abcde', '4261015c0ab76a94'],
      ['0123456789abcdef', '9fb22615915c71b6'],
      ['0123456789abcdef0', '01cdf9f3b8fb8a12'],
      ['["usr-0000250","prog-02","mod-02-02"]', '857885f2b8dc685d'],
      ['{"userId":"usr-0000000","email":"soren.schroder.0@example.com","firstName":"Søren"}', '09192856ea8a3916'],
    ];
    for (const [text, value] of pinned) expect(hex(Buffer.from(text)), text).toBe(value);
  });

  it('equals its byte-by-byte definition at every length and at every offset in the buffer', () => {
    const random = seeded(64);
    const bytes = randomBytes(random, 200);
    for (let length = 0; length <= 70; length++) {
      for (let offset = 0; offset < 9; offset++) {
        expect(hex(bytes, offset, offset + length), `${length} bytes at ${offset}`).toBe(reference(bytes.subarray(offset, offset + length)));
      }
    }
    // At the very end of an ArrayBuffer whose length is not a multiple of 4: no read past it.
    for (let length = 0; length < 40; length++) {
      const exact = Buffer.from(new Uint8Array(bytes.subarray(0, length)).buffer);
      expect(hex(exact), `${length} bytes alone`).toBe(reference(bytes.subarray(0, length)));
    }
  });

  it('hashes pieces as their concatenation, whatever the cuts', () => {
    const random = seeded(7);
    const hash = new Hash64();
    for (let round = 0; round < 300; round++) {
      const bytes = randomBytes(random, Math.floor(random() * 80));
      const cuts = [0, Math.floor(random() * (bytes.length + 1)), Math.floor(random() * (bytes.length + 1)), bytes.length].sort((x, y) => x - y);
      hash.begin();
      for (let k = 0; k + 1 < cuts.length; k++) hash.add(bytes, cuts[k], cuts[k + 1]);
      hash.end();
      const whole = { hi: 0, lo: 0 };
      hash64(bytes, 0, bytes.length, whole);
      expect([hash.hi, hash.lo], `cuts ${cuts.join(',')} of ${bytes.length}`).toEqual([whole.hi, whole.lo]);
    }
  });

  it('changes with every bit of the input and with its length (zeros added)', () => {
    const random = seeded(99);
    const seen = new Set<string>();
    let inputs = 0;
    for (let round = 0; round < 40; round++) {
      const bytes = randomBytes(random, 1 + Math.floor(random() * 60));
      const original = hex(bytes);
      seen.add(original);
      inputs++;
      for (let bit = 0; bit < bytes.length * 8; bit++) {
        bytes[bit >> 3] ^= 1 << (bit & 7);
        const flipped = hex(bytes);
        expect(flipped).not.toBe(original);
        seen.add(flipped);
        inputs++;
        bytes[bit >> 3] ^= 1 << (bit & 7);
      }
      expect(hex(Buffer.concat([bytes, Buffer.alloc(1)]))).not.toBe(original);
    }
    for (let length = 0; length < 40; length++, inputs++) seen.add(hex(Buffer.alloc(length)));
    // No two of the ten thousand inputs above (all different) share a value.
    expect(inputs).toBeGreaterThan(10_000);
    expect(seen.size).toBe(inputs);
  });
});
