import { describe, expect, it } from 'vitest';
import { buildQuery, filterDay, shownQuery } from '../../src/http/query.js';
import { formatInstant } from '../../src/dates.js';
import { TimeZone } from '../../src/time-zone.js';
import { PHISHING, TRAINING } from '../../src/catalog/reports.js';
import { dumpUrl } from '../../src/http/client.js';

const bound = Date.UTC(2024, 4, 1, 8);

describe('the incremental filter combines with configured filters', () => {
  it('adds >= bookmark when no filter names the replication key', () => {
    expect(buildQuery(TRAINING, { program: 'p-1', completed: true }, bound).query).toEqual([
      ['filter[program]', 'p-1'],
      ['filter[completed]', 'true'],
      ['filter[completedAt]', '>=2024-05-01T08:00:00Z'],
    ]);
    expect(buildQuery(PHISHING, {}, undefined).query).toEqual([]);
  });

  it('keeps a configured lower bound when it is later, and the bookmark when it is later', () => {
    expect(buildQuery(PHISHING, { sentAt: '>=2025-01-01' }, bound).query).toEqual([['filter[sentAt]', '>=2025-01-01']]);
    expect(buildQuery(PHISHING, { sentAt: '>2020-01-01' }, bound).query).toEqual([['filter[sentAt]', '>=2024-05-01T08:00:00Z']]);
  });

  it('sends a configured upper bound as is and leaves the lower bound to the client side', () => {
    const q = buildQuery(TRAINING, { completedAt: '<2025-01-01' }, bound);
    expect(q.query).toEqual([['filter[completedAt]', '<2025-01-01']]);
    expect(q.clientLowerBoundMs).toBe(bound);
  });

  it('never puts a value into the URL unescaped', () => {
    const url = dumpUrl('https://api.example.com', { stream: TRAINING, format: 'jsonl', query: [['filter[email]', 'a+b&c=d@example.com'], ['filter[completedAt]', '>=2024-05-01T08:00:00+02:00']] });
    expect(url).toBe('https://api.example.com/public/v1/report/training/dump.jsonl?filter%5Bemail%5D=a%2Bb%26c%3Dd%40example.com&filter%5BcompletedAt%5D=%3E%3D2024-05-01T08%3A00%3A00%2B02%3A00');
  });
});

describe('filter_date_format date sends a day that has begun by the bound on both calendars, UTC and source_timezone', () => {
  const day = (iso: string, zone: string): string => filterDay(Date.parse(iso), zone);

  it('in UTC, the UTC day of the bound', () => {
    expect(day('2024-05-01T00:00:00Z', 'UTC')).toBe('2024-05-01');
    expect(day('2024-05-01T23:59:59.999Z', 'UTC')).toBe('2024-05-01');
    expect(buildQuery(TRAINING, {}, bound, 'date').query).toEqual([['filter[completedAt]', '>=2024-05-01']]);
  });

  it('west of UTC, the local day: an evening bound is on the day before its UTC day', () => {
    // America/Los_Angeles is UTC-7 in May: local midnight is 07:00Z.
    expect(day('2024-05-01T06:59:59Z', 'America/Los_Angeles')).toBe('2024-04-30');
    expect(day('2024-05-01T07:00:00Z', 'America/Los_Angeles')).toBe('2024-05-01');
    expect(day('2024-05-02T02:00:00Z', 'America/Los_Angeles')).toBe('2024-05-01');
    expect(day('2024-05-01T09:59:59Z', 'Pacific/Honolulu')).toBe('2024-04-30');
    expect(buildQuery(TRAINING, {}, Date.parse('2024-05-02T02:00:00Z'), 'date', 'America/Los_Angeles').query).toEqual([['filter[completedAt]', '>=2024-05-01']]);
  });

  it('east of UTC, the UTC day: the local day may begin after the bound on the UTC calendar', () => {
    // Asia/Tokyo is UTC+9: local midnight of 2024-05-02 is 2024-05-01T15:00Z.
    expect(day('2024-05-01T14:59:59Z', 'Asia/Tokyo')).toBe('2024-05-01');
    expect(day('2024-05-01T15:00:00Z', 'Asia/Tokyo')).toBe('2024-05-01');
    expect(day('2024-05-01T12:00:00Z', 'Pacific/Auckland')).toBe('2024-05-01');
    expect(day('2024-05-01T11:59:59Z', 'Pacific/Auckland')).toBe('2024-05-01');
  });

  it('on the days clocks change, by the offset in force at the bound', () => {
    // America/New_York springs forward 2024-03-10 at 07:00Z (EST to EDT), falls back 2024-11-03 at 06:00Z.
    expect(day('2024-03-10T04:59:59Z', 'America/New_York')).toBe('2024-03-09');
    expect(day('2024-03-10T05:00:00Z', 'America/New_York')).toBe('2024-03-10');
    expect(day('2024-03-11T03:59:59Z', 'America/New_York')).toBe('2024-03-10');
    expect(day('2024-03-11T04:00:00Z', 'America/New_York')).toBe('2024-03-11');
    expect(day('2024-11-03T05:30:00Z', 'America/New_York')).toBe('2024-11-03');
    expect(day('2024-11-03T06:30:00Z', 'America/New_York')).toBe('2024-11-03');
    expect(day('2024-11-04T04:59:59Z', 'America/New_York')).toBe('2024-11-03');
    expect(day('2024-11-04T05:00:00Z', 'America/New_York')).toBe('2024-11-04');
    // Europe/Berlin springs forward 2024-03-31 at 01:00Z: still the UTC day, east of UTC.
    expect(day('2024-03-31T22:30:00Z', 'Europe/Berlin')).toBe('2024-03-31');
  });

  it('never starts after the bound, read on the UTC calendar or the zone\'s, and is one of the two days', () => {
    const zones = ['America/Los_Angeles', 'America/New_York', 'America/Santiago', 'Pacific/Honolulu', 'Asia/Tokyo', 'Asia/Kathmandu', 'Pacific/Auckland', 'Pacific/Kiritimati'];
    for (const name of zones) {
      const zone = new TimeZone(name);
      // Every fourth local midnight of 2024, the second before it and noon.
      const bounds = Array.from({ length: 92 }, (_, i) => zone.fromWallClock(Date.UTC(2024, 0, 1 + 4 * i))).flatMap((midnight) => [midnight - 1000, midnight, midnight + 12 * 3_600_000]);
      for (const ms of bounds) {
        const sent = filterDay(ms, name);
        const utcStart = Date.parse(`${sent}T00:00:00Z`);
        const at = `${name} ${new Date(ms).toISOString()}`;
        expect(utcStart, at).toBeLessThanOrEqual(ms);
        expect(zone.fromWallClock(utcStart), at).toBeLessThanOrEqual(ms);
        expect([formatInstant(ms).slice(0, 10), formatInstant(zone.toWallClock(ms)).slice(0, 10)], at).toContain(sent);
      }
    }
  });

  it('sends configured date filters as written, whatever the zone', () => {
    expect(buildQuery(PHISHING, { sentAt: '>=2025-01-01' }, bound, 'date', 'America/Los_Angeles').query).toEqual([['filter[sentAt]', '>=2025-01-01']]);
    expect(buildQuery(TRAINING, { completedAt: '<2025-01-01' }, bound, 'date', 'America/Los_Angeles').query).toEqual([['filter[completedAt]', '<2025-01-01']]);
  });
});

describe('a query as a log line shows it', () => {
  it('hides the value of every filter on a personal field (e-mail, user id, employee number), shows the others as sent', () => {
    const training = buildQuery(TRAINING, { program: 'prog-01', email: 'ada@example.com', user: 'u-4711', completed: true }, bound).query;
    expect(shownQuery(TRAINING, training)).toBe('filter[program]=prog-01&filter[user]=***&filter[email]=***&filter[completed]=true&filter[completedAt]=>=2024-05-01T08:00:00Z');
    const phishing = buildQuery(PHISHING, { employeeNumber: 'E-0042', campaign: 'c-1' }, undefined).query;
    expect(shownQuery(PHISHING, phishing)).toBe('filter[employeeNumber]=***&filter[campaign]=c-1');
  });

  it('escapes what would break the line or the query (a line break, an &)', () => {
    expect(shownQuery(TRAINING, [['filter[program]', 'a&b\nc']])).toBe('filter[program]=a%26b%0Ac');
    expect(shownQuery(TRAINING, [])).toBe('');
  });
});
