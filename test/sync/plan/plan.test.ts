import { describe, expect, it } from 'vitest';
import { fingerprint, futureBookmark, planStream, type PlanSettings } from '../../../src/sync/plan/plan.js';
import { discoverStreams } from '../../../src/catalog/discovery.js';
import { defaultSelection, selectStream, type ReplicationMethod, type SelectedStream } from '../../../src/catalog/selection.js';
import type { StreamBookmark } from '../../../src/state.js';

/** The training stream as `sync` without a catalog selects it: every field, incremental on completedAt. */
function training(): SelectedStream {
  const selected = defaultSelection(discoverStreams({})).find((s) => s.descriptor.name === 'training');
  if (!selected) throw new Error('no training stream');
  return selected;
}

/** The training stream with the given method, and only `fields` selected besides the keys and the replication key. */
function narrowedTraining(method: ReplicationMethod, fields?: readonly string[]): SelectedStream {
  const offered = discoverStreams({}).find((s) => s.descriptor.name === 'training');
  if (!offered) throw new Error('no training stream');
  return selectStream(offered, { method, selects: (field) => fields === undefined || fields.includes(field) }, 'Stream training');
}

function settings(overrides: Partial<PlanSettings> = {}): PlanSettings {
  return { filters: {}, lookback_window: 0, max_future_skew: 86_400, ...overrides };
}

function bookmarkAt(value: string, extra: Partial<StreamBookmark> = {}): StreamBookmark {
  return { replication_key: 'completedAt', replication_key_value: value, ...extra };
}

const MAY_1_8H = Date.UTC(2024, 4, 1, 8);
/** The run's start in these tests. */
const NOW = Date.UTC(2026, 0, 1);
const LAST_MODIFIED = 'Wed, 01 May 2024 09:00:00 GMT';

describe('a first run (no bookmark)', () => {
  it('without start_date sends no date filter, has no lower bound, no boundary and no If-Modified-Since', () => {
    const plan = planStream(training(), settings(), undefined, NOW);
    expect(plan.incremental).toBe(true);
    expect(plan.query).toEqual([]);
    expect(plan.lowerBoundMs).toBeUndefined();
    expect(plan.previousValue).toBeUndefined();
    expect(plan.previousMs).toBeUndefined();
    expect(plan.boundary).toBeUndefined();
    expect(plan.ifModifiedSince).toBeUndefined();
    expect(plan.bookmarkProperties).toEqual(['completedAt']);
  });

  it('with start_date asks for filter[completedAt] >= the start in UTC and bounds the records at it', () => {
    const plan = planStream(training(), settings({ start_date: '2024-01-01T02:00:00+02:00' }), undefined, NOW);
    expect(plan.query).toEqual([['filter[completedAt]', '>=2024-01-01T00:00:00Z']]);
    expect(plan.lowerBoundMs).toBe(Date.UTC(2024, 0, 1));
    expect(plan.boundary).toBeUndefined();
  });

  it('puts the configured filters first, in the descriptor order, and the start filter after them', () => {
    const plan = planStream(training(), settings({ start_date: '2024-01-01T00:00:00Z', filters: { training: { completed: true, program: 'p1' } } }), undefined, NOW);
    expect(plan.query).toEqual([
      ['filter[program]', 'p1'],
      ['filter[completed]', 'true'],
      ['filter[completedAt]', '>=2024-01-01T00:00:00Z'],
    ]);
  });
});

describe('a run with a bookmark', () => {
  it('starts lookback_window seconds before the bookmark, and does not dedupe the boundary when the lookback is not 0', () => {
    const previous = bookmarkAt('2024-05-01T08:00:00Z', { boundary_hashes: ['h1'] });
    const plan = planStream(training(), settings({ lookback_window: 3600 }), previous, NOW);
    expect(plan.previousValue).toBe('2024-05-01T08:00:00Z');
    expect(plan.previousMs).toBe(MAY_1_8H);
    expect(plan.lowerBoundMs).toBe(MAY_1_8H - 3_600_000);
    expect(plan.query).toEqual([['filter[completedAt]', '>=2024-05-01T07:00:00Z']]);
    expect(plan.boundary).toBeUndefined();
  });

  it('with lookback 0 starts at the bookmark and dedupes its instant with the previous boundary hashes', () => {
    const previous = bookmarkAt('2024-05-01T08:00:00Z', { boundary_hashes: ['h1', 'h2'] });
    const plan = planStream(training(), settings(), previous, NOW);
    expect(plan.lowerBoundMs).toBe(MAY_1_8H);
    expect(plan.query).toEqual([['filter[completedAt]', '>=2024-05-01T08:00:00Z']]);
    expect(plan.boundary?.ms).toBe(MAY_1_8H);
    expect([...(plan.boundary?.hashes ?? [])]).toEqual(['h1', 'h2']);
  });

  it('with lookback 0 and a bookmark without boundary_hashes dedupes against an empty set', () => {
    const plan = planStream(training(), settings(), bookmarkAt('2024-05-01T08:00:00Z'), NOW);
    expect(plan.boundary?.ms).toBe(MAY_1_8H);
    expect(plan.boundary?.hashes.size).toBe(0);
  });

  it('follows the bookmark, not start_date, once there is one', () => {
    const plan = planStream(training(), settings({ start_date: '2024-06-01T00:00:00Z' }), bookmarkAt('2024-05-01T08:00:00Z'), NOW);
    expect(plan.lowerBoundMs).toBe(MAY_1_8H);
    expect(plan.query).toEqual([['filter[completedAt]', '>=2024-05-01T08:00:00Z']]);
  });

  it('with filter_date_format date, asks from the day of the bookmark on source_timezone\'s calendar when it began before the UTC day, and bounds the records at the bookmark', () => {
    // 2024-05-02T02:00:00Z is 19:00 on 1 May in Los Angeles: the UTC day, 2 May, begins there at 07:00Z, after the bookmark.
    const evening = bookmarkAt('2024-05-02T02:00:00Z');
    const plan = planStream(training(), settings({ filter_date_format: 'date', source_timezone: 'America/Los_Angeles' }), evening, NOW);
    expect(plan.query).toEqual([['filter[completedAt]', '>=2024-05-01']]);
    expect(plan.lowerBoundMs).toBe(Date.UTC(2024, 4, 2, 2));
    expect(planStream(training(), settings({ filter_date_format: 'date', source_timezone: 'Asia/Tokyo' }), evening, NOW).query).toEqual([['filter[completedAt]', '>=2024-05-02']]);
  });

  it('reads a legacy bookmark stored under the field name, with an offset, as its UTC instant', () => {
    const plan = planStream(training(), settings(), { completedAt: '2024-05-01T10:00:00+02:00' }, NOW);
    expect(plan.previousValue).toBe('2024-05-01T08:00:00Z');
    expect(plan.previousMs).toBe(MAY_1_8H);
    expect(plan.lowerBoundMs).toBe(MAY_1_8H);
    expect(plan.query).toEqual([['filter[completedAt]', '>=2024-05-01T08:00:00Z']]);
    expect(plan.boundary?.ms).toBe(MAY_1_8H);
    expect(plan.boundary?.hashes.size).toBe(0);
  });

  it('a bookmark with a null value is a first run: start_date applies and there is no boundary', () => {
    const plan = planStream(training(), settings({ start_date: '2024-01-01T00:00:00Z' }), { replication_key: 'completedAt', replication_key_value: null }, NOW);
    expect(plan.previousValue).toBeUndefined();
    expect(plan.lowerBoundMs).toBe(Date.UTC(2024, 0, 1));
    expect(plan.boundary).toBeUndefined();
  });
});

describe('FULL_TABLE', () => {
  it('sends no date filter and has no bound, boundary or bookmark properties, even with a bookmark and start_date', () => {
    const previous = bookmarkAt('2024-05-01T08:00:00Z', { boundary_hashes: ['h1'] });
    const plan = planStream(narrowedTraining('FULL_TABLE'), settings({ start_date: '2024-01-01T00:00:00Z' }), previous, NOW);
    expect(plan.incremental).toBe(false);
    expect(plan.query).toEqual([]);
    expect(plan.lowerBoundMs).toBeUndefined();
    expect(plan.previousValue).toBeUndefined();
    expect(plan.previousMs).toBeUndefined();
    expect(plan.boundary).toBeUndefined();
    expect(plan.bookmarkProperties).toEqual([]);
  });

  it('never sends If-Modified-Since, even when the state holds the Last-Modified of this very request (a 304 would emit no row, and overwrite would empty the table)', () => {
    const selected = narrowedTraining('FULL_TABLE');
    const request = planStream(selected, settings(), undefined, NOW).requestFingerprint(undefined);
    const stored: StreamBookmark = { last_modified: LAST_MODIFIED, last_modified_request: request };
    const plan = planStream(selected, settings(), stored, NOW);
    expect(plan.requestFingerprint(undefined)).toBe(request);
    expect(plan.ifModifiedSince).toBeUndefined();
  });

  it('still sends the configured filters, a configured completedAt one as it is', () => {
    const plan = planStream(narrowedTraining('FULL_TABLE'), settings({ filters: { training: { user: 'u1', completedAt: '<2024-02-01' } } }), undefined, NOW);
    expect(plan.query).toEqual([
      ['filter[user]', 'u1'],
      ['filter[completedAt]', '<2024-02-01'],
    ]);
  });
});

describe('If-Modified-Since', () => {
  const BOOKMARK = '2024-05-01T08:00:00Z';

  /** The bookmark a run leaves after reading the dump with `selected` and `planSettings` and getting LAST_MODIFIED. */
  function storedAfterRun(selected: SelectedStream, planSettings: PlanSettings): StreamBookmark {
    const previous = bookmarkAt(BOOKMARK);
    const request = planStream(selected, planSettings, previous, NOW).requestFingerprint(BOOKMARK);
    return { ...previous, last_modified: LAST_MODIFIED, last_modified_request: request };
  }

  it('is sent when the stored request fingerprint is that of the same request', () => {
    const stored = storedAfterRun(training(), settings({ lookback_window: 60 }));
    expect(planStream(training(), settings({ lookback_window: 60 }), stored, NOW).ifModifiedSince).toBe(LAST_MODIFIED);
  });

  it('is not sent without a stored request fingerprint, even with a stored Last-Modified', () => {
    const previous = bookmarkAt(BOOKMARK, { last_modified: LAST_MODIFIED });
    expect(planStream(training(), settings(), previous, NOW).ifModifiedSince).toBeUndefined();
  });

  it.each([
    ['a filter', settings({ filters: { training: { program: 'p1' } } }), training()],
    ['the selection', settings(), narrowedTraining('INCREMENTAL', ['score'])],
    ['the lookback window', settings({ lookback_window: 1 }), training()],
    ['start_date', settings({ start_date: '2024-01-01T00:00:00Z' }), training()],
    ['the replication method', settings(), narrowedTraining('FULL_TABLE')],
  ])('is not sent after a change of %s', (_change, changedSettings, changedSelection) => {
    const stored = storedAfterRun(training(), settings());
    expect(planStream(training(), settings(), stored, NOW).ifModifiedSince).toBe(LAST_MODIFIED);
    expect(planStream(changedSelection, changedSettings, stored, NOW).ifModifiedSince).toBeUndefined();
  });

  it('is not sent for a date bound in another zone than the stored request\'s (earlier versions sent the UTC day whatever the zone), and only then', () => {
    const losAngeles = settings({ filter_date_format: 'date', source_timezone: 'America/Los_Angeles' });
    expect(planStream(training(), losAngeles, storedAfterRun(training(), settings({ filter_date_format: 'date' })), NOW).ifModifiedSince).toBeUndefined();
    expect(planStream(training(), losAngeles, storedAfterRun(training(), losAngeles), NOW).ifModifiedSince).toBe(LAST_MODIFIED);
    expect(planStream(training(), settings({ source_timezone: 'America/Los_Angeles' }), storedAfterRun(training(), settings()), NOW).ifModifiedSince).toBe(LAST_MODIFIED);
  });

  it('is not sent when the bookmark moved since the Last-Modified was stored', () => {
    const stored = storedAfterRun(training(), settings());
    const moved = { ...stored, replication_key_value: '2024-05-02T08:00:00Z' };
    expect(planStream(training(), settings(), moved, NOW).ifModifiedSince).toBeUndefined();
  });

  it('fingerprints a request with the bookmark it asks after: null and undefined alike, another bookmark differently', () => {
    const plan = planStream(training(), settings(), undefined, NOW);
    expect(plan.requestFingerprint(null)).toBe(plan.requestFingerprint(undefined));
    expect(plan.requestFingerprint(BOOKMARK)).not.toBe(plan.requestFingerprint(null));
    expect(plan.requestFingerprint(BOOKMARK)).toBe(planStream(training(), settings(), bookmarkAt(BOOKMARK), NOW).requestFingerprint(BOOKMARK));
  });
});

describe('dates in the future', () => {
  it('bound records at the run\'s start plus max_future_skew', () => {
    expect(planStream(training(), settings({ max_future_skew: 3600 }), undefined, NOW).futureBoundMs).toBe(NOW + 3_600_000);
  });

  it('refuse an incoming bookmark after that bound: a state error (exit 2) naming the stream and the fix', () => {
    let thrown: unknown;
    try {
      planStream(training(), settings(), bookmarkAt('9999-12-31T00:00:00Z'), NOW);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^State: the training bookmark 9999-12-31T00:00:00Z lies after 2026-01-02T00:00:00Z \(now plus max_future_skew\).*Fix or remove bookmarks\.training in the state, or raise max_future_skew/) });
    expect(() => planStream(training(), settings(), bookmarkAt('2026-01-01T23:59:59Z'), NOW)).not.toThrow();
  });
});

describe('futureBookmark (what the Airbyte face skips a stream for, and the Singer face refuses)', () => {
  it('names the replication key, the bookmark and the bound when the bookmark lies after the run\'s start plus max_future_skew', () => {
    expect(futureBookmark(training(), settings(), bookmarkAt('2999-12-31T00:00:00Z'), NOW)).toEqual({ field: 'completedAt', value: '2999-12-31T00:00:00Z', boundMs: NOW + 86_400_000 });
  });

  it('reads a bookmark kept under the replication key\'s own name (the older layout), in its UTC form', () => {
    expect(futureBookmark(training(), settings(), { completedAt: '2999-12-31T01:00:00+01:00' }, NOW)).toMatchObject({ field: 'completedAt', value: '2999-12-31T00:00:00Z' });
  });

  it('is undefined at the bound, without a bookmark, and for a FULL_TABLE stream (its bookmark is not read)', () => {
    expect(futureBookmark(training(), settings(), bookmarkAt('2026-01-02T00:00:00Z'), NOW)).toBeUndefined();
    expect(futureBookmark(training(), settings(), undefined, NOW)).toBeUndefined();
    expect(futureBookmark(training(), settings(), {}, NOW)).toBeUndefined();
    expect(futureBookmark(narrowedTraining('FULL_TABLE'), settings(), bookmarkAt('2999-12-31T00:00:00Z'), NOW)).toBeUndefined();
  });

  it('follows max_future_skew', () => {
    expect(futureBookmark(training(), settings({ max_future_skew: 3600 }), bookmarkAt('2026-01-01T02:00:00Z'), NOW)).toMatchObject({ boundMs: NOW + 3_600_000 });
    expect(futureBookmark(training(), settings({ max_future_skew: 7200 }), bookmarkAt('2026-01-01T02:00:00Z'), NOW)).toBeUndefined();
  });
});

describe('fingerprint', () => {
  it('is a 16-character base64url digest, equal for equal parts and different for different ones', () => {
    expect(fingerprint({ a: 1, b: ['x'] })).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(fingerprint({ a: 1, b: ['x'] })).toBe(fingerprint({ a: 1, b: ['x'] }));
    expect(fingerprint({ a: 1, b: ['x'] })).not.toBe(fingerprint({ a: 2, b: ['x'] }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: '1' }));
  });
});

describe('purity', () => {
  it('does not change the selection, the settings or the previous bookmark', () => {
    const selected = training();
    const planSettings = settings({ start_date: '2024-01-01T00:00:00Z', lookback_window: 0, filters: { training: { completedAt: '>=2023-01-01', program: 'p1' } } });
    const previous = bookmarkAt('2024-05-01T10:00:00+02:00', { boundary_hashes: ['h1'], last_modified: LAST_MODIFIED, last_modified_request: 'x', custom: { kept: true } });
    const before = structuredClone({ selected, planSettings, previous });
    const plan = planStream(selected, planSettings, previous, NOW);
    plan.requestFingerprint(plan.previousValue);
    expect({ selected, planSettings, previous }).toEqual(before);
    expect(previous.replication_key_value).toBe('2024-05-01T10:00:00+02:00');
    expect(previous.boundary_hashes).toEqual(['h1']);
  });
});
