import { describe, expect, it } from 'vitest';
import { DUE_SLACK_MS, dueOfRun, gridOf, intervalMs, isDue, nextDue, slackOf, type Schedule } from '../../../src/sync/plan/pass-schedule.js';

/** When a periodic pass falls due: on a fixed grid, a run up to an hour before a grid point making that point's pass. */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Midnight UTC of the first simulated day. */
const DAY_0 = Date.parse('2026-03-02T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

/** The time `hour` (decimal hours) of simulated day `day`, plus `offset` ms. */
const on = (day: number, hour: number, offset = 0): number => DAY_0 + day * DAY + hour * HOUR + offset;

interface Run {
  readonly now: number;
  /** The interval setting of this run, in days. */
  readonly days: number;
}

/** Runs of one schedule from no pass at all, as the state carries it from run to run: each pass recorded with its grid point; the passes made. */
function passes(runs: readonly Run[], grid?: number): Array<{ at: string; due: string }> {
  const made: Array<{ at: string; due: string }> = [];
  let current = grid;
  for (const { now, days } of runs) {
    const schedule: Schedule = { grid: current, intervalMs: intervalMs(days) };
    if (!isDue(schedule, now)) continue;
    current = dueOfRun(schedule, now);
    made.push({ at: iso(now), due: iso(current) });
  }
  return made;
}

const daily = (times: readonly number[], days = 1): Run[] => times.map((now) => ({ now, days }));
const atTimes = (made: ReadonlyArray<{ at: string }>): string[] => made.map((pass) => pass.at);

describe('a daily pass', () => {
  it('is made by a run 2 minutes short of 24 h after the last one, every day (a plain 24 h interval skipped every other day)', () => {
    const runs = [on(0, 6), on(1, 6, -2 * MINUTE), on(2, 6), on(3, 6, -2 * MINUTE), on(4, 6)];
    expect(atTimes(passes(daily(runs)))).toEqual(runs.map(iso));
  });

  it('is made by a run 2 seconds short of 24 h after the last one, every day', () => {
    const runs = [on(0, 6), on(1, 6, -2 * SECOND), on(2, 6, -4 * SECOND), on(3, 6), on(4, 6, -2 * SECOND)];
    expect(atTimes(passes(daily(runs)))).toEqual(runs.map(iso));
  });

  it('scheduled at 00:00 with ±2 s of jitter: one pass each run, all on the 00:00 grid (even a run that starts the evening before)', () => {
    const jitter = [0, -2, 2, -1, -2, 1, 2, -2, 0, -2, 2, 2, -2, -2];
    const runs = jitter.map((seconds, day) => on(day, 0, seconds * SECOND));
    const made = passes(daily(runs));
    expect(atTimes(made)).toEqual(runs.map(iso));
    expect(made.slice(1).map((pass) => pass.due)).toEqual(runs.slice(1).map((_, day) => iso(on(day + 1, 0))));
  });

  it('scheduled at 12:00 with ±2 min of jitter: one pass each run, on the 12:00 grid', () => {
    const jitter = [0, -2, 2, -2, 1, -1, 2, -2, -2, 2];
    const runs = jitter.map((minutes, day) => on(day, 12, minutes * MINUTE));
    const made = passes(daily(runs));
    expect(atTimes(made)).toEqual(runs.map(iso));
    expect(made.at(-1)?.due).toBe(iso(on(9, 12)));
  });

  it('with hourly runs: one pass a day at the same hour, not creeping an hour earlier each day', () => {
    const runs = Array.from({ length: 8 * 24 - 1 }, (_, hour) => on(0, 6 + hour));
    const made = passes(daily(runs));
    expect(made).toHaveLength(8);
    const hours = made.map((pass) => new Date(pass.at).getUTCHours());
    // The first pass at 06:00 sets the grid; the run an hour before each later grid point makes its pass.
    expect(hours).toEqual([6, 5, 5, 5, 5, 5, 5, 5]);
    expect(made.map((pass) => pass.due)).toEqual(made.map((_, day) => iso(on(day, 6))));
  });

  it('with hourly runs a few seconds off the hour: still one pass a day, between 23 and 25 hours apart', () => {
    const jitter = [2, -2, -1, 1, 0];
    const runs = Array.from({ length: 10 * 24 }, (_, hour) => on(0, 6 + hour, jitter[hour % jitter.length] * SECOND));
    const made = passes(daily(runs)).map((pass) => Date.parse(pass.at));
    expect(made).toHaveLength(10);
    for (let i = 1; i < made.length; i++) expect(made[i] - made[i - 1]).toBeGreaterThanOrEqual(23 * HOUR - 4 * SECOND);
    for (let i = 1; i < made.length; i++) expect(made[i] - made[i - 1]).toBeLessThanOrEqual(25 * HOUR + 4 * SECOND);
  });

  it('run 5 h late keeps its grid: the next day\'s run on time makes its pass too', () => {
    const runs = [on(0, 6), on(1, 11), on(2, 6), on(3, 6, -2 * MINUTE)];
    const made = passes(daily(runs));
    expect(atTimes(made)).toEqual(runs.map(iso));
    expect(made[1].due).toBe(iso(on(1, 6)));
  });

  it('after missed days is one pass, on the grid, and the next day\'s early run makes its pass', () => {
    const runs = [on(0, 6), on(4, 6, 30 * MINUTE), on(5, 6, -2 * MINUTE)];
    const made = passes(daily(runs));
    expect(atTimes(made)).toEqual(runs.map(iso));
    expect(made.map((pass) => pass.due)).toEqual([iso(on(0, 6)), iso(on(4, 6)), iso(on(5, 6))]);
  });

  it('is not made by a run more than the slack early, nor twice in a day', () => {
    expect(atTimes(passes(daily([on(0, 6), on(1, 5, -1 * SECOND), on(1, 5), on(1, 6)])))).toEqual([iso(on(0, 6)), iso(on(1, 5))]);
  });
});

describe('a weekly or monthly pass', () => {
  it('every 7 days: made by the daily run 2 minutes early on its day, and on no other day', () => {
    const runs = Array.from({ length: 22 }, (_, day) => on(day, 6, day % 7 === 0 && day > 0 ? -2 * MINUTE : 0));
    expect(atTimes(passes(daily(runs, 7)))).toEqual([on(0, 6), on(7, 6, -2 * MINUTE), on(14, 6, -2 * MINUTE), on(21, 6, -2 * MINUTE)].map(iso));
  });

  it('every 30 days: made by the daily run 2 minutes early on its day', () => {
    const runs = Array.from({ length: 61 }, (_, day) => on(day, 6, day % 30 === 0 && day > 0 ? -2 * MINUTE : 0));
    expect(atTimes(passes(daily(runs, 30)))).toEqual([on(0, 6), on(30, 6, -2 * MINUTE), on(60, 6, -2 * MINUTE)].map(iso));
  });
});

describe('the interval setting changed between runs', () => {
  it('counts from the grid: a longer interval waits for its point, a shorter one falls due at once and keeps the hour', () => {
    const runs: Run[] = [
      { now: on(0, 6), days: 1 },
      { now: on(1, 6), days: 2 },
      { now: on(2, 6, -2 * MINUTE), days: 2 },
      { now: on(3, 6, -2 * MINUTE), days: 1 },
    ];
    expect(atTimes(passes(runs))).toEqual([on(0, 6), on(2, 6, -2 * MINUTE), on(3, 6, -2 * MINUTE)].map(iso));
    const shortened = passes([{ now: on(3, 10), days: 1 }], on(0, 6));
    expect(shortened).toEqual([{ at: iso(on(3, 10)), due: iso(on(3, 6)) }]);
  });
});

describe('a pass that counts as one of the schedule (a full pass is a change pass too)', () => {
  const daily = intervalMs(1);

  it('makes the grid points up to its start plus the slack: the next falls due at the point after', () => {
    // A full pass 2 minutes before the change pass's grid point made it: the next change pass is the next day's.
    expect(nextDue({ grid: on(0, 6), intervalMs: daily, coveredAt: on(1, 6, -2 * MINUTE) })).toBe(on(2, 6));
    expect(isDue({ grid: on(0, 6), intervalMs: daily, coveredAt: on(1, 6, -2 * MINUTE) }, on(1, 7))).toBe(false);
    // One in the afternoon (a store the run could not trust) made the morning's point; the next morning's run makes the next.
    expect(nextDue({ grid: on(0, 6), intervalMs: daily, coveredAt: on(1, 14) })).toBe(on(2, 6));
    expect(isDue({ grid: on(0, 6), intervalMs: daily, coveredAt: on(1, 14) }, on(2, 6, -2 * MINUTE))).toBe(true);
    // One before the grid changes nothing.
    expect(nextDue({ grid: on(3, 6), intervalMs: daily, coveredAt: on(1, 6) })).toBe(on(4, 6));
  });
});

describe('the recorded grid point', () => {
  it('is the pass\'s start for a first pass, and for a pass made before any grid point (it starts a new grid)', () => {
    expect(dueOfRun({ intervalMs: intervalMs(1) }, on(0, 6, 17))).toBe(on(0, 6, 17));
    expect(dueOfRun({ grid: on(0, 6), intervalMs: intervalMs(30) }, on(10, 14))).toBe(on(10, 14));
    // And for a full pass of a stream with no periodic one (interval 0: FULL_TABLE, a store it cannot trust).
    expect(dueOfRun({ grid: on(0, 6), intervalMs: intervalMs(0) }, on(10, 14))).toBe(on(10, 14));
  });

  it('is read from a state of an earlier version (no `due`) as the pass\'s start', () => {
    expect(gridOf({ at: '2026-03-02T06:00:00Z' })).toBe(on(0, 6));
    expect(gridOf({ at: '2026-03-02T06:02:00Z', due: '2026-03-02T06:00:00Z' })).toBe(on(0, 6));
    expect(gridOf(undefined)).toBeUndefined();
    expect(gridOf({ at: 'yesterday' })).toBeUndefined();
    // A pass that started up to the slack before its grid point records that point.
    expect(gridOf({ at: '2026-03-02T05:00:00Z', due: '2026-03-02T06:00:00Z' })).toBe(on(0, 6));
    // The previous version's pass at 06:00 yesterday: today's run 2 minutes early makes the pass, and records the 06:00 point.
    const schedule = { grid: gridOf({ at: '2026-03-02T06:00:00Z' }), intervalMs: intervalMs(1) };
    expect(isDue(schedule, on(1, 6, -2 * MINUTE))).toBe(true);
    expect(dueOfRun(schedule, on(1, 6, -2 * MINUTE))).toBe(on(1, 6));
  });
});

describe('a state whose `at` was moved back by hand (to make a pass due)', () => {
  it('counts from that `at`, as before passes recorded their grid point: the pass falls due a full interval after it', () => {
    const moved = { at: iso(on(0, 6)), due: iso(on(8, 6)) };
    expect(gridOf(moved)).toBe(on(0, 7));
    expect(isDue({ grid: gridOf(moved), intervalMs: intervalMs(7) }, on(7, 6))).toBe(true);
    expect(isDue({ grid: gridOf(moved), intervalMs: intervalMs(7) }, on(7, 6, -1))).toBe(false);
  });
});

describe('the slack', () => {
  it('is an hour, and a quarter of an interval shorter than four hours: passes every half hour with runs every 10 minutes stay every half hour', () => {
    expect(slackOf(intervalMs(1))).toBe(DUE_SLACK_MS);
    expect(DUE_SLACK_MS).toBe(HOUR);
    expect(slackOf(intervalMs(0.5))).toBe(HOUR);
    const runs = Array.from({ length: 12 }, (_, i) => ({ now: on(0, 6) + i * 10 * MINUTE, days: 30 / (24 * 60) }));
    expect(atTimes(passes(runs))).toEqual([0, 30, 60, 90].map((minutes) => iso(on(0, 6) + minutes * MINUTE)));
  });

  it('of an interval too small to count in milliseconds still lets every run make the pass', () => {
    expect(intervalMs(1e-12)).toBe(1);
    expect(atTimes(passes(daily([on(0, 6), on(0, 6, 1), on(0, 7)], 1e-12)))).toHaveLength(3);
  });

  it('lets a twice-daily pass run 2 minutes early', () => {
    expect(atTimes(passes(daily([on(0, 6), on(0, 18, -2 * MINUTE), on(1, 6, -2 * MINUTE)], 0.5)))).toHaveLength(3);
  });
});
