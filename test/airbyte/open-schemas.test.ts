import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specMessage } from '../../src/airbyte/messages.js';
import { catalogMessage } from '../../src/airbyte/catalog.js';
import { openSchema } from '../../src/airbyte/open-schema.js';
import { configSchema } from '../../src/config/schema.js';
import { resolveConfig } from '../../src/config/config.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { discoverAsConfigured } from '../../src/catalog/live-discovery.js';
import { singerCatalog } from '../../src/singer/catalog.js';
import { createClient } from '../../src/sync/run.js';
import { createLogger } from '../../src/observe/log.js';
import { tapSettingsFor, type LayoutName } from '../../sandbox/layout.js';
import { startTestSandbox, tapConfig, type Sandbox } from '../helpers/sandbox.js';
import { additionalPropertiesValues } from '../helpers/json-schema.js';
import type { JsonSchema } from '../../src/catalog/schemas.js';

/**
 * Airbyte's acceptance tests (CAT's test_additional_properties_is_true, in
 * TestSpec and TestDiscovery) walk the spec's connectionSpecification and
 * every discovered json_schema for each `additionalProperties` at any depth:
 * where set, it must be true, so that a config saved by an older version, or
 * a record with a field the catalog does not name, stays valid. These walk
 * the same way.
 */

/** Where CAT would fail: the path of each `additionalProperties` that is not true. */
function closedAt(schema: unknown): string[] {
  return additionalPropertiesValues(schema)
    .filter(({ value }) => value !== true)
    .map(({ path }) => path);
}

const quiet = createLogger({ write: () => undefined });

describe('the Airbyte spec', () => {
  const spec = (JSON.parse(specMessage(configSchema())) as { spec: { connectionSpecification: JsonSchema } }).spec.connectionSpecification;

  it('sets additionalProperties to true or leaves it out, at every depth of connectionSpecification', () => {
    // Walking finds the nested objects at all: filters has one per stream.
    expect(Object.keys(spec.properties!.filters.properties!)).toEqual(['training', 'phishing']);
    expect(closedAt(spec)).toEqual([]);
  });

  it('sets no additionalProperties to false anywhere, personal_data\'s rules included', () => {
    expect(additionalPropertiesValues(spec).filter(({ value }) => value === false)).toEqual([]);
    expect(spec.properties!.personal_data.type).toBe('array');
  });

  it('the tap\'s own config schema (the Singer face, tap-report-dump --about) stays closed: an unknown setting is an error there', () => {
    expect(configSchema().additionalProperties).toBe(false);
    expect(configSchema().properties!.filters.properties!.training.additionalProperties).toBe(false);
  });
});

function catalogSchemas(message: string): Array<[string, JsonSchema]> {
  const { catalog } = JSON.parse(message) as { catalog: { streams: Array<{ name: string; json_schema: JsonSchema }> } };
  return catalog.streams.map((stream) => [stream.name, stream.json_schema]);
}

describe('the Airbyte catalog', () => {
  it('declares every packaged json_schema with additionalProperties true or absent, at every depth', () => {
    const schemas = catalogSchemas(catalogMessage(discoverStreams({})));
    expect(schemas.map(([name]) => name)).toEqual(['training', 'phishing']);
    for (const [name, schema] of schemas) expect(closedAt(schema), name).toEqual([]);
  });

  describe.each<LayoutName>(['title', 'epoch'])('live-discovered from the sandbox in the %s layout, with a field the packaged schemas do not know', (layout) => {
    let sandbox: Sandbox;
    beforeAll(async () => {
      sandbox = await startTestSandbox({ trainingRecords: 30, phishingRecords: 30, layout, extraFields: true });
    });
    afterAll(() => sandbox?.close());

    it('declares every json_schema with additionalProperties true or absent, at every depth', async () => {
      const config = resolveConfig(tapConfig(sandbox, tapSettingsFor(layout)));
      const client = createClient(config, quiet, (text) => text);
      try {
        const streams = await discoverAsConfigured(config, client, quiet);
        const schemas = catalogSchemas(catalogMessage(streams));
        // The live layout, not the packaged one: the service's own names and its field beyond the packaged schema.
        for (const [name, schema] of schemas) expect(Object.keys(schema.properties!).map((field) => field.toLowerCase()), name).toContain('department');
        for (const [name, schema] of schemas) expect(closedAt(schema), name).toEqual([]);
      } finally {
        await client.close();
      }
    });
  });
});

describe('openSchema', () => {
  it('drops only the value false: true stays, a schema under additionalProperties (what a map holds) stays, and its input is left as it was', () => {
    const input: JsonSchema = { type: 'object', additionalProperties: false, properties: { a: { type: 'object', additionalProperties: true }, m: { type: 'object', additionalProperties: { type: 'string' } }, l: { type: 'array', items: [{ type: 'object', additionalProperties: false }] } } };
    const before = structuredClone(input);
    expect(openSchema(input)).toEqual({ type: 'object', properties: { a: { type: 'object', additionalProperties: true }, m: { type: 'object', additionalProperties: { type: 'string' } }, l: { type: 'array', items: [{ type: 'object' }] } } });
    expect(input).toEqual(before);
  });
});

describe('the Singer catalog', () => {
  it('keeps additionalProperties false on each stream: its RECORD messages carry only the declared fields', () => {
    for (const entry of singerCatalog(discoverStreams({})).streams) expect(entry.schema.additionalProperties, entry.stream).toBe(false);
  });
});
