import { describe, expect, it } from 'vitest';
import { deletionWithheld, mayActivate, passVerdict, type PassFacts } from '../../../src/sync/pass/pass-activation.js';
import { planRun, type RunSettings } from '../../../src/sync/plan/read-plans.js';
import { IncrementalCursor } from '../../../src/sync/read/incremental.js';
import { discoverStreams } from '../../../src/catalog/discovery.js';
import { defaultSelection } from '../../../src/catalog/selection.js';
import type { ReadResult } from '../../../src/sync/run-state.js';
import type { StreamBookmark } from '../../../src/state.js';

/** Whether a full pass may activate its version, and a change pass send its delete records: only when it provably holds every row the source has. */

const NOW = Date.UTC(2026, 5, 15, 12);
const LM = 'Mon, 15 Jun 2026 11:00:00 GMT';
const training = defaultSelection(discoverStreams({})).find((s) => s.descriptor.name === 'training')!;
const SETTINGS: RunSettings = { filters: {}, lookback_window: 0, max_future_skew: 86_400, refresh_open_rows: true, event_window_days: {}, full_pass_interval_days: 7, emit_activate_version_messages: true, change_pass_interval_days: 1 };
const LOADED: StreamBookmark = { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', full_pass: { at: '2026-06-01T00:00:00Z', version: 7, rows: 100 } };
const FACTS: PassFacts = { rows: 100, invalidSkipped: 0, refused: [], minRatio: 0.5 };

/** The results of a run's reads, each answered 200 with the given Last-Modified (undefined: none), or 304. */
function results(run: ReturnType<typeof planRun>, answers: Array<string | undefined | 304>): ReadResult[] {
  return run.reads.map((plan, i) => ({ plan, cursor: new IncrementalCursor(plan), outcome: answers[i] === 304 ? { status: 304 } : { status: 200, lastModified: answers[i] as string | undefined } }));
}

const onePass = planRun(training, SETTINGS, LOADED, NOW, true);
const twoReads = planRun(training, { ...SETTINGS, start_date: '2025-01-01' }, LOADED, NOW, true);

describe('a full pass', () => {
  it('activates its version when every read answered in full and it holds enough rows, which become the next baseline', () => {
    expect(passVerdict(onePass, results(onePass, [LM]), FACTS)).toEqual({ activated: NOW, baseline: 100 });
    expect(passVerdict(twoReads, results(twoReads, [LM, 'Mon, 15 Jun 2026 11:00:00 GMT']), FACTS)).toEqual({ activated: NOW, baseline: 100 });
  });

  it('never activates when it holds no rows, even with full_pass_min_ratio 0 or on a first run', () => {
    const first = planRun(training, SETTINGS, undefined, NOW, true);
    for (const [run, minRatio] of [[onePass, 0], [first, 0.5], [first, 0]] as const) {
      const verdict = passVerdict(run, results(run, [LM]), { ...FACTS, rows: 0, minRatio });
      expect(verdict.activated).toBeUndefined();
      expect(verdict.withheld).toMatch(/the dump held no records/);
    }
  });

  it('does not activate when the service refused one of its reads (their rows would be deleted)', () => {
    const verdict = passVerdict(twoReads, results(twoReads, [LM]), { ...FACTS, refused: ['open rows'] });
    expect(verdict).toEqual({ withheld: 'the service refused the open rows read, and the rows it would have held must not be deleted for it' });
  });

  it('does not activate after skipping invalid records', () => {
    expect(passVerdict(onePass, results(onePass, [LM]), { ...FACTS, invalidSkipped: 2 }).activated).toBeUndefined();
  });

  it('of two reads whose first answer changed while the second ran does not activate, and may be read again', () => {
    const source = { kind: 'moved' as const, detail: 'the answer to its full pass read changed after it was read (Last-Modified Mon, 15 Jun 2026 11:00:00 GMT then)' };
    expect(passVerdict(twoReads, results(twoReads, [LM, LM]), { ...FACTS, source })).toEqual({
      withheld: 'the answer to its full pass read changed after it was read (Last-Modified Mon, 15 Jun 2026 11:00:00 GMT then), so a row that changed between its reads may be in none',
      retry: true,
    });
  });

  it('of two reads without a Last-Modified to prove one source by does not activate, and reading again would not help', () => {
    const source = { kind: 'unknown' as const, detail: 'the service sent no usable Last-Modified with its 2 reads (none, none)' };
    const verdict = passVerdict(twoReads, results(twoReads, [undefined, undefined]), { ...FACTS, source });
    expect(verdict.activated).toBeUndefined();
    expect(verdict.retry).toBeUndefined();
    expect(verdict.withheld).toMatch(/^the service sent no usable Last-Modified with its 2 reads \(none, none\), so the tap cannot tell/);
    // A pass of one read needs no proof.
    expect(passVerdict(onePass, results(onePass, [undefined]), FACTS).activated).toBe(NOW);
  });

  it('with no baseline in a state that shows the table was loaded: sends its records without activating, and its count becomes the baseline', () => {
    const legacy = planRun(training, SETTINGS, { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z' }, NOW, true);
    const verdict = passVerdict(legacy, results(legacy, [LM]), { ...FACTS, rows: 3 });
    expect(verdict).toEqual({ withheld: 'the state shows the table was loaded before but holds no row count of an earlier pass to judge 3 rows by; 3 is now that count, and the next pass activates if it holds at least full_pass_min_ratio (0.5) of it', baseline: 3 });
  });

  it('below full_pass_min_ratio of the last pass does not activate, and keeps the last baseline', () => {
    const verdict = passVerdict(onePass, results(onePass, [LM]), { ...FACTS, rows: 49 });
    expect(verdict.activated).toBeUndefined();
    expect(verdict.baseline).toBeUndefined();
    expect(verdict.withheld).toMatch(/the last full pass held 100 records, and 49 is fewer than full_pass_min_ratio \(0\.5\)/);
  });

  it('answered 304 is no pass at all; without versions its rows are the baseline and nothing activates', () => {
    expect(passVerdict(onePass, results(onePass, [304]), FACTS)).toEqual({});
    const plain = planRun(training, { ...SETTINGS, emit_activate_version_messages: false }, LOADED, NOW, true);
    expect(passVerdict(plain, results(plain, [LM]), FACTS)).toEqual({ baseline: 100 });
  });
});

describe('mayActivate', () => {
  it('lets a pass activate unless it holds fewer rows than the ratio of the last pass', () => {
    expect(mayActivate({ reason: 'interval', version: 2 }, 10, 0.5)).toBe(true);
    expect(mayActivate({ reason: 'interval', version: 2, previousRows: 100 }, 50, 0.5)).toBe(true);
    expect(mayActivate({ reason: 'interval', version: 2, previousRows: 100 }, 49, 0.5)).toBe(false);
    expect(mayActivate({ reason: 'interval', version: 2, previousRows: 100 }, 1, 0)).toBe(true);
  });
});

describe('a change pass\'s delete records (deletionWithheld)', () => {
  const HELD = { ...FACTS, held: 100 };

  it('go out when every read answered in full, unchanged, with at least full_pass_min_ratio of the rows the target holds', () => {
    expect(deletionWithheld(HELD)).toBeUndefined();
    expect(deletionWithheld({ ...HELD, rows: 50 })).toBeUndefined();
    expect(deletionWithheld({ ...HELD, rows: 1, minRatio: 0 })).toBeUndefined();
    // The store holds nothing yet: any rows read are enough.
    expect(deletionWithheld({ ...HELD, held: 0, rows: 1 })).toBeUndefined();
  });

  it('are withheld for each reason a full pass would not activate, each named, whatever the ratio', () => {
    const cases: Array<[Partial<typeof HELD>, string]> = [
      [{ rows: 0, minRatio: 0 }, 'the dump held no records (an empty dump never empties the warehouse)'],
      [{ rows: 0, held: 0 }, 'the dump held no records (an empty dump never empties the warehouse)'],
      [{ refused: ['open rows'] }, 'the service refused the open rows read, and the rows it would have held must not be deleted for it'],
      [{ invalidSkipped: 1 }, '1 invalid records were skipped (on_invalid_record: skip), and their rows must not be deleted for it'],
      [
        { source: { kind: 'unknown', detail: 'the service sent no usable Last-Modified with its 2 reads (none, none)' } },
        'the service sent no usable Last-Modified with its 2 reads (none, none), so the tap cannot tell that they saw one unchanged source, and a row that changed between them may be in none (without start_date a pass is one read)',
      ],
      [
        { source: { kind: 'moved', detail: `the answer to its change pass read changed after it was read (Last-Modified ${LM} then)` } },
        `the answer to its change pass read changed after it was read (Last-Modified ${LM} then), so a row that changed between its reads may be in none. The next change pass tries again`,
      ],
    ];
    for (const [facts, reason] of cases) {
      expect(deletionWithheld({ ...HELD, ...facts }), JSON.stringify(facts)).toBe(reason);
      expect(deletionWithheld({ ...HELD, minRatio: 0, ...facts }), `${JSON.stringify(facts)}, ratio 0`).toBe(reason);
    }
  });

  it('are withheld when the pass read fewer than full_pass_min_ratio of the rows the target holds, with the fix', () => {
    expect(deletionWithheld({ ...HELD, rows: 49 })).toBe('the target holds 100 rows, and the pass read 49, fewer than full_pass_min_ratio (0.5) of that. If the source really shrank, lower full_pass_min_ratio for one run.');
    expect(deletionWithheld({ ...HELD, rows: 49, minRatio: 0.4 })).toBeUndefined();
    expect(deletionWithheld({ ...HELD, rows: 99, minRatio: 1 })).toMatch(/^the target holds 100 rows, and the pass read 99, fewer than full_pass_min_ratio \(1\)/);
  });
});
