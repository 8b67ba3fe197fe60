import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { schemaValidator } from '../helpers/json-schema.js';
import { KEY_PROPERTIES, REPLICATION_KEY, type Sandbox, startTestSandbox, type Stream, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';

interface CatalogEntry {
  tap_stream_id: string;
  stream: string;
  schema: { properties: Record<string, unknown> };
  key_properties: string[];
  replication_key?: string;
  replication_method?: string;
  metadata: Array<{ breadcrumb: string[]; metadata: Record<string, unknown> }>;
}

function packagedSchema(stream: Stream): { properties: Record<string, unknown> } {
  return JSON.parse(readFileSync(join(ROOT, 'schemas', `${stream}.json`), 'utf8')) as { properties: Record<string, unknown> };
}

async function discoverWith(args: string[]): Promise<{ streams: CatalogEntry[] }> {
  const run = await runTap(args);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as { streams: CatalogEntry[] };
}

describe.concurrent('discover', () => {
  let sandbox: Sandbox;
  let catalog: { streams: CatalogEntry[] };

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 10, phishingRecords: 10 });
    catalog = await discoverWith(['--discover']);
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('lists exactly the two streams, each with its packaged schema and key properties', () => {
    expect(catalog.streams.map((s) => s.tap_stream_id).sort()).toEqual([...STREAM_NAMES].sort());
    for (const entry of catalog.streams) {
      const stream = entry.tap_stream_id as Stream;
      expect(entry.stream).toBe(stream);
      expect(entry.schema).toEqual(packagedSchema(stream));
      expect(entry.key_properties).toEqual(KEY_PROPERTIES[stream]);
      expect(entry.replication_key).toBe(REPLICATION_KEY[stream]);
      expect(entry.replication_method).toBe('INCREMENTAL');
      // The schema is a usable JSON Schema.
      expect(() => schemaValidator(entry.schema)).not.toThrow();
    }
  });

  it('has stream-level metadata with keys, the replication key and method', () => {
    for (const entry of catalog.streams) {
      const stream = entry.tap_stream_id as Stream;
      const top = entry.metadata.filter((m) => m.breadcrumb.length === 0);
      expect(top).toHaveLength(1);
      expect(top[0].metadata).toMatchObject({
        'table-key-properties': KEY_PROPERTIES[stream],
        'valid-replication-keys': [REPLICATION_KEY[stream]],
        'replication-key': REPLICATION_KEY[stream],
        'replication-method': 'INCREMENTAL',
      });
    }
  });

  it('has one breadcrumb per property; keys and the replication key are automatic, the rest available', () => {
    for (const entry of catalog.streams) {
      const stream = entry.tap_stream_id as Stream;
      const fieldEntries = entry.metadata.filter((m) => m.breadcrumb.length > 0);
      const properties = Object.keys(packagedSchema(stream).properties);
      expect(fieldEntries.map((m) => m.breadcrumb)).toEqual(properties.map((p) => ['properties', p]));
      const automatic = new Set([...KEY_PROPERTIES[stream], REPLICATION_KEY[stream]]);
      for (const m of fieldEntries) {
        const field = m.breadcrumb[1];
        expect(m.metadata.inclusion, `${stream}.${field}`).toBe(automatic.has(field) ? 'automatic' : 'available');
      }
      expect(fieldEntries.filter((m) => m.metadata.inclusion === 'automatic')).toHaveLength(automatic.size);
    }
  });

  it('gives the same catalog from the discover command without a config (packaged, no request), with discovery packaged (no request), and live from the sandbox\'s own layout (one partial request per stream)', async () => {
    // Its own sandbox: the other tests of this file run at the same time.
    const own = await startTestSandbox();
    try {
      const packaged = writeTempJson(tapConfig(own, { discovery: 'packaged' }));
      const catalogs = await Promise.all([discoverWith(['discover']), discoverWith(['--config', packaged, '--discover'])]);
      for (const other of catalogs) expect(other).toEqual(catalog);
      expect(own.stats().requests).toBe(0);
      const live = await discoverWith(['--config', writeTempJson(tapConfig(own)), '--discover']);
      expect(live).toEqual(catalog);
      expect(own.stats().requests).toBe(2);
    } finally {
      await own.close();
    }
  });

  it('uses key_properties from the config for table-key-properties and automatic inclusion', async () => {
    const keys = ['campaignId', 'employeeNumber'];
    const config = writeTempJson(tapConfig(sandbox, { key_properties: { phishing: keys } }));
    const custom = await discoverWith(['--config', config, '--discover']);
    const phishing = custom.streams.find((s) => s.tap_stream_id === 'phishing')!;
    expect(phishing.key_properties).toEqual(keys);
    expect(phishing.metadata.find((m) => m.breadcrumb.length === 0)!.metadata['table-key-properties']).toEqual(keys);
    const automatic = phishing.metadata.filter((m) => m.metadata.inclusion === 'automatic').map((m) => m.breadcrumb[1]);
    expect(automatic.sort()).toEqual([...keys, 'sentAt'].sort());
    // The other stream is untouched.
    expect(custom.streams.find((s) => s.tap_stream_id === 'training')).toEqual(catalog.streams.find((s) => s.tap_stream_id === 'training'));
  });
});
