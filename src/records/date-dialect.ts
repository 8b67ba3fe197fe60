import { InstantWriter, instantMs, isEmittedForm } from '../dates.js';
import { TimeZone } from '../time-zone.js';

/**
 * How the service writes dates, read into instants: RFC 3339 with any offset
 * and fraction; ISO 8601 without a zone (`T` or a space) and a date alone,
 * both in the source time zone; epoch seconds or milliseconds. Every date is
 * written as RFC 3339 in UTC with `Z`. One per stream sync; the UTC case costs
 * nothing over plain RFC 3339 parsing.
 */
export class DateDialect {
  private readonly zone: TimeZone | undefined;
  private readonly writer = new InstantWriter();
  // The last date read and written: a record often repeats a date (completed and last active at once).
  private lastText = '';
  private lastMs = Number.NaN;
  private lastFormattedMs = Number.NaN;
  private lastFormatted = '';

  constructor(timeZone = 'UTC') {
    const zone = new TimeZone(timeZone);
    this.zone = zone.isUtc ? undefined : zone;
  }

  /** The instant of a date text, or NaN when it is not one. */
  textMs(text: string): number {
    if (text === this.lastText) return this.lastMs;
    this.lastText = text;
    this.lastMs = this.readMs(text);
    return this.lastMs;
  }

  private readMs(text: string): number {
    const ms = instantMs(text);
    if (Number.isNaN(ms)) return EPOCH_TEXT.test(text) ? epochMs(Number(text)) : Number.NaN;
    return this.zone === undefined || hasZone(text) ? ms : this.zone.fromWallClock(ms);
  }

  /** The instant of a number in a date field: epoch seconds, or milliseconds when it is too large to be seconds. */
  numberMs(n: number): number {
    return epochMs(n);
  }

  /** The date as written: the text itself when it already is in the emitted form. */
  written(text: string, ms: number): string {
    return isEmittedForm(text) ? text : this.format(ms);
  }

  /** Writes `format(ms)` into `out` at `p` and returns where it ends. */
  write(ms: number, out: Buffer, p: number): number {
    return this.writer.write(ms, out, p);
  }

  /** An instant as written. */
  format(ms: number): string {
    if (ms !== this.lastFormattedMs) {
      this.lastFormattedMs = ms;
      this.lastFormatted = this.writer.format(ms);
    }
    return this.lastFormatted;
  }
}

/** Nine digits or more (1973 on, in seconds), optionally with a fraction: short digit strings are not taken for epochs. */
const EPOCH_TEXT = /^-?\d{9,}(\.\d+)?$/;

/** Epoch seconds below 10^11 (the year 5138), milliseconds above. */
function epochMs(n: number): number {
  if (!Number.isFinite(n)) return Number.NaN;
  const ms = Math.abs(n) < 1e11 ? n * 1000 : n;
  return Math.abs(ms) <= 8.64e15 ? Math.floor(ms) : Number.NaN;
}

/** Whether a text that parsed as a date-time names its zone (`Z` or an offset after the time). */
export function hasZone(text: string): boolean {
  const len = text.length;
  const last = text.charCodeAt(len - 1);
  if (last === 90 || last === 122) return true;
  // An offset is ±HH:MM, ±HHMM or ±HH at the end, after the time.
  return isSignAt(text, len - 6) || isSignAt(text, len - 5) || isSignAt(text, len - 3);
}

function isSignAt(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return at >= 16 && (c === 43 || c === 45);
}
