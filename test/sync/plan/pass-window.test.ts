import { describe, expect, it } from 'vitest';
import { insideWindow, LONGEST_WAIT_MS, passMayRun } from '../../../src/sync/plan/pass-window.js';

/** Off-peak hours a due pass waits for, on the service's wall clock, at most a day. */

const at = (iso: string): number => Date.parse(iso);

describe('pass_window', () => {
  it('holds the hours from its start up to (not including) its end, on the wall clock of the zone', () => {
    expect(insideWindow('01:00-05:00', 'UTC', at('2026-06-15T00:59:59Z'))).toBe(false);
    expect(insideWindow('01:00-05:00', 'UTC', at('2026-06-15T01:00:00Z'))).toBe(true);
    expect(insideWindow('01:00-05:00', 'UTC', at('2026-06-15T04:59:59Z'))).toBe(true);
    expect(insideWindow('01:00-05:00', 'UTC', at('2026-06-15T05:00:00Z'))).toBe(false);
    // 01:30 in Berlin (summer, UTC+2) is 23:30 UTC the day before.
    expect(insideWindow('01:00-05:00', 'Europe/Berlin', at('2026-06-14T23:30:00Z'))).toBe(true);
    expect(insideWindow('01:00-05:00', 'America/Los_Angeles', at('2026-06-15T03:00:00Z'))).toBe(false);
  });

  it('may pass midnight', () => {
    expect(insideWindow('22:00-04:00', 'UTC', at('2026-06-15T23:00:00Z'))).toBe(true);
    expect(insideWindow('22:00-04:00', 'UTC', at('2026-06-15T03:59:00Z'))).toBe(true);
    expect(insideWindow('22:00-04:00', 'UTC', at('2026-06-15T12:00:00Z'))).toBe(false);
  });

  it('that passes midnight holds its start and not its end, as one that does not', () => {
    expect(insideWindow('22:00-04:00', 'UTC', at('2026-06-15T21:59:59Z'))).toBe(false);
    expect(insideWindow('22:00-04:00', 'UTC', at('2026-06-15T22:00:00Z'))).toBe(true);
    expect(insideWindow('22:00-04:00', 'UTC', at('2026-06-15T00:00:00Z'))).toBe(true);
    expect(insideWindow('22:00-04:00', 'UTC', at('2026-06-15T04:00:00Z'))).toBe(false);
  });

  it('lets a due pass run at once without a window, inside it, or once it waited the longest wait (a day) past its due time', () => {
    const noon = at('2026-06-15T12:00:00Z');
    expect(passMayRun(undefined, 'UTC', noon, noon)).toBe(true);
    expect(passMayRun('01:00-05:00', 'UTC', noon, noon - 3_600_000)).toBe(false);
    expect(passMayRun('01:00-05:00', 'UTC', noon, noon - LONGEST_WAIT_MS)).toBe(true);
    expect(passMayRun('01:00-05:00', 'UTC', at('2026-06-16T02:00:00Z'), noon)).toBe(true);
    expect(LONGEST_WAIT_MS).toBe(86_400_000);
  });

  it('counts a run up to the schedule\'s slack (an hour) early as having waited the longest wait: the next day\'s run 2 minutes early', () => {
    const noon = at('2026-06-15T12:00:00Z');
    expect(passMayRun('01:00-05:00', 'UTC', noon + LONGEST_WAIT_MS - 2 * 60_000, noon)).toBe(true);
    expect(passMayRun('01:00-05:00', 'UTC', noon + LONGEST_WAIT_MS - 3_600_000, noon)).toBe(true);
    expect(passMayRun('01:00-05:00', 'UTC', noon + LONGEST_WAIT_MS - 3_600_001, noon)).toBe(false);
  });
});
