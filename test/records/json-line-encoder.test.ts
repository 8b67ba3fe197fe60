import { createHmac } from 'node:crypto';
import { KEEPS_LONG_NUMBERS, parseKeepingDigits } from '../../src/records/long-numbers.js';
import { describe, expect, it } from 'vitest';
import { JsonLine } from '../../src/records/json-line.js';
import { JsonLineEncoder } from '../../src/records/json-line-encoder.js';
import { JsonRecordConformer } from '../../src/records/json-record.js';
import { InvalidRecordError } from '../../src/records/invalid-record.js';
import { Pseudonymiser } from '../../src/records/pseudonymise.js';
import type { FieldTable } from '../../src/records/fields.js';
import { trainingTableFor, type TableVariant } from '../helpers/fields.js';
import { pick, seeded } from '../helpers/random.js';

/**
 * The JSONL byte path (scan, prepare, encode) must give exactly what the
 * object path (JSON.parse, conform, JSON.stringify) gives: the same bytes,
 * the same error, the same replication value, the same warnings.
 */

interface Outcome {
  path: 'bytes' | 'objects';
  json?: string;
  error?: string;
  replicationValue?: string | null;
  replicationMs?: number;
  warnings: string[];
}

const HEAD = Buffer.from('<');
const TAIL = Buffer.from('>');

function byBytes(encoder: JsonLineEncoder, scanned: JsonLine, bytes: Buffer, warnings: string[]): Outcome | undefined {
  const before = warnings.length;
  try {
    if (!scanned.scan(bytes, 0, bytes.length) || !encoder.prepare(scanned)) return undefined;
    let json = bytes.toString();
    if (!encoder.unchanged) {
      const out = Buffer.alloc(encoder.maxBytes(HEAD, TAIL));
      const end = encoder.encode(out, 0, HEAD, TAIL);
      json = out.toString('utf8', HEAD.length, end - TAIL.length);
      expect(out.subarray(0, end).toString()).toBe(`<${json}>`);
    }
    return { path: 'bytes', json, replicationValue: encoder.replicationValue, replicationMs: encoder.replicationMs, warnings: warnings.slice(before) };
  } catch (error) {
    if (!(error instanceof InvalidRecordError)) throw error;
    return { path: 'bytes', error: error.message, warnings: warnings.slice(before) };
  }
}

function byObjects(conformer: JsonRecordConformer, bytes: Buffer, warnings: string[]): Outcome {
  const before = warnings.length;
  try {
    const record = conformer.conform(parseKeepingDigits(bytes.toString()));
    const json = conformer.unchanged ? bytes.toString() : JSON.stringify(record);
    return { path: 'objects', json, replicationValue: conformer.replicationValue, replicationMs: conformer.replicationMs, warnings: warnings.slice(before) };
  } catch (error) {
    if (!(error instanceof InvalidRecordError)) throw error;
    return { path: 'objects', error: error.message, warnings: warnings.slice(before) };
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Two tables of one variant, so each path reports its own warnings. */
function paths(variant: TableVariant) {
  const fastWarnings: string[] = [];
  const slowWarnings: string[] = [];
  const fastTable: FieldTable = trainingTableFor({ ...variant, warnings: fastWarnings });
  // As in the decoder: the byte path first, the object path (on the same table) for the lines it declines.
  const fallback = new JsonRecordConformer(fastTable);
  const encoder = new JsonLineEncoder(fastTable, fallback);
  const conformer = new JsonRecordConformer(trainingTableFor({ ...variant, warnings: slowWarnings }));
  const scanned = new JsonLine();
  let fast = 0;
  return {
    compare(text: string): void {
      const bytes = Buffer.from(text);
      if (!isJson(text)) return;
      const slow = byObjects(conformer, bytes, slowWarnings);
      const quick = byBytes(encoder, scanned, bytes, fastWarnings) ?? byObjects(fallback, bytes, fastWarnings);
      if (quick.path === 'bytes') fast++;
      expect({ ...quick, path: 'objects' }, text).toEqual(slow);
    },
    get fast(): number {
      return fast;
    },
  };
}

const CAMEL = ['userId', 'email', 'firstName', 'programId', 'moduleId', 'completed', 'completedAt', 'availableFrom', 'progress', 'score', 'timeSpentSeconds', 'lastActivityAt'];
const SERVED_NAMES = [...CAMEL, 'department', 'Completed At'];
/** Rarer: names JSON.parse orders or treats its own way, and a second name for userId in snake_case. */
const SPECIAL_NAMES = ['0', '__proto__', 'user_id'];

/** Values of every kind a service might send, fitting and not. */
const VALUES: unknown[] = [
  'u1', '', 'Zoë', 'tab\there', 'quote"d', '😀', 'yes', 'no', 'TRUE', 'f', '50', '007', '1e3', '87.5', 'x@example.com',
  '2024-05-01T08:00:00Z', '2024-05-01T10:00:00+02:00', '2024-05-01 10:00:00', '2024-05-01', '2024-05-01T08:00:00.123456Z', '2024-03-31 02:30:00', '2024-10-27 02:30:00', '1714550400', 'not a date', '2024-02-30T00:00:00Z',
  0, 7, -0, 100, 101, -1, 1.0, 1.5, 87.25, 1e3, 1e21, 1e400, 9999999999999999, 0.0000001, 1714550400, 1714550400000,
  true, false, null, {}, [1],
];

/** A number's text as a service might write it (JSON.stringify has one form; services have others). */
function numberText(random: () => number, n: number): string {
  if (!Number.isFinite(n)) return '1e400';
  if (Number.isInteger(n) && Math.abs(n) < 1e15 && random() < 0.2) return `${n}.0`;
  if (random() < 0.1) return n.toExponential();
  return JSON.stringify(n);
}

function valueText(random: () => number, value: unknown): string {
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : numberText(random, value);
  if (typeof value === 'string' && random() < 0.2) return JSON.stringify(value).replace(/[a-zA-Z]/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
  return JSON.stringify(value);
}

function randomLine(random: () => number, keyed: boolean): string {
  const space = (): string => (random() < 0.1 ? pick(random, [' ', '\t']) : '');
  const others = SERVED_NAMES.filter(() => random() < 0.4);
  const names = [...(keyed ? ['userId', 'programId', 'moduleId'] : []), ...others.filter((name) => !keyed || !name.endsWith('Id') || random() < 0.1)];
  if (random() < 0.05) names.push(pick(random, SPECIAL_NAMES));
  if (random() < 0.5) names.sort(() => random() - 0.5);
  const members = names.map((name) => `${space()}${JSON.stringify(name)}${space()}:${space()}${valueText(random, name.endsWith('Id') && random() < 0.9 ? `id-${name}` : pick(random, VALUES))}`);
  return `{${members.join(',')}${space()}}`;
}

describe('JSONL lines encoded on bytes equal the object path', () => {
  const variants: Array<[string, TableVariant]> = [
    ['the packaged names and UTC', {}],
    ['snake_case output names', { snakeCase: true }],
    ['dates without a zone in Europe/Berlin', { timeZone: 'Europe/Berlin' }],
    ['a transformation on e-mail and on the key', { transforms: { email: (v) => `h:${String(v).length}`, userId: (v) => (v === 'id-userId' ? '' : v) } }],
  ];

  for (const [what, variant] of variants) {
    it(`on random lines, with ${what}`, () => {
      const random = seeded(what.length);
      const compared = paths(variant);
      for (let round = 0; round < 3000; round++) compared.compare(randomLine(random, random() < 0.9));
      // Most lines take the byte path: the comparison is not vacuous.
      expect(compared.fast).toBeGreaterThan(1500);
    });
  }

  it.each([
    ['the packaged names', {}],
    ['snake_case output names', { snakeCase: true }],
  ] as Array<[string, TableVariant]>)('on lines that mostly repeat the last layout, then change it (a name twice, two names swapped, one fewer, one more), with %s', (_what, variant) => {
    const random = seeded(77);
    const compared = paths(variant);
    const newLayout = (): string[] => ['userId', 'programId', 'moduleId', ...SERVED_NAMES.filter((name) => !name.endsWith('Id') && random() < 0.5)];
    let layout = newLayout();
    for (let round = 0; round < 3000; round++) {
      const names = [...layout];
      const change = random();
      const at = Math.floor(random() * names.length);
      const other = Math.floor(random() * names.length);
      if (change < 0.08) names[at] = names[other];
      else if (change < 0.16) [names[at], names[other]] = [names[other], names[at]];
      else if (change < 0.24) names.pop();
      else if (change < 0.32) names.push(pick(random, [...SERVED_NAMES, ...SPECIAL_NAMES]));
      else if (change < 0.36) layout = newLayout();
      const values = names.map((name) => valueText(random, name.endsWith('Id') ? `id-${name}` : pick(random, VALUES)));
      compared.compare(`{${names.map((name, i) => `${JSON.stringify(name)}:${values[i]}`).join(',')}}`);
    }
    expect(compared.fast).toBeGreaterThan(1000);
  });

  it('copies a fitting line as it is and converts only what needs it', () => {
    const compared = paths({});
    for (const text of [
      '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T08:00:00Z","score":1.0,"progress":7}',
      '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T10:00:00+02:00","score":1.0,"lastName":"Zo\\u00eb"}',
      // Fits as it is although nothing in it is in JSON.stringify's form: an escaped date, a number with a fraction of zero.
      '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2024-05-01\\u005408:00:00Z","score":1.0}',
      '{"userId":"u1","programId":"p1","moduleId":"m1","completed":"yes","department":"Sales","completedAt":null}',
      '{"userId":"u1","programId":"p1","moduleId":"m1","userId":"u2"}',
      '{"0":"x","userId":"u1","programId":"p1","moduleId":"m1"}',
      '{"userId":"","programId":"p1","moduleId":"m1"}',
      '{"programId":"p1","moduleId":"m1"}',
      '{}',
    ]) compared.compare(text);
    expect(compared.fast).toBe(7);
  });
});

describe('numbers with more digits than a double keeps', () => {
  it.runIf(KEEPS_LONG_NUMBERS)('keep every digit on both paths: in a string field as the digits (two ids a unit apart stay two), in integer and number fields as written', () => {
    const compared = paths({});
    const lines = [
      '{"userId":12345678901234567801,"programId":"p1","moduleId":"m1","timeSpentSeconds":98765432109876543210,"score":1.2345678901234567890}',
      '{"userId":12345678901234567802,"programId":"p1","moduleId":"m1","timeSpentSeconds":98765432109876543210,"score":1.2345678901234567890}',
      // The object path (a name twice), the same values.
      '{"userId":0,"userId":12345678901234567802,"programId":"p1","moduleId":"m1","timeSpentSeconds":98765432109876543210,"score":1.2345678901234567890}',
    ];
    for (const text of lines) compared.compare(text);
    const conformer = new JsonRecordConformer(trainingTableFor({}));
    const written = lines.map((text) => JSON.stringify(conformer.conform(parseKeepingDigits(text))));
    expect(written[0]).toBe('{"userId":"12345678901234567801","programId":"p1","moduleId":"m1","timeSpentSeconds":98765432109876543210,"score":1.2345678901234567890}');
    expect(written[1]).toContain('"userId":"12345678901234567802"');
    expect(written[2]).toBe(written[1]);
  });
});

describe('long numbers a double reads as before', () => {
  it.runIf(KEEPS_LONG_NUMBERS)('an integer written with a zero fraction or an exponent (5.0000000000000000) is the integer it was, on both paths; a number beyond a double\'s range is refused on both', () => {
    const compared = paths({});
    const conformer = new JsonRecordConformer(trainingTableFor({}));
    const base = '"userId":"u1","programId":"p1","moduleId":"m1"';
    for (const value of ['5.0000000000000000', '42.000000000000000000', '1.0000000000000000e1']) {
      const text = `{${base},"timeSpentSeconds":${value}}`;
      compared.compare(text);
      expect(() => conformer.conform(parseKeepingDigits(text)), value).not.toThrow();
    }
    const huge = `{${base},"score":1234567890123456789012e400}`;
    compared.compare(huge);
    expect(() => conformer.conform(parseKeepingDigits(huge))).toThrow(InvalidRecordError);
  });
});

describe('snapshots of a line', () => {
  it('read the record of the line they were taken of; once settled, they no longer depend on the chunk it was in', () => {
    const table = trainingTableFor({});
    const encoder = new JsonLineEncoder(table, new JsonRecordConformer(table));
    const scanned = new JsonLine();
    const first = '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T08:00:00Z"}';
    const second = '{"userId":"u2","programId":"p2","moduleId":"m2","completedAt":"2024-05-01T09:00:00Z"}';
    const chunk = Buffer.from(`${first}\n${second}\n`);
    const snapshots = [first, second].map((text) => {
      const start = chunk.indexOf(text);
      expect(scanned.scan(chunk, start, start + text.length) && encoder.prepare(scanned)).toBe(true);
      return encoder.snapshot();
    });
    expect(snapshots.map((s) => s.read())).toEqual([JSON.parse(first), JSON.parse(second)]);
    snapshots[0].settle();
    chunk.fill(0x20);
    expect(snapshots[0].read()).toEqual(JSON.parse(first));
    // Not settled: it still points into the chunk (which the decoder never changes while a snapshot may point into it).
    expect(() => snapshots[1].read()).toThrow();
  });
});

describe('transforms on the byte path (personal_data)', () => {
  const KEY = 'test-pseudonymisation-key-0123456789abcdef';
  const hmac = (text: string): string => createHmac('sha256', KEY).update(text, 'utf8').digest('hex');

  it('give each value its own pseudonym, however alike the values before it (same length, same bytes, one layout), and null for a redaction', () => {
    const pseudonyms = new Pseudonymiser(KEY);
    const table = trainingTableFor({ transforms: { email: (v) => pseudonyms.pseudonym(v), lastName: () => null, employeeNumber: (v) => pseudonyms.pseudonymKeepingDomain(v) } });
    const encoder = new JsonLineEncoder(table, new JsonRecordConformer(table));
    const scanned = new JsonLine();
    // One layout, as a dump's lines have: addresses of one length, one repeated, one in capitals, one missing.
    const emails = ['ann.a@example.com', 'bob.b@example.com', 'bob.b@example.com', 'cat.c@example.com', 'Dan.D@Example.com', null, 'ann.a@example.com'];
    const encoded = emails.map((email, i) => {
      const line = Buffer.from(`{"userId":"u${i}","programId":"p1","moduleId":"m1","email":${JSON.stringify(email)},"lastName":"Name${i}","employeeNumber":"E${100 + (i % 2)}","completedAt":"2024-05-01T08:00:00Z"}`);
      expect(scanned.scan(line, 0, line.length) && encoder.prepare(scanned), `line ${i} takes the byte path`).toBe(true);
      // As the decoder does: a line that fits as it is is copied as its own bytes.
      if (encoder.unchanged) return JSON.parse(line.toString()) as Record<string, unknown>;
      const out = Buffer.alloc(encoder.maxBytes(HEAD, TAIL));
      const end = encoder.encode(out, 0, HEAD, TAIL);
      return JSON.parse(out.toString('utf8', HEAD.length, end - TAIL.length)) as Record<string, unknown>;
    });
    expect(encoded.map((r) => r.email)).toEqual(emails.map((email) => (email === null ? null : hmac(email.toLowerCase()))));
    expect(encoded.map((r) => r.lastName)).toEqual(emails.map(() => null));
    expect(encoded.map((r) => r.employeeNumber)).toEqual(emails.map((_, i) => hmac(`E${100 + (i % 2)}`)));
    expect(encoded.map((r) => r.userId)).toEqual(emails.map((_, i) => `u${i}`));
  });
});
