import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncTap, type TapRun } from '../helpers/cli.js';
import { writeTempJson, writeTempText } from '../helpers/files.js';
import { type JsonObject, recordsOf } from '../helpers/messages.js';
import { type Sandbox, startScopedSandbox, startTestSandbox } from '../helpers/sandbox.js';
import { type FakeServer, sendDump, startFakeServer } from '../helpers/fake-server.js';
import { ALL_SCOPES, catalogOf, errorLine, expectNoSecret, FAST_RETRIES, secretToken } from '../helpers/resilience-util.js';
import { DUMP_PATH } from '../helpers/sandbox.js';

/**
 * Issue 4 and the README's promise that the access token never reaches any
 * output: every failing run below is configured with a distinctive token and
 * its stdout and stderr must not contain it (debug logging and stack traces on).
 */

const GOOD = secretToken('good');
const ONE_SCOPE = secretToken('training-only');
const WRONG = secretToken('wrong');

/** Maximum exposure: debug logs, and stack traces of errors. */
const VERBOSE = { log_level: 'debug' } as const;
const DEBUG_ENV = { TAP_REPORT_DUMP_DEBUG: '1' };

let sandbox: Sandbox;
const servers: FakeServer[] = [];
const sandboxes: Sandbox[] = [];

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startScopedSandbox({ full: GOOD, trainingOnly: ONE_SCOPE }, 30);
});

afterAll(async () => {
  await Promise.all([sandbox?.close(), ...sandboxes.map((s) => s.close()), ...servers.map((s) => s.close())]);
});

function config(token: string, extra: JsonObject = {}): JsonObject {
  return { base_url: sandbox.url, access_token: token, ...FAST_RETRIES, ...VERBOSE, ...extra };
}

describe.concurrent('failing runs never print the token', () => {
  it('401: a wrong (distinctive) token is rejected; the error names the stream and the fix, not the token', async () => {
    const run = await syncTap({ config: config(WRONG), env: DEBUG_ENV });
    expect(run.code).toBe(1);
    expect(errorLine(run, { stack: true })).toMatch(/^tap-report-dump: error: training dump: HTTP 401 Unauthorized: the access token was rejected/);
    expectNoSecret(run, WRONG, '401');
  });

  it('401 with the token given by TAP_REPORT_DUMP_ACCESS_TOKEN instead of the config file', async () => {
    const run = await syncTap({ config: { base_url: sandbox.url, ...VERBOSE }, env: { ...DEBUG_ENV, TAP_REPORT_DUMP_ACCESS_TOKEN: WRONG } });
    expect(run.code).toBe(1);
    expect(errorLine(run, { stack: true })).toMatch(/HTTP 401/);
    expectNoSecret(run, WRONG, '401 via env');
  });

  it('403: a token with one scope syncs training, then fails on phishing naming the missing scope', async () => {
    const run = await syncTap({ config: config(ONE_SCOPE), catalog: catalogOf(['training', 'phishing']), env: DEBUG_ENV });
    expect(run.code).toBe(1);
    expect(errorLine(run, { stack: true })).toMatch(/^tap-report-dump: error: phishing dump: HTTP 403 Forbidden: the token lacks the scope report:phishing:read/);
    expect(recordsOf(run.messages, 'training')).toHaveLength(30);
    expectNoSecret(run, ONE_SCOPE, '403');
  });

  it('5xx until the retries run out: "gave up", no token', async () => {
    const failing = await startTestSandbox({ trainingRecords: 5, phishingRecords: 5, tokens: [{ token: GOOD, scopes: ALL_SCOPES }], faults: { failRate: 1 } });
    sandboxes.push(failing);
    const run = await syncTap({ config: { ...config(GOOD), base_url: failing.url, max_retries: 2 }, env: DEBUG_ENV });
    expect(run.code).toBe(1);
    expect(errorLine(run, { stack: true })).toMatch(/gave up after 3 attempts/);
    expectNoSecret(run, GOOD, '5xx');
  });

  it('connection cut until the retries run out: "gave up", no token', async () => {
    const cutting = await startTestSandbox({ trainingRecords: 300, phishingRecords: 5, tokens: [{ token: GOOD, scopes: ALL_SCOPES }], faults: { dropAfterBytes: 2000, dropRate: 1 } });
    sandboxes.push(cutting);
    const run = await syncTap({ config: { ...config(GOOD), base_url: cutting.url, max_retries: 1, compression: 'none' }, env: DEBUG_ENV });
    expect(run.code).toBe(1);
    expect(errorLine(run, { stack: true })).toMatch(/gave up after 2 attempts: the dump broke/);
    expectNoSecret(run, GOOD, 'cut');
  });

  it('a server that echoes the Authorization header in its error bodies (503 retried, then 400): the token is masked', async () => {
    const server = await startFakeServer((req, res, { nth }) => {
      const body = JSON.stringify({ error: 'echo', message: `you sent ${req.headers.authorization}` });
      res.writeHead(nth === 1 ? 503 : 400, { 'Content-Type': 'application/json' }).end(body);
    });
    servers.push(server);
    const run = await syncTap({ config: { ...config(GOOD), base_url: server.url }, catalog: catalogOf(['training']), env: DEBUG_ENV });
    expect(run.code).toBe(1);
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${GOOD}`);
    const error = errorLine(run, { stack: true });
    expect(error).toMatch(/^tap-report-dump: error: training dump: HTTP 400 Bad Request: .*The server said: you sent Bearer \S+/);
    expect(run.stderr).toMatch(/HTTP 503 \(you sent Bearer \S+\); retry 1 of 30/);
    expectNoSecret(run, GOOD, 'echo');
  });

  it('check, against a server that echoes the token (also cut to fit a 300-character message): nothing of the token on stdout', async () => {
    const server = await startFakeServer((req, res, { nth }) => {
      const padding = nth % 2 === 1 ? 'x'.repeat(290) : 'short';
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: `${padding} ${req.headers.authorization}` }));
    });
    servers.push(server);
    const run = await runTap(['check', '--config', writeTempJson({ ...config(GOOD), base_url: server.url })], { env: DEBUG_ENV });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/training: FAILED - .*HTTP 400/);
    expectNoSecret(run, GOOD, 'check echo');
    // Not even the start of the token, where the detail was cut.
    expect(run.stdout + run.stderr).not.toContain(GOOD.slice(0, 8));
  });

  it('malformed data (on_invalid_record=fail): the error names the line, not the token', async () => {
    const server = await startFakeServer((_req, res, { path }) => {
      if (path !== `${DUMP_PATH.training}.jsonl`) return void res.writeHead(404).end();
      sendDump(res, `{"userId":"u-1","programId":"p","moduleId":"m","completedAt":"2025-01-01T00:00:00Z"}\nnot json ${GOOD}\n`);
    });
    servers.push(server);
    const run = await syncTap({ config: { ...config(GOOD), base_url: server.url, compression: 'none' }, catalog: catalogOf(['training']), env: DEBUG_ENV });
    expect(run.code).toBe(1);
    expect(errorLine(run, { stack: true })).toMatch(/training dump \(jsonl\) line 2: not valid JSON/);
    expectNoSecret(run, GOOD, 'malformed');
  });

  it.each<[string, (token: string) => JsonObject]>([
    ['a setting of the wrong type', (token) => ({ base_url: sandbox.url, access_token: token, max_retries: 'many' })],
    ['an unknown setting', (token) => ({ base_url: sandbox.url, access_token: token, acess_token: token })],
    ['the token as the value of an enum setting', (token) => ({ base_url: sandbox.url, access_token: token, format: token })],
    ['the token as a start_date', (token) => ({ base_url: sandbox.url, access_token: token, start_date: token })],
    ['the token in base_url credentials', (token) => ({ base_url: `http://user:${token}@127.0.0.1:9`, access_token: token })],
    ['the token in the base_url query string', (token) => ({ base_url: `https://api.example.com/?token=${token}`, access_token: token })],
    ['plain http to another host, the token in the path', (token) => ({ base_url: `http://example.invalid/${token}`, access_token: token })],
  ])('bad config (%s): exit 2, one line, no token', async (_name, make) => {
    const run = await runTap(['--config', writeTempJson(make(GOOD))], { env: DEBUG_ENV });
    expect(run.code).toBe(2);
    errorLine(run, { stack: true });
    expectNoSecret(run, GOOD, _name);
  });

  it('a config file that is not valid JSON around the token: exit 2, and no part of the token is quoted', async () => {
    // A random token like a real API key; the classic mistakes: single quotes, no quotes.
    for (const text of [
      (t: string) => `{\n  "base_url": "${sandbox.url}",\n  "access_token": '${t}'\n}\n`,
      (t: string) => `{\n  "base_url": "${sandbox.url}",\n  "access_token": ${t}\n}\n`,
    ]) {
      const token = randomBytes(16).toString('hex');
      const run = await runTap(['--config', writeTempText(text(token), 'config.json')], { env: DEBUG_ENV });
      expect(run.code).toBe(2);
      expect(errorLine(run, { stack: true })).toMatch(/is not valid JSON/);
      const leaked = [];
      for (let i = 0; i + 8 <= token.length; i++) if (run.stderr.includes(token.slice(i, i + 8)) || run.stdout.includes(token.slice(i, i + 8))) leaked.push(token.slice(i, i + 8));
      expect(leaked, `parts of the token on stderr: ${run.stderr}`).toEqual([]);
    }
  });
});

describe('--about', () => {
  it.each([[[]], [['--format', 'markdown']]])('never prints a configured token (args %j)', async (args) => {
    const run: TapRun = await runTap(['--about', ...args, '--config', writeTempJson(config(GOOD))], {
      env: { TAP_REPORT_DUMP_ACCESS_TOKEN: WRONG },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/access_token/);
    expectNoSecret(run, WRONG, '--about (env)');
    expectNoSecret(run, GOOD, '--about (config)');
  });
});
