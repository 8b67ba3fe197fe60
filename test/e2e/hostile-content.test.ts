import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runSource, runTap, syncTap, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { type JsonObject, recordsOf, statesOf } from '../helpers/messages.js';
import { instant, maxInstant } from '../helpers/records.js';
import { DUMP_PATH, type Sandbox, trainingDump } from '../helpers/sandbox.js';
import { type FakeServer, sendDump, startFakeServer } from '../helpers/fake-server.js';
import { catalogOf, errorLine, FAST_RETRIES, secretToken } from '../helpers/resilience-util.js';

/**
 * Never lose a record, part two: servers that answer with what is not a dump,
 * echo the token in other forms, send control characters, dates in the far
 * future, or a CSV without its header. Each against a purpose-built server.
 */

const sandboxes: Sandbox[] = [];
const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all([...sandboxes.map((s) => s.close()), ...servers.map((s) => s.close())]);
});


const configFor = (server: FakeServer, extra: JsonObject = {}): JsonObject => ({ base_url: server.url, access_token: 'tok-anything', ...FAST_RETRIES, compression: 'none', ...extra });

describe.concurrent('a page that is not a dump', () => {
  it('a 200 text/html login page, with on_invalid_record skip: an error naming the type and the path, no records, no Last-Modified stored', async () => {
    const server = await startFakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Last-Modified': 'Wed, 01 Jan 2025 00:00:00 GMT' });
      res.end('<!DOCTYPE html>\n<html><body><form>Sign in</form></body></html>\n');
    });
    servers.push(server);
    const run = await syncTap({ config: configFor(server, { on_invalid_record: 'skip' }), catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toBe(
      'tap-report-dump: error: training dump: the server answered with Content-Type text/html at /public/v1/report/training/dump.jsonl, not a dump (a login or error page?). Check base_url and the token.',
    );
    expect(recordsOf(run.messages, 'training')).toEqual([]);
    expect(statesOf(run.messages)).toEqual([]);
  });

  it('the same page without a Content-Type is recognised by its first bytes', async () => {
    const server = await startFakeServer((_req, res) => {
      res.writeHead(200, { 'Last-Modified': 'Wed, 01 Jan 2025 00:00:00 GMT' });
      res.end('\n  <html>\n<body>Session expired</body></html>\n');
    });
    servers.push(server);
    const run = await syncTap({ config: configFor(server, { on_invalid_record: 'skip' }), catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/training dump: the body at \/public\/v1\/report\/training\/dump\.jsonl starts like an HTML or XML page, not a dump/);
    expect(statesOf(run.messages)).toEqual([]);
  });

  it.each(['jsonl', 'csv'] as const)('discover (%s) against the same page: the error the sync gives, not fields learnt from the page', async (format) => {
    const server = await startFakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': format === 'csv' ? 'text/csv' : 'application/x-ndjson' });
      res.end('<!DOCTYPE html>\n<html><body><form>Sign in</form></body></html>\n');
    });
    servers.push(server);
    const config = writeTempJson(configFor(server, { format }));
    const singer = await runTap(['--config', config, '--discover']);
    expect(singer.code).toBe(1);
    expect(errorLine(singer)).toMatch(new RegExp(`training dump: the body at /public/v1/report/training/dump\\.${format} starts like an HTML or XML page, not a dump \\(a login or error page\\?\\)\\. Check base_url and the token\\.`));
    expect(singer.stdout).toBe('');
    const airbyte = await runSource(['discover', '--config', config]);
    const errors = airbyte.stdout.trim().split('\n').map((line) => JSON.parse(line) as { trace?: { error?: { message: string; failure_type: string } } }).flatMap((message) => (message.trace?.error ? [message.trace.error] : []));
    expect(errors).toEqual([{ message: expect.stringMatching(/starts like an HTML or XML page, not a dump/) as unknown, failure_type: 'config_error' }]);
  });
});

describe.concurrent('a server that echoes the token in other forms, with terminal escapes', () => {
  const token = `abc/def+ghi=${randomBytes(9).toString('base64')}`;
  const forms = [
    JSON.stringify(token).slice(1, -1).replace(/\//g, '\\/'),
    encodeURIComponent(token),
    Buffer.from(`Bearer ${token}`).toString('base64'),
    Buffer.from(`Authorization: Bearer ${token}`).toString('base64url'),
  ];
  const echo = `{"detail":"Authorization: Bearer ${forms[0]}"} url=${forms[1]} b64=${forms[2]} b64url=${forms[3]} \u001b]0;pwned\u0007\u001b[2J\u001b[1A\u009b31m done`;
  /** Its own server per test: the answer alternates 503 and 400 with each request it gets. */
  async function echoServer(): Promise<FakeServer> {
    const server = await startFakeServer((_req, res, { nth }) => {
      res.writeHead(nth % 2 === 1 ? 503 : 400, { 'Content-Type': 'text/plain' });
      res.end(echo);
    });
    servers.push(server);
    return server;
  }

  function expectClean(run: TapRun, label: string): void {
    const output = `${run.stdout}\n${run.stderr}`;
    expect(output.includes(token), `${label}: the token`).toBe(false);
    for (const form of forms) expect(output.includes(form), `${label}: the form ${form}`).toBe(false);
    // The distinctive random part of the token, in any of the printable forms the server chose.
    expect(output.includes(token.slice(12)), `${label}: the token's random part`).toBe(false);
    expect(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(output), `${label}: a control character reached the output`).toBe(false);
  }

  it.each(['text', 'json'] as const)('sync with %s logs: the retry warning and the final error show the server\'s text without the token or control characters', async (logFormat) => {
    const server = await echoServer();
    const run = await syncTap({ config: { ...configFor(server), access_token: token, max_retries: 1, log_format: logFormat }, catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/retry 1 of 1/);
    expect(run.stderr).toMatch(/HTTP 400 Bad Request/);
    expect(run.stderr).toMatch(/url=\*\*\* b64=/);
    expectClean(run, logFormat);
  });

  it('check and the Airbyte TRACE and CONNECTION_STATUS carry no form of the token either', async () => {
    const server = await echoServer();
    const config = writeTempJson({ ...configFor(server), access_token: token, max_retries: 0 });
    const check = await runTap(['check', '--config', config]);
    expect(check.code).toBe(1);
    expectClean(check, 'check');
    const catalog = writeTempJson({ streams: [{ stream: { name: 'training', json_schema: {} }, sync_mode: 'full_refresh', destination_sync_mode: 'overwrite' }] });
    const read = await runTap(['airbyte', 'read', '--config', config, '--catalog', catalog]);
    expect(read.code).toBe(1);
    expect(read.stdout).toMatch(/"type":"TRACE"/);
    expectClean(read, 'airbyte read');
    const status = await runTap(['airbyte', 'check', '--config', config]);
    expect(status.stdout).toMatch(/"status":"FAILED"/);
    expectClean(status, 'airbyte check');
  });
});

describe.concurrent("a server's error text with the token where it is cut to 300 characters", () => {
  it.each(['text', 'json'] as const)('%s logs: the retry warning and the final error show the text with the token masked before the cut, no part of it left', async (logFormat) => {
    const token = secretToken('cut');
    const server = await startFakeServer((_req, res, { nth }) => {
      res.writeHead(nth === 1 ? 502 : 400, { 'Content-Type': 'text/plain' });
      // The token (27 characters) straddles the 300th: cut first, its first part would stay in the output.
      res.end(`${'x'.repeat(280)}${token} trailing words`);
    });
    servers.push(server);
    const run = await syncTap({ config: { ...configFor(server), access_token: token, max_retries: 1, log_format: logFormat }, catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    const output = `${run.stdout}\n${run.stderr}`;
    expect(output.includes('tok-SECRET'), 'a part of the token').toBe(false);
    expect(output).toMatch(/HTTP 502 \(x{280}\*\*\* trailing words\); retry 1 of 1/);
    expect(output).toMatch(/HTTP 400 Bad Request.*x{280}\*\*\* trailing words/);
  });
});

describe.concurrent('dates in the far future', () => {
  it('one record in 2999 is emitted but does not move the bookmark there; a warning counts it', async () => {
    const { body, expected } = await trainingDump(sandboxes, 30);
    const lines = body.toString('utf8').split('\n').filter((l) => l !== '');
    const future = { ...(JSON.parse(lines[0]) as JsonObject), completedAt: '2999-01-01T00:00:00Z', completed: true };
    const server = await startFakeServer((_req, res) => sendDump(res, `${[JSON.stringify(future), ...lines.slice(1)].join('\n')}\n`));
    servers.push(server);
    const run = await syncTap({ config: configFor(server), catalog: catalogOf(['training']) });
    expect(run.code, run.stderr).toBe(0);
    expect(recordsOf(run.messages, 'training')).toHaveLength(30);
    const bookmark = statesOf(run.messages).at(-1)!.value.bookmarks?.training?.replication_key_value;
    expect(instant(bookmark)).toBe(maxInstant(expected.slice(1), 'completedAt'));
    expect(run.stderr).toMatch(/training: 1 records have a completedAt after \S+ \(the run's start plus max_future_skew\); they were emitted, but the bookmark does not move past that bound/);
  });

  it('an incoming bookmark at 9999-12-31 is a state error (exit 2) naming the stream and the fix, before any request', async () => {
    const server = await startFakeServer((_req, res) => sendDump(res, ''));
    servers.push(server);
    const run = await syncTap({
      config: configFor(server),
      catalog: catalogOf(['training']),
      state: { bookmarks: { training: { replication_key: 'completedAt', replication_key_value: '9999-12-31T00:00:00Z' } } },
    });
    expect(run.code).toBe(2);
    expect(errorLine(run)).toMatch(/State: the training bookmark 9999-12-31T00:00:00Z lies after .* \(now plus max_future_skew\).*Fix or remove bookmarks\.training in the state/);
    expect(server.requests).toEqual([]);
  });
});

describe.concurrent('personal data never reaches the logs', () => {
  it('a CSV whose first line is data, not a header: a clear error that quotes no value', async () => {
    const { body, expected } = await trainingDump(sandboxes, 20, 'csv');
    const withoutHeader = body.subarray(body.indexOf(10) + 1);
    const server = await startFakeServer((_req, res) => sendDump(res, withoutHeader, 'text/csv'));
    servers.push(server);
    const run = await syncTap({ config: configFor(server, { format: 'csv', on_invalid_record: 'skip' }), catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/training dump \(csv\): the first line is not a header: column \d+ holds (an e-mail address|a date|a number), not a field name/);
    for (const record of expected) {
      for (const field of ['email', 'firstName', 'lastName', 'employeeNumber', 'userId']) {
        const value = record[field];
        if (typeof value === 'string' && value.length > 3) expect(run.stderr.includes(value), `${field} ${value}`).toBe(false);
      }
    }
    expect(statesOf(run.messages)).toEqual([]);
  });

  it('an e-mail address in a date or number field, under on_invalid_record skip: the skipped-record lines name the field and line, not the value', async () => {
    const { body } = await trainingDump(sandboxes, 10);
    const lines = body.toString('utf8').split('\n').filter((l) => l !== '');
    const broken = [
      { ...(JSON.parse(lines[0]) as JsonObject), completedAt: 'jane.doe@example.com' },
      { ...(JSON.parse(lines[1]) as JsonObject), progress: 'john.roe@example.com' },
      { ...(JSON.parse(lines[2]) as JsonObject), email: 12, employeeNumber: 'E1000002' },
    ];
    const server = await startFakeServer((_req, res) => sendDump(res, `${[...broken.map((r) => JSON.stringify(r)), ...lines.slice(3)].join('\n')}\n`));
    servers.push(server);
    const run = await syncTap({ config: configFor(server, { on_invalid_record: 'skip', log_level: 'debug' }), catalog: catalogOf(['training']) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/skipped invalid record: training dump \(jsonl\) line 1: field completedAt is not an RFC 3339 date \(the value is not shown: it may be personal data\)/);
    expect(run.stderr).toMatch(/line 2: field progress is not an integer \(the value is not shown/);
    expect(run.stderr).not.toMatch(/jane\.doe|john\.roe/);
    expect(recordsOf(run.messages, 'training')).toHaveLength(8);
  });

  it('a JSON dump whose keys are e-mail addresses: the warnings list no such name, and at most ten names', async () => {
    const { body } = await trainingDump(sandboxes, 5);
    const lines = body.toString('utf8').split('\n').filter((l) => l !== '');
    const extra = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`extra${i}`, i]));
    const record = { ...(JSON.parse(lines[0]) as JsonObject), 'jane.doe@example.com': 'x', ...extra };
    const server = await startFakeServer((_req, res) => sendDump(res, `${JSON.stringify(record)}\n`));
    servers.push(server);
    const run = await syncTap({ config: configFor(server), catalog: catalogOf(['training']) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/jane\.doe/);
    expect(run.stderr.match(/which the stream's schema does not declare/g)).toHaveLength(10);
    expect(run.stderr).toMatch(/a field whose name looks like an e-mail address/);
    expect(run.stderr).toMatch(/more fields the stream's schema does not declare; they are left out of RECORD messages and not listed/);
  });
});

describe.concurrent('a redirect', () => {
  it('a 3xx is not followed (the token would go with it): an error that names its Location', async () => {
    const target = await startFakeServer((_req, res) => sendDump(res, ''));
    servers.push(target);
    const server = await startFakeServer((_req, res) => {
      res.writeHead(301, { Location: `${target.url}${DUMP_PATH.training}.jsonl` });
      res.end();
    });
    servers.push(server);
    const run = await syncTap({ config: configFor(server), catalog: catalogOf(['training']) });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toBe(
      `tap-report-dump: error: training dump: HTTP 301 redirect to ${target.url}${DUMP_PATH.training}.jsonl, which the tap does not follow (the token would go with it). Set base_url to the address that serves the API.`,
    );
    expect(target.requests).toEqual([]);
  });

  it('a 3xx whose Location repeats the query, a personal filter in it: the error names where it points and no filter value, on sync and check', async () => {
    const server = await startFakeServer((req, res) => {
      res.writeHead(302, { Location: `https://moved.example.com${req.url ?? '/'}#top` });
      res.end();
    });
    servers.push(server);
    const config = configFor(server, { filters: { training: { email: 'alice@example.com' } } });
    const sync = await syncTap({ config, catalog: catalogOf(['training']) });
    expect(sync.code).toBe(1);
    expect(errorLine(sync)).toBe(
      `tap-report-dump: error: training dump: HTTP 302 redirect to https://moved.example.com${DUMP_PATH.training}.jsonl, which the tap does not follow (the token would go with it). Set base_url to the address that serves the API.`,
    );
    const check = await runTap(['check', '--config', writeTempJson(config)]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`redirect to https://moved.example.com${DUMP_PATH.training}.jsonl,`);
    for (const run of [sync, check]) expect(`${run.stdout}${run.stderr}`).not.toMatch(/alice|%40example/);
  });
});
