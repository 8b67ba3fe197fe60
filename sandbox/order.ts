import { rngFor } from './prng.js';

/**
 * The orders the sandbox can serve a dump's rows in. The records are the same
 * in every order; only their sequence changes, so a client can be tested (and
 * timed) on the orders real exports have:
 * - generated (default): row-index order, as the data model generates rows:
 *   training grouped by user, phishing by campaign, each campaign in send waves;
 * - ascending: by the report's replication key, nulls first (a database export's usual order);
 * - descending: by the replication key, newest first, nulls last;
 * - shuffled: a seeded, deterministic shuffle;
 * - grouped: all of a user's rows together, users in order of first appearance
 *   (for training the same as generated).
 * Ties keep row-index order in every order but shuffled.
 */
export type OrderName = 'generated' | 'ascending' | 'descending' | 'shuffled' | 'grouped';
export const ORDERS: readonly OrderName[] = ['generated', 'ascending', 'descending', 'shuffled', 'grouped'];

/** Row indexes in serving order; null stands for index order, which needs no memory. */
export type RowOrder = Uint32Array | null;

/** The row index at `position` of an order. */
export function rowAt(rows: RowOrder, position: number): number {
  return rows === null ? position : rows[position];
}

/**
 * Stable counting sort: rows ordered by `bucketOf` (0 .. buckets-1), ties in
 * index order. Linear, and its only memory is the result and the counts.
 */
function byBucket(bucketOf: Uint32Array, buckets: number): Uint32Array {
  const starts = new Uint32Array(buckets + 1);
  for (let i = 0; i < bucketOf.length; i++) starts[bucketOf[i] + 1]++;
  for (let b = 0; b < buckets; b++) starts[b + 1] += starts[b];
  const rows = new Uint32Array(bucketOf.length);
  for (let i = 0; i < bucketOf.length; i++) rows[starts[bucketOf[i]]++] = i;
  return rows;
}

/** Index of `value` in the sorted, duplicate-free `sorted`. */
function rankOf(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The distinct values of `keys`, ascending. */
function distinctSorted(keys: Float64Array): Float64Array {
  const sorted = keys.slice().sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i];
  return sorted.subarray(0, n);
}

/**
 * Rows of `count` sorted by `keyAt` (a number, or null), ascending with nulls
 * first, or descending with nulls last. Keys are ranked among their distinct
 * values (few: instants repeat a lot) and the rows counting-sorted by rank,
 * which is stable, so ties keep index order in both directions.
 */
export function sortedRows(count: number, keyAt: (index: number) => number | null, descending: boolean): Uint32Array {
  const keys = new Float64Array(count);
  for (let i = 0; i < count; i++) keys[i] = keyAt(i) ?? Number.NEGATIVE_INFINITY;
  const distinct = distinctSorted(keys);
  const ranks = new Uint32Array(count);
  const last = distinct.length - 1;
  for (let i = 0; i < count; i++) {
    const rank = rankOf(distinct, keys[i]);
    ranks[i] = descending ? last - rank : rank;
  }
  return byBucket(ranks, distinct.length);
}

/** Rows of `count` with all rows of one group (`groupAt`) together, groups in order of first appearance. */
export function groupedRows(count: number, groupAt: (index: number) => string): Uint32Array {
  const groups = new Map<string, number>();
  const groupOf = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const key = groupAt(i);
    let group = groups.get(key);
    if (group === undefined) {
      group = groups.size;
      groups.set(key, group);
    }
    groupOf[i] = group;
  }
  return byBucket(groupOf, groups.size);
}

/** Rows of `count` in a Fisher-Yates shuffle drawn from (seed, count): same seed and size, same order. */
export function shuffledRows(count: number, seed: number): Uint32Array {
  const rows = new Uint32Array(count);
  for (let i = 0; i < count; i++) rows[i] = i;
  const rng = rngFor(seed, 'order-shuffled', count);
  for (let i = count - 1; i > 0; i--) {
    const j = rng.int(0, i);
    const swap = rows[i];
    rows[i] = rows[j];
    rows[j] = swap;
  }
  return rows;
}

export function isOrderName(value: string): value is OrderName {
  return (ORDERS as readonly string[]).includes(value);
}
