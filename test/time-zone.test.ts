import { describe, expect, it } from 'vitest';
import { isTimeZone, TimeZone } from '../src/time-zone.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The zone's offset straight from Intl, with no cache, as the reference. */
function intlOffsets(zone: string): (utcMs: number) => number {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  });
  return (utcMs) => offsetFrom(format, utcMs);
}

function offsetFrom(format: Intl.DateTimeFormat, utcMs: number): number {
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(utcMs))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second) - Math.floor(utcMs / 1000) * 1000;
}

describe('TimeZone offsets cached per day (per quarter hour on days the offset changes)', () => {
  // Zones with a one-hour change, a half-hour change (Lord Howe), a 45-minute
  // base offset, and a change at 00:00 local time (Santiago, Havana).
  const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/Santiago', 'America/Havana'];

  for (const zone of zones) {
    it(`agrees with Intl at every quarter hour around each change of ${zone} in 2025`, () => {
      const tz = new TimeZone(zone);
      const reference = intlOffsets(zone);
      const changes: number[] = [];
      for (let at = Date.UTC(2025, 0, 1); at < Date.UTC(2026, 0, 1); at += HOUR) {
        expect(tz.offsetAt(at), new Date(at).toISOString()).toBe(reference(at));
        if (reference(at) !== reference(at + HOUR)) changes.push(at);
      }
      expect(changes.length).toBe(zone === 'Asia/Kathmandu' ? 0 : 2);
      // Around each change, every 5 minutes for a day either side: inside
      // quarters as well as on their edges.
      for (const change of changes) {
        for (let at = change - DAY; at < change + DAY; at += 5 * 60_000) {
          expect(tz.offsetAt(at), new Date(at).toISOString()).toBe(reference(at));
        }
      }
    });
  }

  /** The instant of a wall time by Intl alone: the earlier of the instants showing it, or the offset before a gap. */
  function intlInstant(reference: (utcMs: number) => number, wall: number): number {
    const before = reference(wall - DAY / 2);
    const after = reference(wall + DAY / 2);
    const showing = [wall - before, wall - after].filter((utc) => utc + reference(utc) === wall);
    return showing.length > 0 ? Math.min(...showing) : wall - before;
  }

  for (const zone of zones) {
    it(`reads wall times as Intl does through 2025 in ${zone}, in gaps and overlaps too`, () => {
      const tz = new TimeZone(zone);
      const reference = intlOffsets(zone);
      // Day by day as a dump's dates come: every 20 minutes within two days of a change (its gap or overlap is crossed), every 3 hours elsewhere.
      for (let day = Date.UTC(2025, 0, 1); day < Date.UTC(2026, 0, 1); day += DAY) {
        const nearChange = reference(day - 2 * DAY) !== reference(day + 2 * DAY);
        for (let wall = day; wall < day + DAY; wall += nearChange ? 20 * 60_000 : 3 * HOUR) {
          expect(tz.fromWallClock(wall), new Date(wall).toISOString()).toBe(intlInstant(reference, wall));
        }
      }
    });
  }

  it('turns a wall time back into the instant that shows it, away from any change', () => {
    const tz = new TimeZone('Europe/Berlin');
    const wall = Date.UTC(2025, 6, 1, 12, 0, 0);
    expect(tz.fromWallClock(wall)).toBe(Date.UTC(2025, 6, 1, 10, 0, 0));
    expect(tz.toWallClock(tz.fromWallClock(wall))).toBe(wall);
  });
});

describe('UTC, known without asking Intl', () => {
  it('is a time zone, as Intl says; an unknown name is not', () => {
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
  });

  it('is UTC with the offsets Intl gives it', () => {
    const tz = new TimeZone('UTC');
    const reference = intlOffsets('UTC');
    expect(tz.isUtc).toBe(true);
    for (const utcMs of [0, Date.UTC(2025, 2, 30, 1, 0), Date.UTC(2025, 9, 26, 1, 0), Date.UTC(1969, 11, 31, 23, 59)]) {
      expect(tz.offsetAt(utcMs)).toBe(reference(utcMs));
      expect(tz.fromWallClock(utcMs)).toBe(utcMs);
    }
    expect(new TimeZone('Etc/UTC').isUtc).toBe(true);
    expect(new TimeZone('Europe/Berlin').isUtc).toBe(false);
  });
});
