import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { stderrLines, syncTap } from '../helpers/cli.js';
import { type JsonObject, lastState, recordsOf, statesOf } from '../helpers/messages.js';
import { type Sandbox, sandboxRecords, startTestSandbox, tapConfig } from '../helpers/sandbox.js';
import { type FakeServer, sendCutDump, sendDump, startFakeServer } from '../helpers/fake-server.js';
import { bookmarksOf, catalogOf, errorLine, expectSameRecords, FAST_RETRIES } from '../helpers/resilience-util.js';
import { DUMP_PATH } from '../helpers/sandbox.js';

/**
 * Issue 4, "never lose a record": a run that cannot finish fails with a clear
 * one-line error and exit 1, and never writes a bookmark past what it read to
 * the end; timeouts are retried; a slow but steady body is not a timeout.
 */

const sandboxes: Sandbox[] = [];
const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all([...sandboxes.map((s) => s.close()), ...servers.map((s) => s.close())]);
});

/** The n-th greatest value of a replication key among records (1 = the greatest). */
function nthGreatest(records: readonly JsonObject[], field: string, n: number): string {
  const values = records.map((r) => r[field]).filter((v): v is string => typeof v === 'string');
  values.sort((a, b) => Date.parse(b) - Date.parse(a));
  return values[n - 1];
}

describe.concurrent('a run that cannot finish', () => {
  it('connection always cut (dropRate 1, max_retries 2): exit 1, one "gave up" line naming the stream, no STATE moves its bookmark', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 600, phishingRecords: 600 });
    sandboxes.push(sandbox);
    // Training's incremental dump (a handful of records; its open rows not read) fits under the cut and completes; phishing's does not.
    // Both had a full pass lately: these runs are incremental.
    const full_pass = { at: new Date().toISOString() };
    const input = {
      bookmarks: {
        training: { replication_key: 'completedAt', replication_key_value: nthGreatest(sandboxRecords(sandbox, 'training'), 'completedAt', 3), full_pass },
        phishing: { replication_key: 'sentAt', replication_key_value: nthGreatest(sandboxRecords(sandbox, 'phishing'), 'sentAt', 300), full_pass },
      },
    };
    sandbox.setFaults({ dropAfterBytes: 20_000, dropRate: 1 });
    const run = await syncTap({
      // The incremental reads of a state made by hand: without the change store, which would not trust it and make full passes.
      config: tapConfig(sandbox, { ...FAST_RETRIES, max_retries: 2, compression: 'none', refresh_open_rows: false, send_changes_only: false }),
      state: input,
      catalog: catalogOf(['training', 'phishing']),
    });
    expect(run.code).toBe(1);
    const error = errorLine(run);
    expect(error).toMatch(/^tap-report-dump: error: phishing dump: gave up after 3 attempts: the dump broke after \d+ records/);
    expect(sandbox.stats().dropped).toBe(3);

    // Whatever phishing records got out before the failure, no STATE carries a phishing bookmark other than the input's.
    const states = statesOf(run.messages);
    expect(states.length, 'training finished and wrote a STATE').toBeGreaterThanOrEqual(1);
    for (const bookmark of bookmarksOf(run.messages, 'phishing')) expect(bookmark).toEqual(input.bookmarks.phishing);
    // The last STATE is the one after training, and training's own bookmark did move.
    expect(lastState(run.messages).bookmarks?.training?.replication_key_value).not.toBe(input.bookmarks.training.replication_key_value);
  });

  it('every request answered 500/503 (failRate 1, max_retries 2): exit 1, one "gave up" line naming the stream, no STATE, no RECORD', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 50, phishingRecords: 50, faults: { failRate: 1, failStatuses: [500, 503] } });
    sandboxes.push(sandbox);
    const input = { bookmarks: { training: { replication_key: 'completedAt', replication_key_value: '2024-01-01T00:00:00Z' } } };
    const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, max_retries: 2 }), state: input });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump: gave up after 3 attempts: HTTP 50[03]\b/);
    expect(sandbox.stats().requests).toBe(3);
    expect(stderrLines(run, /training dump: HTTP 50[03].*retry \d of 2/)).toHaveLength(2);
    expect(run.messages.filter((m) => m.type === 'RECORD')).toEqual([]);
    for (const bookmark of bookmarksOf(run.messages, 'training')) expect(bookmark).toEqual(input.bookmarks.training);
    expect(statesOf(run.messages)).toEqual([]);
  });
  it('a Retry-After beyond retry_max_elapsed: gives up at once (no 5 s wait), saying retry_max_elapsed', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 20, phishingRecords: 20, faults: { failRate: 1, failStatuses: [503], retryAfterSeconds: 5 } });
    sandboxes.push(sandbox);
    const started = Date.now();
    const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, retry_max_elapsed: 1 }) });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump: gave up after 1 attempts in \d+ s \(retry_max_elapsed\): HTTP 503\b/);
    expect(sandbox.stats().requests).toBe(1);
    expect(Date.now() - started).toBeLessThan(4500);
  });
});

describe.concurrent('slow server', () => {
  it('answers later than request_timeout: retried, then a one-line gave-up error that says it timed out', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 20, phishingRecords: 20, faults: { latencyMs: 10_000 } });
    sandboxes.push(sandbox);
    const started = Date.now();
    // undici checks header timeouts on a ~1 s clock, so each attempt takes about a second.
    const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, max_retries: 1, request_timeout: 0.25 }) });
    const elapsed = Date.now() - started;
    expect(run.code).toBe(1);
    const error = errorLine(run);
    expect(error).toMatch(/^tap-report-dump: error: training dump: gave up after 2 attempts: .*time.?out/i);
    expect(stderrLines(run, /training dump: .*time.?out.*retry 1 of 1/i)).toHaveLength(1);
    expect(sandbox.stats().requests).toBe(2);
    // The tap gave up on each attempt after request_timeout, without waiting for the server's 10 s.
    expect(elapsed).toBeLessThan(8000);
    expect(run.messages.filter((m) => m.type !== 'SCHEMA')).toEqual([]);
  });

  it('a slow but steady body (throttled, longer in total than request_timeout) completes with every record once', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 300, phishingRecords: 5, faults: { bodyBytesPerSecond: 120_000 } });
    sandboxes.push(sandbox);
    const bytes = Buffer.byteLength(sandbox.dump('training', 'jsonl'));
    const started = Date.now();
    // request_timeout bounds the wait for each chunk, not the whole body.
    const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, request_timeout: 0.6, compression: 'none' }), catalog: catalogOf(['training']) });
    const elapsed = Date.now() - started;
    expect(run.code, run.stderr).toBe(0);
    expect(elapsed).toBeGreaterThan((bytes / 120_000) * 1000 * 0.9);
    expect(elapsed).toBeGreaterThan(600);
    expect(sandbox.stats().requests).toBe(1);
    expect(stderrLines(run, /retry/)).toEqual([]);
    expectSameRecords(recordsOf(run.messages, 'training'), sandboxRecords(sandbox, 'training'), 'training');
  });

  it('a body that stalls longer than request_timeout is cut, requested again and resumed: every record once', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 40, phishingRecords: 0 });
    sandboxes.push(sandbox);
    const body = Buffer.from(sandbox.dump('training', 'jsonl'));
    const half = Math.floor(body.length / 2);
    const server = await startFakeServer((_req, res, { path, nth }) => {
      if (path !== `${DUMP_PATH.training}.jsonl`) return void res.writeHead(404).end();
      if (nth === 1) {
        // Half the body, then silence (the connection stays open).
        res.writeHead(200, { 'Content-Type': 'application/jsonl', 'Last-Modified': 'Wed, 01 Jan 2025 00:00:00 GMT' });
        res.write(body.subarray(0, half));
        return;
      }
      sendDump(res, body);
    });
    servers.push(server);
    const run = await syncTap({
      config: { base_url: server.url, access_token: 'tok-anything', ...FAST_RETRIES, request_timeout: 0.4, compression: 'none' },
      catalog: catalogOf(['training']),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(stderrLines(run, /training dump: the dump broke after \d+ records \(.*time.?out.*\); retry 1 of 30/i), run.stderr).toHaveLength(1);
    expect(run.stderr).toMatch(/skipping the \d+ records already handled/);
    expectSameRecords(recordsOf(run.messages, 'training'), sandboxRecords(sandbox, 'training'), 'training');
    expect(server.requests).toHaveLength(2);
  });

  it('a long dump that breaks again and again, each time further on, is finished: progress renews the retry budget', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 400, phishingRecords: 0 });
    sandboxes.push(sandbox);
    const body = Buffer.from(sandbox.dump('training', 'jsonl'));
    const server = await startFakeServer((_req, res, { path, nth }) => {
      if (path !== `${DUMP_PATH.training}.jsonl`) return void res.writeHead(404).end();
      // Cut at 1/5, 2/5, 3/5 and 4/5 of the body, then send it whole.
      if (nth < 5) return sendCutDump(res, body, Math.floor((body.length * nth) / 5));
      sendDump(res, body);
    });
    servers.push(server);
    const run = await syncTap({
      config: { base_url: server.url, access_token: 'tok-anything', ...FAST_RETRIES, max_retries: 1, compression: 'none' },
      catalog: catalogOf(['training']),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests).toHaveLength(5);
    expectSameRecords(recordsOf(run.messages, 'training'), sandboxRecords(sandbox, 'training'), 'training');
  });
});
