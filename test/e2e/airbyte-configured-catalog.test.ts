import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ValidateFunction } from 'ajv';
import { airbyteProtocolValidators } from '../helpers/airbyte-protocol.js';
import { airbyteMessages, airbyteRecords, discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';
import { runSource, runTap } from '../helpers/cli.js';
import { missingPath, writeTempJson, writeTempText } from '../helpers/files.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * `source-report-dump configured-catalog` against the sandbox over HTTP: the
 * ConfiguredAirbyteCatalog the platform would write from discover's streams,
 * valid under the protocol's schema, which read then takes as it is; and a
 * bad command line or config as one line on stderr.
 */

let sandbox: Sandbox;
let configPath: string;
let validateConfiguredCatalog: ValidateFunction;

beforeAll(async () => {
  validateConfiguredCatalog = airbyteProtocolValidators().configuredCatalog;
  sandbox = await startTestSandbox({ trainingRecords: 120, phishingRecords: 80 });
  configPath = writeTempJson(tapConfig(sandbox), 'config.json');
});

afterAll(async () => {
  await sandbox?.close();
});

describe('source-report-dump configured-catalog', () => {
  it('prints every discovered stream read incrementally into append_dedup, with the source\'s cursor and primary key, which read takes', async () => {
    const [made, discovered] = await Promise.all([runSource(['configured-catalog', '--config', configPath]), runSource(['discover', '--config', configPath])]);
    expect(made.code, made.stderr).toBe(0);
    const catalog = JSON.parse(made.stdout) as unknown;
    expect(validateConfiguredCatalog(catalog), JSON.stringify(validateConfiguredCatalog.errors)).toBe(true);
    expect(catalog).toEqual(incrementalCatalog(discoveredStreams(discovered.stdout)));
    const read = await runSource(['read', '--config', configPath, '--catalog', writeTempText(made.stdout, 'configured_catalog.json')]);
    expect(read.code, read.stderr).toBe(0);
    const messages = airbyteMessages(read.stdout);
    expect([airbyteRecords(messages, 'training').length, airbyteRecords(messages, 'phishing').length]).toEqual([120, 80]);
  });

  it('takes the sync mode and destination sync mode asked for, and is the same under tap-report-dump airbyte', async () => {
    const args = ['configured-catalog', '--config', configPath, '--sync-mode', 'full_refresh', '--destination-sync-mode', 'overwrite'];
    const [source, tap] = await Promise.all([runSource(args), runTap(['airbyte', ...args])]);
    expect(source.code, source.stderr).toBe(0);
    const catalog = JSON.parse(source.stdout) as { streams: Array<{ sync_mode: string; destination_sync_mode: string }> };
    expect(catalog.streams.map((s) => `${s.sync_mode}/${s.destination_sync_mode}`)).toEqual(['full_refresh/overwrite', 'full_refresh/overwrite']);
    expect(validateConfiguredCatalog(catalog), JSON.stringify(validateConfiguredCatalog.errors)).toBe(true);
    expect(tap.stdout).toBe(source.stdout);
  });

  it('refuses a mode it does not know in one line, naming the likely one (exit 2, nothing on stdout)', async () => {
    const run = await runSource(['configured-catalog', '--config', configPath, '--destination-sync-mode', 'apend']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'source-report-dump: error: --destination-sync-mode is apend (did you mean append?): use append_dedup, append or overwrite. Run source-report-dump --about for its usage.\n',
    );
  });

  it('warns of a config field it does not know on stderr, leaving stdout the catalog alone (a file, not a message stream)', async () => {
    const withUnknown = writeTempJson({ ...tapConfig(sandbox), acess_tokn: 'x' }, 'config.json');
    const run = await runSource(['configured-catalog', '--config', withUnknown]);
    expect(run.code, run.stderr).toBe(0);
    expect(() => JSON.parse(run.stdout) as unknown, run.stdout.slice(0, 300)).not.toThrow();
    expect(run.stderr).toMatch(/WARN .*Unknown config field acess_tokn \(did you mean access_token\?\) is ignored/);
  });

  it('says in one line on stderr what is wrong with the config (exit 2), and never prints half a catalog', async () => {
    const missing = missingPath('config.json');
    const run = await runSource(['configured-catalog', '--config', missing]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^source-report-dump: error: .*config/);
    const noCommand = await runSource(['configured-catalog']);
    expect([noCommand.code, noCommand.stderr]).toEqual([2, 'source-report-dump: error: configured-catalog needs --config, the path of a JSON file. Run source-report-dump --about for its usage.\n']);
  });
});
