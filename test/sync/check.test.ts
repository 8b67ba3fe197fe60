import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../../src/catalog/reports.js';
import { resolveConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/observe/log.js';
import { checkStreams } from '../../src/sync/check.js';
import { closedPort, startFakeServer, type FakeServer } from '../helpers/fake-server.js';

/**
 * check tries each stream once, within min(request_timeout, 5 s), whatever
 * max_retries and backoff_base say, and words each failure as what happened
 * (the run's "gave up after N attempts … raise max_retries" does not apply).
 */

let silent: Server;
const sockets = new Set<Socket>();
let fake: FakeServer;

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  fake = await startFakeServer((_req, res) => {
    res.writeHead(503, { 'Content-Type': 'application/json' });
    res.end('{"message":"maintenance"}');
  });
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all([new Promise((resolve) => silent.close(resolve)), fake.close()]);
});

async function check(baseUrl: string, settings: Record<string, unknown> = {}) {
  const logs: string[] = [];
  const config = resolveConfig({ base_url: baseUrl, access_token: 'check-token', max_retries: 5, backoff_base: 1, ...settings });
  const started = Date.now();
  const results = await checkStreams(config, REPORTS, createLogger({ write: (line) => logs.push(line) }), (text) => text);
  return { results, logs, elapsed: Date.now() - started };
}

describe('check', () => {
  it('a server that accepts and never answers: each stream fails after request_timeout when under 5 s, both at once, saying who did not answer', async () => {
    const port = (silent.address() as AddressInfo).port;
    const { results, logs, elapsed } = await check(`http://127.0.0.1:${port}`, { request_timeout: 0.4 });
    expect(results.map((r) => [r.stream, r.ok, r.message])).toEqual(
      ['training', 'phishing'].map((stream) => [
        stream,
        false,
        `${stream} dump: 127.0.0.1:${port} did not answer within 0.4 s (check waits at most 5 s, or request_timeout when shorter). Check base_url, and that the service is up.`,
      ]),
    );
    expect(logs.join('')).not.toMatch(/retry/);
    expect(elapsed).toBeLessThan(2000);
  });

  it('a closed port: one attempt per stream, the port named, no backoff', async () => {
    const port = await closedPort();
    const { results, logs } = await check(`http://127.0.0.1:${port}`);
    for (const result of results) {
      expect(result.message).toBe(`${result.stream} dump: nothing accepts connections at 127.0.0.1:${port} (ECONNREFUSED). Check base_url, and that this machine reaches the service.`);
    }
    expect(logs.join('')).not.toMatch(/retry/);
  });

  it('a status worth retrying in a run (503): one request per stream, the status and what the server said', async () => {
    fake.requests.length = 0;
    const { results } = await check(fake.url);
    expect(results.map((r) => r.message)).toEqual(['training dump: HTTP 503 (maintenance) (check tries each stream once).', 'phishing dump: HTTP 503 (maintenance) (check tries each stream once).']);
    expect(fake.requests).toHaveLength(2);
  });

  it('a service that refuses a configured filter (400): that stream fails, its request carried the filter, and the message names the setting, not its value', async () => {
    const refusing = await startFakeServer((req, res) => {
      const refused = (req.url ?? '').includes('filter%5Bemail%5D') || (req.url ?? '').includes('filter[email]');
      res.writeHead(refused ? 400 : 200, { 'Content-Type': refused ? 'application/json' : 'text/csv' });
      res.end(refused ? '{"message":"this service does not support this filter"}' : 'id\n');
    });
    try {
      const { results } = await check(refusing.url, { filters: { training: { email: 'alice@example.com' } } });
      expect(results.map((r) => [r.stream, r.ok])).toEqual([['training', false], ['phishing', true]]);
      const message = results[0]!.message;
      expect(message).toMatch(/^training dump: HTTP 400 Bad Request: the server rejected the request with filter\[email\], filter\[completedAt\]\. The server said: this service does not support this filter\. Check filters\.training\.email: the first sync sends the same and would be refused too\. filter\[completedAt\] is the tap's own lower bound/);
      expect(message).not.toContain('alice');
      expect(refusing.requests.find((r) => r.path.includes('training'))!.query).toMatch(/filter%5Bemail%5D=alice/);
    } finally {
      await refusing.close();
    }
  });
});
