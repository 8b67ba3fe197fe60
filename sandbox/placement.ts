import type { StreamModel } from './model.js';
import { SECONDS_PER_DAY, WINDOW_END } from './time.js';

/**
 * Where a dataset's dates lie on the calendar. The models generate their
 * history in a fixed window that ends at WINDOW_END; a placement moves all of
 * it by whole days (office hours, midnights and ties stay as they are) and
 * says where the logical clock of later writes starts.
 *
 * - With an anchor (a day), the history ends before that day, whatever the
 *   data: FIXED_ANCHOR gives the dates of every sandbox before the dates
 *   followed the clock (tests and benchmarks compare against those).
 * - Without one, each dataset's newest date lands on the day before the
 *   clock's (UTC) day, so that a client running now meets recent data and no
 *   date lies in the future. Finding the newest date reads every record once.
 */

const DAY = SECONDS_PER_DAY;

/** The anchor of the dates every sandbox served before its dates followed the clock. */
export const FIXED_ANCHOR = '2026-01-01';

export interface Placement {
  /** Seconds added to every date the model generates: whole days. */
  readonly shift: number;
  /** Where the logical clock of appends, updates and simulated days starts (epoch seconds, a midnight UTC): after all history. */
  readonly clockStart: number;
  /** The day (its midnight, epoch seconds) of the initial Last-Modified, a second of it drawn from the seed. */
  readonly modifiedDay: number;
  /** The initial Last-Modified is not before this (epoch seconds): the second after the newest date. */
  readonly modifiedFloor: number;
}

/** The placement of the models' own window: the dates of FIXED_ANCHOR. */
export const UNMOVED: Placement = { shift: 0, clockStart: WINDOW_END, modifiedDay: WINDOW_END, modifiedFloor: 0 };

/** Epoch seconds of the midnight UTC that starts the anchor day `YYYY-MM-DD`. */
export function parseAnchor(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || new Date(ms).toISOString().slice(0, 10) !== text) {
    throw new Error(`anchor must be a day YYYY-MM-DD (the synthetic history ends before it), got ${JSON.stringify(text)}`);
  }
  return ms / 1000;
}

/** The history ends before the anchor day; the logical clock starts at its midnight. */
export function anchoredPlacement(anchor: number): Placement {
  return { shift: anchor - WINDOW_END, clockStart: anchor, modifiedDay: anchor, modifiedFloor: 0 };
}

/** The latest date of any field of the model's first `count` records, as generated (epoch seconds); null when there is none. */
export function newestGenerated(model: StreamModel, count: number): number | null {
  const dates = model.fields.filter((f) => f.kind === 'date').map((f) => f.name);
  let newest: number | null = null;
  for (let index = 0; index < count; index++) {
    const record = model.complete(index, model.identity(index));
    for (const field of dates) {
      const value = record[field];
      if (typeof value === 'number' && (newest === null || value > newest)) newest = value;
    }
  }
  return newest;
}

/**
 * The placement that puts `newest` (a date as generated) on the day before
 * the clock's day, or, with simulated days to apply at start, the history
 * that many days earlier again, so that those days end the day before the
 * clock's. The initial Last-Modified falls on that day too, after the newest
 * date: the same seed and clock's day give the same bytes and Last-Modified.
 */
export function placementBefore(newest: number | null, nowMs: number, simulatedDays: number): Placement {
  const today = Math.floor(nowMs / 1000 / DAY) * DAY;
  const clockStart = simulatedDays > 0 ? today - (simulatedDays + 1) * DAY : today;
  const shift = newest === null ? clockStart - WINDOW_END : clockStart - DAY - Math.floor(newest / DAY) * DAY;
  return { shift, clockStart, modifiedDay: clockStart - DAY, modifiedFloor: newest === null ? 0 : newest + shift + 1 };
}
