import { DAY_MS } from '../../dates.js';
import { TimeZone } from '../../time-zone.js';
import { DUE_SLACK_MS } from './pass-schedule.js';

/**
 * The off-peak hours a due pass waits for (pass_window): the service asks
 * clients to spread bulk requests over off-peak hours, and a pass reads the
 * whole dump. A pass that falls due outside the window waits for a run
 * inside it, but never longer than `LONGEST_WAIT_MS` past its due time (the
 * grid point, pass-schedule.ts): a schedule whose runs all fall outside the
 * window still gets its passes.
 */

/** The longest a due pass waits for a run inside the window. */
export const LONGEST_WAIT_MS = DAY_MS;

const MINUTE_MS = 60_000;

/** `HH:MM-HH:MM` as minutes of the day; the end may be before the start (the window passes midnight). */
function windowMinutes(window: string): [number, number] {
  const [start, end] = window.split('-').map((time) => {
    const [hours, minutes] = time.split(':').map(Number);
    return hours * 60 + minutes;
  });
  return [start, end];
}

/** Whether `now` lies inside the window, on the wall clock of `timeZone`. */
export function insideWindow(window: string, timeZone: string, now: number): boolean {
  const [start, end] = windowMinutes(window);
  const wall = new TimeZone(timeZone).toWallClock(now);
  const minute = Math.floor((((wall % DAY_MS) + DAY_MS) % DAY_MS) / MINUTE_MS);
  return start <= end ? minute >= start && minute < end : minute >= start || minute < end;
}

/**
 * Whether a pass due since `dueMs` (its grid point) runs now: no window,
 * inside it, or it waited the longest wait, a run up to the schedule's slack
 * early counting (the run a day later, started two minutes earlier than the
 * one that found the pass due).
 */
export function passMayRun(window: string | undefined, timeZone: string, now: number, dueMs: number): boolean {
  return window === undefined || insideWindow(window, timeZone, now) || now >= dueMs + LONGEST_WAIT_MS - DUE_SLACK_MS;
}
