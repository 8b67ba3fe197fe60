import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CsvRecordEncoder } from '../../src/records/csv-record.js';
import { KEEPS_LONG_NUMBERS } from '../../src/records/long-numbers.js';
import { InvalidRecordError } from '../../src/records/invalid-record.js';
import { trainingTable, trainingTableFor } from '../helpers/fields.js';
import { Pseudonymiser } from '../../src/records/pseudonymise.js';
import { CsvScanner, type CsvRow } from '../../src/records/csv.js';
import type { RecordSnapshot } from '../../src/records/record-snapshot.js';

const header = ['userId', 'programId', 'moduleId', 'completed', 'completedAt', 'progress', 'score', 'timeSpentSeconds', 'lastName'];

function csvRecords(columns: readonly string[], warnings: string[] = []): CsvRecordEncoder {
  return new CsvRecordEncoder(columns, trainingTable(warnings, header));
}

describe('CSV numbers with more digits than a double keeps', () => {
  it.runIf(KEEPS_LONG_NUMBERS)('keep every digit: an id in a string field, an integer and a number as written', () => {
    const encoder = csvRecords(header);
    const texts: string[] = [];
    const scanner = new CsvScanner(1 << 20, (row: CsvRow) => {
      if (texts.length > 0) return;
      const out = Buffer.alloc(encoder.maxBytes(row, Buffer.from('<'), Buffer.from('>')));
      texts.push(out.toString('utf8', 1, encoder.encode(row, out, 0, Buffer.from('<'), Buffer.from('>')) - 1));
    }, (error) => {
      throw error;
    });
    scanner.push(Buffer.from('12345678901234567802,p1,m1,true,,1,1.2345678901234567890,98765432109876543210,x\n'));
    scanner.end();
    const [text] = texts;
    expect(text).toContain('"userId":"12345678901234567802"');
    expect(text).toContain('"score":1.2345678901234567890');
    expect(text).toContain('"timeSpentSeconds":98765432109876543210');
  });
});

describe('CSV values are coerced by the schema', () => {
  it('turns text into booleans, integers, numbers, UTC dates and empty cells into null', () => {
    const encoder = csvRecords(header);
    expect(encoder.recordFromTexts(['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00+02:00', '100', '87.5', '3600', 'Müller, "Jr."'])).toEqual({
      userId: 'u1', programId: 'p1', moduleId: 'm1', completed: true, completedAt: '2024-05-01T08:00:00Z', progress: 100, score: 87.5, timeSpentSeconds: 3600, lastName: 'Müller, "Jr."',
    });
    expect(encoder.recordFromTexts(['u1', 'p1', 'm1', 'FALSE', '', '0', '', '', ''])).toEqual({
      userId: 'u1', programId: 'p1', moduleId: 'm1', completed: false, completedAt: null, progress: 0, score: null, timeSpentSeconds: null, lastName: null,
    });
  });

  it('reports the replication instant of the last record', () => {
    const encoder = csvRecords(header);
    encoder.recordFromTexts(['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00+02:00', '100', '1', '1', 'x']);
    expect(encoder.replicationMs).toBe(Date.UTC(2024, 4, 1, 8));
    encoder.recordFromTexts(['u1', 'p1', 'm1', 'false', '', '1', '', '1', 'x']);
    expect(encoder.replicationMs).toBeNaN();
    expect(encoder.replicationValue).toBeNull();
  });

  it('rejects values that are not of the declared type, and rows without a key', () => {
    const encoder = csvRecords(header);
    const row = ['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00Z', '100', '1', '1', 'x'];
    const bad = (index: number, value: string) => () => encoder.recordFromTexts(row.map((v, i) => (i === index ? value : v)));
    expect(bad(3, 'maybe')).toThrow(/completed is not a boolean/);
    expect(bad(4, '05/01/2024')).toThrow(/completedAt is not an RFC 3339 date/);
    expect(bad(5, '12.5')).toThrow(/progress is not an integer/);
    expect(bad(6, 'n/a')).toThrow(/score is not a number/);
    expect(bad(0, '')).toThrow(/key property userId is missing/);
    expect(bad(5, '150')).toThrow(/progress is 150, outside 0\.\.100/);
    expect(bad(5, '-3')).toThrow(/outside/);
    expect(() => encoder.recordFromTexts(row.slice(1))).toThrow(InvalidRecordError);
  });

  it('reads booleans in the words services use, in any case: true/false, 1/0, yes/no, y/n, t/f', () => {
    const encoder = csvRecords(header);
    const completed = (text: string): unknown => encoder.recordFromTexts(['u1', 'p1', 'm1', text, '', '0', '', '', '']).completed;
    for (const yes of ['true', 'TRUE', '1', 'yes', 'Yes', 'Y', 'y', 't', 'T']) expect(completed(yes), yes).toBe(true);
    for (const no of ['false', 'False', '0', 'no', 'NO', 'n', 'N', 'f', 'F']) expect(completed(no), no).toBe(false);
  });

  it('gives a selected field the header lacks (the service dropped the column) the value null, by name, in any column order', () => {
    const encoder = new CsvRecordEncoder(['moduleId', 'lastName', 'userId', 'programId'], trainingTable([], header));
    expect(encoder.recordFromTexts(['m1', 'Zoë', 'u1', 'p1'])).toEqual({
      moduleId: 'm1', lastName: 'Zoë', userId: 'u1', programId: 'p1', completed: null, completedAt: null, progress: null, score: null, timeSpentSeconds: null,
    });
  });

  it('drops undeclared columns and warns once per field', () => {
    const warnings: string[] = [];
    const encoder = csvRecords([...header, 'department'], warnings);
    const record = encoder.recordFromTexts(['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00Z', '100', '1', '1', 'x', 'Sales']);
    expect(record).not.toHaveProperty('department');
    expect(warnings).toEqual(['department']);
  });
});

describe('snapshots of a row', () => {
  it('read the record of the row they were taken of; once settled, they no longer depend on the chunk, and the scanner may reuse its row', () => {
    const encoder = csvRecords(header);
    const lines = ['u1,p1,m1,true,2024-05-01T08:00:00Z,100,1,1,"Müller, ""Jr."""', 'u2,p2,m2,false,,5,,,x'];
    const chunk = Buffer.from(`${lines.join('\n')}\n`);
    const rows: CsvRow[] = [];
    const scanner = new CsvScanner(1 << 20, (row) => {
      encoder.inspect(row);
      rows.push(row);
      snapshots.push(encoder.snapshot());
    }, () => {});
    const snapshots: RecordSnapshot[] = [];
    scanner.push(chunk);
    // The scanner hands out one row object, refilled for each row.
    expect(rows[0]).toBe(rows[1]);
    const expected = [encoder.recordFromTexts(['u1', 'p1', 'm1', 'true', '2024-05-01T08:00:00Z', '100', '1', '1', 'Müller, "Jr."']), encoder.recordFromTexts(['u2', 'p2', 'm2', 'false', '', '5', '', '', 'x'])];
    expect(snapshots.map((s) => s.read())).toEqual(expected);
    snapshots[0].settle();
    chunk.fill(0x2c);
    expect(snapshots[0].read()).toEqual(expected[0]);
    // Not settled: it still reads the chunk (which the decoder never changes while a snapshot may point into it).
    expect(() => snapshots[1].read()).toThrow();
  });
});

describe('transforms on the byte path (personal_data)', () => {
  it('apply to every encoded row: each address its own pseudonym, an empty cell null, a redaction null, as the slow path gives', () => {
    const KEY = 'test-pseudonymisation-key-0123456789abcdef';
    const pseudonyms = new Pseudonymiser(KEY);
    const table = trainingTableFor({ fields: ['userId', 'programId', 'moduleId', 'email', 'lastName', 'completedAt'], transforms: { email: (v) => pseudonyms.pseudonym(v), lastName: () => null } });
    const text = 'userId,programId,moduleId,email,lastName,completedAt\nu1,p1,m1,ann.a@example.com,Alder,2024-05-01T08:00:00Z\nu2,p1,m1,bob.b@example.com,Birch,2024-05-01T08:00:00Z\nu3,p1,m1,bob.b@example.com,"Birch, ""Jr.""",2024-05-01T08:00:00Z\nu4,p1,m1,,Cole,2024-05-01T08:00:00Z\n';
    let encoder: CsvRecordEncoder | undefined;
    const head = Buffer.from('<');
    const tail = Buffer.from('>');
    const records: Array<Record<string, unknown>> = [];
    const scanner = new CsvScanner(1 << 20, (row: CsvRow) => {
      if (!encoder) return void (encoder = new CsvRecordEncoder(row.texts(), table));
      encoder.inspect(row);
      const out = Buffer.alloc(encoder.maxBytes(row, head, tail));
      const end = encoder.encode(row, out, 0, head, tail);
      const record = JSON.parse(out.toString('utf8', 1, end - 1)) as Record<string, unknown>;
      expect(record).toEqual(encoder.toObject());
      records.push(record);
    }, (error) => {
      throw error;
    });
    scanner.push(Buffer.from(text));
    scanner.end();
    const hmac = (email: string): string => createHmac('sha256', KEY).update(email, 'utf8').digest('hex');
    expect(records.map((r) => r.email)).toEqual([hmac('ann.a@example.com'), hmac('bob.b@example.com'), hmac('bob.b@example.com'), null]);
    expect(records.map((r) => r.lastName)).toEqual([null, null, null, null]);
    expect(records.map((r) => r.userId)).toEqual(['u1', 'u2', 'u3', 'u4']);
  });
});
