import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DumpClient, RetryBudget, type ClientOptions } from '../../src/http/client.js';
import { createLogger } from '../../src/observe/log.js';
import { TRAINING } from '../../src/catalog/reports.js';

/**
 * A run that waits for the server says so: against real sockets that accept
 * and never answer, or that send the headers and then stop, the client logs
 * every notice interval what it waits for and for how long.
 */

const servers: Server[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A TCP server on 127.0.0.1 that does `onRequest` with each connection once a request head arrived. */
async function tcpServer(onRequest: (socket: Socket) => void): Promise<string> {
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n')) onRequest(socket);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(baseUrl: string, logs: string[], overrides: Partial<ClientOptions> = {}): DumpClient {
  return new DumpClient({
    baseUrl,
    accessToken: 'secret-token-123',
    userAgent: 'test',
    gzip: false,
    timeoutMs: 1000,
    maxRetries: 0,
    retryMaxElapsedMs: 600_000,
    connectRetryMs: 15_000,
    backoffBaseMs: 1,
    minRequestIntervalMs: 0,
    waitNoticeMs: 100,
    logger: createLogger({ write: (line) => logs.push(line) }),
    redact: (text) => text,
    ...overrides,
  });
}

const open = (c: DumpClient) => c.open({ stream: TRAINING, format: 'jsonl', query: [] }, new RetryBudget());

/** The seconds each matching log line names. */
function seconds(logs: readonly string[], pattern: RegExp): number[] {
  return logs.flatMap((line) => {
    const match = pattern.exec(line);
    return match ? [Number(match[1])] : [];
  });
}

describe('waiting for a server that does not answer', () => {
  it('accepted and silent: a warning every notice interval naming the stream and the time waited for the headers, then the timeout', async () => {
    const url = await tcpServer(() => undefined);
    const logs: string[] = [];
    const c = client(url, logs);
    try {
      await expect(open(c)).rejects.toThrow(/gave up after 1 attempts: no data for 1 s \(request_timeout\)/);
    } finally {
      await c.close();
    }
    const waited = seconds(logs, /WARN  training: waited (\d+(?:\.\d)?) s for the response headers from the server \(request_timeout 1 s\)$/m);
    // Every 0.1 s for 1 s: a loaded machine may fire the interval late, never more often.
    expect(waited.length).toBeGreaterThanOrEqual(3);
    expect(waited.length).toBeLessThanOrEqual(10);
    expect(waited).toEqual([...waited].sort((a, b) => a - b));
    expect(waited[0]).toBeGreaterThanOrEqual(0.1);
  });

  it('headers sent, then the body stops: a warning every notice interval naming the stream and the time without data, then the timeout', async () => {
    const url = await tcpServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/jsonl\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{"a":1\r\n'));
    const logs: string[] = [];
    const c = client(url, logs, { timeoutMs: 450 });
    try {
      const response = await open(c);
      if (response.status !== 200) throw new Error('expected a body');
      const chunks: string[] = [];
      await expect(
        (async () => {
          for await (const chunk of response.body) chunks.push(chunk.toString());
        })(),
      ).rejects.toThrow(/no data for 0\.45 s \(request_timeout\)/);
      expect(chunks.join('')).toBe('{"a":1');
    } finally {
      await c.close();
    }
    // The body's wait is counted in the steps armed: exactly one notice per interval before the limit.
    expect(logs.filter((line) => /no data from the server/.test(line)).map((line) => line.replace(/^\S+ /, ''))).toEqual([
      'WARN  training: no data from the server for 0.1 s (request_timeout 0.45 s)\n',
      'WARN  training: no data from the server for 0.2 s (request_timeout 0.45 s)\n',
      'WARN  training: no data from the server for 0.3 s (request_timeout 0.45 s)\n',
      'WARN  training: no data from the server for 0.4 s (request_timeout 0.45 s)\n',
    ]);
    expect(logs.join('')).not.toMatch(/response headers/);
  });

  it('a server that answers at once: no notice', async () => {
    const url = await tcpServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/jsonl\r\nContent-Length: 8\r\nConnection: close\r\n\r\n{"a":1}\n'));
    const logs: string[] = [];
    const c = client(url, logs, { waitNoticeMs: 30_000 });
    try {
      const response = await open(c);
      if (response.status !== 200) throw new Error('expected a body');
      let body = '';
      for await (const chunk of response.body) body += chunk.toString();
      expect(body).toBe('{"a":1}\n');
    } finally {
      await c.close();
    }
    expect(logs.join('')).not.toMatch(/waited|no data/);
  });
});
