import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, type TapRun } from '../helpers/cli.js';
import { missingPath, writeTempJson, writeTempText } from '../helpers/files.js';
import { type JsonObject, recordsOf } from '../helpers/messages.js';
import { type Sandbox, sandboxRecords, startScopedSandbox, startTestSandbox } from '../helpers/sandbox.js';

const FULL = 'e2e-full-token-0d6c1e';
const TRAINING_ONLY = 'e2e-training-only-token-93b7aa';
const WRONG = 'e2e-wrong-token-5e21f0';

describe.concurrent('bad input: exit 2, one line naming the problem, no HTTP request', () => {
  let sandbox: Sandbox;
  let good: JsonObject;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 50, phishingRecords: 50, tokens: [{ token: FULL, scopes: ['report:training:read', 'report:phishing:read'] }] });
    good = { base_url: sandbox.url, access_token: FULL };
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  function expectBadInput(run: TapRun, ...mentions: Array<string | RegExp>): void {
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^tap-report-dump: error: /);
    for (const mention of mentions) {
      if (typeof mention === 'string') expect(lines[0]).toContain(mention);
      else expect(lines[0]).toMatch(mention);
    }
  }

  const configCases: Array<[string, () => JsonObject, Array<string | RegExp>]> = [
    ['missing access_token', () => ({ base_url: good.base_url }), ['access_token', 'TAP_REPORT_DUMP_ACCESS_TOKEN']],
    ['unknown setting', () => ({ ...good, acces_token: 'typo' }), ['acces_token']],
    ['bad format value', () => ({ ...good, format: 'xml' }), [/format/, /jsonl/, /csv/]],
    ['unknown filter name', () => ({ ...good, filters: { training: { colour: 'blue' } } }), ['filters.training.colour']],
    ['bad filter date', () => ({ ...good, filters: { training: { completedAt: '>=yesterday' } } }), ['filters.training.completedAt']],
    ['invalid start_date', () => ({ ...good, start_date: '2024-13-45' }), ['start_date']],
    ['plain http to a remote host', () => ({ ...good, base_url: 'http://example.com' }), ['base_url', 'allow_insecure_http']],
  ];

  // Nothing in this block may reach the service, so the request count stays 0 throughout.
  it.each(configCases)('%s', async (_name, makeConfig, mentions) => {
    const run = await runTap(['--config', writeTempJson(makeConfig())]);
    expectBadInput(run, ...mentions);
    expect(sandbox.stats().requests).toBe(0);
  });

  it('a bad TAP_REPORT_DUMP_* variable names the variable', async () => {
    const run = await runTap(['--config', writeTempJson(good)], { env: { TAP_REPORT_DUMP_LOOKBACK_WINDOW: 'soon' } });
    expectBadInput(run, 'TAP_REPORT_DUMP_LOOKBACK_WINDOW');
  });

  it('unreadable config file (missing, not JSON)', async () => {
    const missing = missingPath('config.json');
    const notJson = writeTempText('{"base_url": ', 'config.json');
    const [r1, r2] = await Promise.all([
      runTap(['--config', missing]),
      // A broken second file fails the run even when the first is fine.
      runTap(['--config', writeTempJson(good), '--config', notJson]),
    ]);
    expectBadInput(r1, missing, 'ENOENT');
    expectBadInput(r2, notJson, 'not valid JSON');
    expect(sandbox.stats().requests).toBe(0);
  });

  it('invalid state file (not JSON, bad bookmark)', async () => {
    const config = writeTempJson(good);
    const notJson = writeTempText('{"bookmarks": {', 'state.json');
    const badDate = writeTempJson({ bookmarks: { training: { replication_key_value: 'yesterday' } } });
    const runs = await Promise.all([notJson, badDate].map((state) => runTap(['--config', config, '--state', state])));
    expectBadInput(runs[0], notJson, 'not valid JSON');
    expectBadInput(runs[1], badDate, 'bookmarks.training');
    expect(sandbox.stats().requests).toBe(0);
  });

  it('malformed catalog (not JSON, no streams array, bad metadata, unsupported method)', async () => {
    const config = writeTempJson(good);
    const notJson = writeTempText('{"streams": [', 'catalog.json');
    const noStreams = writeTempJson({ streams: 5 });
    const badMetadata = writeTempJson({ streams: [{ tap_stream_id: 'training', metadata: { selected: true } }] });
    const badMethod = writeTempJson({
      streams: [{ tap_stream_id: 'training', metadata: [{ breadcrumb: [], metadata: { selected: true, 'replication-method': 'LOG_BASED' } }] }],
    });
    const runs = await Promise.all([
      runTap(['--config', config, '--catalog', notJson]),
      runTap(['--config', config, '--catalog', noStreams]),
      runTap(['--config', config, '--properties', badMetadata]),
      runTap(['--config', config, '--catalog', badMethod]),
    ]);
    expectBadInput(runs[0], notJson);
    expectBadInput(runs[1], noStreams, 'streams');
    expectBadInput(runs[2], badMetadata, 'metadata');
    expectBadInput(runs[3], 'LOG_BASED');
    expect(sandbox.stats().requests).toBe(0);
  });
});

describe.concurrent('authentication and authorisation failures', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startScopedSandbox({ full: FULL, trainingOnly: TRAINING_ONLY });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  function expectNoToken(run: TapRun, token: string): void {
    expect(run.stdout).not.toContain(token);
    expect(run.stderr).not.toContain(token);
  }

  it('a wrong token exits 1 with a 401 message, after one request, and never prints the token', async () => {
    // Its own sandbox, so that the request count sees this run only.
    const own = await startTestSandbox({ trainingRecords: 10, phishingRecords: 10, tokens: [{ token: FULL, scopes: ['report:training:read'] }] });
    try {
      const run = await runTap(['--config', writeTempJson({ base_url: own.url, access_token: WRONG })]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^tap-report-dump: error: .*401/m);
      expect(run.stderr).toMatch(/access_token/);
      expect(own.stats().byStatus).toEqual({ '401': 1 });
      expectNoToken(run, WRONG);
    } finally {
      await own.close();
    }
  });

  it('a token lacking a scope: the permitted stream syncs, then exit 1 with a 403 message naming the scope', async () => {
    const run = await runTap(['--config', writeTempJson({ base_url: sandbox.url, access_token: TRAINING_ONLY })]);
    expect(run.code).toBe(1);
    const errors = run.stderr.split('\n').filter((line) => line.startsWith('tap-report-dump: error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/403/);
    expect(errors[0]).toContain('report:phishing:read');
    expect(errors[0]).toContain('phishing');
    expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training'));
    expectNoToken(run, TRAINING_ONLY);
  });

  it('the token stays hidden with debug logging, JSON logs, stack traces and the token in the environment', async () => {
    const config = writeTempJson({ base_url: sandbox.url, log_level: 'debug', log_format: 'json' });
    const run = await runTap(['--config', config], { env: { TAP_REPORT_DUMP_ACCESS_TOKEN: TRAINING_ONLY, TAP_REPORT_DUMP_DEBUG: '1' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/"level":"(info|debug)"/);
    expect(run.stderr).toContain('report:phishing:read');
    expectNoToken(run, TRAINING_ONLY);
  });

  it('check reports each stream: OK for the granted scope, FAILED naming the missing one', async () => {
    const [run, ok] = await Promise.all([
      runTap(['check', '--config', writeTempJson({ base_url: sandbox.url, access_token: TRAINING_ONLY })]),
      runTap(['check', '--config', writeTempJson({ base_url: sandbox.url, access_token: FULL })]),
    ]);
    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^training: OK/);
    expect(lines[1]).toMatch(/^phishing: FAILED.*report:phishing:read/);
    expectNoToken(run, TRAINING_ONLY);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim().split('\n').map((l) => l.split(':')[0] + ':' + (l.includes(': OK') ? 'OK' : 'FAILED'))).toEqual(['training:OK', 'phishing:OK']);
  });
});
