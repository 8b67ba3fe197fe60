import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServer, type AddressInfo } from 'node:net';
import nock from 'nock';
import { DumpClient, RetryBudget } from '../../src/http/client.js';
import { createLogger } from '../../src/observe/log.js';
import { TRAINING } from '../../src/catalog/reports.js';

const BASE = 'https://api.example.com';
const PATH = '/public/v1/report/training/dump.jsonl';

let delays: number[];
let logs: string[];

function client(overrides: Partial<ConstructorParameters<typeof DumpClient>[0]> = {}) {
  return new DumpClient({
    baseUrl: BASE,
    accessToken: 'secret-token-123',
    userAgent: 'test',
    gzip: false,
    timeoutMs: 5000,
    maxRetries: 3,
    retryMaxElapsedMs: 600_000,
    connectRetryMs: 15_000,
    backoffBaseMs: 1000,
    minRequestIntervalMs: 0,
    logger: createLogger({ write: (l) => logs.push(l) }),
    redact: (text) => text.split('secret-token-123').join('***'),
    sleep: async (ms) => void delays.push(ms),
    random: () => 0.5,
    ...overrides,
  });
}

const open = (c: DumpClient, budget = new RetryBudget()) => c.open({ stream: TRAINING, format: 'jsonl', query: [] }, budget);

beforeEach(() => {
  nock.disableNetConnect();
  delays = [];
  logs = [];
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe('retries (unit, nock)', () => {
  it('retries 503 and 429 with backoff, honouring Retry-After, then returns the dump', async () => {
    nock(BASE).get(PATH).reply(503, { message: 'down' });
    nock(BASE).get(PATH).reply(429, { message: 'slow down' }, { 'retry-after': '7' });
    nock(BASE).get(PATH).matchHeader('authorization', 'Bearer secret-token-123').reply(200, '{"a":1}\n', { 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT' });
    const budget = new RetryBudget();
    const response = await open(client(), budget);
    expect(response.status).toBe(200);
    expect(response.lastModified).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
    expect(budget.attempts).toBe(3);
    // full jitter with random()=0.5: 0.5 * 1000 * 2^0, then Retry-After 7 s beats 0.5 * 2000
    expect(delays).toEqual([500, 7000]);
    expect(logs.join('')).not.toContain('secret-token-123');
  });

  it('gives up after max_retries with a message saying what kept failing', async () => {
    nock(BASE).get(PATH).times(4).reply(502, 'bad gateway');
    await expect(open(client())).rejects.toThrow(/gave up after 4 attempts: HTTP 502 \(bad gateway\)\. The service or network kept failing; run again later or raise max_retries\.$/);
    expect(delays).toHaveLength(3);
  });

  it('gives up on persistent 429 with advice on pacing', async () => {
    nock(BASE).get(PATH).times(4).reply(429, '', { 'retry-after': '1' });
    await expect(open(client())).rejects.toThrow(/rate limited \(HTTP 429\).*min_request_interval/);
  });

  it('stops when the next wait would pass retry_max_elapsed', async () => {
    nock(BASE).get(PATH).times(2).reply(503, '', { 'retry-after': '120' });
    await expect(open(client({ retryMaxElapsedMs: 60_000 }))).rejects.toThrow(/retry_max_elapsed/);
    expect(delays).toEqual([]);
  });

  it('does not retry 400, 401, 403 or 404, and says how to fix each', async () => {
    const cases: Array<[number, RegExp]> = [
      // What the user can change for a 400 is the sync's to say (test/sync/read/refused-read.test.ts): the client names what was sent.
      [400, /HTTP 400 Bad Request: the server rejected the request without filters\. The server said: unknown filter\.$/],
      [401, /HTTP 401 Unauthorized.*access_token/],
      [403, /HTTP 403 Forbidden.*scope report:training:read.*deselect the training stream/],
      [404, /HTTP 404 .*Check base_url/],
    ];
    for (const [status, message] of cases) {
      nock(BASE).get(PATH).reply(status, { message: 'unknown filter' });
      const budget = new RetryBudget();
      await expect(open(client(), budget)).rejects.toThrow(message);
      expect(budget.attempts).toBe(1);
    }
    expect(delays).toEqual([]);
  });

  it('retries a connection error', async () => {
    // nock cannot fail an https request with a socket error, so a loopback server resets the first connection.
    let connections = 0;
    const server = createServer((socket) => {
      if (++connections === 1) return void socket.resetAndDestroy();
      socket.end('HTTP/1.1 304 Not Modified\r\nLast-Modified: Thu, 01 Jan 2026 00:00:00 GMT\r\nConnection: close\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    nock.enableNetConnect('127.0.0.1');
    try {
      const response = await open(client({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
      expect(response).toEqual({ status: 304, lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT' });
      expect(delays).toHaveLength(1);
      expect(logs.join('')).toMatch(/connection failed \(ECONNRESET\); retry 1 of 3/);
    } finally {
      server.close();
    }
  });
});

const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const unresolved = () => Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });

describe('a host that has not answered yet and cannot be reached (unit, nock, a fake clock)', () => {
  // The clock moves only when the client sleeps: the budget is spent by its own waits.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 0, 1) });
  });
  afterEach(() => vi.useRealTimers());

  const clocked = (overrides: Partial<ConstructorParameters<typeof DumpClient>[0]> = {}) =>
    client({
      sleep: async (ms) => {
        delays.push(ms);
        vi.setSystemTime(Date.now() + ms);
      },
      ...overrides,
    });

  it('a refused connection is retried for connect_retry_seconds however many retries that takes, the last wait cut to end on it; then one line: the host, the cause, the tries, the fix', async () => {
    nock(BASE).get(PATH).times(20).replyWithError(refused());
    const budget = new RetryBudget();
    await expect(open(clocked(), budget)).rejects.toThrow(
      /^training dump: nothing accepts connections at api\.example\.com:443 \(ECONNREFUSED\): tried 6 times over 15 s \(connect_retry_seconds\)\. Check base_url, and that this machine reaches the service \(its DNS, a firewall or a proxy\); for a service that may be restarting, raise connect_retry_seconds\.$/,
    );
    // random()=0.5: 0.5, 1, 2, 4 s, then 8 s cut to the 7.5 s left; max_retries (3) does not count these.
    expect(delays).toEqual([500, 1000, 2000, 4000, 7500]);
    expect(budget.attempts).toBe(6);
    expect(logs.join('')).toMatch(/training dump: connection failed \(ECONNREFUSED\): nothing accepts connections at api\.example\.com:443; retry 5 in 7\.5 s \(connect_retry_seconds: 7\.5 of 15 s spent\)/);
  });

  it('a host name that does not resolve: the same budget, the same line naming it', async () => {
    nock(BASE).get(PATH).times(20).replyWithError(unresolved());
    await expect(open(clocked({ connectRetryMs: 3000 }))).rejects.toThrow(
      /^training dump: the host name api\.example\.com does not resolve \(ENOTFOUND\): tried 4 times over 3 s \(connect_retry_seconds\)\. Check base_url/,
    );
    expect(delays).toEqual([500, 1000, 1500]);
  });

  it('a raised connect_retry_seconds keeps trying until the host answers (a service that restarts)', async () => {
    nock(BASE).get(PATH).times(7).replyWithError(refused());
    nock(BASE).get(PATH).reply(304, '', { 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT' });
    const response = await open(clocked({ connectRetryMs: 120_000 }));
    expect(response.status).toBe(304);
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000]);
  });

  it('connect_retry_seconds 0, or max_retries 0, fails at the first refusal', async () => {
    nock(BASE).get(PATH).replyWithError(refused());
    await expect(open(clocked({ connectRetryMs: 0 }))).rejects.toThrow(/tried 1 time over 0 s \(connect_retry_seconds\)/);
    nock(BASE).get(PATH).replyWithError(refused());
    await expect(open(clocked({ maxRetries: 0 }))).rejects.toThrow(/gave up after 1 attempts: connection failed \(ECONNREFUSED\): nothing accepts connections at api\.example\.com:443\. Check base_url/);
    expect(delays).toEqual([]);
  });

  it('once the host has answered in this run, a refused connection is a restart: it gets the full retries (max_retries), not connect_retry_seconds', async () => {
    const c = clocked({ connectRetryMs: 1 });
    nock(BASE).get(PATH).reply(304, '');
    await open(c);
    nock(BASE).get(PATH).times(4).replyWithError(refused());
    await expect(open(c)).rejects.toThrow(/^training dump: gave up after 4 attempts: connection failed \(ECONNREFUSED\): nothing accepts connections at api\.example\.com:443\. Check base_url/);
    expect(delays).toEqual([500, 1000, 2000]);
  });

  it('other failures before any answer (a reset, a 503) keep max_retries, whatever connect_retry_seconds says', async () => {
    nock(BASE).get(PATH).times(4).replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await expect(open(clocked({ connectRetryMs: 1 }))).rejects.toThrow(/gave up after 4 attempts: connection failed \(ECONNRESET\)\. The service or network kept failing/);
    expect(delays).toEqual([500, 1000, 2000]);
  });
});

describe("a server's error text (unit, nock)", () => {
  // The logger here masks nothing: whatever is masked, the client masked before logging or throwing.
  const TOKEN = 'secret-token-123';

  it('reaches the retry warnings masked, even where it is cut to 300 characters: the secret is masked before the cut', async () => {
    nock(BASE).get(PATH).reply(503, { message: `token ${TOKEN} is rate limited` });
    // The token straddles the 300th character: cut first, its first half would stay in the log.
    nock(BASE).get(PATH).reply(502, `${'x'.repeat(290)}${TOKEN} tail`);
    nock(BASE).get(PATH).reply(200, '{"a":1}\n');
    const response = await open(client());
    expect(response.status).toBe(200);
    const log = logs.join('');
    expect(log).not.toContain('secret-');
    expect(log).toMatch(/HTTP 503 \(token \*\*\* is rate limited\)/);
    expect(log).toMatch(/HTTP 502 \(x{290}\*\*\* tail\)/);
  });

  it('reaches the error of a status that is not retried masked, cut after the masking', async () => {
    nock(BASE).get(PATH).reply(400, { message: `${'y'.repeat(290)}${TOKEN}` });
    const error: unknown = await open(client()).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toContain('secret-');
    expect((error as Error).message).toContain(`${'y'.repeat(290)}***`);
  });
});

describe('a server that quotes a personal filter back', () => {
  it('has its words reach the error with the values of the personal filters sent hidden, as written and URL-encoded', async () => {
    const query = [['filter[program]', 'prog-01'], ['filter[email]', 'ada@example.com']] as Array<[string, string]>;
    nock(BASE).get(PATH).query(true).reply(400, { message: 'no user ada@example.com (ada%40example.com) in prog-01' });
    const error: unknown = await client().open({ stream: TRAINING, format: 'jsonl', query }, new RetryBudget()).then(() => undefined, (e: unknown) => e);
    expect((error as Error).message).toMatch(/The server said: no user \*\*\* \(\*\*\*\) in prog-01\.$/);
    expect((error as Error).message).not.toContain('ada');
  });
});

describe('debug request lines (log_level debug)', () => {
  const debugClient = (lines: string[]) => client({ logger: createLogger({ level: 'debug', write: (l) => lines.push(l) }) });
  const request = (ifModifiedSince?: string) => ({ stream: TRAINING, format: 'jsonl' as const, query: [['filter[program]', 'prog-01'], ['filter[email]', 'ada@example.com']] as Array<[string, string]>, ifModifiedSince });
  const QUERY = '?filter%5Bprogram%5D=prog-01&filter%5Bemail%5D=ada%40example.com';
  const debugLines = (lines: string[]) => lines.filter((l) => / DEBUG /.test(l)).map((l) => l.replace(/^\S+ DEBUG /, '').trim());

  it('one line per request once its body ended: path and query (the e-mail hidden), status, Last-Modified, bytes, duration', async () => {
    nock(BASE).get(`${PATH}${QUERY}`).reply(200, '{"a":1}\n{"a":2}\n', { 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT' });
    const lines: string[] = [];
    const response = await debugClient(lines).open(request());
    expect(debugLines(lines), 'no line before the body is read').toEqual([]);
    if (response.status !== 200) throw new Error('expected a body');
    for await (const chunk of response.body) void chunk;
    expect(debugLines(lines)).toEqual([
      expect.stringMatching(/^training: GET \/public\/v1\/report\/training\/dump\.jsonl\?filter\[program\]=prog-01&filter\[email\]=\*\*\* -> HTTP 200; If-Modified-Since -, Last-Modified Thu, 01 Jan 2026 00:00:00 GMT, 16 bytes, \d+\.\d{3} s$/),
    ]);
    expect(lines.join('')).not.toContain('ada@example.com');
    expect(lines.join('')).not.toContain('ada%40example.com');
  });

  it('a conditional request answered 304 names the If-Modified-Since sent; a retried 503 and a failed connection are lines of their own', async () => {
    nock(BASE).get(`${PATH}${QUERY}`).reply(503, 'down');
    nock(BASE).get(`${PATH}${QUERY}`).replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    nock(BASE).get(`${PATH}${QUERY}`).reply(304, '', { 'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT' });
    const lines: string[] = [];
    await debugClient(lines).open(request('Thu, 01 Jan 2026 00:00:00 GMT'));
    expect(debugLines(lines)).toEqual([
      expect.stringMatching(/-> HTTP 503; If-Modified-Since Thu, 01 Jan 2026 00:00:00 GMT, Last-Modified -, \d+\.\d{3} s$/),
      expect.stringMatching(/-> no answer; If-Modified-Since Thu, 01 Jan 2026 00:00:00 GMT, Last-Modified -, \d+\.\d{3} s, ECONNRESET$/),
      expect.stringMatching(/-> HTTP 304; If-Modified-Since Thu, 01 Jan 2026 00:00:00 GMT, Last-Modified Thu, 01 Jan 2026 00:00:00 GMT, \d+\.\d{3} s$/),
    ]);
  });

  it('a body the reader left before its end says so, once', async () => {
    nock(BASE).get(`${PATH}${QUERY}`).reply(200, '{"a":1}\n');
    const lines: string[] = [];
    const response = await debugClient(lines).open(request());
    if (response.status !== 200) throw new Error('expected a body');
    response.abort();
    response.abort();
    expect(debugLines(lines)).toEqual([expect.stringMatching(/-> HTTP 200; If-Modified-Since -, Last-Modified -, 0 bytes, \d+\.\d{3} s, aborted$/)]);
  });
});
