import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runSource, runTap, syncTap, type TapRun } from '../helpers/cli.js';
import { startFakeServer } from '../helpers/fake-server.js';
import { writeTempJson } from '../helpers/files.js';
import { sandboxRecords, type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * check asks what the first sync asks: the configured filters, the date
 * format, a lower bound on the replication key (at a date no record has, so
 * nothing is downloaded). A service that refuses a configured filter (HTTP
 * 400, the sandbox's rejectFilters) fails check for that stream, naming the
 * setting and never the filter's value, on both faces, as the sync then fails.
 */

let sandbox: Sandbox;
let email: string;
let config: string;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 50, phishingRecords: 10 });
  email = String(sandboxRecords(sandbox, 'training')[0]!.email);
  config = writeTempJson({ ...tapConfig(sandbox), discovery: 'packaged', filters: { training: { email } }, filter_date_format: 'date', start_date: '2024-01-01T00:00:00Z' });
});

afterAll(async () => {
  await sandbox.close();
});

const REFUSED = /^training dump: HTTP 400 Bad Request: the server rejected the request with filter\[email\], filter\[completedAt\]\. The server said: filter\[email\]: this service does not support this filter\. The service refused filter\[email\], set by filters\.training\.email: remove or fix it; the first sync sends the same and would be refused too\.$/;

function expectNoValue(run: TapRun): void {
  expect(run.stdout + run.stderr).not.toContain(email);
}

describe('check sends the filters the first sync sends', () => {
  it('tap-report-dump check asks each dump with the configured filters and the bound in filter_date_format, at a date no record has', async () => {
    sandbox.setFaults({ rejectFilters: [] });
    const seen = sandbox.requestsSeen().length;
    const run = await runTap(['check', '--config', config]);
    expect(run.code, run.stderr).toBe(0);
    const asked = sandbox.requestsSeen().slice(seen);
    expect(asked.find((r) => r.stream === 'training')!.filters).toEqual({ email, completedAt: '>=9999-12-31' });
    expect(asked.find((r) => r.stream === 'phishing')!.filters).toEqual({ sentAt: '>=9999-12-31' });
  });

  it('a >= filter configured on the replication key gives way to the far bound: check downloads no dump for it', async () => {
    sandbox.setFaults({ rejectFilters: [] });
    const seen = sandbox.requestsSeen().length;
    const withBound = writeTempJson({ ...tapConfig(sandbox), discovery: 'packaged', filters: { training: { completedAt: '>=2020-01-01' } }, filter_date_format: 'date' });
    const run = await runTap(['check', '--config', withBound]);
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.requestsSeen().slice(seen).find((r) => r.stream === 'training')!.filters).toEqual({ completedAt: '>=9999-12-31' });
  });

  it('tap-report-dump check with a filter the service refuses: training FAILED naming the setting, phishing OK, exit 1; the sync then fails the same way', async () => {
    sandbox.setFaults({ rejectFilters: ['email'] });
    const run = await runTap(['check', '--config', config]);
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stdout.split('\n').filter((line) => line !== '');
    expect(lines[0]!.replace(/^training: FAILED - /, '')).toMatch(REFUSED);
    expect(lines[0]).toMatch(/^training: FAILED - /);
    expect(lines[1]).toMatch(/^phishing: OK - /);
    expectNoValue(run);
    const sync = await runTap(['sync', '--config', config]);
    expect(sync.code).not.toBe(0);
    expect(sync.stderr).toMatch(/training dump: HTTP 400 Bad Request: .*Check filters\.training\.email/);
  });

  it('the Airbyte face (source-report-dump check): CONNECTION_STATUS FAILED with the same sentence for training', async () => {
    sandbox.setFaults({ rejectFilters: ['email'] });
    const run = await runSource(['check', '--config', config]);
    expect(run.code, run.stderr).toBe(0);
    const status = run.stdout.split('\n').filter((line) => line.includes('CONNECTION_STATUS')).map((line) => JSON.parse(line) as { connectionStatus: { status: string; message: string } })[0]!.connectionStatus;
    expect(status.status).toBe('FAILED');
    const [training, phishing] = status.message.split('; phishing: ');
    expect(training!.replace(/^training: /, '')).toMatch(REFUSED);
    expect(phishing).toMatch(/^readable /);
    expectNoValue(run);
  });
});

describe('a service whose 400 quotes the personal filter value back', () => {
  it('reaches the sync\'s error and check\'s answer with the value hidden (as written and URL-encoded)', async () => {
    const quoting = await startFakeServer((req, res) => {
      const value = new URL(req.url ?? '/', 'http://x').searchParams.get('filter[email]') ?? '';
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `no user ${value} (${encodeURIComponent(value)})` }));
    });
    try {
      const settings = { base_url: quoting.url, access_token: 'quoting-token', discovery: 'packaged', filters: { training: { email: 'ada.lovelace@example.com' } } };
      const [sync, check] = await Promise.all([syncTap({ config: settings }), runTap(['check', '--config', writeTempJson(settings)])]);
      expect(sync.code).toBe(1);
      expect(sync.stderr).toMatch(/The server said: no user \*\*\* \(\*\*\*\)/);
      expect(check.stdout + check.stderr).toMatch(/no user \*\*\* \(\*\*\*\)/);
      for (const run of [sync, check]) expect(run.stdout + run.stderr).not.toMatch(/lovelace/);
    } finally {
      await quoting.close();
    }
  });
});
