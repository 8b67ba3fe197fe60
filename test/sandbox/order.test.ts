import { describe, expect, it } from 'vitest';
import { groupedRows, isOrderName, ORDERS, rowAt, shuffledRows, sortedRows } from '../../sandbox/order.js';

/** Keys with nulls, ties, negative values and one large value. */
const KEYS: readonly (number | null)[] = [30, null, 10, 30, -5, null, 10, 2 ** 40, 0, 30];
const keyAt = (i: number): number | null => KEYS[i];

const isPermutation = (rows: Uint32Array, count: number): boolean =>
  rows.length === count && [...rows].sort((a, b) => a - b).every((v, i) => v === i);

describe('sortedRows', () => {
  it('ascending: nulls first, then by key, ties in index order', () => {
    expect([...sortedRows(KEYS.length, keyAt, false)]).toEqual([1, 5, 4, 8, 2, 6, 0, 3, 9, 7]);
  });

  it('descending: by key, newest first, ties in index order, nulls last', () => {
    expect([...sortedRows(KEYS.length, keyAt, true)]).toEqual([7, 0, 3, 9, 2, 6, 8, 4, 1, 5]);
  });

  it('handles no rows, one row, all nulls and all ties', () => {
    expect([...sortedRows(0, keyAt, false)]).toEqual([]);
    expect([...sortedRows(1, () => 7, true)]).toEqual([0]);
    expect([...sortedRows(4, () => null, true)]).toEqual([0, 1, 2, 3]);
    expect([...sortedRows(4, () => 3, false)]).toEqual([0, 1, 2, 3]);
  });

  it('sorts a larger random set like a comparison sort does', () => {
    const keys = Array.from({ length: 5000 }, (_, i) => ((i * 7919) % 97 === 0 ? null : ((i * 104729) % 613) * 300));
    const expected = keys.map((_, i) => i).sort((a, b) => (keys[a] ?? -Infinity) - (keys[b] ?? -Infinity) || a - b);
    expect([...sortedRows(keys.length, (i) => keys[i], false)]).toEqual(expected);
  });
});

describe('groupedRows', () => {
  it('puts each group together, groups in order of first appearance, rows in index order', () => {
    const groups = ['b', 'a', 'b', 'c', 'a', 'b'];
    expect([...groupedRows(groups.length, (i) => groups[i])]).toEqual([0, 2, 5, 1, 4, 3]);
  });

  it('is index order when each group is contiguous already', () => {
    const groups = ['x', 'x', 'y', 'z', 'z'];
    expect([...groupedRows(groups.length, (i) => groups[i])]).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('shuffledRows', () => {
  it('is a permutation, the same for the same seed and size', () => {
    const a = shuffledRows(1000, 7);
    expect(isPermutation(a, 1000)).toBe(true);
    expect(shuffledRows(1000, 7)).toEqual(a);
  });

  it('depends on the seed and moves most rows', () => {
    const a = shuffledRows(1000, 7);
    expect(shuffledRows(1000, 8)).not.toEqual(a);
    expect([...a].filter((row, position) => row === position).length).toBeLessThan(20);
  });

  it('handles no rows and one row', () => {
    expect([...shuffledRows(0, 1)]).toEqual([]);
    expect([...shuffledRows(1, 1)]).toEqual([0]);
  });
});

describe('order names', () => {
  it('knows the five orders, generated first (the default)', () => {
    expect(ORDERS).toEqual(['generated', 'ascending', 'descending', 'shuffled', 'grouped']);
    expect(isOrderName('shuffled')).toBe(true);
    expect(isOrderName('random')).toBe(false);
  });

  it('rowAt reads an order, or index order for null', () => {
    expect(rowAt(null, 5)).toBe(5);
    expect(rowAt(Uint32Array.of(2, 0, 1), 1)).toBe(0);
  });
});
