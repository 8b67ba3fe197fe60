import { describe, expect, it } from 'vitest';
import { KeyTable } from '../../src/store/key-table.js';
import { seeded } from '../helpers/random.js';

/** Keys at a stride, as the store keeps them: hi, lo, then other numbers. */
function keysOf(pairs: ReadonlyArray<readonly [number, number]>, stride: number): Uint32Array {
  const keys = new Uint32Array(pairs.length * stride);
  pairs.forEach(([hi, lo], row) => {
    keys[row * stride] = hi;
    keys[row * stride + 1] = lo;
    keys[row * stride + 2] = 0xdeadbeef;
  });
  return keys;
}

function filled(keys: Uint32Array, stride: number, rows: number): KeyTable {
  const table = new KeyTable(keys, stride, rows);
  for (let row = 0; row < rows; row++) table.put(table.slotOf(keys[row * stride], keys[row * stride + 1]), row);
  return table;
}

describe('KeyTable', () => {
  it('finds every row by its 64-bit key, and no key it does not hold (a seeded 100,000)', () => {
    const random = seeded(29);
    const u32 = () => Math.floor(random() * 2 ** 32);
    const pairs = Array.from({ length: 100_000 }, () => [u32(), u32()] as const);
    const keys = keysOf(pairs, 4);
    const table = filled(keys, 4, pairs.length);
    pairs.forEach(([hi, lo], row) => expect(table.find(hi, lo)).toBe(row));
    for (let i = 0; i < 1000; i++) expect(table.find(u32(), u32())).toBe(-1);
  });

  it('tells keys apart that share either half, and fills up to its rows without looping (worst case: every key in one slot)', () => {
    const pairs = [
      [1, 7],
      [2, 7],
      [7, 1],
      [0, 0],
      [0xffffffff, 7],
    ] as const;
    const table = filled(keysOf(pairs, 2), 2, pairs.length);
    pairs.forEach(([hi, lo], row) => expect(table.find(hi, lo)).toBe(row));
    expect(table.find(7, 7)).toBe(-1);
    expect(table.find(1, 1)).toBe(-1);
  });

  it('answers -1 when empty, and a slot once given another row names that row', () => {
    const keys = keysOf([[5, 6]], 2);
    const table = new KeyTable(keys, 2, 0);
    expect(table.find(5, 6)).toBe(-1);
    const slot = table.slotOf(5, 6);
    expect(table.rowAt(slot)).toBe(-1);
    table.put(slot, 0);
    expect(table.rowAt(table.slotOf(5, 6))).toBe(0);
  });
});
