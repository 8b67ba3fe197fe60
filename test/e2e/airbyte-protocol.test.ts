import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ValidateFunction } from 'ajv';
import { airbyteProtocolValidators } from '../helpers/airbyte-protocol.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, SOURCE_CLI } from '../helpers/build.js';
import { startHeldTap } from '../helpers/held-stdout.js';
import { runSource, runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { serviceFields, streamSequence, streamTimeline } from '../helpers/airbyte.js';
import { rowsByKey, type Sandbox, startScopedSandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';
import { AirbyteDedupTable, dedupOf } from '../helpers/airbyte-dedup.js';

/**
 * The Airbyte mode, end to end against the sandbox, with every message checked
 * against the Airbyte protocol's published JSON Schema (vendored in test/fixtures).
 */

type Message = { type: string; [key: string]: any };

let validateMessage: ValidateFunction;
let validateConfiguredCatalog: ValidateFunction;
let sandbox: Sandbox;
let configPath: string;

function parse(stdout: string): Message[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const message = JSON.parse(line) as Message;
      if (!validateMessage(message)) throw new Error(`invalid Airbyte message ${line.slice(0, 200)}: ${JSON.stringify(validateMessage.errors)}`);
      return message;
    });
}

async function airbyte(args: string[]): Promise<{ code: number | null; messages: Message[]; stdout: string; stderr: string }> {
  const run = await runTap(['airbyte', ...args]);
  return { code: run.code, messages: parse(run.stdout), stdout: run.stdout, stderr: run.stderr };
}

/** The TRACE error that ends a failed command, or the FAILED status of a check. */
const failureText = (messages: Message[]): string => messages.at(-1)?.trace?.error?.message ?? messages.at(-1)?.connectionStatus?.message;

function configuredCatalog(catalog: Message, mode: 'incremental' | 'full_refresh', drop: string[] = []) {
  const configured = {
    streams: catalog.catalog.streams.map((stream: Message) => {
      const json_schema = structuredClone(stream.json_schema);
      for (const field of drop) delete json_schema.properties[field];
      return {
        stream: { ...stream, json_schema },
        sync_mode: mode,
        destination_sync_mode: mode === 'incremental' ? 'append_dedup' : 'overwrite',
        ...(mode === 'incremental' ? { cursor_field: stream.default_cursor_field } : {}),
        primary_key: stream.source_defined_primary_key,
      };
    }),
  };
  expect(validateConfiguredCatalog(configured), JSON.stringify(validateConfiguredCatalog.errors)).toBe(true);
  return configured;
}

describe('Airbyte source protocol', () => {
  beforeAll(async () => {
    ({ message: validateMessage, configuredCatalog: validateConfiguredCatalog } = airbyteProtocolValidators());
    sandbox = await startTestSandbox({ trainingRecords: 300, phishingRecords: 200 });
    configPath = writeTempJson(tapConfig(sandbox), 'config.json');
  });
  afterAll(() => sandbox?.close());

  it('spec carries the config schema with the token marked secret', async () => {
    const { code, messages } = await airbyte(['spec']);
    expect(code).toBe(0);
    expect(messages).toHaveLength(1);
    const spec = messages[0].spec;
    expect(spec.connectionSpecification.required).toEqual(['base_url', 'access_token']);
    expect(spec.connectionSpecification.properties.access_token.airbyte_secret).toBe(true);
    expect(spec.supportsIncremental).toBe(true);
  });

  it('check reports SUCCEEDED for a good token and FAILED for a bad one, never echoing it', async () => {
    const good = await airbyte(['check', '--config', configPath]);
    expect(good.code).toBe(0);
    expect(good.messages.at(-1)?.connectionStatus.status).toBe('SUCCEEDED');
    const badToken = 'wrong-token-4711';
    const bad = await airbyte(['check', '--config', writeTempJson(tapConfig(sandbox, { access_token: badToken }))]);
    expect(bad.code).toBe(0);
    const status = bad.messages.at(-1)?.connectionStatus;
    expect(status.status).toBe('FAILED');
    expect(status.message).toMatch(/401/);
    expect(JSON.stringify(bad.messages) + bad.stderr).not.toContain(badToken);
  });

  it('discover describes cursor, primary key and sync modes', async () => {
    const { code, messages } = await airbyte(['discover', '--config', configPath]);
    expect(code).toBe(0);
    const streams = messages[0].catalog.streams;
    expect(streams.map((s: Message) => [s.name, s.default_cursor_field, s.source_defined_primary_key, s.source_defined_cursor])).toEqual([
      ['training', ['_ab_extracted_at'], [['userId'], ['programId'], ['moduleId']], true],
      ['phishing', ['_ab_extracted_at'], [['userId'], ['campaignId']], true],
    ]);
    for (const stream of streams) expect(stream.json_schema.properties._ab_extracted_at, stream.name).toMatchObject({ type: 'string', format: 'date-time' });
    expect(streams[0].supported_sync_modes).toEqual(['full_refresh', 'incremental']);
  });

  it('read emits the same records as the Singer mode, per-stream STATE, and resumes from that state', async () => {
    const catalog = (await airbyte(['discover', '--config', configPath])).messages[0];
    const catalogPath = writeTempJson(configuredCatalog(catalog, 'incremental', ['email']));
    const first = await airbyte(['read', '--config', configPath, '--catalog', catalogPath]);
    expect(first.code).toBe(0);
    const records = first.messages.filter((m) => m.type === 'RECORD');
    const expected = [...sandbox.records('training')].map(({ email, ...rest }) => rest);
    expect(records.filter((m) => m.record.stream === 'training').map((m) => serviceFields(m.record.data))).toEqual(expected);
    expect(records.filter((m) => m.record.stream === 'phishing')).toHaveLength(200);
    expect(records.every((m) => Number.isInteger(m.record.emitted_at))).toBe(true);
    // Every record carries the extraction cursor, the instant of its emitted_at, last.
    expect(records.every((m) => m.record.data._ab_extracted_at === new Date(m.record.emitted_at).toISOString() && Object.keys(m.record.data).at(-1) === '_ab_extracted_at')).toBe(true);
    const states = first.messages.filter((m) => m.type === 'STATE');
    expect(states.map((s) => s.state.stream.stream_descriptor.name)).toEqual(['training', 'phishing']);
    expect(first.messages.some((m) => m.type === 'LOG')).toBe(true);

    // Singer mode on the same data gives the same training records.
    const singer = await runTap(['sync', '--config', configPath]);
    const singerTraining = singer.messages.filter((m) => m.type === 'RECORD' && m.stream === 'training').map((m) => (m as { record: Record<string, unknown> }).record);
    expect(singerTraining.map(({ email, ...rest }) => rest)).toEqual(expected);

    const bookmark = states[0].state.stream.stream_state.replication_key_value as string;
    sandbox.append('training', 4);
    const statePath = writeTempJson(states.map((s) => s.state));
    const second = await airbyte(['read', '--config', configPath, '--catalog', catalogPath, '--state', statePath]);
    expect(second.code).toBe(0);
    // The 4 appended records after the bookmark: the open rows, read again, did not change (the change store; the Singer run on the same tenant kept a store of its own).
    const training = second.messages.filter((m) => m.type === 'RECORD' && m.record.stream === 'training').map((m) => serviceFields(m.record.data));
    expect(training).toEqual([...sandbox.records('training', { completedAt: `>${bookmark}` })].map(({ email, ...rest }) => rest));
    expect(training).toHaveLength(4);
    expect(second.messages.filter((m) => m.type === 'RECORD' && m.record.stream === 'phishing')).toHaveLength(0);
  });

  it('full_refresh reads every record each time', async () => {
    const catalog = (await airbyte(['discover', '--config', configPath])).messages[0];
    const catalogPath = writeTempJson(configuredCatalog(catalog, 'full_refresh'));
    const run = await airbyte(['read', '--config', configPath, '--catalog', catalogPath]);
    expect(run.messages.filter((m) => m.type === 'RECORD' && m.record.stream === 'training')).toHaveLength(sandbox.recordCount('training'));
  });

  it('full_refresh given the state of its last read emits the whole unchanged dump again (an overwrite destination keeps every row)', async () => {
    const catalog = (await airbyte(['discover', '--config', configPath])).messages[0];
    const catalogPath = writeTempJson(configuredCatalog(catalog, 'full_refresh'));
    const first = await airbyte(['read', '--config', configPath, '--catalog', catalogPath]);
    // The platform hands a connector the saved state in every sync mode, full_refresh included.
    const statePath = writeTempJson(first.messages.filter((m) => m.type === 'STATE').map((m) => m.state));
    const again = await airbyte(['read', '--config', configPath, '--catalog', catalogPath, '--state', statePath]);
    expect(again.code).toBe(0);
    const data = (messages: Message[], stream: string) => messages.filter((m) => m.type === 'RECORD' && m.record.stream === stream).map((m) => serviceFields(m.record.data));
    for (const stream of ['training', 'phishing'] as const) {
      expect(data(again.messages, stream), stream).toHaveLength(sandbox.recordCount(stream));
      expect(data(again.messages, stream), stream).toEqual(data(first.messages, stream));
    }
    expect(JSON.stringify(again.messages.filter((m) => m.type === 'LOG'))).not.toMatch(/HTTP 304/);
  });

  it('append_dedup takes a training row reopened after its completion: the read emits it again, and its cursor puts it first in the dedup', async () => {
    const own = await startTestSandbox({ seed: 7, trainingRecords: 400, phishingRecords: 50 });
    try {
      const ownConfig = writeTempJson(tapConfig(own), 'config.json');
      const configured = configuredCatalog((await airbyte(['discover', '--config', ownConfig])).messages[0], 'incremental');
      const catalogPath = writeTempJson(configured);
      // The destination dedups by the configured catalog's primary key and cursor (Destinations v2).
      const destination = new AirbyteDedupTable(dedupOf(configured));
      const first = await airbyte(['read', '--config', ownConfig, '--catalog', catalogPath]);
      destination.load(first.messages.map((m) => JSON.stringify(m)).join('\n'));
      // Simulated days until a completed row is reassigned: open again, its completedAt back to null.
      const before = rowsByKey(own, 'training');
      let reopened: string[] = [];
      for (let day = 0; day < 10 && reopened.length === 0; day++) {
        own.simulateDays(1);
        reopened = [...rowsByKey(own, 'training')].filter(([key, row]) => row.completedAt === null && before.get(key)?.completedAt != null).map(([key]) => key);
      }
      expect(reopened.length, 'training rows reopened').toBeGreaterThan(0);
      const statePath = writeTempJson(first.messages.filter((m) => m.type === 'STATE').map((m) => m.state));
      const second = await airbyte(['read', '--config', ownConfig, '--catalog', catalogPath, '--state', statePath]);
      expect(second.code).toBe(0);
      destination.load(second.messages.map((m) => JSON.stringify(m)).join('\n'));
      const now = rowsByKey(own, 'training');
      const rows = destination.rows('training');
      for (const key of reopened) expect(serviceFields(rows.get(key)!), key).toEqual(now.get(key));
    } finally {
      await own.close();
    }
  });

  it('a connection set up before the extraction cursor (cursor completedAt, no _ab_extracted_at in its schema) reads as before and warns to refresh the schema', async () => {
    const catalog = (await airbyte(['discover', '--config', configPath])).messages[0];
    const configured = configuredCatalog(catalog, 'incremental', ['_ab_extracted_at']);
    configured.streams[0].cursor_field = ['completedAt'];
    const run = await airbyte(['read', '--config', configPath, '--catalog', writeTempJson(configured)]);
    expect(run.code).toBe(0);
    const records = run.messages.filter((m) => m.type === 'RECORD');
    expect(records.filter((m) => m.record.stream === 'training')).toHaveLength(sandbox.recordCount('training'));
    expect(records.some((m) => '_ab_extracted_at' in m.record.data)).toBe(false);
    const warnings = run.messages.filter((m) => m.type === 'LOG' && m.log.level === 'WARN').map((m) => m.log.message as string);
    expect(warnings.filter((w) => w.includes('cursor_field'))).toEqual([expect.stringMatching(/^training: the configured cursor_field is \["completedAt"\].*Refresh the source schema in the connection: the source's cursor is now _ab_extracted_at\.$/)]);
  });

  it('read frames each stream with STREAM_STATUS: STARTED, RUNNING, its records, its STATEs counting them in sourceStats.recordCount, COMPLETE; a next read counts only what it sent', async () => {
    const own = await startTestSandbox({ seed: 3, trainingRecords: 150, phishingRecords: 60 });
    try {
      const ownConfig = writeTempJson(tapConfig(own), 'config.json');
      const catalogPath = writeTempJson(configuredCatalog((await airbyte(['discover', '--config', ownConfig])).messages[0], 'incremental'));
      const first = await airbyte(['read', '--config', ownConfig, '--catalog', catalogPath]);
      expect(first.code).toBe(0);
      expect(streamSequence(first.messages)).toEqual(['training', 'phishing']);
      expect(streamTimeline(first.messages, 'training')).toEqual(['STARTED', 'RUNNING', 'RECORD×150', 'STATE 150', 'COMPLETE']);
      expect(streamTimeline(first.messages, 'phishing')).toEqual(['STARTED', 'RUNNING', 'RECORD×60', 'STATE 60', 'COMPLETE']);
      // A double with a decimal point, as the protocol asks of recordCount.
      expect(first.stdout).toContain('"sourceStats":{"recordCount":150.0}}}\n');
      const status = first.messages.find((m) => m.type === 'TRACE')!;
      expect(Object.keys(status.trace)).toEqual(['type', 'emitted_at', 'stream_status']);
      expect(status.trace.stream_status).toEqual({ stream_descriptor: { name: 'training' }, status: 'STARTED' });

      own.append('training', 4);
      const statePath = writeTempJson(first.messages.filter((m) => m.type === 'STATE').map((m) => m.state));
      const second = await airbyte(['read', '--config', ownConfig, '--catalog', catalogPath, '--state', statePath]);
      expect(second.code).toBe(0);
      // The open rows read again did not change (the change store): the 4 new records alone go out, and are counted, in the
      // checkpoint after the read of new records; the STATE after the open rows' read counts none.
      expect(streamTimeline(second.messages, 'training')).toEqual(['STARTED', 'RUNNING', 'RECORD×4', 'STATE 4', 'STATE 0', 'COMPLETE']);
      expect(streamTimeline(second.messages, 'phishing')).toEqual(['STARTED', 'RUNNING', 'STATE 0', 'COMPLETE']);
    } finally {
      await own.close();
    }
  });

  it('a stream that fails ends INCOMPLETE, then the TRACE error; the stream before it is COMPLETE (source-report-dump)', async () => {
    const scoped = await startScopedSandbox({ full: 'full-token-31', trainingOnly: 'training-token-31' }, 40);
    try {
      const catalog = (await airbyte(['discover', '--config', writeTempJson(tapConfig(scoped, { access_token: 'full-token-31' }))])).messages[0];
      const run = await runSource(['read', '--config', writeTempJson(tapConfig(scoped, { access_token: 'training-token-31' })), '--catalog', writeTempJson(configuredCatalog(catalog, 'incremental'))]);
      expect(run.code).toBe(1);
      const messages = parse(run.stdout);
      expect(streamTimeline(messages, 'training')).toEqual(['STARTED', 'RUNNING', 'RECORD×40', 'STATE 40', 'COMPLETE']);
      expect(streamTimeline(messages, 'phishing')).toEqual(['STARTED', 'INCOMPLETE']);
      expect(messages.at(-2)?.trace.stream_status).toEqual({ stream_descriptor: { name: 'phishing' }, status: 'INCOMPLETE' });
      expect(messages.at(-1)?.trace).toMatchObject({ type: 'ERROR', error: { failure_type: 'config_error', message: expect.stringMatching(/^phishing dump: HTTP 403 Forbidden/) } });
    } finally {
      await scoped.close();
    }
  });

  it('a dump that breaks for good after some records: its records, INCOMPLETE, the TRACE error, and no STATE', async () => {
    const cutting = await startTestSandbox({ trainingRecords: 600, phishingRecords: 5, faults: { dropAfterBytes: 20_000, dropRate: 1 } });
    try {
      const cuttingConfig = writeTempJson(tapConfig(cutting, { max_retries: 0, compression: 'none', discovery: 'packaged' }));
      const catalog = (await airbyte(['discover', '--config', cuttingConfig])).messages[0];
      const run = await airbyte(['read', '--config', cuttingConfig, '--catalog', writeTempJson(configuredCatalog(catalog, 'incremental'))]);
      expect(run.code).toBe(1);
      const timeline = streamTimeline(run.messages, 'training');
      expect(timeline.map((entry) => entry.replace(/\d+/, 'n'))).toEqual(['STARTED', 'RUNNING', 'RECORD×n', 'INCOMPLETE']);
      expect(streamSequence(run.messages)).toEqual(['training']);
      expect(run.messages.at(-1)?.trace).toMatchObject({ type: 'ERROR', error: { message: expect.stringMatching(/^training dump: /) } });
    } finally {
      await cutting.close();
    }
  });

  it('its errors name the source\'s config fields, never a TAP_REPORT_DUMP_ variable: a missing token, a rejected token, a pseudonymising policy without its key', async () => {
    const catalogPath = writeTempJson(configuredCatalog((await airbyte(['discover', '--config', configPath])).messages[0], 'incremental'));
    const noToken = writeTempJson({ base_url: sandbox.url });
    const badToken = writeTempJson(tapConfig(sandbox, { access_token: 'nope-nope-31' }));
    const noKey = writeTempJson(tapConfig(sandbox, { personal_data: [{ field: 'email', policy: 'hash', stream: 'training' }] }));
    const [readNoToken, checkNoToken, readBadToken, checkBadToken, readNoKey] = await Promise.all([
      airbyte(['read', '--config', noToken, '--catalog', catalogPath]),
      airbyte(['check', '--config', noToken]),
      airbyte(['read', '--config', badToken, '--catalog', catalogPath]),
      airbyte(['check', '--config', badToken]),
      airbyte(['read', '--config', noKey, '--catalog', catalogPath]),
    ]);
    const missing = "Invalid config: missing required config field access_token. Fix it in the source's configuration (source-report-dump spec lists every field).";
    expect(failureText(readNoToken.messages)).toBe(missing);
    expect(failureText(checkNoToken.messages)).toBe(missing);
    const rejected = "HTTP 401 Unauthorized: the access token was rejected. Check the access_token field of the source's configuration; it may be wrong or expired.";
    expect(failureText(readBadToken.messages)).toBe(`training dump: ${rejected}`);
    expect(failureText(checkBadToken.messages)).toBe(`training: training dump: ${rejected}; phishing: phishing dump: ${rejected}`);
    expect(failureText(readNoKey.messages)).toMatch(/^Config field personal_data pseudonymises fields of the training stream, but the config field pseudonymisation_key is not set; set it .* in the source's configuration\.$/);
    for (const run of [readNoToken, checkNoToken, readBadToken, checkBadToken, readNoKey]) expect(run.stdout + run.stderr).not.toMatch(/TAP_REPORT_DUMP_|tap-report-dump --about/);
  });

  it('a failure is a TRACE error with failure_type and a non-zero exit', async () => {
    const catalog = (await airbyte(['discover', '--config', configPath])).messages[0];
    const catalogPath = writeTempJson(configuredCatalog(catalog, 'incremental'));
    const unauthorized = await airbyte(['read', '--config', writeTempJson(tapConfig(sandbox, { access_token: 'nope-nope' })), '--catalog', catalogPath]);
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.messages.at(-1)?.trace.error).toMatchObject({ failure_type: 'config_error', message: expect.stringMatching(/HTTP 401/) });

    const badConfig = await airbyte(['read', '--config', writeTempJson({ base_url: sandbox.url }), '--catalog', catalogPath]);
    expect(badConfig.code).toBe(2);
    expect(badConfig.messages.at(-1)?.trace.error).toMatchObject({ failure_type: 'config_error', message: expect.stringMatching(/access_token/) });

    const badCatalog = await airbyte(['read', '--config', configPath, '--catalog', writeTempJson({ streams: [{ stream: { name: 'nope' }, sync_mode: 'incremental' }] })]);
    expect(badCatalog.code).toBe(2);
    expect(badCatalog.messages.at(-1)?.trace.error.message).toMatch(/not a stream of this source/);

    // The catalog the Singer face's discover writes, given to read by mistake.
    const singerDiscover = await runTap(['discover', '--config', configPath]);
    const singerCatalog = await airbyte(['read', '--config', configPath, '--catalog', writeTempJson(JSON.parse(singerDiscover.stdout))]);
    expect(singerCatalog.code).toBe(2);
    expect(singerCatalog.messages.at(-1)?.trace.error.message).toMatch(/is a Singer catalog .* read takes a ConfiguredAirbyteCatalog/);
  });
  it('a read stopped by a signal (the platform cancels the sync) ends with the stream INCOMPLETE as the last line of stdout after the stop warning, sends no STATE for it, and dies of the signal', async () => {
    const big = await startTestSandbox({ trainingRecords: 3_000, phishingRecords: 10 });
    try {
      const bigConfig = writeTempJson(tapConfig(big, { discovery: 'packaged' }));
      const catalog = writeTempJson(configuredCatalog((await airbyte(['discover', '--config', bigConfig])).messages[0], 'incremental'));
      const tap = startHeldTap(['read', '--config', bigConfig, '--catalog', catalog], SOURCE_CLI);
      // The pipe fills behind the first records: the read is in the middle of training when the signal comes.
      await tap.holdAfter('"type":"RECORD"');
      tap.kill('SIGTERM');
      tap.resume();
      expect(await tap.closed).toEqual([null, 'SIGTERM']);
      const messages = parse(tap.stdout());
      expect(messages.at(-1)?.trace?.stream_status).toEqual({ stream_descriptor: { name: 'training' }, status: 'INCOMPLETE' });
      expect(messages.at(-2)?.log?.message).toMatch(/^stopping for SIGTERM during training: \d+ records of it /);
      const timeline = streamTimeline(messages, 'training');
      expect(timeline.map((entry) => entry.replace(/\d+/, 'n'))).toEqual(['STARTED', 'RUNNING', 'RECORD×n', 'INCOMPLETE']);
      expect(Number(/\d+/.exec(timeline[2])![0])).toBeLessThan(3_000);
      expect(messages.filter((m) => m.type === 'STATE')).toEqual([]);
    } finally {
      await big.close();
    }
  });

});

describe('source-report-dump says what it does', () => {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  it('with no arguments, and with --about: its usage in sentences on stdout (its commands, their options, the exit codes), exit 0', async () => {
    const [bare, about] = await Promise.all([runSource([]), runSource(['--about'])]);
    for (const run of [bare, about]) {
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(new RegExp(`^source-report-dump ${version.replace(/\./g, '\\.')}: the report data dump API as an Airbyte source\\.`));
      for (const usage of ['source-report-dump spec\n', 'source-report-dump check --config <config.json>\n', 'source-report-dump discover --config <config.json>\n', 'source-report-dump read --config <config.json> --catalog <configured_catalog.json> [--state <state.json>]\n']) {
        expect(run.stdout).toContain(usage);
      }
      expect(run.stdout).toMatch(/\nExit codes: 0 when the command did its work.*; 1 a run-time failure.*; 2 bad input/);
      // Not the parser's words.
      expect(run.stdout).not.toMatch(/non-option|\[boolean\]|\[required\]|^Options:|^Commands:|Show help/m);
    }
    expect(bare.stdout).toBe(about.stdout);
  });

  it('called as tap-report-dump airbyte: the same usage and the same one-line errors, under that name', async () => {
    const [bare, about, bad] = await Promise.all([runTap(['airbyte']), runTap(['airbyte', '--about']), runTap(['airbyte', 'read', '--config', 'config.json'])]);
    for (const run of [bare, about]) {
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(new RegExp(`^tap-report-dump airbyte ${version.replace(/\./g, '\\.')}: the report data dump API as an Airbyte source\\.`));
      expect(run.stdout).toContain('tap-report-dump airbyte read --config <config.json> --catalog <configured_catalog.json> [--state <state.json>]\n');
      expect(run.stdout).not.toMatch(/non-option|\[boolean\]|\[required\]|^Options:|^Commands:|Show help/m);
    }
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('tap-report-dump airbyte: error: read needs --catalog, the path of a JSON file. Run tap-report-dump airbyte --about for its usage.\n');
  });

  it('a command without the options it needs: one line naming them and where to read the usage, exit 2', async () => {
    const run = await runSource(['read', '--config', 'config.json']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('source-report-dump: error: read needs --catalog, the path of a JSON file. Run source-report-dump --about for its usage.\n');
  });
});
