/**
 * Wall-clock time in an IANA time zone, both ways, without a library: the
 * zone's offset at an instant comes from Intl, which is slow, so it is cached
 * per UTC day (the offset changes on a few days a year; on such a day, per
 * quarter hour: every zone's offset is a multiple of 15 minutes and changes
 * only on a quarter hour).
 */

const QUARTER_HOUR = 15 * 60_000;
const HALF_DAY = 12 * 3_600_000;
const DAY = 24 * 3_600_000;
/** A day on which the offset changes: look it up per quarter hour. */
const CHANGES = Number.NaN;

/**
 * UTC, the default source zone, is known without asking Intl: a process's
 * first Intl.DateTimeFormat loads the time-zone data, which costs a good part
 * of Node's own start-up, and most runs need no other zone.
 */
const UTC = 'UTC';

/** Whether the runtime knows the zone (an IANA name such as Europe/Berlin, or UTC). */
export function isTimeZone(name: string): boolean {
  if (name === UTC) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export class TimeZone {
  /** Made at the first offset computed, which UTC never needs. */
  private zoneFormat: Intl.DateTimeFormat | undefined;
  private readonly days = new Map<number, number>();
  private readonly quarters = new Map<number, number>();
  private readonly steady = new Map<number, number>();
  /** The last wall-clock day read and its steady offset (NaN: the offset changes near it): a dump's dates come day by day. */
  private lastWallDay = Number.NaN;
  private lastWallOffset = Number.NaN;
  readonly isUtc: boolean;

  constructor(readonly name: string) {
    this.isUtc = name === UTC || (this.offsetAt(0) === 0 && this.offsetAt(Date.UTC(2020, 6, 1)) === 0 && this.offsetAt(Date.UTC(2020, 0, 1)) === 0);
  }

  private get format(): Intl.DateTimeFormat {
    this.zoneFormat ??= new Intl.DateTimeFormat('en-US', {
      timeZone: this.name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    return this.zoneFormat;
  }

  /** Milliseconds to add to an instant to get the zone's wall clock at it. */
  offsetAt(utcMs: number): number {
    const offset = this.dayOffset(Math.floor(utcMs / DAY));
    return Number.isNaN(offset) ? this.quarterOffset(utcMs) : offset;
  }

  /** The offset through a UTC day, or CHANGES. */
  private dayOffset(day: number): number {
    let offset = this.days.get(day);
    if (offset === undefined) {
      const start = this.computeOffset(day * DAY);
      offset = start === this.computeOffset(day * DAY + DAY - QUARTER_HOUR) ? start : CHANGES;
      if (this.days.size > 100_000) this.days.clear();
      this.days.set(day, offset);
    }
    return offset;
  }

  private quarterOffset(utcMs: number): number {
    const quarter = Math.floor(utcMs / QUARTER_HOUR);
    let offset = this.quarters.get(quarter);
    if (offset === undefined) {
      offset = this.computeOffset(quarter * QUARTER_HOUR);
      if (this.quarters.size > 100_000) this.quarters.clear();
      this.quarters.set(quarter, offset);
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
    const wallDay = Math.floor(wallMs / DAY);
    if (wallDay !== this.lastWallDay) {
      this.lastWallDay = wallDay;
      this.lastWallOffset = this.steadyOffset(wallDay);
    }
    if (!Number.isNaN(this.lastWallOffset)) return wallMs - this.lastWallOffset;
    const before = this.offsetAt(wallMs - HALF_DAY);
    const after = this.offsetAt(wallMs + HALF_DAY);
    // No change of offset within half a day either way: the usual case.
    if (before === after) return wallMs - before;
    const candidates = [wallMs - before, wallMs - after].filter((utc) => this.toWallClock(utc) === wallMs);
    return candidates.length > 0 ? Math.min(...candidates) : wallMs - before;
  }

  /** The offset through the UTC days around a wall-clock day (half a day either way reaches no further), or NaN when it changes in them. */
  private steadyOffset(wallDay: number): number {
    let steady = this.steady.get(wallDay);
    if (steady === undefined) {
      const offset = this.dayOffset(wallDay);
      steady = offset === this.dayOffset(wallDay - 1) && offset === this.dayOffset(wallDay + 1) ? offset : Number.NaN;
      if (this.steady.size > 100_000) this.steady.clear();
      this.steady.set(wallDay, steady);
    }
    return steady;
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
