import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncTap, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { type JsonObject, recordsOf } from '../helpers/messages.js';
import { type Sandbox, sandboxRecords, startScopedSandbox, startTestSandbox } from '../helpers/sandbox.js';
import { closedPort, type FakeServer, startFakeServer } from '../helpers/fake-server.js';
import { ALL_SCOPES, errorLine, expectNoSecret, expectSameRecords, secretToken } from '../helpers/resilience-util.js';

/**
 * The `check` command (reachability, token, scopes, without downloading the
 * dumps) and the refusal of plain http:// to anything but loopback.
 */

const GOOD = secretToken('check-good');
const ONE_SCOPE = secretToken('check-one');
const WRONG = secretToken('check-wrong');

let sandbox: Sandbox;
const sandboxes: Sandbox[] = [];
const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startScopedSandbox({ full: GOOD, trainingOnly: ONE_SCOPE });
});

afterAll(async () => {
  await Promise.all([sandbox?.close(), ...sandboxes.map((s) => s.close()), ...servers.map((s) => s.close())]);
});

function check(config: JsonObject, env?: Record<string, string>): Promise<TapRun> {
  return runTap(['check', '--config', writeTempJson(config)], { env });
}

function stdoutLines(run: TapRun): string[] {
  return run.stdout.split('\n').filter((l) => l !== '');
}

describe.concurrent('check', () => {
  it('every stream readable: one status line per stream, exit 0, one small request per stream', async () => {
    const own = await startTestSandbox({ trainingRecords: 2000, phishingRecords: 2000, tokens: [{ token: GOOD, scopes: ALL_SCOPES }] });
    sandboxes.push(own);
    const started = Date.now();
    const run = await check({ base_url: own.url, access_token: GOOD, backoff_base: 0.01 });
    expect(run.code, run.stderr).toBe(0);
    expect(stdoutLines(run)).toEqual([
      'training: OK - readable (token has scope report:training:read)',
      'phishing: OK - readable (token has scope report:phishing:read)',
    ]);
    const stats = own.stats();
    expect(stats.requests).toBe(2);
    expect(stats.byStatus['200']).toBe(2);
    expect(Date.now() - started).toBeLessThan(10_000);
    expectNoSecret(run, GOOD, 'check ok');
  });

  it('does not download the dump: against a server streaming an endless body it hangs up after the headers', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const server = await startFakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/jsonl', 'Last-Modified': 'Wed, 01 Jan 2025 00:00:00 GMT' });
      const timer = setInterval(() => {
        if (!res.destroyed) res.write(chunk);
      }, 20);
      res.on('close', () => clearInterval(timer));
    });
    servers.push(server);
    const started = Date.now();
    const run = await check({ base_url: server.url, access_token: GOOD, request_timeout: 5 });
    // Reading the body would never end (runTap would kill it after 20 s).
    expect(run.code, run.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.requests.map((r) => r.path)).toEqual(['/public/v1/report/training/dump.jsonl', '/public/v1/report/phishing/dump.jsonl']);
    // It asks for a date no record has, so a real service sends (next to) nothing.
    for (const r of server.requests) expect(decodeURIComponent(r.query)).toMatch(/^filter\[(completedAt|sentAt)\]=>=9999-/);
  });

  it('a token without the phishing scope: exit 1, phishing FAILED naming the missing scope, training OK', async () => {
    const run = await check({ base_url: sandbox.url, access_token: ONE_SCOPE, backoff_base: 0.01 });
    expect(run.code).toBe(1);
    const lines = stdoutLines(run);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('training: OK - readable (token has scope report:training:read)');
    expect(lines[1]).toMatch(/^phishing: FAILED - phishing dump: HTTP 403 Forbidden: the token lacks the scope report:phishing:read\b/);
    expectNoSecret(run, ONE_SCOPE, 'check 403');
  });

  it('a wrong token: exit 1, every stream FAILED with 401, the token nowhere', async () => {
    const run = await check({ base_url: sandbox.url, access_token: WRONG, backoff_base: 0.01, log_level: 'debug' });
    expect(run.code).toBe(1);
    const lines = stdoutLines(run);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^(training|phishing): FAILED - \1 dump: HTTP 401 Unauthorized/);
    expectNoSecret(run, WRONG, 'check 401');
  });

  it('an unreachable base_url (closed port): exit 1 after one attempt per stream whatever max_retries says, with a clear message per stream', async () => {
    const port = await closedPort();
    const started = Date.now();
    const run = await check({ base_url: `http://127.0.0.1:${port}`, access_token: GOOD, max_retries: 2, backoff_base: 0.01 });
    expect(run.code).toBe(1);
    const lines = stdoutLines(run);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(new RegExp(`^(training|phishing): FAILED - \\1 dump: nothing accepts connections at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)\\.`));
    // check tries once: an orchestrator's connection test must not sit out a backoff (test/e2e/check-unreachable.test.ts times it with the defaults).
    expect(run.stderr).not.toMatch(/retry/);
    expect(Date.now() - started).toBeLessThan(8000);
    expectNoSecret(run, GOOD, 'check unreachable');
  });
});

/** A non-loopback IPv4 address of this machine, if any. */
function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

describe.concurrent('plain http:// to a non-loopback host', () => {
  it('is refused with exit 2 before any request (sync and check)', async () => {
    for (const args of [[], ['check']]) {
      const run = await runTap([...args, '--config', writeTempJson({ base_url: 'http://example.invalid', access_token: GOOD })]);
      expect(run.code).toBe(2);
      expect(errorLine(run)).toMatch(/^tap-report-dump: error: Setting base_url uses plain http:\/\/ for example\.invalid.*allow_insecure_http/);
      expect(run.stdout).toBe('');
      expectNoSecret(run, GOOD, 'insecure');
    }
  });

  it('with allow_insecure_http true it is tried: a connection error, exit 1 (max_retries 0)', async () => {
    const run = await syncTap({ config: { base_url: 'http://example.invalid', access_token: GOOD, allow_insecure_http: true, max_retries: 0, request_timeout: 5 } });
    expect(run.code).toBe(1);
    expect(errorLine(run)).toMatch(/^tap-report-dump: error: training dump: gave up after 1 attempts: connection failed \((ENOTFOUND|EAI_AGAIN)\): the host name example\.invalid does not resolve\. Check base_url, and that this machine reaches the service \(its DNS, a firewall or a proxy\)\.$/);
    expect(errorLine(run)).not.toMatch(/max_retries/);
    expectNoSecret(run, GOOD, 'insecure allowed');
  });

  const lan = lanAddress();
  it.skipIf(lan === undefined)('to a real server on this machine\'s LAN address: no request unless allowed, then a normal sync', async () => {
    const open = await startTestSandbox({ host: '0.0.0.0', trainingRecords: 20, phishingRecords: 20, tokens: [{ token: GOOD, scopes: ALL_SCOPES }] });
    sandboxes.push(open);
    const base = `http://${lan}:${open.port}`;
    const refused = await syncTap({ config: { base_url: base, access_token: GOOD } });
    expect(refused.code).toBe(2);
    expect(errorLine(refused)).toMatch(/plain http:\/\//);
    expect(open.requestCount).toBe(0);

    const allowed = await syncTap({ config: { base_url: base, access_token: GOOD, allow_insecure_http: true } });
    expect(allowed.code, allowed.stderr).toBe(0);
    // A sample of each dump for live discovery, then each dump.
    expect(open.requestCount).toBe(4);
    expectSameRecords(recordsOf(allowed.messages, 'training'), sandboxRecords(open, 'training'), 'training');
  });
});
