import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseCsv } from 'csv-parse/sync';
import { CsvScanner, type CsvRow } from '../../src/records/csv.js';
import { CsvRecordEncoder } from '../../src/records/csv-record.js';
import { MessageWriter } from '../../src/output/writer.js';
import { resolveConfig } from '../../src/config/config.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { selectStream } from '../../src/catalog/selection.js';
import { runSync } from '../../src/sync/run.js';
import { singer } from '../../src/singer/messages.js';
import { createLogger } from '../../src/observe/log.js';
import { trainingTable } from '../helpers/fields.js';
import { type Sandbox, startTestSandbox } from '../helpers/sandbox.js';
import { seeded } from '../helpers/random.js';

/**
 * The fast paths (records copied as bytes, CSV typed on bytes) must give
 * exactly what the slow paths (parse, convert, JSON.stringify) give.
 */

const ALPHABET = ['a', 'Z', '0', ' ', ',', '"', '\n', '\r\n', 'é', '小', '😀', '\\', '\t', ';', "'"];

function randomField(random: () => number): string {
  const length = Math.floor(random() * 8);
  let text = '';
  for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return text;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value === '' ? `"${value.replace(/"/g, '""')}"` : value;
}

function scanAll(bytes: Buffer, cuts: number[]): string[][] {
  const rows: string[][] = [];
  const scanner = new CsvScanner(1 << 20, (row) => rows.push(row.texts()), (error) => {
    throw error;
  });
  let last = 0;
  for (const cut of [...cuts, bytes.length]) {
    scanner.push(bytes.subarray(last, cut));
    last = cut;
  }
  scanner.end();
  return rows;
}

describe('the byte-level CSV scanner', () => {
  it('reads random RFC 4180 text cut into random chunks back into the rows written', () => {
    const random = seeded(7);
    for (let round = 0; round < 200; round++) {
      const width = 1 + Math.floor(random() * 5);
      const rows = Array.from({ length: 1 + Math.floor(random() * 6) }, () => Array.from({ length: width }, () => randomField(random)));
      // A lone empty field would be an empty line, which both parsers skip.
      const text = rows.map((r) => r.map(csvField).join(',')).join(random() < 0.5 ? '\r\n' : '\n') + (random() < 0.5 ? '\n' : '');
      const bytes = Buffer.from(text);
      const cuts = Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * bytes.length)).sort((a, b) => a - b);
      // The rows written are the truth (every empty field is quoted, so no row is an empty line).
      expect(scanAll(bytes, cuts), `round ${round}: ${JSON.stringify(text)}`).toEqual(rows);
    }
  });

  it('reads the sandbox dump exactly as csv-parse does, chunk by chunk', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 1500, phishingRecords: 10 });
    try {
      const bytes = Buffer.from(sandbox.dump('training', 'csv'));
      const expected = parseCsv(bytes, { relax_column_count: true, skip_empty_lines: true }) as string[][];
      expect(expected).toHaveLength(1501);
      expect(scanAll(bytes, [1, 2, 3, 1000, 1001, 65536, 200_000])).toEqual(expected);
    } finally {
      await sandbox.close();
    }
  });

  it('reads a bare quote inside an unquoted field as a literal, as the field splitter does, without merging rows', () => {
    const text = Buffer.from('id,v\nu1,a"b\nu2,x\nu3,y"z\nu4,"q""r"\n');
    for (const cuts of [[], [7], [8, 9, 10, 11, 12, 13]]) {
      expect(scanAll(text, cuts)).toEqual([['id', 'v'], ['u1', 'a"b'], ['u2', 'x'], ['u3', 'y"z'], ['u4', 'q"r']]);
    }
  });

  it('keeps a field quoted after an escaped quote (""), whatever the chunking: a line break or delimiter right after it stays in the field', () => {
    const text = Buffer.from('id,v,w\nu1,"a""\nb",x\nu2,"""",y\nu3,"c"",d",z\nu4,"""\n""",w\nu5,"e""""\r\n",v\r\nu6,f,"""g"""\n');
    const rows = [['id', 'v', 'w'], ['u1', 'a"\nb', 'x'], ['u2', '"', 'y'], ['u3', 'c",d', 'z'], ['u4', '"\n"', 'w'], ['u5', 'e""\r\n', 'v'], ['u6', 'f', '"g"']];
    // Every cut in two, and one byte at a time: each "" may be split between chunks, or end one.
    for (let cut = 0; cut <= text.length; cut++) expect(scanAll(text, [cut]), `cut at ${cut}`).toEqual(rows);
    expect(scanAll(text, Array.from({ length: text.length }, (_, i) => i))).toEqual(rows);
  });

  it('handles a BOM, split multi-byte characters and line numbers of rows spanning lines', () => {
    const bytes = Buffer.from('\uFEFFa,b\n"x\ny",é\n3,4');
    const lines: number[] = [];
    const rows: string[][] = [];
    const scanner = new CsvScanner(1024, (row, line) => {
      rows.push(row.texts());
      lines.push(line);
    }, () => undefined);
    for (let i = 0; i < bytes.length; i++) scanner.push(bytes.subarray(i, i + 1));
    scanner.end();
    expect(rows).toEqual([['a', 'b'], ['x\ny', 'é'], ['3', '4']]);
    expect(lines).toEqual([1, 2, 4]);
  });
});

describe('CSV rows encoded on bytes equal the slow path', () => {
  const header = ['userId', 'programId', 'moduleId', 'lastName', 'completed', 'completedAt', 'progress', 'score', 'timeSpentSeconds', 'availableFrom', 'department'];
  const cases: string[][] = [
    ['u1', 'p1', 'm1', 'Müller, "Jr."', 'true', '2024-05-01T10:00:00+02:00', '100', '87.5', '3600', '2024-01-01', 'x'],
    ['u2', 'p1', 'm1', 'tab\there \\ back', 'TRUE', '2024-05-01T08:00:00Z', '007', '1.0', '1e3', '2024-01-01T00:00:00.250Z', ''],
    ['u3', 'p1', 'm1', '', 'false', '', '0', '-0.5', '', '2024-01-01 00:00:00', 'y'],
    ['u4', 'p1', 'm1', '小林 😀', '0', '2024-05-01T08:00:00.123456Z', '+5', '.5', '12', '', 'z'],
    ['u5', 'p1', 'm1', 'line\nbreak', '1', '2024-02-29T23:59:59-00:30', '3', '100', '0', '2024-12-31T23:59:59+14:00', 'w'],
  ];

  it('gives the same record, keys in the same order, for every kind of value', () => {
    const table = trainingTable();
    const text = [header, ...cases].map((r) => r.map(csvField).join(',')).join('\r\n');
    const head = Buffer.from('{"r":');
    const tail = Buffer.from('}\n');
    const out = new PassThrough();
    const writer = new MessageWriter(out);
    let encoder: CsvRecordEncoder | undefined;
    const compared: unknown[] = [];
    const scanner = new CsvScanner(1 << 20, (row: CsvRow) => {
      if (!encoder) {
        encoder = new CsvRecordEncoder(row.texts(), table);
        return;
      }
      encoder.inspect(row);
      const start = writer.pos;
      const block = writer.reserve(encoder.maxBytes(row, head, tail));
      const end = encoder.encode(row, block, start, head, tail);
      const line = block.toString('utf8', start, end);
      const fast = (JSON.parse(line) as { r: Record<string, unknown> }).r;
      const slow = encoder.toObject();
      expect(Object.keys(fast)).toEqual(Object.keys(slow));
      expect(fast).toEqual(slow);
      expect(line).toBe(`{"r":${JSON.stringify(slow)}}\n`);
      compared.push(slow);
    }, (error) => {
      throw error;
    });
    scanner.push(Buffer.from(text));
    scanner.end();
    expect(compared).toHaveLength(cases.length);
    expect(compared[1]).toMatchObject({ completed: true, progress: 7, score: 1, timeSpentSeconds: 1000, availableFrom: '2024-01-01T00:00:00.250Z' });
    expect(compared[2]).toMatchObject({ lastName: null, completedAt: null, timeSpentSeconds: null, availableFrom: '2024-01-01T00:00:00Z' });
    expect(compared[4]).toMatchObject({ completedAt: '2024-03-01T00:29:59Z', availableFrom: '2024-12-31T09:59:59Z' });
    expect(compared[0]).not.toHaveProperty('department');
  });
});

describe('JSONL records copied as bytes equal re-serialised ones (end to end)', () => {
  let server: Server;
  let url: string;
  let sandbox: Sandbox;
  // Canonical lines take the byte-copy path; the others need a change and are re-serialised.
  const lines = [
    '{"userId":"u1","programId":"p1","moduleId":"m1","lastName":"Zo\\u00eb \\"Q\\" \\\\ \\n","completedAt":"2024-05-01T08:00:00Z","score":1.0}',
    '{"userId":"u2","programId":"p1","moduleId":"m1","lastName":"Zoë","completedAt":"2024-05-01T10:00:00+02:00","score":2}',
    '{ "userId" : "u3", "programId":"p1","moduleId":"m1","completedAt":null, "department":"Sales" }',
    '{"moduleId":"m1","userId":"u4","programId":"p1","progress":"50","completed":"true"}',
    '{"userId":"u5","programId":"p1","moduleId":"m1","firstName":"小林 😀","completedAt":"2024-05-01T08:00:00.5Z"}',
  ];

  beforeAll(async () => {
    server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/jsonl', 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT' });
      res.end(`${lines.join('\n')}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sandbox = await startTestSandbox({ trainingRecords: 400, phishingRecords: 10 });
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await sandbox.close();
  });

  /** The training stream synced in process; `deselected` fields are left out of its selection, as a catalog that deselects them would. */
  async function sync(baseUrl: string, extra: Record<string, unknown> = {}, deselected: readonly string[] = []): Promise<Array<{ type: string; record?: Record<string, unknown> }>> {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    // Copied as they come: the writer reuses its blocks once the destination took them.
    out.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    const config = resolveConfig({ base_url: baseUrl, access_token: 'demo-token', compression: 'none', ...extra });
    const offered = discoverStreams(config).filter((s) => s.descriptor.name === 'training');
    const streams = offered.map((stream) => selectStream(stream, { method: 'INCREMENTAL', selects: (field) => !deselected.includes(field) }, 'Stream training'));
    await runSync({ config, streams, out, protocol: singer, logger: createLogger({ write: () => undefined }), redact: (text) => text });
    return Buffer.concat(chunks).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
  }

  it('writes each record as its conformed value, whichever path it took', async () => {
    const messages = await sync(url);
    // A first run: a full pass, its ACTIVATE_VERSION before its records.
    expect(messages.map((m) => m.type)).toEqual(['SCHEMA', 'ACTIVATE_VERSION', 'RECORD', 'RECORD', 'RECORD', 'RECORD', 'RECORD', 'STATE']);
    expect(messages.slice(2, 7).map((m) => m.record)).toEqual([
      { userId: 'u1', programId: 'p1', moduleId: 'm1', lastName: 'Zoë "Q" \\ \n', completedAt: '2024-05-01T08:00:00Z', score: 1 },
      { userId: 'u2', programId: 'p1', moduleId: 'm1', lastName: 'Zoë', completedAt: '2024-05-01T08:00:00Z', score: 2 },
      { userId: 'u3', programId: 'p1', moduleId: 'm1', completedAt: null },
      { moduleId: 'm1', userId: 'u4', programId: 'p1', progress: 50, completed: true },
      { userId: 'u5', programId: 'p1', moduleId: 'm1', firstName: '小林 😀', completedAt: '2024-05-01T08:00:00.5Z' },
    ]);
  });

  it('gives the same records from byte copies (Z dates) as from re-serialised records (offset dates), CSV alike', async () => {
    const fast = await sync(sandbox.url);
    const offsets = await startTestSandbox({ trainingRecords: 400, phishingRecords: 10, dateOffset: '-05:30', extraFields: true });
    try {
      const slow = await sync(offsets.url);
      const csv = await sync(offsets.url, { format: 'csv' });
      const records = (ms: typeof fast) => ms.filter((m) => m.type === 'RECORD').map((m) => m.record);
      expect(records(fast)).toHaveLength(400);
      expect(records(slow)).toEqual(records(fast));
      expect(records(csv)).toEqual(records(fast));
      expect(slow.map((m) => m.type)).toEqual(fast.map((m) => m.type));
    } finally {
      await offsets.close();
    }
  });

  it('keeps deselected fields out on both paths', async () => {
    const records = (ms: Awaited<ReturnType<typeof sync>>) => ms.filter((m) => m.type === 'RECORD').map((m) => m.record!);
    // Selected, every record carries email: the comparison below is not vacuous.
    expect(records(await sync(sandbox.url)).every((r) => 'email' in r)).toBe(true);
    const offsets = await startTestSandbox({ trainingRecords: 400, phishingRecords: 10, dateOffset: '-05:30', extraFields: true });
    try {
      // Z dates take the byte copy, offset dates the re-serialised path; CSV is typed on its bytes.
      const paths = { copied: await sync(sandbox.url, {}, ['email']), reserialised: await sync(offsets.url, {}, ['email']), csv: await sync(offsets.url, { format: 'csv' }, ['email']) };
      for (const [path, messages] of Object.entries(paths)) {
        const emitted = records(messages);
        expect(emitted, path).toHaveLength(400);
        expect(emitted.filter((r) => 'email' in r), `${path}: records with the deselected email`).toEqual([]);
        // Only the deselected field is gone.
        expect(emitted.every((r) => 'firstName' in r && 'completedAt' in r), path).toBe(true);
      }
      expect(records(paths.reserialised)).toEqual(records(paths.copied));
      expect(records(paths.csv)).toEqual(records(paths.copied));
    } finally {
      await offsets.close();
    }
  });
});
