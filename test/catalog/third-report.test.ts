import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../../src/catalog/reports.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { defaultSelection } from '../../src/catalog/selection.js';
import { resolveConfig, type Config } from '../../src/config/config.js';
import { configSchema } from '../../src/config/schema.js';
import { runSync } from '../../src/sync/run.js';
import { singer } from '../../src/singer/messages.js';
import { catalogMessage } from '../../src/airbyte/catalog.js';
import { createLogger } from '../../src/observe/log.js';
import type { TapState } from '../../src/state.js';
import { parseMessages, recordsOf, schemasOf, lastState, type JsonObject } from '../helpers/messages.js';
import { canonical, maxInstant } from '../helpers/records.js';
import { startTestSandbox, type Sandbox } from '../helpers/sandbox.js';
import { ACKNOWLEDGEMENTS, acknowledgementsModel } from '../helpers/third-report.js';

/**
 * A third report is one descriptor and one schema file: registered beside the
 * shipped ones, it gets its config settings, its catalog entry and an exact
 * incremental sync from the sandbox over real HTTP, with no other change.
 */

const reports = [...REPORTS, ACKNOWLEDGEMENTS];
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ trainingRecords: 10, phishingRecords: 10, extraReports: [{ model: acknowledgementsModel(1), records: 300 }] });
});
afterAll(() => sandbox.close());

function configFor(extra: JsonObject = {}): Config {
  return resolveConfig({ base_url: sandbox.url, access_token: 'demo-token', ...extra }, reports);
}

async function sync(config: Config, state?: TapState) {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  // Copied: the writer reuses its blocks once they are written.
  out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
  const streams = defaultSelection(discoverStreams(config, reports)).filter((s) => s.descriptor.name === ACKNOWLEDGEMENTS.name);
  await runSync({ config, streams, state, out, protocol: singer, logger: createLogger({ write: () => undefined }), redact: (text) => text });
  return parseMessages(Buffer.concat(chunks).toString('utf8'));
}

const expected = (filters?: Record<string, string>): JsonObject[] => [...sandbox.records(ACKNOWLEDGEMENTS.name, filters)];

describe('a third report, registered as one descriptor and one schema file', () => {
  it('has its own filters and key_properties settings, validated like the shipped ones', () => {
    const properties = configSchema(reports).properties!;
    expect(Object.keys(properties.filters.properties!)).toEqual(['training', 'phishing', 'acknowledgements']);
    expect(configFor({ filters: { acknowledgements: { policy: 'pol-2' } } }).filters.acknowledgements).toEqual({ policy: 'pol-2' });
    expect(() => configFor({ filters: { acknowledgements: { department: 'x' } } })).toThrow(/unknown setting filters\.acknowledgements\.department/);
    expect(() => resolveConfig({ base_url: sandbox.url, access_token: 'demo-token', filters: { acknowledgements: {} } })).toThrow(/unknown setting filters\.acknowledgements/);
  });

  it('is discovered with its schema, keys and replication key, in both catalogs', () => {
    const discovered = discoverStreams(configFor(), reports).find((s) => s.descriptor.name === ACKNOWLEDGEMENTS.name)!;
    expect(discovered.keyProperties).toEqual(['userId', 'policyId']);
    expect(discovered.replicationKey).toBe('acknowledgedAt');
    expect(Object.keys(discovered.schema.properties!)).toEqual(['userId', 'email', 'policyId', 'acknowledged', 'acknowledgedAt', 'version']);
    const airbyte = JSON.parse(catalogMessage(discoverStreams(configFor(), reports))) as { catalog: { streams: Array<{ name: string; default_cursor_field: string[] }> } };
    expect(airbyte.catalog.streams.map((s) => s.name)).toEqual(['training', 'phishing', 'acknowledgements']);
    expect(airbyte.catalog.streams[2].default_cursor_field).toEqual(['_ab_extracted_at']);
  });

  it('syncs every record, then exactly the appended ones with a >= filter, then nothing on HTTP 304', async () => {
    const first = await sync(configFor());
    expect(schemasOf(first, ACKNOWLEDGEMENTS.name)[0].key_properties).toEqual(['userId', 'policyId']);
    const records = recordsOf(first, ACKNOWLEDGEMENTS.name);
    expect(records.map(canonical)).toEqual(expected().map(canonical));
    const state = lastState(first);
    expect(Date.parse(state.bookmarks!.acknowledgements.replication_key_value as string)).toBe(maxInstant(records, 'acknowledgedAt'));

    const appended = sandbox.append(ACKNOWLEDGEMENTS.name, 7);
    const second = await sync(configFor(), state);
    expect(recordsOf(second, ACKNOWLEDGEMENTS.name).map(canonical)).toEqual(expected({ acknowledgedAt: `>=${appended.instant}` }).map(canonical));
    expect(recordsOf(second, ACKNOWLEDGEMENTS.name)).toHaveLength(7);

    const third = await sync(configFor(), lastState(second));
    expect(recordsOf(third, ACKNOWLEDGEMENTS.name)).toEqual([]);
    expect(lastState(third).bookmarks!.acknowledgements).toEqual(lastState(second).bookmarks!.acknowledgements);
  });

  it('applies its own filters on the request: only one policy comes back', async () => {
    const records = recordsOf(await sync(configFor({ filters: { acknowledgements: { policy: 'pol-2' } } })), ACKNOWLEDGEMENTS.name);
    expect(records.length).toBeGreaterThan(50);
    expect(new Set(records.map((r) => r.policyId))).toEqual(new Set(['pol-2']));
  });
});
