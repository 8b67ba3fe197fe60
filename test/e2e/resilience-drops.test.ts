import { gzipSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { stderrLines, syncTap } from '../helpers/cli.js';
import { type JsonObject, lastState, recordsOf } from '../helpers/messages.js';
import { instant, maxInstant } from '../helpers/records.js';
import { REPLICATION_KEY, type Sandbox, sandboxRecords, startTestSandbox, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';
import { type FakeServer, sendCutDump, sendDump, startFakeServer } from '../helpers/fake-server.js';
import { catalogOf, expectNoneMissing, expectSameRecords, FAST_RETRIES } from '../helpers/resilience-util.js';
import { DUMP_PATH } from '../helpers/sandbox.js';

/**
 * "Never lose a record": connections cut at random byte offsets in the
 * middle of a dump. When the dump read again begins with the bytes already
 * read (proved by length and hash, whatever Last-Modified says), the tap
 * resumes after the records it handled: every record exactly once. When it
 * does not, the tap reads it again from the start: duplicates are allowed,
 * loss is not.
 */

const RECORDS = 1500;
const sandboxes: Sandbox[] = [];
const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all([...sandboxes.map((s) => s.close()), ...servers.map((s) => s.close())]);
});

type Format = 'jsonl' | 'csv';
type Compression = 'none' | 'gzip';

const COMBOS: Array<{ format: Format; compression: Compression; seeds: number[] }> = [
  { format: 'jsonl', compression: 'none', seeds: [11, 12] },
  { format: 'jsonl', compression: 'gzip', seeds: [21, 22] },
  { format: 'csv', compression: 'none', seeds: [31, 32] },
  { format: 'csv', compression: 'gzip', seeds: [41, 42] },
];

/** Drops per combination, summed over its seeds (each combination must actually cut connections). */
const dropsByCombo = new Map<string, number>();

async function dropRun(format: Format, compression: Compression, seed: number): Promise<void> {
  const sandbox = await startTestSandbox({ trainingRecords: RECORDS, phishingRecords: RECORDS });
  sandboxes.push(sandbox);
  // Cut points anywhere in the bodies as sent: after compression, the gzip bodies are ~10x smaller.
  const sizes = STREAM_NAMES.map((stream) => {
    const body = Buffer.from(sandbox.dump(stream, format));
    return compression === 'gzip' ? gzipSync(body, { level: 1 }).length : body.length;
  });
  const high = Math.min(150_000, Math.min(...sizes) - 1000);
  expect(high).toBeGreaterThan(10_000);
  sandbox.setFaults({ dropAfterBytes: [compression === 'gzip' ? 200 : 500, high], dropRate: 0.5, seed });

  // Packaged discovery: the fault sequence is the sync's own (live discovery would take its first request).
  const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, format, compression, discovery: 'packaged' }) });
  expect(run.code, run.stderr).toBe(0);

  const stats = sandbox.stats();
  const key = `${format}/${compression}`;
  dropsByCombo.set(key, (dropsByCombo.get(key) ?? 0) + stats.dropped);
  // Each cut was noticed and retried; no retry had to start over (the dump never changed).
  expect(stderrLines(run, /dump: the dump broke after \d+ records/)).toHaveLength(stats.dropped);
  expect(stats.requests).toBe(STREAM_NAMES.length + stats.dropped);
  expect(stderrLines(run, /records may repeat/)).toEqual([]);

  const final = lastState(run.messages);
  for (const stream of STREAM_NAMES) {
    const expected = sandboxRecords(sandbox, stream);
    expect(expected).toHaveLength(RECORDS);
    expectSameRecords(recordsOf(run.messages, stream), expected, `${stream} ${key} seed ${seed}`);
    expect(instant(final.bookmarks?.[stream]?.replication_key_value), `${stream} bookmark`).toBe(maxInstant(expected, REPLICATION_KEY[stream]));
  }
}

describe.concurrent('connections cut at random byte offsets, dump unchanged', () => {
  for (const { format, compression, seeds } of COMBOS) {
    for (const seed of seeds) {
      it(`${format}, compression ${compression}, fault seed ${seed}: every record exactly once, bookmark at the greatest key`, () =>
        dropRun(format, compression, seed));
    }
  }
});

describe('the cuts really happened', () => {
  it('every format/compression combination had connections cut', () => {
    for (const { format, compression } of COMBOS) {
      expect(dropsByCombo.get(`${format}/${compression}`), `${format}/${compression}`).toBeGreaterThanOrEqual(2);
    }
  });
});

describe.concurrent('dump changed while the tap retried', () => {
  /**
   * The first response is throttled and cut after 40 kB; while it is in
   * flight the data changes (Last-Modified moves) and faults are switched
   * off, so the retry gets the new dump.
   */
  async function changedDuringRetry(change: (sandbox: Sandbox) => void, format: Format): Promise<{ sandbox: Sandbox; records: JsonObject[]; stderr: string; bookmark: unknown }> {
    const sandbox = await startTestSandbox({ trainingRecords: RECORDS, phishingRecords: 10 });
    sandboxes.push(sandbox);
    sandbox.setFaults({ dropAfterBytes: 40_000, dropRate: 1, bodyBytesPerSecond: 100_000 });
    const before = sandbox.lastModified('training').getTime();
    const running = syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, format, compression: 'none' }), catalog: catalogOf(['training']) });
    const deadline = Date.now() + 5000;
    while (sandbox.stats().requests < 1 && Date.now() < deadline) await sleep(2);
    expect(sandbox.stats().requests).toBe(1);
    sandbox.setFaults({ dropAfterBytes: null, bodyBytesPerSecond: null });
    change(sandbox);
    expect(sandbox.lastModified('training').getTime()).toBeGreaterThan(before);
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.stats().dropped).toBe(1);
    return { sandbox, records: recordsOf(run.messages, 'training'), stderr: run.stderr, bookmark: lastState(run.messages).bookmarks?.training?.replication_key_value };
  }

  it.each(['jsonl', 'csv'] as const)('%s: records appended between attempts: the bytes read before did not change, so it resumes: every record once, the new ones included', async (format) => {
    const { sandbox, records, stderr, bookmark } = await changedDuringRetry((s) => s.append('training', 40), format);
    const expected = sandboxRecords(sandbox, 'training');
    expect(expected).toHaveLength(RECORDS + 40);
    // Last-Modified moved, but the dump still begins with the bytes already read (appends go at the end).
    expect(stderr).toMatch(/training: skipping the \d+ records already handled, once the dump proves to begin with the same bytes/);
    expect(stderr).not.toMatch(/reading it from the start/);
    expectSameRecords(records, expected, 'training');
    expect(instant(bookmark)).toBe(maxInstant(expected, 'completedAt'));
  });

  it('records updated between attempts, some inside the part already read: read from the start, every current version is emitted', async () => {
    const { sandbox, records, stderr, bookmark } = await changedDuringRetry((s) => s.update('training', 300), 'jsonl');
    const expected = sandboxRecords(sandbox, 'training');
    expectNoneMissing(records, expected, 'training');
    expect(stderr).toMatch(/training: the dump read again does not begin with the bytes already read; reading it from the start, records may repeat/);
    expect(instant(bookmark)).toBe(maxInstant(expected, 'completedAt'));
  });
});

describe.concurrent('a retried dump that changed although Last-Modified did not', () => {
  it('is noticed (the bytes before the resume point differ) and read from the start: the record that moved is not lost', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 12, phishingRecords: 0 });
    sandboxes.push(sandbox);
    const lines = sandbox.dump('training', 'jsonl').split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(12);
    const first = Buffer.from(lines.map((l) => `${l}\n`).join(''));
    // Cut inside line 7: lines 1-6 were handled.
    const cut = lines.slice(0, 6).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) + 25;
    // The second answer lacks line 1 but carries the same Last-Modified: skipping 6 by position would skip line 7.
    const second = lines.slice(1).map((l) => `${l}\n`).join('');
    const server = await startFakeServer((_req, res, { path, nth }) => {
      if (path !== `${DUMP_PATH.training}.jsonl`) return void res.writeHead(404).end();
      if (nth === 1) sendCutDump(res, first, cut);
      else sendDump(res, second);
    });
    servers.push(server);
    const run = await syncTap({ config: { base_url: server.url, access_token: 'tok-anything', ...FAST_RETRIES, compression: 'none' }, catalog: catalogOf(['training']) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/does not begin with the bytes already read; reading it from the start/);
    const records = recordsOf(run.messages, 'training');
    expectNoneMissing(records, lines.map((l) => JSON.parse(l) as JsonObject), 'training');
    expect(server.requests.length).toBe(3);
  });

  it('when its bytes prove the same, resumes after the handled records: no repeats', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 12, phishingRecords: 0 });
    sandboxes.push(sandbox);
    const body = Buffer.from(sandbox.dump('training', 'jsonl'));
    const lines = body.toString('utf8').split('\n').filter((l) => l !== '');
    const cut = lines.slice(0, 6).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) + 25;
    const server = await startFakeServer((_req, res, { nth }) => {
      if (nth === 1) sendCutDump(res, body, cut);
      else sendDump(res, body);
    });
    servers.push(server);
    const run = await syncTap({ config: { base_url: server.url, access_token: 'tok-anything', ...FAST_RETRIES, compression: 'none' }, catalog: catalogOf(['training']) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/training: skipping the 6 records already handled, once the dump proves to begin with the same bytes/);
    expectSameRecords(recordsOf(run.messages, 'training'), lines.map((l) => JSON.parse(l) as JsonObject), 'training');
    expect(server.requests.length).toBe(2);
  });

  it('a dump cut again and again, each time further on, resumes each time by its bytes whatever Last-Modified says: every record once', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 10, phishingRecords: 0 });
    sandboxes.push(sandbox);
    const body = Buffer.from(sandbox.dump('training', 'jsonl'));
    const lines = body.toString('utf8').split('\n').filter((l) => l !== '');
    const after = (n: number) => lines.slice(0, n).reduce((total, l) => total + Buffer.byteLength(l) + 1, 0) + 10;
    const A = 'Wed, 01 Jan 2025 00:00:00 GMT';
    const B = 'Thu, 02 Jan 2025 00:00:00 GMT';
    const server = await startFakeServer((_req, res, { nth }) => {
      if (nth === 1) sendCutDump(res, body, after(3), { lastModified: A });
      else if (nth === 2) sendCutDump(res, body, after(6), { lastModified: B });
      else sendDump(res, body, 'application/jsonl', B);
    });
    servers.push(server);
    const run = await syncTap({ config: { base_url: server.url, access_token: 'tok-anything', ...FAST_RETRIES, compression: 'none' }, catalog: catalogOf(['training']) });
    expect(run.code, run.stderr).toBe(0);
    const records = recordsOf(run.messages, 'training');
    expectNoneMissing(records, lines.map((l) => JSON.parse(l) as JsonObject), 'training');
    // Last-Modified moved from A to B, but the bytes are the same: read 2 resumes after 3 records, read 3 after 6.
    expectSameRecords(records, lines.map((l) => JSON.parse(l) as JsonObject), 'training');
    expect(server.requests.length).toBe(3);
  });
});
