/**
 * Wall-clock time in an IANA time zone, both ways, without a library: the
 * zone's offset at an instant comes from Intl and is cached per quarter hour
 * (every zone's offset is a multiple of 15 minutes and changes only on a
 * quarter hour, so it is constant inside one).
 */

const QUARTER_HOUR = 15 * 60_000;
const HALF_DAY = 12 * 3_600_000;

/** Whether the runtime knows the zone (an IANA name such as Europe/Berlin, or UTC). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export class TimeZone {
  private readonly format: Intl.DateTimeFormat;
  private readonly offsets = new Map<number, number>();
  readonly isUtc: boolean;

  constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    this.isUtc = this.offsetAt(0) === 0 && this.offsetAt(Date.UTC(2020, 6, 1)) === 0 && this.offsetAt(Date.UTC(2020, 0, 1)) === 0;
  }

  /** Milliseconds to add to an instant to get the zone's wall clock at it. */
  offsetAt(utcMs: number): number {
    const bucket = Math.floor(utcMs / QUARTER_HOUR);
    let offset = this.offsets.get(bucket);
    if (offset === undefined) {
      offset = this.computeOffset(bucket * QUARTER_HOUR);
      if (this.offsets.size > 100_000) this.offsets.clear();
      this.offsets.set(bucket, offset);
    }
    return offset;
  }

  /** The wall clock at an instant, as if it were UTC (milliseconds). */
  toWallClock(utcMs: number): number {
    return utcMs + this.offsetAt(utcMs);
  }

  /**
   * The instant of a wall-clock time (given as if it were UTC). A time that
   * occurs twice (clocks set back) is the earlier instant; a time that does
   * not occur (clocks set forward) is read with the offset before the change,
   * so it lands after it, as ISO 8601 libraries do.
   */
  fromWallClock(wallMs: number): number {
    const before = this.offsetAt(wallMs - HALF_DAY);
    const after = this.offsetAt(wallMs + HALF_DAY);
    const candidates = [wallMs - before, wallMs - after].filter((utc) => this.toWallClock(utc) === wallMs);
    return candidates.length > 0 ? Math.min(...candidates) : wallMs - before;
  }

  private computeOffset(utcMs: number): number {
    const parts: Record<string, number> = {};
    for (const part of this.format.formatToParts(new Date(utcMs))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
    // setUTCFullYear, unlike Date.UTC, reads years 0-99 as themselves.
    const wall = new Date(0);
    wall.setUTCFullYear(parts.year, parts.month - 1, parts.day);
    wall.setUTCHours(parts.hour, parts.minute, parts.second, 0);
    return wall.getTime() - Math.floor(utcMs / 1000) * 1000;
  }
}
