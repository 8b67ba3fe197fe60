import { describe, expect, it } from 'vitest';
import { planRun, type RunSettings } from '../../../src/sync/plan/read-plans.js';
import { resolveConfig } from '../../../src/config/config.js';
import { discoverStreams } from '../../../src/catalog/discovery.js';
import { defaultSelection, selectStream, type SelectedStream } from '../../../src/catalog/selection.js';
import type { StreamBookmark } from '../../../src/state.js';

/** The run plans: which reads a run makes of a stream, from its state, the settings and the clock, in one place. */

const NOW = Date.UTC(2026, 5, 15, 12);
const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();

function stream(name: 'training' | 'phishing', method: 'INCREMENTAL' | 'FULL_TABLE' = 'INCREMENTAL'): SelectedStream {
  const offered = discoverStreams({}).find((s) => s.descriptor.name === name)!;
  return method === 'INCREMENTAL' ? defaultSelection([offered])[0] : selectStream(offered, { method, selects: () => true }, name);
}

function settings(overrides: Partial<RunSettings> = {}): RunSettings {
  return {
    filters: {},
    lookback_window: 0,
    max_future_skew: 86_400,
    refresh_open_rows: true,
    event_window_days: { training: 0, phishing: 14 },
    full_pass_interval_days: 7,
    emit_activate_version_messages: true,
    change_pass_interval_days: 1,
    ...overrides,
  };
}

/** A bookmark at `value`, whose last full pass was `passDaysAgo` days before NOW (with version and rows). */
function bookmark(value: string | undefined, passDaysAgo: number | undefined, extra: Partial<StreamBookmark> = {}): StreamBookmark {
  return {
    replication_key: 'completedAt',
    ...(value === undefined ? {} : { replication_key_value: value }),
    ...(passDaysAgo === undefined ? {} : { full_pass: { at: iso(NOW - passDaysAgo * DAY), version: 1_000, rows: 400 } }),
    ...extra,
  };
}

const kinds = (plan: ReturnType<typeof planRun>): string[] => plan.reads.map((r) => r.kind);

describe('a full pass', () => {
  it('is the first run of a stream (no state), reading the whole dump with a new version, and no open rows read of its own', () => {
    const plan = planRun(stream('training'), settings(), undefined, NOW, true);
    expect(kinds(plan)).toEqual(['full_pass']);
    expect(plan.fullPass).toEqual({ reason: 'first run', version: NOW });
    expect(plan.version).toBe(NOW);
    expect(plan.reads[0].query).toEqual([]);
    expect(plan.reads[0].ifModifiedSince).toBeUndefined();
    // The main read holds the open rows: their Last-Modified is stored for the next run's read of them.
    expect(plan.openRowsFingerprint).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });

  it('with start_date reads from it, and the open rows too (no completion date), both in the pass', () => {
    const plan = planRun(stream('training'), settings({ start_date: '2025-01-01' }), undefined, NOW, true);
    expect(kinds(plan)).toEqual(['full_pass', 'open_rows']);
    expect(plan.reads[0].query).toEqual([['filter[completedAt]', '>=2025-01-01T00:00:00Z']]);
    expect(plan.reads[1].query).toEqual([['filter[completed]', 'false']]);
    expect(plan.openRowsFingerprint).toBeUndefined();
  });

  it('reads its open rows unconditionally too: each read of a pass answers in full, so their Last-Modified can be compared', () => {
    const incremental = planRun(stream('training'), settings({ start_date: '2025-01-01' }), bookmark('2026-06-01T00:00:00Z', 1), NOW, true);
    const openRowsRequest = incremental.reads[1].requestFingerprint(null);
    const stored = bookmark('2026-06-01T00:00:00Z', 8, { open_rows: { last_modified: 'LM', last_modified_request: openRowsRequest } });
    const pass = planRun(stream('training'), settings({ start_date: '2025-01-01' }), stored, NOW, true);
    expect(kinds(pass)).toEqual(['full_pass', 'open_rows']);
    expect(pass.reads[1].ifModifiedSince).toBeUndefined();
    expect(pass.reads[1].requestFingerprint(null)).toBe(openRowsRequest);
    expect(planRun(stream('training'), settings({ start_date: '2025-01-01' }), { ...stored, full_pass: { at: iso(NOW - DAY), version: 1, rows: 1 } }, NOW, true).reads[1].ifModifiedSince).toBe('LM');
  });

  it('falls due once the last one is full_pass_interval_days old, with a version after the last, and sends no If-Modified-Since', () => {
    const previous = bookmark('2026-06-01T00:00:00Z', 7, { last_modified: 'x', last_modified_request: 'y' });
    const plan = planRun(stream('training'), settings(), previous, NOW, true);
    expect(kinds(plan)).toEqual(['full_pass']);
    expect(plan.fullPass).toEqual({ reason: 'interval', version: NOW, previousRows: 400 });
    expect(plan.reads[0].ifModifiedSince).toBeUndefined();
    // A pass reads everything: the bookmark only keeps it from moving back.
    expect(plan.reads[0].lowerBoundMs).toBeUndefined();
    expect(plan.reads[0].previousValue).toBe('2026-06-01T00:00:00Z');
    expect(planRun(stream('training'), settings(), bookmark('2026-06-01T00:00:00Z', 6.9), NOW, true).fullPass).toBeUndefined();
    expect(planRun(stream('training'), settings({ full_pass_interval_days: 1 }), bookmark('2026-06-01T00:00:00Z', 1), NOW, true).fullPass?.reason).toBe('interval');
  });

  it('falls due for a state from before full passes (no full_pass member), unless the interval is 0', () => {
    const legacy = bookmark('2026-06-01T00:00:00Z', undefined);
    expect(planRun(stream('training'), settings(), legacy, NOW, true).fullPass?.reason).toBe('interval');
    expect(planRun(stream('training'), settings({ full_pass_interval_days: 0 }), legacy, NOW, true).fullPass).toBeUndefined();
    expect(planRun(stream('training'), settings({ full_pass_interval_days: 0 }), bookmark('2026-06-01T00:00:00Z', 400), NOW, true).fullPass).toBeUndefined();
    // The first run is a pass whatever the interval.
    expect(planRun(stream('training'), settings({ full_pass_interval_days: 0 }), undefined, NOW, true).fullPass?.reason).toBe('first run');
  });

  it('is every FULL_TABLE run, which reads its dump whatever the state holds (no If-Modified-Since)', () => {
    const previous = { last_modified: 'Mon, 01 Jun 2026 00:00:00 GMT', last_modified_request: 'a', full_pass: { at: iso(NOW - DAY), version: 5 } };
    const plan = planRun(stream('phishing', 'FULL_TABLE'), settings(), previous, NOW, true);
    expect(kinds(plan)).toEqual(['full_pass']);
    // The state shows the table was loaded, but no row count to judge the pass by.
    expect(plan.fullPass).toEqual({ reason: 'FULL_TABLE', version: NOW, baselineMissing: true });
    const stored = { ...previous, last_modified_request: plan.reads[0].requestFingerprint(undefined) };
    expect(planRun(stream('phishing', 'FULL_TABLE'), settings(), stored, NOW, true).reads[0].ifModifiedSince).toBeUndefined();
  });

  it('has no version without ACTIVATE_VERSION: a protocol without the message (Airbyte), or the setting off', () => {
    for (const plan of [planRun(stream('training'), settings(), undefined, NOW, false), planRun(stream('training'), settings({ emit_activate_version_messages: false }), undefined, NOW, true)]) {
      expect(plan.fullPass).toEqual({ reason: 'first run' });
      expect(plan.version).toBeUndefined();
    }
  });

  it('takes a version after the last one even when the clock went back', () => {
    const previous = bookmark('2026-06-01T00:00:00Z', 8);
    previous.full_pass!.version = NOW + 5_000;
    expect(planRun(stream('training'), settings(), previous, NOW, true).fullPass?.version).toBe(NOW + 5_001);
  });
});

describe('a full pass judged against its baseline', () => {
  it('has none to judge by, and says so, when the state shows the table was loaded but holds no row count (upgrade, lost or reset full_pass)', () => {
    for (const previous of [bookmark('2026-06-01T00:00:00Z', undefined), { ...bookmark('2026-06-01T00:00:00Z', 8), full_pass: { at: iso(NOW - 8 * DAY), version: 3 } }, { last_modified: 'Mon, 01 Jun 2026 00:00:00 GMT' }]) {
      expect(planRun(stream('training'), settings(), previous, NOW, true).fullPass).toMatchObject({ baselineMissing: true });
    }
  });

  it('has none in a count of 0 either (an empty pass, or one of a service that refused a read): 0 judges nothing', () => {
    const empty = bookmark('2026-06-01T00:00:00Z', 8);
    empty.full_pass!.rows = 0;
    expect(planRun(stream('training'), settings(), empty, NOW, true).fullPass).toEqual({ reason: 'interval', version: NOW, baselineMissing: true });
  });

  it('may activate as always on a first run (no state: a new warehouse), or with a baseline, or without versions', () => {
    expect(planRun(stream('training'), settings(), undefined, NOW, true).fullPass).not.toHaveProperty('baselineMissing');
    expect(planRun(stream('training'), settings(), bookmark('2026-06-01T00:00:00Z', 8), NOW, true).fullPass).not.toHaveProperty('baselineMissing');
    expect(planRun(stream('training'), settings({ emit_activate_version_messages: false }), bookmark('2026-06-01T00:00:00Z', undefined), NOW, true).fullPass).not.toHaveProperty('baselineMissing');
  });
});

describe('a last full pass dated in the future', () => {
  it('makes the pass due now (a host clock that ran ahead would switch passes off until then), naming the date', () => {
    const ahead = bookmark('2026-06-01T00:00:00Z', -365);
    const plan = planRun(stream('training'), settings(), ahead, NOW, true);
    expect(plan.fullPass).toMatchObject({ reason: 'future date', futureDate: '2027-06-15T12:00:00Z', version: NOW });
  });

  it('within max_future_skew is trusted as it is: no pass before the interval', () => {
    const slightly = bookmark('2026-06-01T00:00:00Z', -0.5);
    expect(planRun(stream('training'), settings({ max_future_skew: 86_400 }), slightly, NOW, true).fullPass).toBeUndefined();
    expect(planRun(stream('training'), settings({ max_future_skew: 3_600 }), slightly, NOW, true).fullPass?.reason).toBe('future date');
  });
});

describe('the table version', () => {
  it('refuses, before anything is emitted, a last version with no safe integer after it: the state the run would write could not be read back', () => {
    const previous = bookmark('2026-06-01T00:00:00Z', 8);
    previous.full_pass!.version = Number.MAX_SAFE_INTEGER;
    expect(() => planRun(stream('training'), settings(), previous, NOW, true)).toThrow(
      `State: bookmarks.training.full_pass.version ${Number.MAX_SAFE_INTEGER} leaves no room for a later table version (versions are a pass's start in epoch milliseconds, ${NOW} now). Fix or remove bookmarks.training.full_pass; the next run then makes a full pass with a version from the clock.`,
    );
    previous.full_pass!.version = Number.MAX_SAFE_INTEGER - 1;
    expect(planRun(stream('training'), settings(), previous, NOW, true).fullPass?.version).toBe(Number.MAX_SAFE_INTEGER);
    // An incremental run carries the table's version as it is and needs no next one.
    const recent = bookmark('2026-06-01T00:00:00Z', 1);
    recent.full_pass!.version = Number.MAX_SAFE_INTEGER;
    expect(planRun(stream('training'), settings(), recent, NOW, true).version).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('with the change store', () => {
  const TRUSTED = { trusted: true } as const;
  /** A bookmark whose last full pass was 3 days ago, and whose last change pass `changeHoursAgo` hours ago. */
  const recent = (changeHoursAgo?: number): StreamBookmark => bookmark('2026-06-01T00:00:00Z', 3, changeHoursAgo === undefined ? {} : { change_pass: { at: iso(NOW - changeHoursAgo * 3_600_000) } });

  it('makes a change pass once the last pass of either kind is change_pass_interval_days old: the whole dump, read unconditionally, only the changed rows emitted', () => {
    const plan = planRun(stream('training'), settings({ start_date: '2025-01-01' }), recent(25), NOW, true, TRUSTED);
    expect(plan.changePass).toBe(true);
    expect(plan.fullPass).toBeUndefined();
    expect(plan.store).toBe('changes');
    expect(kinds(plan)).toEqual(['change_pass', 'open_rows']);
    expect(plan.reads[0].query).toEqual([['filter[completedAt]', '>=2025-01-01T00:00:00Z']]);
    expect(plan.reads.map((r) => r.ifModifiedSince)).toEqual([undefined, undefined]);
    // Records carry the table's current version; none is made.
    expect(plan.version).toBe(1_000);
  });

  it('reads its open rows unconditionally even when the state holds their Last-Modified for this very request: an answer 304 would hold no row, and the pass could delete nothing', () => {
    const between = planRun(stream('training'), settings({ start_date: '2025-01-01' }), recent(2), NOW, true, TRUSTED);
    const request = between.reads[1].requestFingerprint(null);
    const stored = { ...recent(25), open_rows: { last_modified: 'LM', last_modified_request: request } };
    expect(planRun(stream('training'), settings({ start_date: '2025-01-01' }), { ...stored, change_pass: { at: iso(NOW - 3_600_000) } }, NOW, true, TRUSTED).reads[1].ifModifiedSince).toBe('LM');
    const pass = planRun(stream('training'), settings({ start_date: '2025-01-01' }), stored, NOW, true, TRUSTED);
    expect(pass.changePass).toBe(true);
    expect(pass.reads[1].requestFingerprint(null)).toBe(request);
    expect(pass.reads.map((r) => r.ifModifiedSince)).toEqual([undefined, undefined]);
  });

  it('between change passes reads incrementally, emitting only the changed rows', () => {
    const plan = planRun(stream('training'), settings(), recent(2), NOW, true, TRUSTED);
    expect(plan.changePass).toBeUndefined();
    expect(plan.store).toBe('changes');
    expect(kinds(plan)).toEqual(['incremental', 'open_rows']);
    // A full pass counts as a change pass: the first run's pass, three days ago, is the last with no change pass since.
    expect(planRun(stream('training'), settings({ change_pass_interval_days: 4 }), recent(), NOW, true, TRUSTED).changePass).toBeUndefined();
    expect(planRun(stream('training'), settings({ change_pass_interval_days: 0 }), recent(48), NOW, true, TRUSTED).changePass).toBeUndefined();
  });

  it('makes the change pass due now when the last one is dated after the run beyond max_future_skew (a host clock that ran ahead would switch change passes off until then), and trusts one within it', () => {
    const ahead = recent(-30 * 24);
    expect(planRun(stream('training'), settings(), ahead, NOW, true, TRUSTED)).toMatchObject({ changePass: true, changePassFutureDate: '2026-07-15T12:00:00Z' });
    const slightly = recent(-12);
    expect(planRun(stream('training'), settings({ max_future_skew: 86_400 }), slightly, NOW, true, TRUSTED).changePass).toBeUndefined();
    expect(planRun(stream('training'), settings({ max_future_skew: 3_600 }), slightly, NOW, true, TRUSTED).changePass).toBe(true);
  });

  it('that cannot be trusted makes the run a full pass that emits every row, saying why', () => {
    const plan = planRun(stream('training'), settings(), recent(2), NOW, true, { trusted: false, why: 'its file is missing' });
    expect(plan.fullPass).toMatchObject({ reason: 'store', version: NOW });
    expect(plan.store).toBe('all');
    expect(plan.storeDistrust).toBe('its file is missing');
    // A first run has no state to trust a store by: it is a full pass anyway.
    const first = planRun(stream('training'), settings(), undefined, NOW, true, { trusted: false, why: 'the state names no generation' });
    expect(first.fullPass?.reason).toBe('first run');
    expect(first.store).toBe('all');
  });

  it('is not used by FULL_TABLE runs (every row, every run), nor without a store', () => {
    const table = planRun(stream('phishing', 'FULL_TABLE'), settings(), recent(30), NOW, true, TRUSTED);
    expect(table.store).toBeUndefined();
    expect(table.changePass).toBeUndefined();
    const none = planRun(stream('training'), settings(), recent(30), NOW, true);
    expect(none.store).toBeUndefined();
    expect(none.changePass).toBeUndefined();
  });

  it('holds a due pass outside pass_window for a run inside it, at most a day past its due time', () => {
    // NOW is 12:00 UTC; the change pass fell due an hour ago.
    const window = { pass_window: '01:00-05:00' };
    expect(planRun(stream('training'), settings(window), recent(25), NOW, true, TRUSTED).changePass).toBeUndefined();
    expect(planRun(stream('training'), settings({ pass_window: '11:00-13:00' }), recent(25), NOW, true, TRUSTED).changePass).toBe(true);
    expect(planRun(stream('training'), settings(window), recent(48), NOW, true, TRUSTED).changePass).toBe(true);
    // The same for a full pass due by its interval; a store it cannot trust does not wait.
    expect(planRun(stream('training'), settings(window), bookmark('2026-06-01T00:00:00Z', 7.1), NOW, true, TRUSTED).fullPass).toBeUndefined();
    expect(planRun(stream('training'), settings(window), bookmark('2026-06-01T00:00:00Z', 8), NOW, true, TRUSTED).fullPass?.reason).toBe('interval');
    expect(planRun(stream('training'), settings(window), recent(2), NOW, true, { trusted: false, why: 'x' }).fullPass?.reason).toBe('store');
  });
});

describe('the pass schedule: a fixed grid, a run up to an hour before a grid point making its pass', () => {
  const TRUSTED = { trusted: true } as const;
  const MINUTE = 60_000;
  /** 06:00 UTC on the day of NOW, plus `days`. */
  const six = (days = 0): number => Date.UTC(2026, 5, 15, 6) + days * DAY;
  /** A bookmark whose last full pass ran at `full` and last change pass at `change` (with the grid point `changeDue`, when given). */
  const passes = (full: number, change?: number, changeDue?: number): StreamBookmark =>
    bookmark('2026-06-01T00:00:00Z', undefined, {
      full_pass: { at: iso(full), version: 1_000, rows: 400 },
      ...(change === undefined ? {} : { change_pass: { at: iso(change), ...(changeDue === undefined ? {} : { due: iso(changeDue) }) } }),
    });
  const change = (previous: StreamBookmark, now: number, overrides: Partial<RunSettings> = {}): ReturnType<typeof planRun> => planRun(stream('training'), settings(overrides), previous, now, true, TRUSTED);

  it('makes the daily change pass on a run 2 minutes, or 2 seconds, short of 24 h after the last one (a state of the previous version: no due)', () => {
    const previous = passes(six(-3), six(-1));
    for (const now of [six() - 2 * MINUTE, six() - 2_000, six()]) {
      const plan = change(previous, now);
      expect(plan.changePass, iso(now)).toBe(true);
      // The pass keeps the 06:00 grid.
      expect(plan.passDue, iso(now)).toBe(six());
    }
    // A run more than the hour early reads incrementally.
    expect(change(previous, six() - 61 * MINUTE).changePass).toBeUndefined();
  });

  it('runs from the grid point the state records, not from when the last pass ran: a pass made 5 h late is followed by one on time', () => {
    const late = passes(six(-3), six(-1) + 5 * 3_600_000, six(-1));
    expect(change(late, six() - 2 * MINUTE).changePass).toBe(true);
    expect(change(late, six() - 2 * MINUTE).passDue).toBe(six());
  });

  it('counts a full pass as a change pass: no change pass on the day of a full pass, and the next morning\'s early run makes one', () => {
    const fullToday = passes(six() - 2 * MINUTE, six(-1), six(-1));
    expect(change(fullToday, six() + 3_600_000).changePass).toBeUndefined();
    expect(change(fullToday, six(1) - 2 * MINUTE).changePass).toBe(true);
    expect(change(fullToday, six(1) - 2 * MINUTE).passDue).toBe(six(1));
    // With no change pass yet (the first run's full pass), the first falls due a day after that pass.
    expect(change(passes(six(-1)), six() - 2 * MINUTE).changePass).toBe(true);
    expect(change(passes(six(-1)), six() - 2 * MINUTE).passDue).toBe(six());
  });

  it('makes the weekly and the monthly full pass on a run 2 minutes early', () => {
    for (const days of [7, 30]) {
      const plan = planRun(stream('training'), settings({ full_pass_interval_days: days }), passes(six(-days)), six() - 2 * MINUTE, true);
      expect(plan.fullPass?.reason, `${days} days`).toBe('interval');
      expect(plan.passDue, `${days} days`).toBe(six());
      expect(planRun(stream('training'), settings({ full_pass_interval_days: days }), passes(six(-days)), six() - 61 * MINUTE, true).fullPass, `${days} days`).toBeUndefined();
    }
    // The full pass's own grid point, when recorded, is what counts.
    const recorded = { ...passes(six(-7) + 3 * 3_600_000), full_pass: { at: iso(six(-7) + 3 * 3_600_000), due: iso(six(-7)), version: 1_000, rows: 400 } };
    expect(planRun(stream('training'), settings(), recorded, six() - 2 * MINUTE, true).fullPass?.reason).toBe('interval');
  });

  it('records the run\'s start as the grid point of a pass made before any grid point: a first run, a store it cannot trust', () => {
    expect(planRun(stream('training'), settings(), undefined, NOW, true, TRUSTED).passDue).toBe(NOW);
    expect(planRun(stream('training'), settings(), passes(six(-2), six(-1)), NOW, true, { trusted: false, why: 'x' }).passDue).toBe(NOW);
    expect(planRun(stream('phishing', 'FULL_TABLE'), settings({ full_pass_interval_days: 0 }), passes(six(-2)), NOW, true).passDue).toBe(NOW);
    // An incremental run records none.
    expect(change(passes(six(-2), six()), NOW).passDue).toBeUndefined();
  });

  it('holds a pass due outside pass_window at most a day past its grid point, a run up to an hour early counting', () => {
    // Fell due at 06:00 yesterday; the window 01:00-05:00 saw no run since.
    const previous = passes(six(-5), six(-2), six(-2));
    expect(change(previous, six() - 2 * MINUTE, { pass_window: '01:00-05:00' }).changePass).toBe(true);
    // Earlier (00:30, outside the window too) it still waits.
    expect(change(previous, six() - 330 * MINUTE, { pass_window: '01:00-05:00' }).changePass).toBeUndefined();
  });
});

describe('an incremental run', () => {
  it('reads the new records and then the open rows, its records carrying the table\'s current version', () => {
    const plan = planRun(stream('training'), settings(), bookmark('2026-06-01T00:00:00Z', 2), NOW, true);
    expect(kinds(plan)).toEqual(['incremental', 'open_rows']);
    expect(plan.fullPass).toBeUndefined();
    expect(plan.version).toBe(1_000);
    expect(plan.reads[0].query).toEqual([['filter[completedAt]', '>=2026-06-01T00:00:00Z']]);
    expect(plan.reads[0].boundary?.ms).toBe(Date.UTC(2026, 5, 1));
    const open = plan.reads[1];
    expect(open.query).toEqual([['filter[completed]', 'false']]);
    expect([open.incremental, open.lowerBoundMs, open.boundary, open.lastModifiedIn]).toEqual([false, undefined, undefined, 'open_rows']);
  });

  it('reads the open rows with the configured filters, and not at all when the filters name completed or completedAt, or the setting is off', () => {
    const withProgram = planRun(stream('training'), settings({ filters: { training: { program: 'p1' } } }), bookmark('2026-06-01T00:00:00Z', 2), NOW, true);
    expect(withProgram.reads[1].query).toEqual([
      ['filter[program]', 'p1'],
      ['filter[completed]', 'false'],
    ]);
    for (const filters of [{ completed: true }, { completedAt: '<=2026-01-01' }] as Array<Record<string, string | boolean>>) {
      expect(kinds(planRun(stream('training'), settings({ filters: { training: filters } }), bookmark('2026-06-01T00:00:00Z', 2), NOW, true))).toEqual(['incremental']);
    }
    expect(kinds(planRun(stream('training'), settings({ refresh_open_rows: false }), bookmark('2026-06-01T00:00:00Z', 2), NOW, true))).toEqual(['incremental']);
    // A report without open rows reads none.
    expect(kinds(planRun(stream('phishing'), settings({ event_window_days: {} }), bookmark('2026-06-14T00:00:00Z', 2), NOW, true))).toEqual(['event_window']);
  });

  it('sends the open rows If-Modified-Since from their own Last-Modified, stored under open_rows', () => {
    const first = planRun(stream('training'), settings(), bookmark('2026-06-01T00:00:00Z', 2), NOW, true).reads[1];
    const previous = bookmark('2026-06-01T00:00:00Z', 2, { open_rows: { last_modified: 'Mon, 15 Jun 2026 00:00:00 GMT', last_modified_request: first.requestFingerprint(null) } });
    expect(planRun(stream('training'), settings(), previous, NOW, true).reads[1].ifModifiedSince).toBe('Mon, 15 Jun 2026 00:00:00 GMT');
    expect(planRun(stream('training'), settings({ filters: { training: { program: 'p2' } } }), previous, NOW, true).reads[1].ifModifiedSince).toBeUndefined();
  });

  it('reads an event window when the stream\'s window starts before its bookmark: from the window\'s start, without boundary dedupe', () => {
    const plan = planRun(stream('phishing'), settings(), bookmark('2026-06-14T00:00:00Z', 2, { replication_key: 'sentAt' }), NOW, true);
    expect(kinds(plan)).toEqual(['event_window']);
    expect(plan.reads[0].query).toEqual([['filter[sentAt]', `>=${iso(NOW - 14 * DAY).replace('.000', '')}`]]);
    expect(plan.reads[0].lowerBoundMs).toBe(NOW - 14 * DAY);
    expect(plan.reads[0].boundary).toBeUndefined();
    expect(plan.reads[0].incremental).toBe(true);
  });

  it('is 14 days for phishing and none for training when event_window_days is not set (the resolved config\'s default)', () => {
    const config = resolveConfig({ base_url: 'https://api.example.com', access_token: 't' });
    const phishing = planRun(stream('phishing'), config, bookmark('2026-06-14T00:00:00Z', 2, { replication_key: 'sentAt' }), NOW, true);
    expect(kinds(phishing)).toEqual(['event_window']);
    expect(phishing.reads[0].lowerBoundMs).toBe(NOW - 14 * DAY);
    expect(phishing.reads[0].query).toEqual([['filter[sentAt]', `>=${iso(NOW - 14 * DAY).replace('.000', '')}`]]);
    // A bookmark more than 14 days old: the window starts after it, so the read is the incremental one from the bookmark.
    expect(planRun(stream('phishing'), config, bookmark(iso(NOW - 14 * DAY - 1000), 2, { replication_key: 'sentAt' }), NOW, true).reads[0].lowerBoundMs).toBe(NOW - 14 * DAY - 1000);
    expect(kinds(planRun(stream('training'), config, bookmark('2026-06-14T00:00:00Z', 2), NOW, true))).toEqual(['incremental', 'open_rows']);
  });

  it('reads only from the bookmark when the window starts after it (nothing sent for weeks), or the window is 0', () => {
    const old = bookmark('2026-05-01T00:00:00Z', 2, { replication_key: 'sentAt' });
    const plan = planRun(stream('phishing'), settings(), old, NOW, true);
    expect(kinds(plan)).toEqual(['incremental']);
    expect(plan.reads[0].boundary?.ms).toBe(Date.UTC(2026, 4, 1));
    expect(kinds(planRun(stream('phishing'), settings({ event_window_days: { phishing: 0 } }), bookmark('2026-06-14T00:00:00Z', 2), NOW, true))).toEqual(['incremental']);
    expect(kinds(planRun(stream('training'), settings({ event_window_days: { training: 30 } }), bookmark('2026-06-14T00:00:00Z', 2), NOW, true))).toEqual(['event_window', 'open_rows']);
  });

  it('keeps If-Modified-Since across runs of an event window: its moving start is not part of what the request means', () => {
    const first = planRun(stream('phishing'), settings(), bookmark('2026-06-14T00:00:00Z', 2), NOW, true).reads[0];
    const stored = bookmark('2026-06-14T00:00:00Z', 2, { last_modified: 'LM', last_modified_request: first.requestFingerprint('2026-06-14T00:00:00Z') });
    expect(planRun(stream('phishing'), settings(), stored, NOW + DAY, true).reads[0].ifModifiedSince).toBe('LM');
  });
});

describe('purity', () => {
  it('changes neither the selection, the settings nor the bookmark', () => {
    const selected = stream('training');
    const planSettings = settings({ start_date: '2025-01-01' });
    const previous = bookmark('2026-06-01T00:00:00Z', 8, { open_rows: { last_modified: 'x' } });
    const before = structuredClone({ selected, planSettings, previous });
    planRun(selected, planSettings, previous, NOW, true);
    expect({ selected, planSettings, previous }).toEqual(before);
  });
});
