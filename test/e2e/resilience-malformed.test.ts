import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { stderrLines, syncTap, type TapRun } from '../helpers/cli.js';
import { type JsonObject, lastState, recordsOf, statesOf } from '../helpers/messages.js';
import { instant, maxInstant } from '../helpers/records.js';
import { type FakeServer, sendCutDump, sendDump, startFakeServer } from '../helpers/fake-server.js';
import { bookmarksOf, catalogOf, errorLine, expectNoSecret, expectSameRecords, FAST_RETRIES, secretToken } from '../helpers/resilience-util.js';
import { DUMP_PATH } from '../helpers/sandbox.js';

/**
 * Issue 4, "never lose a record", for data the service should never send: a
 * tiny HTTP server (real sockets on 127.0.0.1) serves hand-made training
 * dumps. With on_invalid_record=fail the run stops with one line naming the
 * stream, the line and the problem, and no bookmark moves; with skip the valid
 * records get through and the skipped ones are counted.
 */

const TOKEN = secretToken('malformed');
const MAX_LINE = 1024;
const INPUT_STATE = { bookmarks: { training: { replication_key: 'completedAt', replication_key_value: '2020-01-01T00:00:00Z' } } };

const FIELDS = [
  'userId', 'email', 'firstName', 'lastName', 'employeeNumber', 'groupId', 'programId', 'programName', 'moduleId',
  'moduleName', 'availableFrom', 'completed', 'completedAt', 'progress', 'score', 'timeSpentSeconds', 'lastActivityAt',
] as const;

/** A valid training record (every field, UTC dates), distinct per `i`. */
function record(i: number, completedAt = new Date(Date.UTC(2025, 0, 1, 10) + i * 3_600_000).toISOString().replace('.000Z', 'Z')): JsonObject {
  return {
    userId: `usr-${i}`,
    email: `person.${i}@example.com`,
    firstName: `First${i}`,
    lastName: `Last${i}`,
    employeeNumber: `E${1000 + i}`,
    groupId: 'grp-1',
    programId: 'prog-1',
    programName: 'Security basics',
    moduleId: `mod-${i}`,
    moduleName: 'Phishing 101',
    availableFrom: '2024-12-01T00:00:00Z',
    completed: true,
    completedAt,
    progress: 100,
    score: 80.5,
    timeSpentSeconds: 600 + i,
    lastActivityAt: completedAt,
  };
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvRow(r: JsonObject): string {
  return FIELDS.map((f) => csvCell(r[f])).join(',');
}

const CSV_HEADER = FIELDS.join(',');

type Part = { valid: JsonObject } | { invalid: string | Buffer };

/** Body bytes and the valid records in it; lines are numbered from 1 (the CSV header is line 1). */
function build(format: 'jsonl' | 'csv', parts: readonly Part[]): { body: Buffer; valid: JsonObject[] } {
  const lines: Buffer[] = format === 'csv' ? [Buffer.from(CSV_HEADER)] : [];
  const valid: JsonObject[] = [];
  for (const part of parts) {
    if ('valid' in part) {
      valid.push(part.valid);
      lines.push(Buffer.from(format === 'csv' ? csvRow(part.valid) : JSON.stringify(part.valid)));
    } else {
      lines.push(Buffer.isBuffer(part.invalid) ? part.invalid : Buffer.from(part.invalid));
    }
  }
  return { body: Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])), valid };
}

/** Valid records 1..4, the bad line, valid records 5..7: the bad line is JSONL line 5, CSV line 6. */
function around(bad: string | Buffer): Part[] {
  return [1, 2, 3, 4].map((i) => ({ valid: record(i) }) as Part).concat([{ invalid: bad }], [5, 6, 7].map((i) => ({ valid: record(i) })));
}

function without(r: JsonObject, field: string): JsonObject {
  const copy = { ...r };
  delete copy[field];
  return copy;
}

const INVALID_UTF8_JSON = Buffer.concat([Buffer.from(JSON.stringify(record(90)).slice(0, 40)), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(JSON.stringify(record(90)).slice(40))]);

interface Case {
  name: string;
  format: 'jsonl' | 'csv';
  bad: string | Buffer;
  line: number;
  /** What the error must say was wrong. */
  what: RegExp;
}

const CASES: Case[] = [
  { name: 'a line that is not JSON', format: 'jsonl', bad: '{"userId": "usr-99", "completedAt": 2025-01-01', line: 5, what: /not valid JSON/ },
  { name: 'invalid UTF-8 bytes', format: 'jsonl', bad: INVALID_UTF8_JSON, line: 5, what: /not valid UTF-8/ },
  { name: 'a record missing the key property userId', format: 'jsonl', bad: JSON.stringify(without(record(91), 'userId')), line: 5, what: /key property userId is missing/ },
  { name: 'a replication key that is not a date', format: 'jsonl', bad: JSON.stringify(record(92, 'last tuesday')), line: 5, what: /field completedAt is not an RFC 3339 date/ },
  { name: 'a line longer than max_line_bytes', format: 'jsonl', bad: JSON.stringify({ ...record(93), moduleName: 'x'.repeat(3 * MAX_LINE) }), line: 5, what: /longer than max_line_bytes \(1024\)/ },
  { name: 'a row with the wrong number of columns', format: 'csv', bad: `${csvRow(record(94))},surplus`, line: 6, what: /row has 18 columns, the header has 17/ },
  { name: 'a record missing the key property userId', format: 'csv', bad: csvRow({ ...record(95), userId: null }), line: 6, what: /key property userId is missing/ },
  { name: 'a replication key that is not a date', format: 'csv', bad: csvRow(record(96, 'last tuesday')), line: 6, what: /field completedAt is not an RFC 3339 date/ },
  { name: 'a row longer than max_line_bytes', format: 'csv', bad: csvRow({ ...record(97), moduleName: 'x'.repeat(3 * MAX_LINE) }), line: 6, what: /max_line_bytes|longer/ },
];

const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** Serves `body` for the training dump in `format`; anything else is a 404. */
async function serve(format: 'jsonl' | 'csv', respond: (res: import('node:http').ServerResponse, nth: number) => void): Promise<FakeServer> {
  const server = await startFakeServer((_req, res, { path, nth }) => {
    if (path !== `${DUMP_PATH.training}.${format}`) return void res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"not_found"}');
    respond(res, nth);
  });
  servers.push(server);
  return server;
}

function contentType(format: 'jsonl' | 'csv'): string {
  return format === 'csv' ? 'text/csv; charset=utf-8' : 'application/jsonl';
}

async function runAgainst(server: FakeServer, format: 'jsonl' | 'csv', extra: JsonObject = {}): Promise<TapRun> {
  return syncTap({
    config: { base_url: server.url, access_token: TOKEN, format, max_line_bytes: MAX_LINE, ...FAST_RETRIES, max_retries: 1, ...extra },
    catalog: catalogOf(['training']),
    state: INPUT_STATE,
  });
}

function expectBookmarkUnmoved(run: TapRun): void {
  for (const bookmark of bookmarksOf(run.messages, 'training')) expect(bookmark).toEqual(INPUT_STATE.bookmarks.training);
}

describe.concurrent('on_invalid_record=fail (default)', () => {
  for (const c of CASES) {
    it(`${c.format}: ${c.name}: exit 1, one line naming the stream, line ${c.line} and the problem; no bookmark moves`, async () => {
      const { body } = build(c.format, around(c.bad));
      const server = await serve(c.format, (res) => sendDump(res, body, contentType(c.format)));
      const run = await runAgainst(server, c.format);
      expect(run.code, run.stderr).toBe(1);
      const error = errorLine(run);
      expect(error).toMatch(new RegExp(`^tap-report-dump: error: training dump \\(${c.format}\\)`));
      expect(error).toMatch(new RegExp(`\\bline ${c.line}\\b`));
      expect(error).toMatch(c.what);
      expectBookmarkUnmoved(run);
      expect(statesOf(run.messages)).toEqual([]);
      // Invalid data is not retried: one request.
      expect(server.requests).toHaveLength(1);
      expectNoSecret(run, TOKEN, c.name);
    });
  }
});

describe.concurrent('CSV that is not valid UTF-8', () => {
  // Line breaks, quotes and commas are ASCII, so the row boundaries hold around bad bytes: the bad row is named, and skippable.
  const bad = Buffer.concat([Buffer.from(csvRow(record(98)).slice(0, 30)), Buffer.from([0xff, 0xfe]), Buffer.from(csvRow(record(98)).slice(30))]);

  it('csv, on_invalid_record=fail: exit 1 naming the stream and the row line', async () => {
    const { body } = build('csv', around(bad));
    const server = await serve('csv', (res) => sendDump(res, body, contentType('csv')));
    const run = await runAgainst(server, 'csv', { on_invalid_record: 'fail' });
    expect(run.code).toBe(1);
    // The bad bytes are on line 6 (header, 4 rows, then the bad row).
    expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump \(csv\) line 6: row is not valid UTF-8/);
    expectBookmarkUnmoved(run);
    expectNoSecret(run, TOKEN, 'csv utf-8');
  });

  it('csv, on_invalid_record=skip: the bad row is skipped and counted, the others emitted', async () => {
    const { body } = build('csv', around(bad));
    const server = await serve('csv', (res) => sendDump(res, body, contentType('csv')));
    const run = await runAgainst(server, 'csv', { on_invalid_record: 'skip' });
    expect(run.code).toBe(0);
    expect(stderrLines(run, /training: skipped 1 invalid records/)).toHaveLength(1);
    expect(stderrLines(run, /line 6: row is not valid UTF-8/)).toHaveLength(1);
    const { valid } = build('csv', around(bad));
    expectSameRecords(recordsOf(run.messages, 'training'), valid, 'csv utf-8 skip');
    expectNoSecret(run, TOKEN, 'csv utf-8 skip');
  });
});

describe.concurrent('on_invalid_record=skip', () => {
  // The invalid records carry the latest completedAt: the bookmark must not come from them.
  const LATE = '2030-06-01T00:00:00Z';
  const JSONL_PARTS: Part[] = [
    { valid: record(1) },
    { invalid: '{"userId": "usr-99", "completedAt": 2025-01-01' },
    { valid: record(2) },
    { invalid: INVALID_UTF8_JSON },
    { invalid: JSON.stringify(without(record(91, LATE), 'userId')) },
    { valid: record(3) },
    { invalid: JSON.stringify(record(92, 'last tuesday')) },
    { invalid: JSON.stringify({ ...record(93, LATE), moduleName: 'x'.repeat(3 * MAX_LINE) }) },
    { valid: record(4) },
    { invalid: '[1, 2, 3]' },
    { valid: record(5) },
  ];
  const CSV_PARTS: Part[] = [
    { valid: record(1) },
    { invalid: `${csvRow(record(94, LATE))},surplus` },
    { valid: record(2) },
    { invalid: csvRow({ ...record(95, LATE), userId: null }) },
    { valid: record(3) },
    { invalid: csvRow(record(96, 'last tuesday')) },
    { invalid: csvRow({ ...record(97, LATE), timeSpentSeconds: 'ten minutes' }) },
    { valid: record(4) },
    { invalid: csvRow({ ...record(98, LATE), moduleName: 'x'.repeat(3 * MAX_LINE) }) },
    { valid: record(5) },
  ];

  it.each([
    ['jsonl', JSONL_PARTS, [2, 4, 5, 7, 8], 6],
    ['csv', CSV_PARTS, [3, 5, 7, 8, 10], 5],
  ] as const)('%s: exit 0, exactly the valid records, the skipped ones counted and the first five logged with line numbers', async (format, parts, firstLines, count) => {
    const { body, valid } = build(format, parts);
    const server = await serve(format, (res) => sendDump(res, body, contentType(format)));
    const run = await runAgainst(server, format, { on_invalid_record: 'skip' });
    expect(run.code, run.stderr).toBe(0);
    expectSameRecords(recordsOf(run.messages, 'training'), valid, `training ${format}`);
    expect(stderrLines(run, new RegExp(`training: skipped ${count} invalid records \\(on_invalid_record=skip\\)`))).toHaveLength(1);
    const logged = stderrLines(run, /skipped invalid record: training dump/);
    expect(logged.map((l) => Number(/ line (\d+):/.exec(l)?.[1]))).toEqual(firstLines);
    // The bookmark advances over the valid records only.
    expect(instant(lastState(run.messages).bookmarks?.training?.replication_key_value)).toBe(maxInstant(valid, 'completedAt'));
    expectNoSecret(run, TOKEN, `skip ${format}`);
  });
});

describe.concurrent('a partial last line when the connection is destroyed', () => {
  // Cut inside the last record's last field: for CSV the cut row still has 17 columns and a valid date ("2025-01-17").
  function partial(format: 'jsonl' | 'csv'): { body: Buffer; valid: JsonObject[]; cut: number } {
    const { body, valid } = build(format, [1, 2, 3, 4, 5, 6, 7].map((i) => ({ valid: record(i) })));
    const cut = format === 'csv' ? body.length - 'T10:00:00Z\n'.length : body.length - 30;
    return { body, valid, cut };
  }

  for (const format of ['jsonl', 'csv'] as const) {
    for (const contentLength of [false, true]) {
      it(`${format}, ${contentLength ? 'Content-Length' : 'chunked'}: the cut line is never emitted; the retry reads it whole, every record once`, async () => {
        const { body, valid, cut } = partial(format);
        const server = await serve(format, (res, nth) => {
          if (nth === 1) sendCutDump(res, body, cut, { contentLength, contentType: contentType(format) });
          else sendDump(res, body, contentType(format));
        });
        const run = await runAgainst(server, format, { max_retries: 3 });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr).toMatch(/training dump: the dump broke after 6 records/);
        expectSameRecords(recordsOf(run.messages, 'training'), valid, `training ${format}`);
        expectNoSecret(run, TOKEN, 'partial');
      });
    }

    const mode = format === 'jsonl' ? 'fail' : 'skip';
    it(`${format}, on_invalid_record=${mode}, every answer cut: exit 1 "gave up", no truncated record, no bookmark moved`, async () => {
      const { body, valid, cut } = partial(format);
      const server = await serve(format, (res) => sendCutDump(res, body, cut, { contentType: contentType(format) }));
      const run = await runAgainst(server, format, { on_invalid_record: mode });
      expect(run.code).toBe(1);
      expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump: gave up after 2 attempts: the dump broke after 6 records/);
      const emitted = recordsOf(run.messages, 'training');
      // Whatever got out is a whole record of the dump, never the cut one.
      expect(emitted.filter((r) => !valid.some((v) => JSON.stringify(v) === JSON.stringify(r)))).toEqual([]);
      expect(emitted.some((r) => r.userId === 'usr-7')).toBe(false);
      expectBookmarkUnmoved(run);
      expectNoSecret(run, TOKEN, 'partial gave up');
    });
  }
});
