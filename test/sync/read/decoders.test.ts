import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it, vi } from 'vitest';
import { createDecoder, Envelope, InvalidRecords, type RecordHandlers } from '../../../src/sync/read/decoders.js';
import { MessageWriter } from '../../../src/output/writer.js';
import { createLogger, type LogLevel } from '../../../src/observe/log.js';
import { TapError } from '../../../src/errors.js';
import { InvalidRecordError } from '../../../src/records/invalid-record.js';
import { JsonLine } from '../../../src/records/json-line.js';
import { IncrementalCursor, type CursorRecord } from '../../../src/sync/read/incremental.js';
import type { DumpFormat } from '../../../src/catalog/reports.js';
import { trainingTable } from '../../helpers/fields.js';

const HEAD = '{"type":"RECORD","stream":"training","record":';
const TAIL = ',"time_extracted":"2024-06-01T00:00:00.000Z"}';

/** The RECORD line the writer should hold for a record's JSON text. */
const recordLine = (json: string): string => `${HEAD}${json}${TAIL}`;

/** The columns of the CSV bodies below: the table of a CSV decoder holds these fields only. */
const CSV_FIELDS = ['userId', 'programId', 'moduleId', 'completed', 'completedAt', 'progress', 'score', 'lastName'];

interface Options {
  envelope?: Envelope;
  policy?: 'fail' | 'skip';
  maxLineBytes?: number;
  fresh?: RecordHandlers['resume']['advance'];
  admit?: RecordHandlers['cursor']['admit'];
}

/** A decoder writing through a real MessageWriter into a PassThrough, with the log it made and the records it admitted. */
function decoderFor(format: DumpFormat, options: Options = {}) {
  const out = new PassThrough();
  const written = text(out);
  const writer = new MessageWriter(out);
  const logs: Array<{ level: LogLevel; message: string }> = [];
  const logger = createLogger({ level: 'debug', sink: (level, message) => logs.push({ level, message }) });
  const invalid = new InvalidRecords(options.policy ?? 'skip', `training dump (${format})`, logger);
  const admitted: Array<{ value: string | null; ms: number }> = [];
  /** Each admission and settling, in order: `a` and `s`. */
  const calls: string[] = [];
  const handlers: RecordHandlers = {
    resume: { advance: options.fresh ?? (() => true) },
    cursor: {
      admit: (record: CursorRecord) => {
        calls.push('a');
        admitted.push({ value: record.replicationValue, ms: record.replicationMs });
        return options.admit ? options.admit(record) : true;
      },
      settle: () => void calls.push('s'),
    },
  };
  const decoder = createDecoder(format, { table: format === 'csv' ? trainingTable([], CSV_FIELDS) : trainingTable(), writer, envelope: options.envelope ?? new Envelope(HEAD, TAIL), maxLineBytes: options.maxLineBytes ?? 1 << 20, invalid, handlers });
  return {
    decoder,
    invalid,
    logs,
    admitted,
    calls,
    /** Every line written, once the writer and its destination are ended. */
    async lines(): Promise<string[]> {
      await writer.end();
      out.end();
      const all = await written;
      return all === '' ? [] : all.replace(/\n$/, '').split('\n');
    },
  };
}

/** The bytes cut into chunks of 1, 2, 3, 5 and 7 bytes in turn. */
function chunksOf(body: string | Buffer): Buffer[] {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const sizes = [1, 2, 3, 5, 7];
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length];
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

/** How many chunks start in the middle of a multi-byte UTF-8 character. */
function cutsInsideCharacters(chunks: readonly Buffer[]): number {
  return chunks.filter((chunk) => chunk.length > 0 && (chunk[0] & 0xc0) === 0x80).length;
}

/** What `action` threw, or undefined. */
function thrownBy(action: () => void): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

function feed(decoder: { push(chunk: Buffer): void }, body: string | Buffer): void {
  for (const chunk of chunksOf(body)) decoder.push(chunk);
}

describe('JSONL decoding', () => {
  it('copies a record that fits its schema byte for byte between the envelope head and tail, across chunks cut inside characters', async () => {
    const fitting = '{"userId": "u1", "programId":"p1","moduleId":"m1","completedAt":"2024-05-01T08:00:00Z","lastName":"M\\u00fcller","firstName":"Zoë 😀"}';
    const body = `${fitting}\n`;
    expect(cutsInsideCharacters(chunksOf(body))).toBeGreaterThan(0);
    const { decoder, lines, admitted } = decoderFor('jsonl');
    feed(decoder, body);
    decoder.end();
    expect(await lines()).toEqual([recordLine(fitting)]);
    expect(admitted).toEqual([{ value: '2024-05-01T08:00:00Z', ms: Date.UTC(2024, 4, 1, 8) }]);
  });

  it('re-serialises a record whose date has an offset, in UTC', async () => {
    const { decoder, lines, admitted } = decoderFor('jsonl');
    feed(decoder, '{"userId":"u2", "programId":"p1","moduleId":"m1","completedAt":"2024-05-01T10:00:00+02:00","progress":"50","lastName":"Müller"}\n');
    decoder.end();
    expect(await lines()).toEqual([recordLine('{"userId":"u2","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T08:00:00Z","progress":50,"lastName":"Müller"}')]);
    expect(admitted).toEqual([{ value: '2024-05-01T08:00:00Z', ms: Date.UTC(2024, 4, 1, 8) }]);
  });

  it('writes nothing for a record that admit() refuses', async () => {
    const { decoder, lines, admitted } = decoderFor('jsonl', { admit: (record) => record.replicationValue !== '2024-05-01T08:00:00Z' });
    feed(decoder, '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T08:00:00Z"}\n{"userId":"u2","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T09:00:00+01:00"}\n{"userId":"u3","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T09:00:00Z"}\n');
    decoder.end();
    expect(await lines()).toEqual([recordLine('{"userId":"u3","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T09:00:00Z"}')]);
    expect(admitted.map((r) => r.value)).toEqual(['2024-05-01T08:00:00Z', '2024-05-01T08:00:00Z', '2024-05-01T09:00:00Z']);
  });

  it('asks the resume cursor once per record (not for an empty line), and skips a record it calls stale', async () => {
    const first = '{"userId":"u1","programId":"p1","moduleId":"m1","lastName":"Zoë"}';
    const second = '{"userId":"u2","programId":"p1","moduleId":"m1"}';
    const third = '{"userId":"u3","programId":"p1","moduleId":"m1"}';
    let calls = 0;
    const { decoder, lines, admitted } = decoderFor('jsonl', { fresh: () => ++calls !== 2 });
    feed(decoder, `${first}\n${second}\r\n\n${third}\n`);
    decoder.end();
    expect(calls).toBe(3);
    expect(await lines()).toEqual([recordLine(first), recordLine(third)]);
    expect(admitted).toHaveLength(2);
  });

  it('has the cursor settle its snapshots after every chunk, once the chunk is decoded, and after the end', () => {
    const { decoder, calls } = decoderFor('jsonl');
    const line = '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T08:00:00Z"}\n';
    decoder.push(Buffer.from(line + line));
    decoder.push(Buffer.from(line.slice(0, 10)));
    decoder.push(Buffer.from(line.slice(10)));
    decoder.end();
    expect(calls.join('')).toBe('aassass');
  });

  it('scans each whole line of a chunk once, while finding its end: a line the scanner refuses (nested) goes to JSON.parse without a second scan', async () => {
    const flat = '{"userId":"u1","programId":"p1","moduleId":"m1"}';
    const nested = '{"userId":"u2","programId":"p1","moduleId":"m1","extra":{"a":1}}';
    const { decoder, lines } = decoderFor('jsonl');
    const scan = vi.spyOn(JsonLine.prototype, 'scan');
    const scanLine = vi.spyOn(JsonLine.prototype, 'scanLine');
    try {
      decoder.push(Buffer.from(`${flat}\n${nested}\n${flat}\n`));
      decoder.end();
      expect(scanLine).toHaveBeenCalledTimes(3);
      expect(scan).not.toHaveBeenCalled();
    } finally {
      scan.mockRestore();
      scanLine.mockRestore();
    }
    expect(await lines()).toEqual([recordLine(flat), recordLine('{"userId":"u2","programId":"p1","moduleId":"m1"}'), recordLine(flat)]);
  });

  it('treats a last line without a newline as a record only when the body ends', async () => {
    const { decoder, lines, admitted } = decoderFor('jsonl');
    feed(decoder, '{"userId":"u1","programId":"p1","moduleId":"m1"}\n{"userId":"u2","programId":"p1","moduleId":"m1"}');
    expect(admitted).toHaveLength(1);
    decoder.end();
    expect(admitted).toHaveLength(2);
    expect(await lines()).toEqual([recordLine('{"userId":"u1","programId":"p1","moduleId":"m1"}'), recordLine('{"userId":"u2","programId":"p1","moduleId":"m1"}')]);
  });
});

describe('CSV decoding', () => {
  const HEADER = CSV_FIELDS.join(',');

  it('writes each row as the JSON of its typed record, across chunks cut inside characters', async () => {
    const body = `${HEADER}\r\nu1,p1,m1,true,2024-05-01T10:00:00+02:00,100,87.5,"Müller, ""Jr."""\r\nu2,p1,m1,false,,0,,Zoë 😀\r\n`;
    expect(cutsInsideCharacters(chunksOf(body))).toBeGreaterThan(0);
    const { decoder, lines, admitted } = decoderFor('csv');
    feed(decoder, body);
    decoder.end();
    expect(await lines()).toEqual([
      recordLine('{"userId":"u1","programId":"p1","moduleId":"m1","completed":true,"completedAt":"2024-05-01T08:00:00Z","progress":100,"score":87.5,"lastName":"Müller, \\"Jr.\\""}'),
      recordLine('{"userId":"u2","programId":"p1","moduleId":"m1","completed":false,"completedAt":null,"progress":0,"score":null,"lastName":"Zoë 😀"}'),
    ]);
    expect(admitted).toEqual([
      { value: '2024-05-01T08:00:00Z', ms: Date.UTC(2024, 4, 1, 8) },
      { value: null, ms: Number.NaN },
    ]);
  });

  it('commits only the rows admit() accepts, though each is built in the writer’s block first', async () => {
    let n = 0;
    const { decoder, lines } = decoderFor('csv', { admit: () => ++n === 2 });
    feed(decoder, `${HEADER}\nu1,p1,m1,true,2024-05-01T08:00:00Z,100,1,Long name that would show if left behind\nu2,p1,m1,true,2024-05-01T09:00:00Z,50,2,B\nu3,p1,m1,true,2024-05-01T10:00:00Z,60,3,C\n`);
    decoder.end();
    expect(await lines()).toEqual([recordLine('{"userId":"u2","programId":"p1","moduleId":"m1","completed":true,"completedAt":"2024-05-01T09:00:00Z","progress":50,"score":2,"lastName":"B"}')]);
    expect(n).toBe(3);
  });

  it('writes nothing when admit() refuses every row', async () => {
    const { decoder, lines, admitted } = decoderFor('csv', { admit: () => false });
    feed(decoder, `${HEADER}\nu1,p1,m1,true,2024-05-01T08:00:00Z,100,1,A\n`);
    decoder.end();
    expect(admitted).toHaveLength(1);
    expect(await lines()).toEqual([]);
  });

  it('asks the resume cursor once per row but not for the header, and skips a stale row', async () => {
    let calls = 0;
    const { decoder, lines } = decoderFor('csv', { fresh: () => ++calls !== 1 });
    feed(decoder, `${HEADER}\nu1,p1,m1,,,,,"two\nlines"\nu2,p1,m1,,,,,Zoë\n`);
    decoder.end();
    expect(calls).toBe(2);
    expect(await lines()).toEqual([recordLine('{"userId":"u2","programId":"p1","moduleId":"m1","completed":null,"completedAt":null,"progress":null,"score":null,"lastName":"Zoë"}')]);
  });

  it('has the cursor settle its snapshots after every chunk and after the end', () => {
    const { decoder, calls } = decoderFor('csv');
    decoder.push(Buffer.from('userId,programId,moduleId,completedAt\nu1,p1,m1,2024-05-01T08:00:00Z\n'));
    decoder.push(Buffer.from('u2,p1,m1,'));
    decoder.end();
    expect(calls.join('')).toBe('assas');
  });

  it('treats a last row without a newline as a record only when the body ends', async () => {
    const { decoder, lines, admitted } = decoderFor('csv');
    feed(decoder, `${HEADER}\nu1,p1,m1,,,,,A\nu2,p1,m1,,,,,B`);
    expect(admitted).toHaveLength(1);
    decoder.end();
    expect(admitted).toHaveLength(2);
    expect((await lines()).map((line) => (JSON.parse(line) as { record: { userId: string } }).record.userId)).toEqual(['u1', 'u2']);
  });

  it('fails, naming the stream, when the body ends inside a quoted field', () => {
    const { decoder } = decoderFor('csv', { policy: 'skip' });
    feed(decoder, `${HEADER}\nu1,p1,m1,,,,,A\nu2,p1,m1,,,,,"never closed\n`);
    const thrown = thrownBy(() => decoder.end());
    expect(thrown).toBeInstanceOf(TapError);
    expect((thrown as TapError).kind).toBe('runtime');
    expect((thrown as TapError).message).toBe(
      'training dump (csv): CSV body ends inside a quoted field that starts at or after line 3. Nothing after it was emitted and the bookmark was not moved.',
    );
  });
});

describe('invalid records', () => {
  const VALID = '{"userId":"u1","programId":"p1","moduleId":"m1"}';

  it('with policy skip, counts invalid JSON and records without a key, warns about the first 5 and logs the rest at debug', async () => {
    const invalidLines = ['{"userId":', '{"programId":"p1","moduleId":"m1"}', '[1]', '{"userId" "u"}', '{"userId":"u","programId":"p","moduleId":"m","progress":101}', 'nope', '{"userId":null,"programId":"p","moduleId":"m"}'];
    const { decoder, lines, invalid, logs } = decoderFor('jsonl', { policy: 'skip' });
    feed(decoder, `${VALID}\n${invalidLines.join('\n')}\n${VALID}\n`);
    decoder.end();
    expect(await lines()).toEqual([recordLine(VALID), recordLine(VALID)]);
    expect(invalid.skipped).toBe(7);
    expect(logs).toEqual([
      { level: 'warn', message: 'skipped invalid record: training dump (jsonl) line 2: not valid JSON (unexpected end)' },
      { level: 'warn', message: 'skipped invalid record: training dump (jsonl) line 3: key property userId is missing' },
      { level: 'warn', message: 'skipped invalid record: training dump (jsonl) line 4: line is not a JSON object' },
      { level: 'warn', message: 'skipped invalid record: training dump (jsonl) line 5: not valid JSON (column 11)' },
      { level: 'warn', message: 'skipped invalid record: training dump (jsonl) line 6: field progress is 101, outside 0..100' },
      { level: 'debug', message: 'skipped invalid record: training dump (jsonl) line 7: not valid JSON (column 1)' },
      { level: 'debug', message: 'skipped invalid record: training dump (jsonl) line 8: key property userId is missing' },
    ]);
  });

  it('with policy skip, counts a CSV row with the wrong column count and goes on', async () => {
    const { decoder, lines, invalid, logs } = decoderFor('csv', { policy: 'skip' });
    feed(decoder, 'userId,programId,moduleId\nu1,p1\nu2,p1,m1\n,p1,m1\n');
    decoder.end();
    // The selected fields the header lacks are null.
    expect(await lines()).toEqual([recordLine('{"userId":"u2","programId":"p1","moduleId":"m1","lastName":null,"completed":null,"completedAt":null,"progress":null,"score":null}')]);
    expect(invalid.skipped).toBe(2);
    expect(logs).toEqual([
      { level: 'warn', message: 'skipped invalid record: training dump (csv) line 2: row has 2 columns, the header has 3' },
      { level: 'warn', message: 'skipped invalid record: training dump (csv) line 4: key property userId is missing' },
    ]);
  });

  it.each([
    ['jsonl', '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2025-06-01T00:00:00Z","progress":100}\n{"userId":"u2","programId":"p1","moduleId":"m1","completedAt":"2025-08-01T00:00:00Z","progress":150}\n{"userId":"u3","programId":"p1","moduleId":"m1","completedAt":"2025-07-01T00:00:00Z","progress":100}\n'],
    ['csv', 'userId,programId,moduleId,completedAt,progress\nu1,p1,m1,2025-06-01T00:00:00Z,100\nu2,p1,m1,2025-08-01T00:00:00Z,150\nu3,p1,m1,2025-07-01T00:00:00Z,100\n'],
  ] as const)('with policy skip, never admits a %s record to the cursor: a skipped one with the latest date leaves the bookmark at the latest emitted', async (format, body) => {
    const cursor = new IncrementalCursor({ incremental: true, futureBoundMs: Number.POSITIVE_INFINITY });
    const { decoder, lines, invalid, admitted } = decoderFor(format, { policy: 'skip', admit: (record) => cursor.admit(record) });
    feed(decoder, body);
    decoder.end();
    expect(await lines()).toHaveLength(2);
    expect(invalid.skipped).toBe(1);
    // Its date is valid and the latest; its progress is over the schema's maximum.
    expect(admitted.map((a) => a.value)).toEqual(['2025-06-01T00:00:00Z', '2025-07-01T00:00:00Z']);
    expect(cursor.bookmark('completedAt').replication_key_value).toBe('2025-07-01T00:00:00Z');
  });

  it('with policy fail, throws a runtime TapError naming the stream, the format and the line, after writing the records before it', async () => {
    const { decoder, lines, invalid } = decoderFor('jsonl', { policy: 'fail' });
    const thrown = thrownBy(() => feed(decoder, `${VALID}\n{"userId":\n${VALID}\n`));
    expect(thrown).toBeInstanceOf(TapError);
    expect((thrown as TapError).kind).toBe('runtime');
    expect((thrown as TapError).message).toBe(
      'training dump (jsonl) line 2: not valid JSON (unexpected end). The record was not emitted and the bookmark was not moved; set on_invalid_record to skip to skip such records.',
    );
    expect(invalid.skipped).toBe(0);
    expect(await lines()).toEqual([recordLine(VALID)]);
  });

  it('with policy fail, a CSV row with the wrong column count throws naming the line', () => {
    const { decoder } = decoderFor('csv', { policy: 'fail' });
    const thrown = thrownBy(() => feed(decoder, 'userId,programId,moduleId\nu1,p1,m1\nu2,p1,m1,extra\n'));
    expect(thrown).toBeInstanceOf(TapError);
    expect((thrown as TapError).message).toMatch(/^training dump \(csv\) line 3: row has 4 columns, the header has 3\. The record was not emitted/);
  });

  it('counts an over-long line as a record of the read, then hands it to the policy', async () => {
    let calls = 0;
    const { decoder, lines, logs } = decoderFor('jsonl', {
      maxLineBytes: 60,
      fresh: () => {
        calls++;
        return true;
      },
    });
    feed(decoder, `${VALID}\n{"userId":"u1","programId":"p1","moduleId":"m1","lastName":"far too long for the limit"}\n${VALID}\n`);
    decoder.end();
    expect(calls).toBe(3);
    expect(logs).toEqual([{ level: 'warn', message: 'skipped invalid record: training dump (jsonl) line 2: line is longer than max_line_bytes (60)' }]);
    expect(await lines()).toEqual([recordLine(VALID), recordLine(VALID)]);
  });
});

describe('InvalidRecords', () => {
  it('logs the sixth and later skipped records at debug level only', () => {
    const logs: Array<{ level: LogLevel; message: string }> = [];
    const invalid = new InvalidRecords('skip', 'phishing dump (csv)', createLogger({ level: 'debug', sink: (level, message) => logs.push({ level, message }) }));
    for (let line = 1; line <= 7; line++) invalid.handle(new InvalidRecordError('bad'), line);
    expect(invalid.skipped).toBe(7);
    expect(logs.map((l) => l.level)).toEqual(['warn', 'warn', 'warn', 'warn', 'warn', 'debug', 'debug']);
    expect(logs[6].message).toBe('skipped invalid record: phishing dump (csv) line 7: bad');
  });
});

describe('Envelope', () => {
  it('holds the head and the tail as bytes, the tail ending the line', () => {
    const envelope = new Envelope(HEAD, TAIL);
    expect(envelope.headBytes.toString()).toBe(HEAD);
    expect(envelope.tailBytes.toString()).toBe(`${TAIL}\n`);
    expect(envelope.membersBytes).toHaveLength(0);
    expect(envelope.line('{"userId":"u1"}')).toBe(recordLine('{"userId":"u1"}'));
  });
});

describe('members an envelope adds to every record (the Airbyte extraction cursor)', () => {
  const MEMBERS = ',"_ab_extracted_at":"2024-06-01T00:00:00.000Z"';

  /** The lines a decoder writes for `body` without and with the members. */
  async function bothWays(format: DumpFormat, body: string): Promise<{ plain: string[]; added: string[] }> {
    const plain = decoderFor(format);
    const added = decoderFor(format, { envelope: new Envelope(HEAD, TAIL, MEMBERS) });
    for (const { decoder } of [plain, added]) {
      feed(decoder, body);
      decoder.end();
    }
    return { plain: await plain.lines(), added: await added.lines() };
  }

  /** Each line with members is the line without them, the members last in the record: valid JSON, nothing else changed. */
  function expectMembersAdded({ plain, added }: { plain: string[]; added: string[] }, count: number): void {
    expect(plain).toHaveLength(count);
    expect(added).toHaveLength(count);
    plain.forEach((line, i) => {
      const { record, ...rest } = JSON.parse(line) as { record: Record<string, unknown> };
      const withMembers = JSON.parse(added[i]) as { record: Record<string, unknown> };
      expect(withMembers).toEqual({ ...rest, record: { ...record, _ab_extracted_at: '2024-06-01T00:00:00.000Z' } });
      expect(Object.keys(withMembers.record).at(-1)).toBe('_ab_extracted_at');
      expect(added[i].startsWith(HEAD) && added[i].endsWith(`"2024-06-01T00:00:00.000Z"}${TAIL}`)).toBe(true);
    });
  }

  it('JSONL: a record copied as it came (whitespace after its brace too), one re-encoded, one parsed as it came and one rebuilt', async () => {
    const copied = '{"userId":"u1","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T08:00:00Z","lastName":"Zoë 😀"}';
    const spaced = ' { "userId" : "u2", "programId":"p1","moduleId":"m1" } \t\r';
    const reencoded = '{"userId":"u3","programId":"p1","moduleId":"m1","completedAt":"2024-05-01T10:00:00+02:00","progress":"50"}';
    const parsed = '{"user\\u0049d":"u4","programId":"p1","moduleId":"m1"}';
    const rebuilt = '{"userId":"u5","programId":"p1","moduleId":"m1","extra":{"a":1}}';
    const both = await bothWays('jsonl', [copied, spaced, reencoded, parsed, rebuilt, ''].join('\n'));
    expect(both.plain[0]).toBe(recordLine(copied));
    expect(both.plain[3]).toBe(recordLine(parsed));
    expectMembersAdded(both, 5);
    expect(both.added[0]).toBe(recordLine(`${copied.slice(0, -1)}${MEMBERS}}`));
  });

  it('CSV: every row, a row whose header lacks a selected field too', async () => {
    const body = `userId,programId,moduleId,completed,completedAt,progress,score\r\nu1,p1,m1,true,2024-05-01T10:00:00+02:00,100,87.5\r\nu2,p1,m1,false,,0,\r\n`;
    expectMembersAdded(await bothWays('csv', body), 2);
  });
});
