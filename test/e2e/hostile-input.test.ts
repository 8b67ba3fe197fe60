import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { statesOf, type JsonObject } from '../helpers/messages.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { catalogOf, errorLine } from '../helpers/resilience-util.js';

/**
 * Never lose a record, part two: inputs that used to fail late, silently or
 * with a stack trace now fail at once with one line and a documented exit
 * code: unparsable URLs, header values that cannot be sent, durations that
 * would overflow a timer, empty or repeated file options, legacy bookmarks
 * that are not dates, TLS failures and a Retry-After longer than the budget.
 */

const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const base = { base_url: 'https://api.example.com', access_token: 'tok-anything' };

describe.concurrent('settings that cannot work are config errors before any request (exit 2, one line)', () => {
  const cases: Array<[string, JsonObject, RegExp]> = [
    ['a port over 65535', { base_url: 'http://127.0.0.1:99999' }, /Setting base_url is not a valid URL: its port must be a number from 0 to 65535/],
    ['a port that is not a number', { base_url: 'https://host:port' }, /Setting base_url is not a valid URL: its port must be a number/],
    ['a user_agent with a line break', { user_agent: 'tap\r\nX-Injected: 1' }, /Setting user_agent contains a line break/],
    ['a token outside Latin-1', { access_token: 'tök€n-1234' }, /Setting access_token contains a character that cannot be sent in an HTTP header/],
    ['a lookback_window of 1e11 seconds (a filter in year -1144)', { lookback_window: 1e11 }, /setting lookback_window must be a whole number from 0 to 315360000/],
    ['a min_request_interval longer than a timer can wait', { min_request_interval: 3e6 }, /setting min_request_interval must be a number from 0 to 3600/],
    ['a retry_max_elapsed of a month', { retry_max_elapsed: 2_592_000 }, /setting retry_max_elapsed must be a number greater than 0 and at most 604800/],
    ['a dump_timeout of zero', { dump_timeout: 0 }, /setting dump_timeout must be a number greater than 0 and at most 604800/],
  ];
  it.each(cases)('%s', async (_label, settings, message) => {
    const run = await syncTap({ config: { ...base, ...settings } });
    expect(run.code).toBe(2);
    expect(errorLine(run)).toMatch(message);
    expect(run.stderr).not.toMatch(/tök€n|X-Injected/);
  });
});

describe.concurrent('file options', () => {
  const config = () => writeTempJson(base);
  const cases: Array<[string, () => string[], RegExp]> = [
    ['--catalog ""', () => ['--config', config(), '--catalog', ''], /--catalog needs a file path, got an empty value/],
    ['--state ""', () => ['--config', config(), '--state', ''], /--state needs a file path, got an empty value/],
    ['--properties ""', () => ['--config', config(), '--properties', ''], /--properties needs a file path/],
    ['--config ""', () => ['--config', ''], /--config needs a file path/],
    ['a repeated --catalog', () => ['--config', config(), '--catalog', config(), '--catalog', config()], /--catalog was given 2 times; give it once/],
    ['sync --state ""', () => ['sync', '--config', config(), '--state', ''], /--state needs a file path/],
    ['airbyte read --state ""', () => ['airbyte', 'read', '--config', config(), '--catalog', config(), '--state', ''], /--state needs a file path/],
    ['a misspelt command', () => ['snyc', '--config', config()], /^tap-report-dump: error: snyc is not a command or option of tap-report-dump \(did you mean sync\?\)\. See tap-report-dump --help\.$/],
    ['a misspelt option', () => ['sync', '--config', config(), '--catlog', config()], /^tap-report-dump: error: --catlog is not a command or option of tap-report-dump \(did you mean --catalog\?\)\./],
    ['a token pasted where a command goes, never repeated', () => ['check', 'pasted-s3cret-token-0042', '--config', config()], /^tap-report-dump: error: an argument \(not shown: it may be a secret\) is not a command or option of tap-report-dump\. See tap-report-dump --help\.$/],
    ['demo --records abc', () => ['demo', '--records', 'abc'], /^tap-report-dump: error: --records must be a whole number of records per stream, such as 2000; got "abc"\. See tap-report-dump --help\.$/],
    ['demo --records -3', () => ['demo', '--records', '-3'], /^tap-report-dump: error: --records must be a whole number of records per stream, such as 2000; got "-3"\./],
    ['a misspelt Airbyte command', () => ['airbyte', 'raed', '--config', config()], /^tap-report-dump airbyte: error: raed is not a command or option of tap-report-dump airbyte \(did you mean read\?\); its commands are spec, check, discover, read, configured-catalog\./],
  ];
  it.each(cases)('%s: exit 2, one line naming the option, no run', async (_label, args, message) => {
    const run = await runTap(args());
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(run.stdout).toBe('');
  });
});

describe.concurrent('state', () => {
  it('a legacy bookmark that is not a date is a state error, like a bad replication_key_value', async () => {
    const run = await syncTap({ config: base, state: { bookmarks: { training: { completedAt: 'garbage' } } } });
    expect(run.code).toBe(2);
    expect(errorLine(run)).toMatch(/bookmarks\.training\.completedAt is not an RFC 3339 date: "garbage"\. Fix or remove that bookmark/);
  });

  it('a bookmark holding what may be personal data (an e-mail) is a state error that does not quote it', async () => {
    const run = await syncTap({ config: base, state: { bookmarks: { training: { replication_key: 'completedAt', replication_key_value: 'alice@example.com' } } } });
    expect(run.code).toBe(2);
    expect(errorLine(run)).toMatch(/bookmarks\.training\.replication_key_value is not an RFC 3339 date \(the value is not shown: it may be personal data\)\. Fix or remove that bookmark/);
    expect(run.stdout + run.stderr).not.toContain('alice');
  });
});

describe.concurrent('the connection', () => {
  it('https:// to a plain-http port: a sentence about TLS, not OpenSSL text; not retried', async () => {
    const plain = createServer((_req, res) => res.end('plain'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const port = (plain.address() as AddressInfo).port;
    try {
      const run = await syncTap({ config: { base_url: `https://127.0.0.1:${port}`, access_token: 'tok-anything' }, catalog: catalogOf(['training']) });
      expect(run.code).toBe(1);
      expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump: cannot connect securely to 127\.0\.0\.1:\d+: the server did not answer with TLS \(is base_url https:\/\/ on a plain-http port\?\)/);
      expect(run.stderr).not.toMatch(/routines|SSL alert|retry 1 of/);
    } finally {
      plain.close();
    }
  });

  it('a Retry-After longer than retry_max_elapsed gives up at once, saying how long the server asked to wait', async () => {
    const server = await startFakeServer((_req, res) => {
      res.writeHead(503, { 'Retry-After': '99999999' });
      res.end();
    });
    servers.push(server);
    const started = Date.now();
    const run = await syncTap({ config: { base_url: server.url, access_token: 'tok-anything', retry_max_elapsed: 60 }, catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/training dump: gave up after 1 attempts in 0 s \(retry_max_elapsed\): HTTP 503\. The server asked to wait 99999999 s \(Retry-After\)\. Run again later\./);
    expect(server.requests).toHaveLength(1);
    expect(statesOf(run.messages)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a 429 whose Retry-After outlasts retry_max_elapsed gives up at once, saying how long the server asked to wait and what it said', async () => {
    const server = await startFakeServer((_req, res) => {
      res.writeHead(429, { 'Retry-After': '7200', 'Content-Type': 'application/json' });
      res.end('{"message":"quota exhausted"}');
    });
    servers.push(server);
    const run = await syncTap({ config: { base_url: server.url, access_token: 'tok-anything', retry_max_elapsed: 60 }, catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/training dump: gave up after 1 attempts in 0 s \(retry_max_elapsed\): HTTP 429 \(quota exhausted\)\. The server asked to wait 7200 s \(Retry-After\)\. Run again later\./);
    expect(server.requests).toHaveLength(1);
    expect(statesOf(run.messages)).toEqual([]);
  });
});
