import { NO_FILTER, USER_FIELD, type ChangeResult, type Dataset, type RowChange } from './dataset.js';
import { hashInts } from './prng.js';
import { JOINER, MODULES_PER_USER } from './training-model.js';
import { formatInstant, SECONDS_PER_DAY } from './time.js';
import type { RawRecord } from './model.js';

/**
 * Simulated days of an organisation, so that a client can be run on a
 * schedule against data that churns as a real tenant's does. Each day, on the
 * next calendar day after everything written so far:
 * - training: new users join with open assignments; some open rows make
 *   progress, some are completed (a new completedAt); some completed rows are
 *   corrected (a new score, the same completedAt) and some reassigned (open
 *   again, no completedAt);
 * - phishing: a new wave of sends goes out; recipients of sends from the last
 *   seven days open, click and report them (late events, sentAt unchanged);
 * - some users leave: every row of theirs is gone from both reports.
 * Everything is drawn from the seed and the day: the same days give the same
 * data. Days are whole UTC days; the day's changes lie between 08:00 and
 * 18:00, and `now` is its last second, when a daily job would run.
 */

const DAY = SECONDS_PER_DAY;
const HOUR = 3600;
/** Late events arrive for sends of the last this many days. */
export const LATE_EVENT_DAYS = 7;

/** What one simulated day changed. */
export interface DayChanges {
  /** The day, `YYYY-MM-DD`. */
  readonly day: string;
  /** Its last second (RFC 3339): when a daily run sees all of it. */
  readonly now: string;
  readonly training: { joined: number; progressed: number; completed: number; corrected: number; reassigned: number };
  readonly phishing: { sent: number; events: number };
  /** Users who left, from both reports. */
  readonly leavers: string[];
  /** Keys of the training rows corrected: their completedAt did not move, so only a full read sees the change. */
  readonly corrected: Record<string, string>[];
}

export interface ChurnedStreams {
  readonly training: Dataset;
  readonly phishing: Dataset;
}

/** A share of `n`, at least one when there is anything. */
function share(n: number, fraction: number): number {
  return n === 0 ? 0 : Math.max(1, Math.round(n * fraction));
}

/** Open and completed rows, and distinct users, of the live training rows. */
function trainingCounts(training: Dataset): { open: number; completed: number; users: string[] } {
  const snap = training.snapshot();
  let open = 0;
  let completed = 0;
  const users = new Set<string>();
  for (let index = 0; index < snap.count; index++) {
    const record = training.matchAt(snap, index, NO_FILTER);
    if (record === null) continue;
    users.add(record[USER_FIELD] as string);
    if (record.completed === false) open++;
    else if (record.completed === true) completed++;
  }
  return { open, completed, users: [...users] };
}

/**
 * Changes of training rows, one per kind; `h` draws from the row and the day.
 * A row changes in one way a day at most (the open rows of the day are split
 * between progress and completion, the completed ones between correction and
 * reassignment), and a joiner's assignments are left alone on the day they join.
 */
function trainingChanges(h: (index: number, salt: number) => number, start: number): Record<'progress' | 'complete' | 'correct' | 'reassign', RowChange> {
  const openBefore = (r: RawRecord, index: number, half: number): boolean => r.completed === false && (r.availableFrom === null || (r.availableFrom as number) < start) && h(index, 7) % 2 === half;
  const completedBefore = (r: RawRecord, index: number, half: number): boolean => r.completed === true && typeof r.completedAt === 'number' && r.completedAt < start && h(index, 8) % 2 === half;
  return {
    progress: (r, index, position, instant) => {
      if (!openBefore(r, index, 0)) return null;
      return { progress: Math.min(99, (r.progress as number) + 5 + (h(index, 1) % 25)), timeSpentSeconds: ((r.timeSpentSeconds as number | null) ?? 0) + 120 + (h(index, 2) % 900), lastActivityAt: instant + position * 60 };
    },
    complete: (r, index, position, instant) => {
      if (!openBefore(r, index, 1)) return null;
      const completedAt = instant + (position % 4) * 300;
      return { completed: true, completedAt, progress: 100, score: (400 + (h(index, 3) % 601)) / 10, timeSpentSeconds: ((r.timeSpentSeconds as number | null) ?? 0) + 600 + (h(index, 4) % 3000), lastActivityAt: completedAt };
    },
    correct: (r, index) => {
      if (!completedBefore(r, index, 0) || typeof r.score !== 'number') return null;
      const fixed = (400 + (h(index, 5) % 601)) / 10;
      return { score: fixed === r.score ? (fixed >= 100 ? 99.9 : fixed + 0.1) : fixed };
    },
    reassign: (r, index) => (completedBefore(r, index, 1) ? { completed: false, completedAt: null, progress: 0, score: null, lastActivityAt: null } : null),
  };
}

/** The unopened sends of the days [from, until) get opened, and some clicked and reported. */
function lateEvents(from: number, until: number): RowChange {
  return (r: RawRecord, _index, position, instant) => {
    const sentAt = r.sentAt as number | null;
    if (sentAt === null || sentAt < from || sentAt >= until || r.openedAt !== null) return null;
    const openedAt = instant + (position % 30) * 60;
    return { openedAt, clickedAt: position % 2 === 0 ? openedAt + 120 : null, reportedAt: position % 3 === 0 ? openedAt + 600 : null };
  };
}

/** How many rows `change` may take: a scan of the live rows (the dataset then picks them spread out). */
function candidates(dataset: Dataset, change: RowChange, instant: number): number {
  const snap = dataset.snapshot();
  let n = 0;
  for (let index = 0; index < snap.count; index++) {
    const record = dataset.matchAt(snap, index, NO_FILTER);
    if (record !== null && change(record, index, 0, instant) !== null) n++;
  }
  return n;
}

/** Users who leave today: a few of those still here, picked by the seed and the day. */
function leaversOf(users: readonly string[], count: number, seed: number, day: number): string[] {
  if (users.length === 0) return [];
  const sorted = [...users].sort();
  const out = new Set<string>();
  for (let k = 0; out.size < Math.min(count, sorted.length); k++) out.add(sorted[hashInts(seed, day, 41, k) % sorted.length]);
  return [...out];
}

/** One day of churn; `nowMs`: the wall clock, for Last-Modified. */
export function simulateDay({ training, phishing }: ChurnedStreams, seed: number, nowMs: number): DayChanges {
  const start = (Math.floor(Math.max(training.now, phishing.now) / DAY) + 1) * DAY;
  const day = start / DAY;
  const h = (index: number, salt: number): number => hashInts(seed, day, salt, index);
  const changes = trainingChanges(h, start);
  const counts = trainingCounts(training);
  const users = counts.users.length;
  // Leavers go first: nothing of theirs changes on the day they leave.
  const leavers = leaversOf(counts.users, share(users, 0.005), seed, day);
  training.deleteUsers(leavers, nowMs);
  phishing.deleteUsers(leavers, nowMs);
  const joined = training.appendAt(share(users, 0.02) * MODULES_PER_USER, start + 9 * HOUR, nowMs, JOINER);
  const progressed = training.changeAt(share(counts.open, 0.05), start + 10 * HOUR, nowMs, changes.progress, day * 4 + 1);
  const completed = training.changeAt(share(counts.open, 0.03), start + 11 * HOUR, nowMs, changes.complete, day * 4 + 2);
  const corrected = training.changeAt(share(counts.completed, 0.01), start + 12 * HOUR, nowMs, changes.correct, day * 4 + 3);
  const reassigned = training.changeAt(share(counts.completed, 0.005), start + 13 * HOUR, nowMs, changes.reassign, day * 4 + 4);
  // A wave's sends to users who left are not in the dump: the day counts those that are.
  const before = phishing.liveCount;
  phishing.appendAt(share(before, 0.05), start + 8 * HOUR, nowMs);
  const sent = phishing.liveCount - before;
  const late = lateEvents(start - LATE_EVENT_DAYS * DAY, start);
  const events = phishing.changeAt(Math.ceil(candidates(phishing, late, start + 15 * HOUR) * 0.3), start + 15 * HOUR, nowMs, late, day);
  const end = start + DAY - 1;
  training.advanceTo(end);
  phishing.advanceTo(end);
  const n = (result: ChangeResult): number => result.changed;
  return {
    day: formatInstant(start).slice(0, 10),
    now: formatInstant(end),
    training: { joined: n(joined), progressed: n(progressed), completed: n(completed), corrected: n(corrected), reassigned: n(reassigned) },
    phishing: { sent, events: n(events) },
    leavers,
    corrected: corrected.keys,
  };
}
