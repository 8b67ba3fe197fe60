import { describe, expect, it } from 'vitest';
import { formatInstant, instantMs, instantMsBytes, isEmittedForm, isEmittedFormBytes, normalizeInstant, parseInstant } from '../src/dates.js';

describe('instants are compared across offsets, not as strings', () => {
  it('orders 10:00+02:00 before 09:00Z', () => {
    const withOffset = parseInstant('2024-05-01T10:00:00+02:00')!;
    const utc = parseInstant('2024-05-01T09:00:00Z')!;
    expect(withOffset.ms).toBeLessThan(utc.ms);
    expect('2024-05-01T10:00:00+02:00' > '2024-05-01T09:00:00Z').toBe(true);
  });

  it('gives equal instants for the same moment in different notations', () => {
    const forms = ['2024-05-01T08:00:00Z', '2024-05-01T10:00:00+02:00', '2024-05-01T03:30:00-04:30', '2024-05-01 08:00:00z', '2024-05-01T10:00+0200', '2024-05-01T08:00:00.000Z', '2024-05-01T08:00'];
    const values = forms.map((f) => parseInstant(f)?.ms);
    expect(new Set(values)).toEqual(new Set([Date.UTC(2024, 4, 1, 8)]));
  });

  it('reads years 0000-0099 as themselves (Date.UTC would add 1900)', () => {
    expect(normalizeInstant('0001-01-01T00:00:00+00:00')).toBe('0001-01-01T00:00:00Z');
    expect(normalizeInstant('0050-06-01 00:00:00Z')).toBe('0050-06-01T00:00:00Z');
    expect(parseInstant('0001-01-01')!.ms).toBe(new Date('0001-01-01T00:00:00Z').getTime());
  });

  it('reads a plain date as midnight UTC and keeps milliseconds', () => {
    expect(parseInstant('2024-02-29')!.ms).toBe(Date.UTC(2024, 1, 29));
    expect(parseInstant('2024-05-01T08:00:00.1234567Z')!.ms).toBe(Date.UTC(2024, 4, 1, 8, 0, 0, 123));
  });

  it('rejects what is not a date', () => {
    for (const bad of ['', '2024', '2024-13-01', '2023-02-29', '2024-05-01T25:00:00Z', '2024-05-01T10:00:00+2', 'yesterday', '2024-05-01T10:00:00Zjunk', '2024-05-01T10:00:00.Z']) {
      expect(parseInstant(bad), bad).toBeUndefined();
    }
  });
});

describe('dates are normalised to RFC 3339 UTC with Z', () => {
  it('converts offsets to Z and keeps canonical input untouched', () => {
    expect(normalizeInstant('2024-05-01T10:00:00+02:00')).toBe('2024-05-01T08:00:00Z');
    expect(normalizeInstant('2024-05-01T10:00:00.250-01:00')).toBe('2024-05-01T11:00:00.250Z');
    expect(normalizeInstant('2024-05-01')).toBe('2024-05-01T00:00:00Z');
    expect(normalizeInstant('2024-05-01T08:00:00.123456Z')).toBe('2024-05-01T08:00:00.123456Z');
    expect(normalizeInstant('2024-05-01 08:00:00Z')).toBe('2024-05-01T08:00:00Z');
    expect(normalizeInstant('not a date')).toBeUndefined();
  });

  it('recognises the emitted form by its shape: T, seconds, Z, no leap second', () => {
    for (const emitted of ['2024-05-01T08:00:00Z', '2024-05-01T08:00:00.5Z', '0001-01-01T00:00:59.999999Z']) expect(isEmittedForm(emitted), emitted).toBe(true);
    for (const other of ['2024-05-01', '2024-05-01T08:00Z', '2024-05-01 08:00:00Z', '2024-05-01t08:00:00Z', '2024-05-01T08:00:00z', '2024-05-01T08:00:00+00:00', '2016-12-31T23:59:60Z']) {
      expect(parseInstant(other), other).toBeDefined();
      expect(isEmittedForm(other), other).toBe(false);
    }
    expect(normalizeInstant('2016-12-31T23:59:60Z')).toBe('2016-12-31T23:59:59Z');
  });

  it('reads every day of the calendar as the Date object does, leap years and centuries included', () => {
    const date = new Date(0);
    for (const year of [0, 1, 4, 99, 100, 399, 400, 1582, 1600, 1700, 1900, 1969, 1970, 2000, 2024, 2100, 2400, 9999]) {
      date.setUTCFullYear(year, 0, 1);
      date.setUTCHours(0, 0, 0, 0);
      while (date.getUTCFullYear() === year) {
        const text = date.toISOString().replace(/^\+0*(?=\d{4})/, '');
        expect(parseInstant(text)?.ms, text).toBe(date.getTime());
        date.setUTCDate(date.getUTCDate() + 1);
      }
    }
    expect(parseInstant('2023-02-29')).toBeUndefined();
    expect(parseInstant('1900-02-29')).toBeUndefined();
    expect(parseInstant('2000-02-29')?.ms).toBe(Date.UTC(2000, 1, 29));
  });

  it('formats like toISOString without zero milliseconds', () => {
    for (const ms of [0, Date.UTC(1999, 11, 31, 23, 59, 59, 999), Date.UTC(2030, 0, 1)]) {
      expect(formatInstant(ms).replace('Z', '')).toBe(new Date(ms).toISOString().replace('.000Z', '').replace('Z', ''));
      expect(parseInstant(formatInstant(ms))!.ms).toBe(ms);
    }
  });
});

describe('the per-record date writer', () => {
  it('writes exactly what formatInstant writes, across days, years, milliseconds and before 1970', async () => {
    const { InstantWriter } = await import('../src/dates.js');
    const writer = new InstantWriter();
    const samples = [0, 1, 999, 86_399_999, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(1969, 11, 31, 23, 59, 59, 500), Date.UTC(50, 5, 1) - 1, Date.UTC(9999, 11, 31, 23, 59, 59)];
    for (let i = 0; i < 2000; i++) samples.push(Math.floor(Math.sin(i) * 4e12));
    for (const ms of samples) expect(writer.format(ms), String(ms)).toBe(formatInstant(ms));
  });

  it('writes the same text as bytes, within WRITTEN_INSTANT_BYTES, at the extremes of Date too', async () => {
    const { InstantWriter, WRITTEN_INSTANT_BYTES } = await import('../src/dates.js');
    const writer = new InstantWriter();
    const samples = [0, 7, 86_399_999, -1, -8.64e15, 8.64e15, -8.64e15 + 123, Date.UTC(2024, 1, 29, 23, 59, 59, 10), Date.UTC(50, 5, 1) - 1];
    for (let i = 0; i < 2000; i++) samples.push(Math.floor(Math.cos(i) * 4e12));
    const out = Buffer.alloc(WRITTEN_INSTANT_BYTES + 2, 0x21);
    for (const ms of samples) {
      out.fill(0x21);
      const end = writer.write(ms, out, 1);
      expect(end - 1, String(ms)).toBeLessThanOrEqual(WRITTEN_INSTANT_BYTES);
      expect(out.toString('latin1', 1, end), String(ms)).toBe(formatInstant(ms));
      expect(out[0]).toBe(0x21);
    }
  });
});

describe('dates read on bytes agree with dates read on strings', () => {
  /** Dates of every shape instantMs knows, and near misses of each: every prefix and one-character change of them. */
  function corpus(): string[] {
    const shapes = [
      '2025-03-01', '2024-02-29', '2023-02-29', '1900-02-29', '2000-02-29', '0001-01-01', '9999-12-31',
      '2025-03-01T10:20:30Z', '2025-03-01T10:20:30.5Z', '2025-03-01T10:20:30.123456789Z', '2025-03-01t10:20:30z', '2025-03-01 10:20:30',
      '2025-03-01T10:20Z', '2025-03-01T10:20', '2025-03-01T10:20:60Z', '2016-12-31T23:59:60Z', '2025-03-01T10:20:30+02:00', '2025-03-01T10:20:30-0530',
      '2025-03-01T10:20:30+05', '2025-03-01T10:20:30.999-23:59', '2025-03-01T24:00:00Z', '2025-13-01T00:00:00Z', '2025-03-01T10:20:30.Z',
      '2025-03-01T10:20:30+2:00', '2025-03-01T10:20:30+02:0', '2025-03-01T10:20:30Zx', '2025-03-01T10:20:30 Z', '1714557600', '',
    ];
    const changes = ['0', '9', '-', ':', 'T', 'Z', '.', '+', ' ', 'é', 'x'];
    const texts = new Set<string>();
    for (const shape of shapes) {
      for (let cut = 0; cut <= shape.length; cut++) texts.add(shape.slice(0, cut));
      for (let at = 0; at < shape.length; at++) for (const c of changes) texts.add(shape.slice(0, at) + c + shape.slice(at + 1));
      for (const c of changes) texts.add(shape + c);
    }
    return [...texts];
  }

  it('gives the same instant (or NaN) and the same emitted-form verdict on a corpus of dates and near misses', () => {
    const texts = corpus();
    expect(texts.length).toBeGreaterThan(3000);
    let accepted = 0;
    for (const text of texts) {
      // Read inside a larger buffer: the reader must not look past its range (the next member's digits are right there).
      const bytes = Buffer.from(`"${text}12:00Z`);
      const start = 1;
      const end = 1 + Buffer.byteLength(text);
      const ms = instantMs(text);
      expect(instantMsBytes(bytes, start, end), text).toBe(ms);
      if (!Number.isNaN(ms)) {
        accepted++;
        expect(isEmittedFormBytes(bytes, start, end), text).toBe(isEmittedForm(text));
      }
    }
    expect(accepted).toBeGreaterThan(300);
  });
});
