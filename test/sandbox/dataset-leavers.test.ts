import { describe, expect, it } from 'vitest';
import { Dataset, NO_FILTER, USER_FIELD } from '../../sandbox/dataset.js';
import { createPhishingModel } from '../../sandbox/phishing-model.js';

/**
 * A user who leaves stays gone from the dumps, also when the data set held
 * none of their rows at the time (a leaver not yet sent a phishing mail):
 * rows appended for them later are never served, nor counted.
 */
describe('a leaver without rows yet', () => {
  it('gets no row served or counted when rows are appended for them later', () => {
    const seed = 5;
    const initial = 40;
    const dataset = new Dataset(createPhishingModel(seed, initial), seed, initial);
    const userOf = (index: number): string => dataset.model.identity(index)[USER_FIELD] as string;
    const present = new Set(Array.from({ length: initial }, (_, i) => userOf(i)));
    const later = Array.from({ length: 200 }, (_, i) => initial + i).find((index) => !present.has(userOf(index)))!;
    expect(later, 'a user whose first row comes after the initial rows').toBeDefined();
    const leaver = userOf(later);
    dataset.deleteUsers([leaver], Date.now());

    dataset.appendAt(later - initial + 1, dataset.now, Date.now());

    const snap = dataset.snapshot();
    const served = Array.from({ length: snap.count }, (_, i) => dataset.matchAt(snap, i, NO_FILTER)).filter((r) => r !== null);
    expect(served.filter((r) => r[USER_FIELD] === leaver)).toEqual([]);
    expect(dataset.liveCount).toBe(served.length);
  });
});
