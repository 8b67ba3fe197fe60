import { DAY_MS, instantMs } from '../../dates.js';

/**
 * When a periodic pass (a change pass, a full pass) falls due. Passes fall
 * due on a fixed grid: the point the last pass fell due at (its `due`), then
 * every interval after it. A run up to DUE_SLACK_MS before a grid point makes
 * that point's pass, so a daily run that starts a little earlier than
 * yesterday's still makes the daily pass. A pass records the grid point it
 * made (not its start), so passes keep their hour: a late run does not push
 * the next pass later, and frequent runs do not pull it earlier. Pure
 * arithmetic on epoch milliseconds.
 */

/**
 * How much earlier than its due time a run may start and still make the
 * pass: schedulers start a run a little early or late (cron and Airflow by
 * seconds, Kubernetes CronJobs by up to minutes), and a run that misses its
 * pass by two minutes would otherwise leave corrections and leavers for one
 * more day. An hour covers any such jitter and is far from a day.
 */
export const DUE_SLACK_MS = 3_600_000;

/** What the state records of a pass: when it ran, and the grid point it fell due at (absent in states of earlier versions). */
export interface PassTimes {
  readonly at: string;
  readonly due?: string;
}

/**
 * A pass's schedule: the grid point it runs from (absent: no pass yet), its
 * interval, and when a pass that counts as one of it ran last (a full pass
 * is a change pass too).
 */
export interface Schedule {
  readonly grid?: number;
  readonly intervalMs: number;
  readonly coveredAt?: number;
}

/** An interval setting in days, in whole milliseconds (decimals work; a positive one is at least 1 ms, so it divides). */
export function intervalMs(days: number): number {
  return days <= 0 ? 0 : Math.max(1, Math.round(days * DAY_MS));
}

/**
 * The grid point a recorded pass runs from: its `due`, else (an earlier
 * version's state) when it ran; undefined for none. A pass records no point
 * after its start plus the slack, so a `due` later than that means `at` was
 * moved back by hand to make a pass due: then that `at` counts, as it did
 * before passes recorded their grid point.
 */
export function gridOf(pass: PassTimes | undefined): number | undefined {
  if (pass === undefined) return undefined;
  const at = instantMs(pass.at);
  const due = instantMs(pass.due ?? '');
  const grid = Number.isNaN(due) ? at : Math.min(due, at + DUE_SLACK_MS);
  return Number.isNaN(grid) ? undefined : grid;
}

/** The slack of an interval: an hour, or a quarter of the interval when that is less (under four hours), so a pass still waits most of its interval. */
export function slackOf(interval: number): number {
  return Math.min(DUE_SLACK_MS, interval / 4);
}

/**
 * The grid point the next pass falls due at: the first after the grid that
 * a covering pass did not make already (one that ran no more than the slack
 * before it). Undefined without a grid: the pass is due now.
 */
export function nextDue({ grid, intervalMs: interval, coveredAt }: Schedule): number | undefined {
  if (grid === undefined) return undefined;
  const covered = coveredAt === undefined ? 0 : Math.floor((coveredAt + slackOf(interval) - grid) / interval) + 1;
  return grid + Math.max(1, covered) * interval;
}

/** Whether a run starting `now` makes the pass: no grid yet, or its next grid point is at most the slack ahead. */
export function isDue(schedule: Schedule, now: number): boolean {
  const next = nextDue(schedule);
  return next === undefined || now >= next - slackOf(schedule.intervalMs);
}

/**
 * The grid point a pass run at `now` records: the latest not after now
 * plus the slack (a pass run late, or after missed runs, keeps the grid);
 * `now` when the pass made no grid point (the first pass, or one run before
 * its time: a full pass because the store could not be trusted starts a new
 * grid, as it reconciled the table; and a full pass of a stream with no
 * periodic one, interval 0).
 */
export function dueOfRun({ grid, intervalMs: interval }: Schedule, now: number): number {
  if (grid === undefined || interval <= 0) return now;
  const points = Math.floor((now + slackOf(interval) - grid) / interval);
  return points >= 1 ? grid + points * interval : now;
}
