/**
 * Date handling on the hot path. Record dates arrive as RFC 3339 strings, maybe
 * with an offset, a space instead of `T`, or no time at all. Targets need UTC
 * with `Z` (some drop an offset instead of converting it), and bookmarks need
 * instants, not strings. Parsing is done by character codes: `new Date(string)`
 * accepts too much and is slow.
 */

const DIGIT_0 = 48;

function digits(s: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) {
    const d = s.charCodeAt(i) - DIGIT_0;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Date.UTC for the fields `instantMs` has checked (month 0-11, a real day of
 * it, year 0-9999), by arithmetic on the proleptic Gregorian calendar: the
 * builtin costs a call per date, and reads years 0-99 as 1900-1999.
 */
function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  return daysFromCivil(year, month + 1, day) * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + ms;
}

/** Days from 1970-01-01 to a date, counting in 400-year eras from March (so leap days fall last). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

export interface ParsedInstant {
  /** Milliseconds since the epoch. */
  readonly ms: number;
  /** True when the input was already `YYYY-MM-DDTHH:MM:SS[.f]Z`, the form we emit. */
  readonly canonical: boolean;
}

/**
 * Parses `YYYY-MM-DD`, or `YYYY-MM-DD[T ]HH:MM[:SS[.fraction]][Z|±HH:MM|±HHMM]`.
 * A date-time without a zone is taken as UTC. Returns undefined when the text
 * is not such a date.
 */
export function parseInstant(s: string): ParsedInstant | undefined {
  const ms = instantMs(s);
  return Number.isNaN(ms) ? undefined : { ms, canonical: isEmittedForm(s) };
}

/**
 * Whether a text that `instantMs` accepted is already in the form we emit,
 * `YYYY-MM-DDTHH:MM:SS[.fraction]Z`: an upper-case `T` and `Z`, seconds
 * present, and no leap second (written as :59). A few character checks, so
 * the per-record path can copy such a date instead of formatting it.
 */
export function isEmittedForm(s: string): boolean {
  const len = s.length;
  return (
    len >= 20 &&
    s.charCodeAt(10) === 84 /* T */ &&
    s.charCodeAt(len - 1) === 90 /* Z */ &&
    s.charCodeAt(16) === 58 /* : */ &&
    !(s.charCodeAt(17) === 54 && s.charCodeAt(18) === 48) /* :60 */
  );
}

/** Milliseconds since the epoch, or NaN; allocation-free for the per-record path. */
export function instantMs(s: string): number {
  const len = s.length;
  if (len < 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return Number.NaN;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]) return Number.NaN;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return Number.NaN;
  if (len === 10) return utc(year, month - 1, day);

  const sep = s.charCodeAt(10);
  if (sep !== 84 /* T */ && sep !== 32 /* space */ && sep !== 116 /* t */) return Number.NaN;
  if (len < 16 || s.charCodeAt(13) !== 58) return Number.NaN;
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return Number.NaN;
  let i = 16;
  let second = 0;
  let ms = 0;
  if (i < len && s.charCodeAt(i) === 58) {
    second = digits(s, i + 1, 2);
    if (second < 0 || second > 60) return Number.NaN;
    i += 3;
    if (i < len && s.charCodeAt(i) === 46) {
      i++;
      const fracStart = i;
      let scale = 100;
      while (i < len) {
        const d = s.charCodeAt(i) - DIGIT_0;
        if (d < 0 || d > 9) break;
        ms += d * scale;
        scale /= 10;
        i++;
      }
      if (i === fracStart) return Number.NaN;
      ms = Math.floor(ms);
    }
  }
  // A leap second is the last second of the minute for ordering purposes (and
  // is written as :59, since strict RFC 3339 validators reject most :60s).
  const leap = second === 60;
  if (leap) second = 59;
  const local = utc(year, month - 1, day, hour, minute, second, ms);
  if (i === len) return local;
  const zone = s.charCodeAt(i);
  if (zone === 90 /* Z */ || zone === 122 /* z */) {
    if (i + 1 !== len) return Number.NaN;
    return local;
  }
  if (zone !== 43 /* + */ && zone !== 45 /* - */) return Number.NaN;
  const offHour = digits(s, i + 1, 2);
  let offMinute: number;
  if (len === i + 6 && s.charCodeAt(i + 3) === 58) offMinute = digits(s, i + 4, 2);
  else if (len === i + 5) offMinute = digits(s, i + 3, 2);
  else if (len === i + 3) offMinute = 0;
  else return Number.NaN;
  if (offHour < 0 || offHour > 23 || offMinute < 0 || offMinute > 59) return Number.NaN;
  const offset = (offHour * 60 + offMinute) * 60_000 * (zone === 43 ? 1 : -1);
  return local - offset;
}

/** Two or four ASCII digits of `b` from `at` as a number, or -1. */
function digitBytes(b: Uint8Array, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const d = b[i] - DIGIT_0;
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * `instantMs` read on the bytes `b[start..end)` of a JSON string's text, so
 * the per-record path makes no string of a date it only checks. The same
 * grammar, position by position (test/dates.test.ts compares the two on a
 * corpus); any byte outside ASCII makes it NaN, as any such character does there.
 */
export function instantMsBytes(b: Uint8Array, start: number, end: number): number {
  const len = end - start;
  if (len < 10 || b[start + 4] !== 45 || b[start + 7] !== 45) return Number.NaN;
  const year = digitBytes(b, start, 4);
  const month = digitBytes(b, start + 5, 2);
  const day = digitBytes(b, start + 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]) return Number.NaN;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return Number.NaN;
  if (len === 10) return utc(year, month - 1, day);

  const sep = b[start + 10];
  if (sep !== 84 /* T */ && sep !== 32 /* space */ && sep !== 116 /* t */) return Number.NaN;
  if (len < 16 || b[start + 13] !== 58) return Number.NaN;
  const hour = digitBytes(b, start + 11, 2);
  const minute = digitBytes(b, start + 14, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return Number.NaN;
  let i = start + 16;
  let second = 0;
  let ms = 0;
  if (i < end && b[i] === 58) {
    second = i + 3 <= end ? digitBytes(b, i + 1, 2) : -1;
    if (second < 0 || second > 60) return Number.NaN;
    i += 3;
    if (i < end && b[i] === 46) {
      i++;
      const fracStart = i;
      let scale = 100;
      while (i < end) {
        const d = b[i] - DIGIT_0;
        if (!(d >= 0 && d <= 9)) break;
        ms += d * scale;
        scale /= 10;
        i++;
      }
      if (i === fracStart) return Number.NaN;
      ms = Math.floor(ms);
    }
  }
  const leap = second === 60;
  if (leap) second = 59;
  const local = utc(year, month - 1, day, hour, minute, second, ms);
  if (i === end) return local;
  const zone = b[i];
  if (zone === 90 /* Z */ || zone === 122 /* z */) return i + 1 === end ? local : Number.NaN;
  if (zone !== 43 /* + */ && zone !== 45 /* - */) return Number.NaN;
  const offHour = i + 3 <= end ? digitBytes(b, i + 1, 2) : -1;
  let offMinute: number;
  if (end === i + 6 && b[i + 3] === 58) offMinute = digitBytes(b, i + 4, 2);
  else if (end === i + 5) offMinute = digitBytes(b, i + 3, 2);
  else if (end === i + 3) offMinute = 0;
  else return Number.NaN;
  if (offHour < 0 || offHour > 23 || offMinute < 0 || offMinute > 59) return Number.NaN;
  return local - (offHour * 60 + offMinute) * 60_000 * (zone === 43 ? 1 : -1);
}

/** `isEmittedForm` on bytes, for a range `instantMsBytes` accepted. */
export function isEmittedFormBytes(b: Uint8Array, start: number, end: number): boolean {
  return end - start >= 20 && b[start + 10] === 84 && b[end - 1] === 90 && b[start + 16] === 58 && !(b[start + 17] === 54 && b[start + 18] === 48);
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** RFC 3339 in UTC with `Z`; milliseconds only when non-zero. */
export function formatInstant(ms: number): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const base =
    `${year < 1000 ? String(year).padStart(4, '0') : year}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}` +
    `T${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  const millis = d.getUTCMilliseconds();
  return millis === 0 ? `${base}Z` : `${base}.${String(millis).padStart(3, '0')}Z`;
}

const TWO_DIGITS: readonly string[] = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
export const DAY_MS = 86_400_000;

/**
 * formatInstant for the per-record path: a dump's dates fall on few days, so
 * each day's text is made once (per writer, bounded) and the time of day by
 * arithmetic; the result is the same text.
 */
export class InstantWriter {
  private readonly days = new Map<number, string>();
  private readonly dayBytes = new Map<number, Uint8Array>();
  private lastDay = Number.NaN;
  private lastDayBytes: Uint8Array = new Uint8Array(0);

  format(ms: number): string {
    const day = Math.floor(ms / DAY_MS);
    const t = ms - day * DAY_MS;
    const millis = t % 1000;
    const base = `${this.date(day)}T${TWO_DIGITS[Math.floor(t / 3_600_000)]}:${TWO_DIGITS[Math.floor(t / 60_000) % 60]}:${TWO_DIGITS[Math.floor(t / 1000) % 60]}`;
    return millis === 0 ? `${base}Z` : `${base}.${String(millis).padStart(3, '0')}Z`;
  }

  /** Writes `format(ms)` into `out` at `p` (at most WRITTEN_INSTANT_BYTES) and returns where it ends. */
  write(ms: number, out: Buffer, p: number): number {
    const day = Math.floor(ms / DAY_MS);
    const date = this.dateBytes(day);
    for (let k = 0; k < date.length; k++) out[p++] = date[k];
    // The time of day is below 86,400,000, so `| 0` floors it.
    const t = ms - day * DAY_MS;
    out[p++] = 0x54; // T
    p = writeTwoDigits((t / 3_600_000) | 0, out, p);
    out[p++] = 0x3a; // :
    p = writeTwoDigits(((t / 60_000) | 0) % 60, out, p);
    out[p++] = 0x3a;
    p = writeTwoDigits(((t / 1000) | 0) % 60, out, p);
    const millis = t % 1000;
    if (millis !== 0) {
      out[p++] = 0x2e; // .
      out[p++] = DIGIT_0 + ((millis / 100) | 0);
      p = writeTwoDigits(millis % 100, out, p);
    }
    out[p++] = 0x5a; // Z
    return p;
  }

  /** `YYYY-MM-DD` of a UTC day, made once per day. */
  private date(day: number): string {
    let date = this.days.get(day);
    if (date === undefined) {
      date = formatInstant(day * DAY_MS).slice(0, -10);
      if (this.days.size < 100_000) this.days.set(day, date);
    }
    return date;
  }

  private dateBytes(day: number): Uint8Array {
    if (day === this.lastDay) return this.lastDayBytes;
    let bytes = this.dayBytes.get(day);
    if (bytes === undefined) {
      bytes = Buffer.from(this.date(day), 'latin1');
      if (this.dayBytes.size < 100_000) this.dayBytes.set(day, bytes);
    }
    this.lastDay = day;
    this.lastDayBytes = bytes;
    return bytes;
  }
}

/** The longest `InstantWriter.write`: a six-digit year with its sign, and milliseconds. */
export const WRITTEN_INSTANT_BYTES = 27;

function writeTwoDigits(n: number, out: Buffer, p: number): number {
  out[p] = DIGIT_0 + ((n / 10) | 0);
  out[p + 1] = DIGIT_0 + (n % 10);
  return p + 2;
}

/**
 * The UTC `Z` form of a date string, or undefined when it is not a date.
 * Input already in that form is returned unchanged (keeping any sub-millisecond digits).
 */
export function normalizeInstant(s: string): string | undefined {
  const ms = instantMs(s);
  if (Number.isNaN(ms)) return undefined;
  return isEmittedForm(s) ? s : formatInstant(ms);
}
