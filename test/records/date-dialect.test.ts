import { describe, expect, it } from 'vitest';
import { DateDialect, hasZone } from '../../src/records/date-dialect.js';
import { isTimeZone, TimeZone } from '../../src/time-zone.js';

const iso = (ms: number): string => new Date(ms).toISOString();

describe('dates in the source time zone', () => {
  const berlin = new DateDialect('Europe/Berlin');
  const newYork = new DateDialect('America/New_York');

  it('reads a date-time without a zone, with T or a space, and a date alone, on the zone\'s wall clock', () => {
    expect(iso(berlin.textMs('2024-07-01 12:00:00'))).toBe('2024-07-01T10:00:00.000Z');
    expect(iso(berlin.textMs('2024-01-01T12:00'))).toBe('2024-01-01T11:00:00.000Z');
    expect(iso(berlin.textMs('2024-01-01'))).toBe('2023-12-31T23:00:00.000Z');
    expect(iso(newYork.textMs('2024-07-01 12:00:00.250'))).toBe('2024-07-01T16:00:00.250Z');
  });

  it('reads a date-time that names its zone as it says, whatever the source time zone', () => {
    expect(iso(berlin.textMs('2024-01-01T12:00:00Z'))).toBe('2024-01-01T12:00:00.000Z');
    expect(iso(berlin.textMs('2024-01-01T12:00:00+05:00'))).toBe('2024-01-01T07:00:00.000Z');
    expect(iso(berlin.textMs('2024-01-01 12:00:00-0130'))).toBe('2024-01-01T13:30:00.000Z');
  });

  it('at the spring-forward gap reads a wall time that does not exist with the offset before the change (it lands after it)', () => {
    expect(iso(berlin.textMs('2024-03-31 01:59:59'))).toBe('2024-03-31T00:59:59.000Z');
    expect(iso(berlin.textMs('2024-03-31 02:30:00'))).toBe('2024-03-31T01:30:00.000Z');
    expect(iso(berlin.textMs('2024-03-31 03:00:00'))).toBe('2024-03-31T01:00:00.000Z');
    expect(iso(newYork.textMs('2024-03-10 02:30'))).toBe('2024-03-10T07:30:00.000Z');
  });

  it('at the fall-back repeat reads a wall time that occurs twice as the earlier instant', () => {
    expect(iso(berlin.textMs('2024-10-27 02:30:00'))).toBe('2024-10-27T00:30:00.000Z');
    expect(iso(berlin.textMs('2024-10-27 03:00:00'))).toBe('2024-10-27T02:00:00.000Z');
    expect(iso(newYork.textMs('2024-11-03 01:30'))).toBe('2024-11-03T05:30:00.000Z');
  });

  it('reads epoch seconds and milliseconds, as numbers or digit strings of nine digits or more', () => {
    expect(iso(berlin.numberMs(1_704_067_200))).toBe('2024-01-01T00:00:00.000Z');
    expect(iso(berlin.numberMs(1_704_067_200_123))).toBe('2024-01-01T00:00:00.123Z');
    expect(iso(berlin.textMs('1704067200'))).toBe('2024-01-01T00:00:00.000Z');
    expect(berlin.textMs('20240101')).toBeNaN();
    expect(berlin.numberMs(Number.POSITIVE_INFINITY)).toBeNaN();
  });

  it('writes every date as RFC 3339 in UTC with Z, keeping a text that already is', () => {
    expect(berlin.written('2024-01-01T12:00:00Z', berlin.textMs('2024-01-01T12:00:00Z'))).toBe('2024-01-01T12:00:00Z');
    expect(berlin.written('2024-07-01 12:00:00', berlin.textMs('2024-07-01 12:00:00'))).toBe('2024-07-01T10:00:00Z');
  });

  it('in UTC reads a date-time without a zone as UTC', () => {
    expect(iso(new DateDialect().textMs('2024-07-01 12:00:00'))).toBe('2024-07-01T12:00:00.000Z');
    expect(new TimeZone('UTC').isUtc).toBe(true);
    expect(new TimeZone('Etc/UTC').isUtc).toBe(true);
    expect(new TimeZone('Europe/London').isUtc).toBe(false);
  });

  it('tells a zone from its absence, and knows the IANA names', () => {
    expect(['2024-01-01T12:00:00Z', '2024-01-01T12:00:00.5+02:00', '2024-01-01 12:00-0500'].every(hasZone)).toBe(true);
    expect(['2024-01-01', '2024-01-01T12:00', '2024-01-01 12:00:00'].some(hasZone)).toBe(false);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
  });
});
