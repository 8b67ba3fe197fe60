import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ROOT } from '../helpers/build.js';
import { airbyteProtocol, connectionStatusMessage, logMessage, specMessage, streamStatusMessage, traceErrorMessage } from '../../src/airbyte/messages.js';
import { configSchema } from '../../src/config/schema.js';
import { openSchema } from '../../src/airbyte/open-schema.js';
import { singer } from '../../src/singer/messages.js';
import type { JsonSchema } from '../../src/catalog/schemas.js';
import { airbyteProtocolValidators } from '../helpers/airbyte-protocol.js';

const validateMessage = airbyteProtocolValidators().message;

/** Settings of the Singer face only: the Airbyte protocol has no BATCH and no ACTIVATE_VERSION message (so no full pass to hold in a spool). */
const SINGER_ONLY = ['batch_config', 'full_pass_interval_days', 'emit_activate_version_messages', 'full_pass_min_ratio', 'spool_directory', 'spool_max_mb'];
/** The settings in the order of the config schema, without the Singer-only ones. */
const CONFIG_SETTINGS = Object.keys(configSchema().properties!).filter((name) => !SINGER_ONLY.includes(name));

interface Spec {
  type: string;
  spec: {
    documentationUrl?: string;
    connectionSpecification: JsonSchema & { properties: Record<string, JsonSchema> };
    supportsIncremental: boolean;
    supported_destination_sync_modes: string[];
    protocol_version: string;
  };
}

describe('specMessage', () => {
  const spec = (JSON.parse(specMessage(configSchema())) as Spec).spec;
  const properties = spec.connectionSpecification.properties;

  it('is a SPEC message supporting incremental reads and the three destination sync modes', () => {
    expect(JSON.parse(specMessage(configSchema())).type).toBe('SPEC');
    expect({ ...spec, connectionSpecification: undefined }).toEqual({
      connectionSpecification: undefined,
      supportsIncremental: true,
      supported_destination_sync_modes: ['append', 'append_dedup', 'overwrite'],
      protocol_version: '0.3.2',
    });
  });

  it("links the package's homepage as documentationUrl, and no page when package.json names none (npmjs.com had no page for it)", () => {
    const homepage = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { homepage?: string }).homepage;
    expect(spec.documentationUrl).toBe(homepage);
    expect('documentationUrl' in spec).toBe(homepage !== undefined);
    expect((JSON.parse(specMessage(configSchema(), 'https://docs.example.org/tap-report-dump')) as Spec).spec.documentationUrl).toBe('https://docs.example.org/tap-report-dump');
  });

  it('marks the secret settings (the token, the pseudonymisation key) airbyte_secret and removes `secret`', () => {
    expect(properties.access_token.airbyte_secret).toBe(true);
    expect(properties.access_token).not.toHaveProperty('secret');
    expect(Object.keys(properties).filter((name) => properties[name].airbyte_secret === true)).toEqual(['access_token', 'pseudonymisation_key']);
    expect(Object.keys(properties).filter((name) => 'secret' in properties[name])).toEqual([]);
  });

  it('gives every setting a title from its name and an order following the config schema', () => {
    expect(Object.keys(properties)).toEqual(CONFIG_SETTINGS);
    expect(CONFIG_SETTINGS.slice(0, 3)).toEqual(['base_url', 'access_token', 'start_date']);
    expect(Object.values(properties).map((p) => p.order)).toEqual(CONFIG_SETTINGS.map((_, i) => i));
    expect(properties.base_url.title).toBe('Base url');
    expect(properties.access_token.title).toBe('Access token');
    expect(properties.allow_insecure_http.title).toBe('Allow insecure http');
    expect(properties.filters.title).toBe('Filters');
  });

  it('leaves out batch_config and the full-pass settings, which only the Singer face takes', () => {
    for (const name of SINGER_ONLY) {
      expect(configSchema().properties).toHaveProperty(name);
      expect(properties).not.toHaveProperty(name);
    }
  });

  it('keeps the connectionSpecification otherwise as the config schema, opened (open-schemas.test.ts), apart from its title', () => {
    const expected = openSchema(configSchema());
    for (const name of SINGER_ONLY) delete expected.properties![name];
    const actual = structuredClone(spec.connectionSpecification);
    expect(actual.title).toBe('Report Dump Source Spec');
    for (const [name, property] of Object.entries(actual.properties)) {
      delete property.title;
      delete property.order;
      if (property.airbyte_secret) {
        delete property.airbyte_secret;
        property.secret = true;
      }
      expect(property, name).toEqual(expected.properties![name]);
    }
    expect({ ...actual, title: undefined }).toEqual({ ...expected, title: undefined });
    expect(actual.required).toEqual(['base_url', 'access_token']);
  });

  it('keeps a title the schema already has and does not change its input', () => {
    const input: JsonSchema = { type: 'object', properties: { api_key: { type: 'string', title: 'API key', secret: true }, page_size: { type: 'integer' } } };
    const before = structuredClone(input);
    const out = (JSON.parse(specMessage(input)) as Spec).spec.connectionSpecification;
    expect(out).toEqual({
      type: 'object',
      title: 'Report Dump Source Spec',
      properties: {
        api_key: { type: 'string', title: 'API key', airbyte_secret: true, order: 0 },
        page_size: { type: 'integer', title: 'Page size', order: 1 },
      },
    });
    expect(input).toEqual(before);
  });

  it('leaves a setting whose secret is not exactly true unmarked', () => {
    const out = (JSON.parse(specMessage({ type: 'object', properties: { hint: { type: 'string', secret: 'yes' } } })) as Spec).spec.connectionSpecification;
    expect(out.properties.hint).toEqual({ type: 'string', secret: 'yes', title: 'Hint', order: 0 });
  });
});

describe('traceErrorMessage', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(Date.UTC(2024, 4, 1, 8, 0, 0, 123)));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is a TRACE ERROR message with the message, failure type and the time in milliseconds', () => {
    expect(traceErrorMessage('Setting base_url is missing.', 'config_error')).toBe(
      '{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1714550400123,"error":{"message":"Setting base_url is missing.","failure_type":"config_error"}}}',
    );
  });

  it('adds internal_message only when one is given', () => {
    expect(JSON.parse(traceErrorMessage('Sync failed.', 'system_error', 'TypeError: x is undefined')).trace.error).toEqual({
      message: 'Sync failed.',
      failure_type: 'system_error',
      internal_message: 'TypeError: x is undefined',
    });
    expect(JSON.parse(traceErrorMessage('Timed out.', 'transient_error', '')).trace.error).toEqual({ message: 'Timed out.', failure_type: 'transient_error' });
  });
});

describe('logMessage', () => {
  it('spells each log level the Airbyte way', () => {
    expect(logMessage('debug', 'a')).toBe('{"type":"LOG","log":{"level":"DEBUG","message":"a"}}');
    expect(logMessage('info', 'b')).toBe('{"type":"LOG","log":{"level":"INFO","message":"b"}}');
    expect(logMessage('warn', 'c')).toBe('{"type":"LOG","log":{"level":"WARN","message":"c"}}');
    expect(logMessage('error', 'd')).toBe('{"type":"LOG","log":{"level":"ERROR","message":"d"}}');
  });

  it('escapes a message with quotes and line breaks into one line', () => {
    const line = logMessage('info', 'said "hi"\nthen left');
    expect(line).toBe('{"type":"LOG","log":{"level":"INFO","message":"said \\"hi\\"\\nthen left"}}');
    expect(line).not.toContain('\n');
  });
});

describe('connectionStatusMessage', () => {
  it('is SUCCEEDED or FAILED with the message', () => {
    expect(connectionStatusMessage(true, 'training: ok; phishing: ok')).toBe(
      '{"type":"CONNECTION_STATUS","connectionStatus":{"status":"SUCCEEDED","message":"training: ok; phishing: ok"}}',
    );
    expect(connectionStatusMessage(false, 'training: HTTP 401')).toBe('{"type":"CONNECTION_STATUS","connectionStatus":{"status":"FAILED","message":"training: HTTP 401"}}');
  });
});

describe('the airbyte output protocol', () => {
  const extractedAt = new Date(Date.UTC(2024, 4, 1, 8, 30, 15, 250));
  /** A read whose training records carry the extraction cursor and whose phishing records do not. */
  const airbyte = airbyteProtocol(new Set(['training']));

  it('skips a stream whose bookmark lies in the future (its state sent back as it came), where the Singer face refuses the state', () => {
    expect(airbyte.skipsFutureBookmarks).toBe(true);
    expect(singer.skipsFutureBookmarks).toBeUndefined();
  });

  it('has no SCHEMA message at sync time', () => {
    expect(airbyte.schema('training', { type: 'object', properties: {} }, ['userId'], ['completedAt'])).toBeUndefined();
  });

  it('wraps a record\'s JSON text in a RECORD envelope with emitted_at in milliseconds', () => {
    const { head, tail, members } = airbyte.recordEnvelope('phishing', extractedAt);
    expect(head).toBe('{"type":"RECORD","record":{"stream":"phishing","emitted_at":1714552215250,"data":');
    expect(tail).toBe('}}');
    expect(members).toBeUndefined();
    expect(JSON.parse(`${head}{"userId":"u1","score":null}${tail}`)).toEqual({
      type: 'RECORD',
      record: { stream: 'phishing', emitted_at: 1714552215250, data: { userId: 'u1', score: null } },
    });
  });

  it('adds the extraction cursor to the records of the streams that carry it: the instant of emitted_at, in RFC 3339 UTC', () => {
    const { head, tail, members } = airbyte.recordEnvelope('training', extractedAt);
    expect(members).toBe(',"_ab_extracted_at":"2024-05-01T08:30:15.250Z"');
    expect(JSON.parse(`${head}{"userId":"u1","completedAt":null${members}}${tail}`)).toEqual({
      type: 'RECORD',
      record: { stream: 'training', emitted_at: 1714552215250, data: { userId: 'u1', completedAt: null, _ab_extracted_at: '2024-05-01T08:30:15.250Z' } },
    });
    expect(Date.parse(JSON.parse(`${head}{"userId":"u1"${members}}${tail}`).record.data._ab_extracted_at)).toBe(extractedAt.getTime());
  });

  it('writes a STATE message for the stream that changed, holding only that stream\'s bookmark', () => {
    const whole = {
      bookmarks: {
        training: { replication_key: 'completedAt', replication_key_value: '2024-05-01T08:00:00Z' },
        phishing: { replication_key: 'sentAt', replication_key_value: '2024-04-01T00:00:00Z' },
      },
    };
    expect(airbyte.state('phishing', whole, 7)).toBe(
      '{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"phishing"},"stream_state":{"replication_key":"sentAt","replication_key_value":"2024-04-01T00:00:00Z"}},"sourceStats":{"recordCount":7.0}}}',
    );
    expect(JSON.parse(airbyte.state('training', whole, 0)).state.stream.stream_state).toEqual(whole.bookmarks.training);
  });

  it('writes an empty stream_state for a stream without a bookmark', () => {
    expect(airbyte.state('training', { bookmarks: {} }, 0)).toBe('{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"training"},"stream_state":{}},"sourceStats":{"recordCount":0.0}}}');
    expect(JSON.parse(airbyte.state('training', {}, 0)).state.stream.stream_state).toEqual({});
  });

  it('gives a STATE the records sent since the last one as sourceStats.recordCount, a number written with a decimal point as the protocol asks', () => {
    for (const count of [0, 1, 300, 2 ** 53]) {
      const line = airbyte.state('training', { bookmarks: {} }, count);
      expect(line).toContain(`"sourceStats":{"recordCount":${count}.0}`);
      const message = JSON.parse(line);
      expect(message.state.sourceStats).toEqual({ recordCount: count });
      expect(validateMessage(message), JSON.stringify(validateMessage.errors)).toBe(true);
    }
  });

  it('frames a stream with STREAM_STATUS traces: its descriptor, the status, emitted_at in milliseconds', () => {
    const before = Date.now();
    const statuses = (['started', 'running', 'complete', 'incomplete'] as const).map((status) => JSON.parse(airbyte.streamStatus!('phishing', status)));
    expect(statuses.map((m) => m.trace.stream_status)).toEqual(
      ['STARTED', 'RUNNING', 'COMPLETE', 'INCOMPLETE'].map((status) => ({ stream_descriptor: { name: 'phishing' }, status })),
    );
    for (const message of statuses) {
      expect(message.type).toBe('TRACE');
      expect(message.trace.type).toBe('STREAM_STATUS');
      expect(message.trace.emitted_at).toBeGreaterThanOrEqual(before);
      expect(Number.isInteger(message.trace.emitted_at)).toBe(true);
      expect(validateMessage(message), JSON.stringify(validateMessage.errors)).toBe(true);
    }
  });
});

describe('streamStatusMessage', () => {
  it('is one TRACE line of type STREAM_STATUS', () => {
    expect(streamStatusMessage('training', 'RUNNING', 1714550400123)).toBe(
      '{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1714550400123,"stream_status":{"stream_descriptor":{"name":"training"},"status":"RUNNING"}}}',
    );
  });
});
