import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { recordsOf } from '../helpers/messages.js';
import { type Sandbox, sandboxRecords, startTestSandbox } from '../helpers/sandbox.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe.concurrent('Singer-standard flags', () => {
  beforeAll(async () => {
    await ensureBuilt();
  });

  it('--about prints JSON with name, version, capabilities and settings (access_token secret)', async () => {
    const run = await runTap(['--about']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const about = JSON.parse(run.stdout) as {
      name: string;
      version: string;
      capabilities: string[];
      settings: { properties: Record<string, { secret?: boolean; type?: unknown }>; required?: string[] };
    };
    expect(about.name).toBe('tap-report-dump');
    expect(about.version).toBe(VERSION);
    expect(about.capabilities).toEqual(expect.arrayContaining(['discover', 'catalog', 'state', 'properties', 'about']));
    expect(about.settings.properties.access_token.secret).toBe(true);
    expect(about.settings.properties.base_url.secret).not.toBe(true);
    expect(about.settings.required).toEqual(expect.arrayContaining(['base_url', 'access_token']));
    for (const setting of ['start_date', 'format', 'filters', 'lookback_window']) expect(about.settings.properties).toHaveProperty(setting);
  });

  it('--about --format markdown prints a Markdown description listing the settings', async () => {
    const run = await runTap(['--about', '--format', 'markdown']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^# tap-report-dump\n/);
    expect(run.stdout).toMatch(/^\| `access_token` \|.*Secret/m);
    expect(run.stdout).toMatch(/^\| `base_url` \|/m);
    expect(run.stdout).toContain('`discover`');
    expect(() => JSON.parse(run.stdout)).toThrow();
  });

  it('--version prints the package version, --help the usage; both exit 0', async () => {
    const version = await runTap(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    const help = await runTap(['--help']);
    expect(help.code).toBe(0);
    for (const word of ['--config', '--discover', '--catalog', '--properties', '--state', '--about']) expect(help.stdout).toContain(word);
  });

  it('an unknown flag exits 2 with one line on stderr', async () => {
    const run = await runTap(['--bogus-flag']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/bogus-flag/);
  });
});

describe.concurrent('config from several files and the environment', () => {
  const TOKEN = 'e2e-merge-token-7f3a9c';
  let sandbox: Sandbox;
  const grant = { token: TOKEN, scopes: ['report:training:read', 'report:phishing:read'] };

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({
      trainingRecords: 300,
      phishingRecords: 300,
      tokens: [grant],
    });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('merges several --config files, later wins, nested filters merge key by key', async () => {
    const first = writeTempJson({
      base_url: 'http://127.0.0.1:9',
      access_token: TOKEN,
      format: 'jsonl',
      max_retries: 0,
      filters: { training: { program: 'prog-01', completed: false }, phishing: { campaign: 'cmp-0001' } },
    });
    const second = writeTempJson({ base_url: sandbox.url, filters: { training: { completed: true } } });
    const [run, reversed] = await Promise.all([runTap(['--config', first, '--config', second]), runTap(['--config', second, '--config', first])]);
    expect(run.code, run.stderr).toBe(0);
    // base_url from the second file; program from the first; completed from the second.
    expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training', { program: 'prog-01', completed: 'true' }));
    expect(recordsOf(run.messages, 'phishing')).toEqual(sandboxRecords(sandbox, 'phishing', { campaign: 'cmp-0001' }));
    expect(recordsOf(run.messages, 'training').length).toBeGreaterThan(0);

    // The other order: the unreachable base_url wins and the run fails (max_retries 0: at once).
    expect(reversed.code).toBe(1);
    expect(reversed.stderr).toMatch(/127\.0\.0\.1:9|ECONNREFUSED|connection/);
  });

  it('TAP_REPORT_DUMP_ACCESS_TOKEN supplies the token, and overrides the one in a file', async () => {
    const withoutToken = writeTempJson({ base_url: sandbox.url });
    const wrongToken = writeTempJson({ base_url: sandbox.url, access_token: 'not-the-token' });
    const [run, overridden] = await Promise.all([
      runTap(['--config', withoutToken], { env: { TAP_REPORT_DUMP_ACCESS_TOKEN: TOKEN } }),
      runTap(['--config', wrongToken], { env: { TAP_REPORT_DUMP_ACCESS_TOKEN: TOKEN } }),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training'));

    expect(overridden.code, overridden.stderr).toBe(0);
    expect(recordsOf(overridden.messages, 'phishing')).toHaveLength(300);
    for (const r of [run, overridden]) expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('other TAP_REPORT_DUMP_* variables are typed by the config schema (format, filters as JSON)', async () => {
    /** One line per dump request (`GET /path 200 3ms`), from the sandbox's verbose log. */
    const requests: string[] = [];
    const own = await startTestSandbox({ trainingRecords: 100, phishingRecords: 100, tokens: [grant], verbose: true, log: (line) => requests.push(line) });
    try {
      const run = await runTap(['--config', writeTempJson({ base_url: own.url, format: 'jsonl', discovery: 'packaged' })], {
        env: {
          TAP_REPORT_DUMP_ACCESS_TOKEN: TOKEN,
          TAP_REPORT_DUMP_FORMAT: 'csv',
          TAP_REPORT_DUMP_FILTERS: JSON.stringify({ training: { completed: false }, phishing: { campaign: 'cmp-0002' } }),
          TAP_REPORT_DUMP_LOOKBACK_WINDOW: '0',
        },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(own, 'training', { completed: 'false' }));
      expect(recordsOf(run.messages, 'phishing')).toEqual(sandboxRecords(own, 'phishing', { campaign: 'cmp-0002' }));
      expect(recordsOf(run.messages, 'phishing').length).toBeGreaterThan(0);
      // The variable beat the file's format: the CSV dumps were requested.
      expect(requests.map((line) => line.split(' ')[1])).toEqual(['/public/v1/report/training/dump.csv', '/public/v1/report/phishing/dump.csv']);
    } finally {
      await own.close();
    }
  });

  it('with no --config at all, the environment alone configures a sync', async () => {
    const run = await runTap([], { env: { TAP_REPORT_DUMP_ACCESS_TOKEN: TOKEN, TAP_REPORT_DUMP_BASE_URL: sandbox.url } });
    expect(run.code, run.stderr).toBe(0);
    expect(recordsOf(run.messages, 'phishing')).toEqual(sandboxRecords(sandbox, 'phishing'));
  });

  it('--config ENV (as Meltano SDK taps take it): sync, discover and check from TAP_REPORT_DUMP_* variables alone', async () => {
    const env = { TAP_REPORT_DUMP_ACCESS_TOKEN: TOKEN, TAP_REPORT_DUMP_BASE_URL: sandbox.url };
    const [sync, syncCommand, discover, check] = await Promise.all([
      runTap(['--config', 'ENV'], { env }),
      runTap(['sync', '--config=ENV'], { env }),
      runTap(['--config', 'ENV', '--discover'], { env }),
      runTap(['check', '--config', 'ENV'], { env }),
    ]);
    for (const run of [sync, syncCommand]) {
      expect(run.code, run.stderr).toBe(0);
      expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training'));
      expect(recordsOf(run.messages, 'phishing')).toEqual(sandboxRecords(sandbox, 'phishing'));
    }
    expect(discover.code, discover.stderr).toBe(0);
    expect((JSON.parse(discover.stdout) as { streams: Array<{ stream: string }> }).streams.map((s) => s.stream).sort()).toEqual(['phishing', 'training']);
    expect(check.code, check.stderr).toBe(0);
    for (const run of [sync, syncCommand, discover, check]) expect(run.stdout + run.stderr).not.toContain(TOKEN);
  });

  it('--config ENV discovers live with the environment\'s settings: a wrong token there fails, where discover without --config would print the packaged catalog', async () => {
    const run = await runTap(['--config', 'ENV', '--discover'], { env: { TAP_REPORT_DUMP_ACCESS_TOKEN: 'not-the-token', TAP_REPORT_DUMP_BASE_URL: sandbox.url } });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/401/);
  });
});
