import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { stderrLines, syncTap } from '../helpers/cli.js';
import { lastState, recordsOf } from '../helpers/messages.js';
import { instant, maxInstant } from '../helpers/records.js';
import { REPLICATION_KEY, type Sandbox, sandboxRecords, startTestSandbox, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';
import { expectSameRecords, FAST_RETRIES } from '../helpers/resilience-util.js';

/**
 * Issue 4, "never lose a record": transient HTTP failures (5xx, 429) are
 * retried until the dump is read, and the output is exactly the service's
 * records, each once.
 */

const sandboxes: Sandbox[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});


/** Packaged discovery: the requests (and injected faults) these tests count are the sync's own. */
const SYNC_REQUESTS_ONLY = { discovery: 'packaged' } as const;

describe.concurrent('random 500/503 answers', () => {
  // Seeds whose fault sequence fails requests of the run, some several in a row (checked below).
  const SEEDS = [2, 4, 5, 9];

  it.each(SEEDS)('fault seed %i: exit 0, exactly the service records once each, bookmark at the greatest replication key', async (seed) => {
    const sandbox = await startTestSandbox({
      trainingRecords: 300,
      phishingRecords: 250,
      faults: { failRate: 0.5, failStatuses: [500, 503], retryAfterSeconds: null, seed },
    });
    sandboxes.push(sandbox);
    const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, ...SYNC_REQUESTS_ONLY }) });
    expect(run.code, run.stderr).toBe(0);

    const stats = sandbox.stats();
    expect(stats.injectedFailures, 'the seed injects at least one failure').toBeGreaterThan(0);
    // Every injected failure was answered with a retry, and logged as one.
    const retries = stderrLines(run, /dump: HTTP 50[03]\b.*retry \d+ of 30/);
    expect(retries).toHaveLength(stats.injectedFailures);
    expect(stats.requests).toBe(stats.injectedFailures + STREAM_NAMES.length);

    const final = lastState(run.messages);
    for (const stream of STREAM_NAMES) {
      const expected = sandboxRecords(sandbox, stream);
      expectSameRecords(recordsOf(run.messages, stream), expected, `${stream} (seed ${seed})`);
      expect(instant(final.bookmarks?.[stream]?.replication_key_value)).toBe(maxInstant(expected, REPLICATION_KEY[stream]));
    }
  });
});

describe.concurrent('429 with Retry-After from the rate limiter', () => {
  it('waits as long as Retry-After asks (not the tiny backoff), then reads every record', async () => {
    // One request per second: training gets through, phishing is told to come back in 1 s.
    const sandbox = await startTestSandbox({ trainingRecords: 50, phishingRecords: 50, rateLimit: { requests: 1, windowSeconds: 1 } });
    sandboxes.push(sandbox);
    const started = Date.now();
    const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, ...SYNC_REQUESTS_ONLY }) });
    const elapsed = Date.now() - started;
    expect(run.code, run.stderr).toBe(0);

    for (const stream of STREAM_NAMES) expectSameRecords(recordsOf(run.messages, stream), sandboxRecords(sandbox, stream), stream);

    // stderr tells that it was rate limited and that it retries after the server's delay.
    const retried = stderrLines(run, /phishing dump: HTTP 429\b.*retry 1 of 30 in 1\.0 s/);
    expect(retried, run.stderr).toHaveLength(1);
    // Retry-After was honoured: one 429 only (a 10 ms backoff alone would have hit the limit again and again).
    const stats = sandbox.stats();
    expect(stats.byStatus['429']).toBe(1);
    expect(stats.byStatus['200']).toBe(2);
    expect(elapsed).toBeGreaterThanOrEqual(950);
  });

  it('min_request_interval keeps the tap within the limit: no 429 at all', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 50, phishingRecords: 50, rateLimit: { requests: 1, windowSeconds: 1 } });
    sandboxes.push(sandbox);
    const started = Date.now();
    // 1.5 s, not just over 1 s: the server's window starts when a request arrives, which may lag its start on a busy machine.
    const run = await syncTap({ config: tapConfig(sandbox, { ...FAST_RETRIES, ...SYNC_REQUESTS_ONLY, min_request_interval: 1.5 }) });
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.stats().byStatus).toEqual({ '200': 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    for (const stream of STREAM_NAMES) expectSameRecords(recordsOf(run.messages, stream), sandboxRecords(sandbox, stream), stream);
  });
});
