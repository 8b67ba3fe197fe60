import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { ROOT } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * The Airbyte mode, end to end against the sandbox, with every message checked
 * against the Airbyte protocol's published JSON Schema (vendored in test/fixtures).
 */

const PROTOCOL = join(ROOT, 'test', 'fixtures', 'airbyte_protocol.yaml');

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

async function airbyte(args: string[]): Promise<{ code: number | null; messages: Message[]; stderr: string }> {
  const run = await runTap(['airbyte', ...args]);
  return { code: run.code, messages: parse(run.stdout), stderr: run.stderr };
}

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
    const protocol = parseYaml(readFileSync(PROTOCOL, 'utf8')) as { definitions: Record<string, unknown> };
    const ajv = new Ajv({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
    ajv.addSchema({ ...protocol, $id: 'airbyte_protocol' }, 'airbyte_protocol');
    validateMessage = ajv.compile({ $ref: 'airbyte_protocol#/definitions/AirbyteMessage' });
    validateConfiguredCatalog = ajv.compile({ $ref: 'airbyte_protocol#/definitions/ConfiguredAirbyteCatalog' });
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
      ['training', ['completedAt'], [['userId'], ['programId'], ['moduleId']], true],
      ['phishing', ['sentAt'], [['userId'], ['campaignId']], true],
    ]);
    expect(streams[0].supported_sync_modes).toEqual(['full_refresh', 'incremental']);
  });

  it('read emits the same records as the Singer mode, per-stream STATE, and resumes from that state', async () => {
    const catalog = (await airbyte(['discover', '--config', configPath])).messages[0];
    const catalogPath = writeTempJson(configuredCatalog(catalog, 'incremental', ['email']));
    const first = await airbyte(['read', '--config', configPath, '--catalog', catalogPath]);
    expect(first.code).toBe(0);
    const records = first.messages.filter((m) => m.type === 'RECORD');
    const expected = [...sandbox.records('training')].map(({ email, ...rest }) => rest);
    expect(records.filter((m) => m.record.stream === 'training').map((m) => m.record.data)).toEqual(expected);
    expect(records.filter((m) => m.record.stream === 'phishing')).toHaveLength(200);
    expect(records.every((m) => Number.isInteger(m.record.emitted_at))).toBe(true);
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
    // The 4 appended records after the bookmark, and the open rows, read again on every incremental run.
    const training = second.messages.filter((m) => m.type === 'RECORD' && m.record.stream === 'training').map((m) => m.record.data);
    const open = [...sandbox.records('training', { completed: 'false' })];
    expect(open.length).toBeGreaterThan(0);
    expect(training).toEqual([...sandbox.records('training', { completedAt: `>${bookmark}` }), ...open].map(({ email, ...rest }) => rest));
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
    const data = (messages: Message[], stream: string) => messages.filter((m) => m.type === 'RECORD' && m.record.stream === stream).map((m) => m.record.data);
    for (const stream of ['training', 'phishing'] as const) {
      expect(data(again.messages, stream), stream).toHaveLength(sandbox.recordCount(stream));
      expect(data(again.messages, stream), stream).toEqual(data(first.messages, stream));
    }
    expect(JSON.stringify(again.messages.filter((m) => m.type === 'LOG'))).not.toMatch(/HTTP 304/);
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
  });
});
