import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runSource, runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { airbyteMessages, discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';
import { startTestSandbox, tapConfig, type Sandbox } from '../helpers/sandbox.js';

/**
 * A config holding fields the connector does not know (saved by another
 * version, or misspelt), over real HTTP: the Airbyte face, whose spec is
 * open, reads all the same and warns with a LOG naming each field and the one
 * it likely meant; the tap refuses the same config, as it always did.
 */

const VALUE = 'unknown-value-SECRET-4711';

describe('a config with unknown fields', () => {
  let sandbox: Sandbox;
  let configPath: string;

  beforeAll(async () => {
    await ensureBuilt();
    // extraFields: every record also holds department, a field the packaged schemas do not know.
    sandbox = await startTestSandbox({ trainingRecords: 40, phishingRecords: 30, extraFields: true });
    // programm is meant as the training filter program: left out, so every training row is read.
    configPath = writeTempJson(tapConfig(sandbox, { strat_date: VALUE, filters: { training: { programm: VALUE } } }), 'config.json');
  });
  afterAll(() => sandbox?.close());

  it('source-report-dump read succeeds, emits the records, and warns with a LOG naming each unknown field and the field it likely meant, never its value', async () => {
    const discover = await runSource(['discover', '--config', configPath]);
    expect(discover.code, discover.stderr).toBe(0);
    const catalogPath = writeTempJson(incrementalCatalog(discoveredStreams(discover.stdout)), 'catalog.json');
    const read = await runSource(['read', '--config', configPath, '--catalog', catalogPath]);
    expect(read.code, read.stderr).toBe(0);
    const messages = airbyteMessages(read.stdout);
    expect(messages.filter((m) => m.type === 'RECORD' && m.record!.stream === 'training')).toHaveLength(40);
    expect(messages.filter((m) => m.type === 'RECORD' && m.record!.stream === 'phishing')).toHaveLength(30);
    const warnings = messages.filter((m) => m.type === 'LOG' && m.log!.level === 'WARN').map((m) => m.log!.message);
    expect(warnings).toContainEqual(expect.stringMatching(/^Unknown config field strat_date \(did you mean start_date\?\) is ignored: /));
    expect(warnings).toContainEqual(expect.stringMatching(/^Unknown config field filters\.training\.programm \(did you mean program\? .*\) is ignored: /));
    expect(read.stdout + read.stderr + discover.stdout + discover.stderr).not.toContain(VALUE);
    expect(messages.some((m) => m.type === 'TRACE' && m.trace!.type === 'ERROR')).toBe(false);
  });

  it('a field the service adds reaches the destination through discover (live discovery declares it); a configured catalog from before it leaves it out with a warning naming it', async () => {
    const streams = discoveredStreams((await runSource(['discover', '--config', configPath])).stdout);
    for (const stream of streams) expect(Object.keys(stream.json_schema.properties as object), stream.name).toContain('department');
    const withField = await runSource(['read', '--config', configPath, '--catalog', writeTempJson(incrementalCatalog(streams), 'catalog.json')]);
    const records = airbyteMessages(withField.stdout).filter((m) => m.type === 'RECORD');
    expect(records.length).toBe(70);
    expect(records.every((m) => typeof m.record!.data.department === 'string')).toBe(true);
    // A connection set up before the service added the field: the tap sends only the fields the configured json_schema names (those the user kept, under personal_data's policies).
    const before = streams.map((stream) => {
      const { department: _added, ...properties } = stream.json_schema.properties as Record<string, unknown>;
      return { ...stream, json_schema: { ...stream.json_schema, properties } };
    });
    const older = await runSource(['read', '--config', configPath, '--catalog', writeTempJson(incrementalCatalog(before), 'catalog.json')]);
    expect(older.code, older.stderr).toBe(0);
    const messages = airbyteMessages(older.stdout);
    expect(messages.filter((m) => m.type === 'RECORD')).toHaveLength(70);
    expect(messages.some((m) => m.type === 'RECORD' && 'department' in m.record!.data)).toBe(false);
    const warnings = messages.filter((m) => m.type === 'LOG' && m.log!.level === 'WARN').map((m) => m.log!.message);
    expect(warnings).toContainEqual(expect.stringMatching(/^training: the service sends field "department", which the stream's schema does not declare/));
  });

  it('check reports SUCCEEDED, after the same warnings', async () => {
    const check = await runSource(['check', '--config', configPath]);
    expect(check.code, check.stderr).toBe(0);
    const messages = airbyteMessages(check.stdout);
    expect(messages.at(-1)).toMatchObject({ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED' } });
    expect(messages.filter((m) => m.type === 'LOG' && m.log!.level === 'WARN').map((m) => m.log!.message)).toEqual([
      expect.stringContaining('Unknown config field strat_date'),
      expect.stringContaining('Unknown config field filters.training.programm'),
    ]);
  });

  it('the tap (the Singer face) still refuses it: exit 2, one line naming both fields', async () => {
    const requests = sandbox.stats().requests;
    const run = await runTap(['--config', configPath]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^tap-report-dump: error: Invalid config: unknown setting strat_date \(did you mean start_date\?\); unknown setting filters\.training\.programm \(did you mean program\? /);
    expect(run.stderr).not.toContain(VALUE);
    expect(sandbox.stats().requests).toBe(requests);
  });
});
