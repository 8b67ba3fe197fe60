import { describe, expect, it } from 'vitest';
import { planRun, type RunSettings, type StoreView } from '../../../src/sync/plan/read-plans.js';
import { planLine } from '../../../src/sync/plan/plan-line.js';
import { discoverStreams } from '../../../src/catalog/discovery.js';
import { defaultSelection, selectStream, type SelectedStream } from '../../../src/catalog/selection.js';
import type { StreamBookmark } from '../../../src/state.js';

/** The plan line: what a stream's run will do, said before its records. */

const NOW = Date.UTC(2026, 5, 15, 12);
const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

function stream(name: 'training' | 'phishing', method: 'INCREMENTAL' | 'FULL_TABLE' = 'INCREMENTAL'): SelectedStream {
  const offered = discoverStreams({}).find((s) => s.descriptor.name === name)!;
  return method === 'INCREMENTAL' ? defaultSelection([offered])[0] : selectStream(offered, { method, selects: () => true }, name);
}

const SETTINGS: RunSettings & { send_changes_only: boolean; state_store_max_kb: number } = {
  state_store_max_kb: 1024,
  filters: { training: { program: 'prog-01', email: 'ada@example.com' }, phishing: { employeeNumber: 'E-0042' } },
  lookback_window: 0,
  max_future_skew: 86_400,
  refresh_open_rows: true,
  event_window_days: { training: 0, phishing: 14 },
  full_pass_interval_days: 30,
  emit_activate_version_messages: true,
  change_pass_interval_days: 1,
  send_changes_only: false,
};

const BOOKMARK = '2026-06-14T08:00:00Z';
const LAST_PASS = NOW - 10 * DAY;
const previous = (extra: Partial<StreamBookmark> = {}): StreamBookmark => ({
  replication_key: 'completedAt',
  replication_key_value: BOOKMARK,
  last_modified: 'Sun, 14 Jun 2026 08:00:00 GMT',
  full_pass: { at: iso(LAST_PASS), version: 1_000, rows: 400 },
  ...extra,
});

function line(selected: SelectedStream, state: StreamBookmark | undefined, settings = SETTINGS, store?: StoreView): string {
  return planLine(selected.descriptor, planRun(selected, settings, state, NOW, true, store), state, settings);
}

describe('the plan line', () => {
  it('first run: a full pass and why, its version, each read with its filters (the e-mail hidden), the change store off', () => {
    expect(line(stream('training'), undefined)).toBe(
      `training: plan: full pass (first run: no state for the stream), version ${NOW}, ACTIVATE_VERSION once the whole pass is read and checked; ` +
        'reads: full_pass with filter[program]=prog-01&filter[email]=***, unconditional; change store: off (send_changes_only false)',
    );
  });

  it('a full pass of several reads says each earlier read is asked again with If-Modified-Since before it activates', () => {
    const text = line(stream('training'), undefined, { ...SETTINGS, start_date: '2026-01-01' });
    expect(text).toMatch(/ACTIVATE_VERSION once the whole pass is read and checked \(each read but the last asked again with If-Modified-Since: an unchanged answer proves the reads saw one source\); reads: full_pass with .*; open_rows with /);
  });

  it('incremental: from which bookmark, the open rows read, conditional reads, when the next full pass is due', () => {
    const state = previous({ last_modified_request: undefined });
    const text = line(stream('training'), state);
    expect(text).toMatch(new RegExp(`^training: plan: incremental from bookmark ${BOOKMARK}, next full pass due from ${iso(LAST_PASS + 30 * DAY)}; reads: incremental with filter\\[program\\]=prog-01&filter\\[email\\]=\\*\\*\\*&filter\\[completedAt\\]=>=${BOOKMARK}, unconditional; open_rows with filter\\[program\\]=prog-01&filter\\[email\\]=\\*\\*\\*&filter\\[completed\\]=false, unconditional; change store: off`));
    expect(text).not.toContain('ada@example.com');
  });

  it('the event window: its read and where it starts', () => {
    const state = previous({ replication_key: 'sentAt' });
    const text = line(stream('phishing'), state);
    expect(text).toMatch(/^phishing: plan: incremental from bookmark 2026-06-14T08:00:00Z, next full pass due from \S+; reads: event_window with filter\[employeeNumber\]=\*\*\*&filter\[sentAt\]=>=2026-06-01T12:00:00Z, unconditional;/);
    expect(text).not.toContain('E-0042');
  });

  it('counts the next full pass from the grid point the last one fell due at, not from when it ran', () => {
    const late = previous({ full_pass: { at: iso(LAST_PASS + 5 * 3_600_000), due: iso(LAST_PASS), version: 1_000, rows: 400 } });
    expect(line(stream('training'), late)).toContain(`, next full pass due from ${iso(LAST_PASS + 30 * DAY)};`);
  });

  it('a full pass due by the interval says when the last one ran', () => {
    const state = previous({ full_pass: { at: iso(NOW - 31 * DAY), version: 1_000, rows: 400 } });
    expect(line(stream('training'), state)).toMatch(new RegExp(`^training: plan: full pass \\(due: last full pass ${iso(NOW - 31 * DAY)}, every 30 days \\(full_pass_interval_days\\)\\), version ${NOW},`));
  });

  it('a change pass: due since the last pass, the store sending only what changed', () => {
    const state = previous({ change_pass: { at: iso(NOW - 2 * DAY) } });
    const text = line(stream('training'), state, { ...SETTINGS, send_changes_only: true }, { trusted: true });
    expect(text).toMatch(new RegExp(`^training: plan: change pass \\(due: last pass ${iso(NOW - 2 * DAY)}, every day \\(change_pass_interval_days\\)\\), from bookmark ${BOOKMARK}; reads: change_pass with `));
    expect(text).toMatch(/; change store: sends only the rows that changed, kept in the state up to 1024 KiB, beyond that in (the store folder|store_directory \S+)$/);
  });

  it('a store it cannot trust makes a full pass that says so; FULL_TABLE says so too', () => {
    expect(line(stream('training'), previous(), { ...SETTINGS, send_changes_only: true }, { trusted: false, why: 'no generation' })).toMatch(
      /^training: plan: full pass \(the change store cannot be trusted\), version \d+, .*; change store: sends every row and records it, kept in the state up to 1024 KiB, beyond that in (the store folder|store_directory \S+)$/,
    );
    expect(line(stream('training', 'FULL_TABLE'), previous(), { ...SETTINGS, emit_activate_version_messages: false })).toMatch(
      /^training: plan: full pass \(FULL_TABLE: every run reads the whole dump\), without ACTIVATE_VERSION; reads: full_pass with filter\[program\]=prog-01&filter\[email\]=\*\*\*, unconditional; change store: off/,
    );
    expect(line(stream('training', 'FULL_TABLE'), previous(), { ...SETTINGS, send_changes_only: true })).toMatch(/; change store: not used \(a FULL_TABLE run sends every row\)$/);
    expect(line(stream('training'), previous(), { ...SETTINGS, send_changes_only: true })).toMatch(/; change store: not used \(it could not be opened\)$/);
  });

  it('a conditional read names the If-Modified-Since it sends', () => {
    const selected = stream('training');
    const first = planRun(selected, SETTINGS, previous(), NOW, true);
    const state = previous({ last_modified_request: first.reads[0].requestFingerprint(BOOKMARK) });
    expect(line(selected, state)).toMatch(/reads: incremental with \S+, If-Modified-Since Sun, 14 Jun 2026 08:00:00 GMT;/);
  });
});
