import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilters, type FilterDialect, UTC_FILTERS } from '../../sandbox/filters.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import { TRAINING } from '../../src/catalog/reports.js';
import { TimeZone } from '../../src/time-zone.js';

/**
 * A service that writes local times (the snake layout) reads a date alone in
 * a filter as a day of its own zone: its 00:00 for operators, the whole local
 * day (23 or 25 hours when the clocks change) for equality. The other
 * layouts read it as a UTC day.
 */

const LOS_ANGELES: FilterDialect = { unixTime: false, days: new TimeZone('America/Los_Angeles') };
const seconds = (iso: string): number => Date.parse(iso) / 1000;

/** Whether a record completed at `iso` passes `filter[completedAt]=value` in `dialect`. */
function passes(value: string, iso: string, dialect: FilterDialect): boolean {
  const [predicate] = compileFilters(TRAINING, new Map([['completedAt', value]]), dialect);
  return predicate.test({ completedAt: seconds(iso) });
}

describe('a date alone in a filter, by the layout\'s calendar', () => {
  it('begins at local midnight in the snake layout\'s zone, at UTC midnight otherwise', () => {
    // 2025-01-10 00:00 in Los Angeles is 08:00Z.
    expect(passes('>=2025-01-10', '2025-01-10T07:59:59Z', LOS_ANGELES)).toBe(false);
    expect(passes('>=2025-01-10', '2025-01-10T08:00:00Z', LOS_ANGELES)).toBe(true);
    expect(passes('<2025-01-10', '2025-01-10T07:59:59Z', LOS_ANGELES)).toBe(true);
    expect(passes('>=2025-01-10', '2025-01-10T00:00:00Z', UTC_FILTERS)).toBe(true);
  });

  it('spans the local day under equality, 23 hours on the day the clocks spring forward', () => {
    // Los Angeles goes from -08:00 to -07:00 on 2025-03-09: its day runs from 08:00Z to 07:00Z the next day.
    expect(passes('2025-03-09', '2025-03-09T07:59:59Z', LOS_ANGELES)).toBe(false);
    expect(passes('2025-03-09', '2025-03-09T08:00:00Z', LOS_ANGELES)).toBe(true);
    expect(passes('2025-03-09', '2025-03-10T06:59:59Z', LOS_ANGELES)).toBe(true);
    expect(passes('2025-03-09', '2025-03-10T07:00:00Z', LOS_ANGELES)).toBe(false);
    expect(passes('>=2025-03-10', '2025-03-10T07:00:00Z', LOS_ANGELES)).toBe(true);
  });
});

// The synthetic completions fall between 08:00 and 19:00 UTC: in these zones some of them on another local date.
describe.each(['Pacific/Honolulu', 'Asia/Tokyo'])('the snake layout in %s over HTTP', (zoneName) => {
  type Rec = Record<string, unknown>;
  const zone = new TimeZone(zoneName);
  let snake: Sandbox;
  let all: Rec[];

  async function dump(filter: string): Promise<Rec[]> {
    const query = filter === '' ? '' : `?${encodeURIComponent('filter[completedAt]')}=${encodeURIComponent(filter)}`;
    const res = await request(`${snake.url}/public/v1/report/training/dump.jsonl${query}`, { headers: { authorization: 'Bearer demo-token' } });
    const text = await res.body.text();
    expect(res.statusCode, text).toBe(200);
    const records = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
    expect([...snake.records('training', filter === '' ? {} : { completedAt: filter })]).toEqual(records);
    return records;
  }

  /** The local date of a record's completion as it is written (`2025-01-10 18:20:00`), or null. */
  const localDate = (r: Rec): string | null => (typeof r.completed_at === 'string' ? r.completed_at.slice(0, 10) : null);
  /** The UTC date of the same instant. */
  const utcDate = (r: Rec): string | null => (typeof r.completed_at === 'string' ? new Date(zone.fromWallClock(Date.parse(`${r.completed_at.replace(' ', 'T')}Z`))).toISOString().slice(0, 10) : null);
  const completed = (on: (date: string) => boolean, dateOf = localDate) => all.filter((r) => dateOf(r) !== null && on(dateOf(r)!));

  beforeAll(async () => {
    snake = await startSandbox({ anchor: FIXED_ANCHOR, seed: 5, trainingRecords: 600, phishingRecords: 0, layout: 'snake', layoutTimeZone: zoneName, log: () => undefined });
    all = await dump('');
  });

  afterAll(async () => {
    await snake.close();
  });

  it('keeps exactly the rows whose local date is on or after, before, or on a day', async () => {
    // A day on which a completion's local and UTC dates differ: there the two calendars disagree.
    const straddling = all.find((r) => localDate(r) !== utcDate(r))!;
    const day = [localDate(straddling)!, utcDate(straddling)!].sort()[1];
    expect(completed((d) => d >= day, utcDate)).not.toEqual(completed((d) => d >= day));
    expect(await dump(`>=${day}`)).toEqual(completed((d) => d >= day));
    expect(await dump(`<${day}`)).toEqual(completed((d) => d < day));
    expect(await dump(day)).toEqual(completed((d) => d === day));
  });
});
