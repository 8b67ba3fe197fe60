import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncTap } from '../helpers/cli.js';
import { type JsonObject, recordsOf, statesOf } from '../helpers/messages.js';
import { instant, maxInstant } from '../helpers/records.js';
import { DUMP_PATH, type Sandbox, trainingDump } from '../helpers/sandbox.js';
import { type FakeServer, sendCutDump, sendDump, startFakeServer, startRawServer } from '../helpers/fake-server.js';
import { catalogOf, errorLine, expectNoneMissing, expectSameRecords, FAST_RETRIES } from '../helpers/resilience-util.js';

/**
 * Never lose a record, part two: servers whose framing lies or breaks, each
 * answered by a purpose-built server on loopback (raw TCP where the framing
 * matters). Every test asserts the records emitted, the STATE and the exit code.
 */

const sandboxes: Sandbox[] = [];
const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all([...sandboxes.map((s) => s.close()), ...servers.map((s) => s.close())]);
});


const tap = (server: FakeServer, extra: JsonObject = {}) =>
  syncTap({ config: { base_url: server.url, access_token: 'tok-anything', ...FAST_RETRIES, compression: 'none', ...extra }, catalog: catalogOf(['training']) });

/** Offset just after the n-th line break of `body`. */
function afterLine(body: Buffer, n: number): number {
  let at = -1;
  for (let i = 0; i < n; i++) at = body.indexOf(10, at + 1);
  return at + 1;
}

describe.concurrent('a body cut short without an error', () => {
  it('csv, close-delimited (no Content-Length, no chunking): the partial last row is never a record; the dump is read again and every record comes once, with its own date', async () => {
    const { body, expected } = await trainingDump(sandboxes, 200, 'csv');
    // Cut inside a row, right after its completedAt's date part: a partial row would parse with a wrong time.
    const cut = afterLine(body, 120) + 40;
    const server = await startRawServer((socket, { nth }) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nConnection: close\r\n\r\n');
      socket.end(nth === 1 ? body.subarray(0, cut) : body);
    });
    servers.push(server);
    const run = await tap(server, { format: 'csv' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/training dump: the dump broke after \d+ records \(it ends without a line break after its last line, so it was cut short/);
    expectSameRecords(recordsOf(run.messages, 'training'), expected, 'training');
    expect(server.requests).toHaveLength(2);
  });

  it('jsonl, a Content-Length shorter than the data, with on_invalid_record skip: the cut line is neither skipped nor a record; read again, every record once', async () => {
    const { body, expected } = await trainingDump(sandboxes, 200);
    const cut = afterLine(body, 150) + 30;
    const server = await startRawServer((socket, { nth }) => {
      const length = nth === 1 ? cut : body.length;
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/jsonl\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`);
      socket.end(body);
    });
    servers.push(server);
    const run = await tap(server, { on_invalid_record: 'skip' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/skipped invalid record/);
    expectSameRecords(recordsOf(run.messages, 'training'), expected, 'training');
  });

  it('a service that never ends its dumps with a line break, with require_final_line_break off: the last line is a record', async () => {
    const { body, expected } = await trainingDump(sandboxes, 50);
    const server = await startFakeServer((_req, res) => sendDump(res, body.subarray(0, body.length - 1)));
    servers.push(server);
    const run = await tap(server, { require_final_line_break: false });
    expect(run.code, run.stderr).toBe(0);
    expectSameRecords(recordsOf(run.messages, 'training'), expected, 'training');
  });
});

describe.concurrent('a service whose dumps never end with a line break', () => {
  /** A server answering every request with the dump less its final line break. */
  async function withoutFinalBreak(format: 'jsonl' | 'csv'): Promise<{ server: FakeServer; expected: JsonObject[] }> {
    const { body, expected } = await trainingDump(sandboxes, 40, format);
    expect(body.at(-1)).toBe(10);
    const server = await startFakeServer((_req, res) => sendDump(res, body.subarray(0, body.at(-2) === 13 ? -2 : -1), format === 'csv' ? 'text/csv' : 'application/jsonl'));
    servers.push(server);
    return { server, expected };
  }

  it.each(['jsonl', 'csv'] as const)('%s, with require_final_line_break at its default: every answer is taken as cut short and read again, the run gives up naming the setting, nothing is emitted and no STATE', async (format) => {
    const { server } = await withoutFinalBreak(format);
    const run = await tap(server, { format, max_retries: 1 });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump: gave up after 2 attempts: the dump broke after \d+ records \(it ends without a line break after its last line, so it was cut short; if the service never ends its dumps with one, set require_final_line_break to false\)/);
    expect(server.requests).toHaveLength(2);
    expect(recordsOf(run.messages, 'training')).toEqual([]);
    expect(statesOf(run.messages)).toEqual([]);
  });

  it.each(['jsonl', 'csv'] as const)('%s, with require_final_line_break false: one read, every record with the last, and the bookmark at the greatest', async (format) => {
    const { server, expected } = await withoutFinalBreak(format);
    const run = await tap(server, { format, require_final_line_break: false, max_retries: 1 });
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests).toHaveLength(1);
    expectSameRecords(recordsOf(run.messages, 'training'), expected, 'training');
    const states = statesOf(run.messages);
    expect(instant(states.at(-1)!.value.bookmarks?.training?.replication_key_value)).toBe(maxInstant(expected, 'completedAt'));
  });
});

describe.concurrent('gzip with Content-Length and Connection: close (a common server setup)', () => {
  it('is read to the end without a crash: every record, exit 0 (undici 7 crashed here on every run)', async () => {
    const { body, expected } = await trainingDump(sandboxes, 20_000);
    const compressed = gzipSync(body, { level: 1 });
    const server = await startRawServer((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/jsonl\r\nContent-Encoding: gzip\r\nContent-Length: ${compressed.length}\r\nConnection: close\r\n\r\n`);
      socket.end(compressed);
    });
    servers.push(server);
    const run = await tap(server, { compression: 'gzip', max_retries: 0 });
    expect(run.stderr).not.toMatch(/AssertionError|\n\s+at /);
    expect(run.code, run.stderr).toBe(0);
    expect(recordsOf(run.messages, 'training')).toHaveLength(expected.length);
    expectSameRecords(recordsOf(run.messages, 'training'), expected, 'training');
  });
});

describe.concurrent('a dump whose order is not stable', () => {
  it('two records swapped across the resume point under the same Last-Modified: read again from the start, none lost, the bookmark at the greatest key', async () => {
    const { body, expected } = await trainingDump(sandboxes, 40);
    const lines = body.toString('utf8').split('\n').filter((l) => l !== '');
    // Read 1 handles lines 1-20 and breaks; read 2 swaps line 10 and line 30.
    const swapped = [...lines];
    [swapped[9], swapped[29]] = [swapped[29], swapped[9]];
    const second = Buffer.from(swapped.map((l) => `${l}\n`).join(''));
    const server = await startFakeServer((_req, res, { path, nth }) => {
      if (path !== `${DUMP_PATH.training}.jsonl`) return void res.writeHead(404).end();
      if (nth === 1) sendCutDump(res, body, afterLine(body, 20) + 15);
      else sendDump(res, second);
    });
    servers.push(server);
    const run = await tap(server);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/does not begin with the bytes already read; reading it from the start/);
    const records = recordsOf(run.messages, 'training');
    expectNoneMissing(records, expected, 'training');
    expect(records.length).toBeLessThanOrEqual(expected.length + 20);
    const states = statesOf(run.messages);
    expect(instant(states[states.length - 1].value.bookmarks?.training?.replication_key_value)).toBe(maxInstant(expected, 'completedAt'));
  });

  it('a break that recurs at the same place, without Last-Modified, with max_retries 1: gives up quickly, no flood of repeats, no bookmark', async () => {
    const { body } = await trainingDump(sandboxes, 30);
    const lines = body.toString('utf8').split('\n').filter((l) => l !== '');
    const server = await startFakeServer((_req, res, { nth }) => {
      // Each answer lists the records in another order and is cut at the same place.
      const order = nth % 2 === 0 ? [...lines].reverse() : lines;
      const text = Buffer.from(order.map((l) => `${l}\n`).join(''));
      res.writeHead(200, { 'Content-Type': 'application/jsonl' });
      res.write(text.subarray(0, afterLine(text, 10) + 5), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    servers.push(server);
    const started = Date.now();
    const run = await tap(server, { max_retries: 1 });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump: gave up after 2 attempts: the dump broke after 10 records/);
    expect(run.stderr).not.toMatch(/Last-Modified undefined/);
    expect(recordsOf(run.messages, 'training').length).toBeLessThanOrEqual(30);
    expect(statesOf(run.messages)).toEqual([]);
    expect(server.requests.length).toBeLessThanOrEqual(4);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe.concurrent('a server that drips', () => {
  it('one byte at a time, forever: dump_timeout ends each attempt, and the run gives up naming it', async () => {
    const { body } = await trainingDump(sandboxes, 10);
    const server = await startFakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/jsonl' });
      res.flushHeaders();
      let at = 0;
      const timer = setInterval(() => {
        if (res.destroyed || at >= body.length) return void clearInterval(timer);
        res.write(body.subarray(at, ++at));
      }, 50);
      res.on('close', () => clearInterval(timer));
    });
    servers.push(server);
    const started = Date.now();
    const run = await tap(server, { dump_timeout: 1, request_timeout: 30, max_retries: 1 });
    expect(run.code).toBe(1);
    // Usually the deadline ends an attempt inside the body; on a loaded machine the last one may end before the headers are read: both name dump_timeout.
    expect(errorLine(run)).toMatch(/gave up after 2 attempts: (the dump broke after \d+ records \()?the attempt took longer than 1 s \(dump_timeout\)/);
    expect(statesOf(run.messages)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
