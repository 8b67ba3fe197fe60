import { describe, expect, it } from 'vitest';
import { readsChange, runStateChange, storeChange, type ReadResult } from '../../src/sync/run-state.js';
import { StateStore } from '../../src/state.js';
import { planRun, type RunSettings } from '../../src/sync/plan/read-plans.js';
import { IncrementalCursor } from '../../src/sync/read/incremental.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { defaultSelection } from '../../src/catalog/selection.js';
import { settledSnapshot } from '../../src/records/record-snapshot.js';
import type { StreamBookmark } from '../../src/state.js';

/** What a run leaves in its stream's bookmark, from its reads and its full pass. */

const NOW = Date.UTC(2026, 5, 15, 12);
const LM = 'Mon, 15 Jun 2026 11:00:00 GMT';
const training = defaultSelection(discoverStreams({})).find((s) => s.descriptor.name === 'training')!;
const SETTINGS: RunSettings = { filters: {}, lookback_window: 0, max_future_skew: 86_400, refresh_open_rows: true, event_window_days: {}, full_pass_interval_days: 7, emit_activate_version_messages: true, change_pass_interval_days: 1 };

/** The results of a run's reads: each read admitted the records at the given completion dates (null: open), and ended with `status`. */
function results(run: ReturnType<typeof planRun>, reads: Array<{ at: Array<string | null>; status?: 200 | 304 }>): ReadResult[] {
  return run.reads.map((plan, i) => {
    const cursor = new IncrementalCursor(plan);
    for (const at of reads[i].at) {
      const record = { userId: `u-${at}`, programId: 'p', moduleId: 'm', completedAt: at };
      cursor.admit({ replicationMs: at === null ? Number.NaN : Date.parse(at), replicationValue: at, toObject: () => record, snapshot: () => settledSnapshot(() => record) });
    }
    return { plan, cursor, outcome: reads[i].status === 304 ? { status: 304 } : { status: 200, lastModified: LM } };
  });
}

describe('after a first run (a full pass without a date filter)', () => {
  const run = planRun(training, SETTINGS, undefined, NOW, true);
  const change = runStateChange(training, run, undefined, results(run, [{ at: ['2026-06-01T10:00:00Z', null, '2026-06-02T10:00:00Z'] }]), { rows: 3, activated: NOW, baseline: 3 }, NOW);

  it('holds the bookmark and the Last-Modified, which stands for the open rows too, and the pass: when, its version, its rows', () => {
    expect(change).toMatchObject({
      replication_key: 'completedAt',
      replication_key_value: '2026-06-02T10:00:00Z',
      last_modified: LM,
      open_rows: { last_modified: LM, last_modified_request: run.openRowsFingerprint },
      full_pass: { at: '2026-06-15T12:00:00Z', due: '2026-06-15T12:00:00Z', version: NOW, rows: 3 },
    });
  });

  it('lets the next run ask both its reads with If-Modified-Since', () => {
    const next = planRun(training, SETTINGS, change, NOW + 3_600_000, true);
    expect(next.reads.map((r) => [r.kind, r.ifModifiedSince])).toEqual([
      ['incremental', LM],
      ['open_rows', LM],
    ]);
  });
});

describe('a checkpoint between the reads of a run (readsChange)', () => {
  it('after the full pass read of a first run with start_date: the bookmark and its Last-Modified, but no record of the pass, so a run resumed from it makes the pass again', () => {
    const run = planRun(training, { ...SETTINGS, start_date: '2026-01-01T00:00:00Z' }, undefined, NOW, false);
    expect(run.reads.map((r) => r.kind)).toEqual(['full_pass', 'open_rows']);
    const done = results(run, [{ at: ['2026-06-01T10:00:00Z', '2026-06-02T10:00:00Z'] }, { at: [] }]).slice(0, 1);
    const change = readsChange(training, run, done);
    expect(change).toMatchObject({ replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', last_modified: LM });
    expect(change.full_pass).toBeUndefined();
    expect(change.open_rows).toBeUndefined();
    expect(planRun(training, { ...SETTINGS, start_date: '2026-01-01T00:00:00Z' }, change, NOW + 60_000, false).fullPass?.reason).toBe('interval');
  });

  it('after the incremental read: the bookmark moves as the run\'s own change moves it, the open rows\' Last-Modified stays the last run\'s', () => {
    const previous: StreamBookmark = { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', open_rows: { last_modified: 'old' }, full_pass: { at: '2026-06-14T00:00:00Z', rows: 300 } };
    const run = planRun(training, SETTINGS, previous, NOW, false);
    const all = results(run, [{ at: ['2026-06-10T10:00:00Z'] }, { at: [null] }]);
    const change = readsChange(training, run, all.slice(0, 1));
    expect(change.replication_key_value).toBe(runStateChange(training, run, previous, all, { rows: 2 }, NOW).replication_key_value);
    expect(change.open_rows).toBeUndefined();
  });
});

describe('after an incremental run', () => {
  const previous: StreamBookmark = { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', full_pass: { at: '2026-06-14T00:00:00Z', version: 7, rows: 300 } };
  const run = planRun(training, SETTINGS, previous, NOW, true);

  it('moves the bookmark, stores each read\'s Last-Modified in its place, and leaves the full pass as it was', () => {
    const change = runStateChange(training, run, previous, results(run, [{ at: ['2026-06-10T10:00:00Z'] }, { at: [null, null] }]), { rows: 3 }, NOW);
    expect(change.replication_key_value).toBe('2026-06-10T10:00:00Z');
    expect(change.last_modified).toBe(LM);
    expect(change.open_rows).toEqual({ last_modified: LM, last_modified_request: run.reads[1].requestFingerprint(null) });
    expect(change).not.toHaveProperty('full_pass');
  });

  it('changes nothing for a read answered 304', () => {
    const change = runStateChange(training, run, previous, results(run, [{ at: [], status: 304 }, { at: [], status: 304 }]), { rows: 0 }, NOW);
    expect(change).toEqual({});
  });
});

describe('after a periodic full pass', () => {
  const previous: StreamBookmark = { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', full_pass: { at: '2026-06-01T00:00:00Z', version: 7, rows: 300 } };
  // Two weeks since the last, on the 7-day grid from 2026-06-01T00:00:00Z: the pass records the grid's latest point.
  const run = planRun(training, SETTINGS, previous, NOW, true);

  it('that activated: its rows are the next pass\'s baseline', () => {
    const change = runStateChange(training, run, previous, results(run, [{ at: ['2026-06-10T10:00:00Z', null] }]), { rows: 290, activated: NOW, baseline: 290 }, NOW);
    expect(change.full_pass).toEqual({ at: '2026-06-15T12:00:00Z', due: '2026-06-15T00:00:00Z', version: NOW, rows: 290 });
  });

  it('that did not activate (too few rows): the baseline stays, the version its records carried is kept, and the next pass falls due after the interval', () => {
    const change = runStateChange(training, run, previous, results(run, [{ at: ['2026-06-10T10:00:00Z'] }]), { rows: 1 }, NOW);
    expect(change.full_pass).toEqual({ at: '2026-06-15T12:00:00Z', due: '2026-06-15T00:00:00Z', version: NOW, rows: 300 });
  });

  it('that recorded a baseline without activating (none to judge it by): that baseline', () => {
    const change = runStateChange(training, run, previous, results(run, [{ at: ['2026-06-10T10:00:00Z'] }]), { rows: 1, baseline: 1 }, NOW);
    expect(change.full_pass).toEqual({ at: '2026-06-15T12:00:00Z', due: '2026-06-15T00:00:00Z', version: NOW, rows: 1 });
  });

  it('without versions: when it ran and its rows', () => {
    const plain = planRun(training, { ...SETTINGS, emit_activate_version_messages: false }, previous, NOW, true);
    const change = runStateChange(training, plain, previous, results(plain, [{ at: ['2026-06-10T10:00:00Z', null] }]), { rows: 2, baseline: 2 }, NOW);
    expect(change.full_pass).toEqual({ at: '2026-06-15T12:00:00Z', due: '2026-06-15T00:00:00Z', rows: 2 });
  });
});

describe('a pass made by a run before its grid point (a daily run 2 minutes early)', () => {
  const EARLY = Date.UTC(2026, 5, 15, 5, 58);

  it('records when it ran and the grid point it fell due at, so the next falls due a whole interval after that point', () => {
    const previous: StreamBookmark = { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', full_pass: { at: '2026-06-08T06:00:00Z', due: '2026-06-08T06:00:00Z', version: 7, rows: 300 } };
    const run = planRun(training, SETTINGS, previous, EARLY, true);
    const change = runStateChange(training, run, previous, results(run, [{ at: ['2026-06-10T10:00:00Z', null] }]), { rows: 2, activated: EARLY, baseline: 2 }, EARLY);
    expect(change.full_pass).toEqual({ at: '2026-06-15T05:58:00Z', due: '2026-06-15T06:00:00Z', version: EARLY, rows: 2 });
  });

  it('a change pass: in change_pass, beside the store\'s generation', () => {
    const previous: StreamBookmark = { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', full_pass: { at: '2026-06-10T06:00:00Z', version: 7, rows: 300 }, change_pass: { at: '2026-06-14T06:00:00Z' } };
    const run = planRun(training, SETTINGS, previous, EARLY, true, { trusted: true });
    expect(run.changePass).toBe(true);
    expect(storeChange(run, { generation: 'g', rows: 3 }, EARLY)).toEqual({ store: { generation: 'g', rows: 3 }, change_pass: { at: '2026-06-15T05:58:00Z', due: '2026-06-15T06:00:00Z' } });
    // An incremental run leaves the last change pass as it was.
    const next = planRun(training, SETTINGS, { ...previous, change_pass: { at: '2026-06-15T05:58:00Z', due: '2026-06-15T06:00:00Z' } }, EARLY + 3_600_000, true, { trusted: true });
    expect(storeChange(next, { generation: 'g', rows: 3 }, EARLY + 3_600_000)).toEqual({ store: { generation: 'g', rows: 3 } });
  });
});

describe('what the change store leaves in the bookmark', () => {
  const plan = { reads: [], bookmarkProperties: [], futureBoundMs: 0 };
  const held = { store: { generation: '20261201T020000Z-0a0b0c0d', rows: 3 }, replication_key_value: '2025-01-01T00:00:00Z' };

  it('drops the generation the state named when a run without the store sent rows (the target holds rows no generation records), and keeps it when such a run sent none', () => {
    const state = new StateStore({ bookmarks: { training: held } });
    state.update('training', storeChange(plan, undefined, 0, false));
    expect(state.get('training')).toEqual(held);
    state.update('training', storeChange(plan, undefined, 0, true));
    expect(state.get('training')).toEqual({ replication_key_value: '2025-01-01T00:00:00Z', store: { generation: null } });
  });
});
