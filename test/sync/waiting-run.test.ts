import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../../src/catalog/reports.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { defaultSelection } from '../../src/catalog/selection.js';
import { resolveConfig } from '../../src/config/config.js';
import { DumpClient } from '../../src/http/client.js';
import { runSync } from '../../src/sync/run.js';
import { singer } from '../../src/singer/messages.js';
import { createLogger } from '../../src/observe/log.js';
import { parseMessages, recordsOf } from '../helpers/messages.js';
import { startTestSandbox, type Sandbox } from '../helpers/sandbox.js';

/**
 * A sync that waits for a slow server says so in its log, through the run's
 * own logger, naming the stream it waits for: the sandbox answers each dump
 * request only after its latency, and the client's notice interval is short.
 */

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ trainingRecords: 30, phishingRecords: 30, faults: { latencyMs: 450 } });
});
afterAll(() => sandbox.close());

describe('a sync against a server slow to answer', () => {
  it('logs, per stream, how long it has waited for the response headers, and still syncs every record', async () => {
    const config = resolveConfig({ base_url: sandbox.url, access_token: 'demo-token', compression: 'none' });
    const logs: string[] = [];
    const logger = createLogger({ write: (line) => logs.push(line) });
    const client = new DumpClient({
      baseUrl: config.base_url,
      accessToken: config.access_token,
      userAgent: config.user_agent,
      gzip: false,
      timeoutMs: config.request_timeout * 1000,
      maxRetries: 0,
      retryMaxElapsedMs: 60_000,
      connectRetryMs: 15_000,
      backoffBaseMs: 1,
      minRequestIntervalMs: 0,
      waitNoticeMs: 100,
      logger,
      redact: (text) => text,
    });
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    try {
      await runSync({ config, streams: defaultSelection(discoverStreams(config, REPORTS)), out, protocol: singer, logger, client, redact: (text) => text });
    } finally {
      await client.close();
    }
    const messages = parseMessages(Buffer.concat(chunks).toString('utf8'));
    expect([recordsOf(messages, 'training').length, recordsOf(messages, 'phishing').length]).toEqual([30, 30]);
    for (const stream of ['training', 'phishing']) {
      const notices = logs.filter((line) => line.includes(`WARN  ${stream}: waited `));
      expect(notices.length, logs.join('')).toBeGreaterThanOrEqual(2);
      expect(notices[0]).toMatch(new RegExp(`${stream}: waited \\d+(\\.\\d)? s for the response headers from the server \\(request_timeout 300 s\\)\\n$`));
    }
  });
});
