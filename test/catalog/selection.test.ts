import { describe, expect, it } from 'vitest';
import { defaultSelection, selectStream } from '../../src/catalog/selection.js';
import { discoverStreams, type DiscoveredStream } from '../../src/catalog/discovery.js';
import type { JsonSchema } from '../../src/catalog/schemas.js';
import { PHISHING, TRAINING, type StreamDescriptor } from '../../src/catalog/reports.js';
import { TapError } from '../../src/errors.js';

const WIDGETS: StreamDescriptor = {
  name: 'widgets',
  path: '/public/v1/report/widgets/dump',
  scope: 'report:widgets:read',
  schemaFile: 'widgets.json',
  keyProperties: ['id'],
  replicationKey: 'updatedAt',
  replicationFilter: 'updatedAt',
  personalFields: [],
  filters: [],
};

function widgetSchema(): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      id: { type: 'string' },
      siteId: { type: 'string' },
      name: { type: ['string', 'null'] },
      colour: { type: ['string', 'null'] },
      updatedAt: { type: ['string', 'null'], format: 'date-time' },
    },
    required: ['id', 'name'],
  };
}

/** A small discovered stream: keys [id] (or the given ones), replication key updatedAt. */
function widgets(options: { keyProperties?: string[]; keysFromSettings?: boolean; schema?: JsonSchema } = {}): DiscoveredStream {
  return {
    descriptor: WIDGETS,
    schema: options.schema ?? widgetSchema(),
    keyProperties: options.keyProperties ?? ['id'],
    keysFromSettings: options.keysFromSettings ?? false,
    replicationKey: 'updatedAt',
  };
}

const only = (...fields: string[]) => (field: string) => fields.includes(field);

describe('selectStream narrows the schema to the selected fields', () => {
  it('keeps the selected fields plus the key properties and the replication key, which need no selection', () => {
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', selects: only('name') }, 'Stream widgets');
    expect(selected.schema).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        id: { type: 'string' },
        name: { type: ['string', 'null'] },
        updatedAt: { type: ['string', 'null'], format: 'date-time' },
      },
      required: ['id', 'name'],
    });
    expect(selected.keyProperties).toEqual(['id']);
    expect(selected.replicationKey).toBe('updatedAt');
    expect(selected.replicationMethod).toBe('INCREMENTAL');
    expect(selected.descriptor).toBe(WIDGETS);
  });

  it('keeps the keys and the replication key even when the choice deselects every field', () => {
    const selected = selectStream(widgets(), { method: 'FULL_TABLE', selects: () => false }, 'Stream widgets');
    expect(Object.keys(selected.schema.properties!)).toEqual(['id', 'updatedAt']);
    expect(selected.replicationMethod).toBe('FULL_TABLE');
  });

  it('keeps the schema\'s field order, not the order of selection', () => {
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', selects: only('colour', 'siteId') }, 'Stream widgets');
    expect(Object.keys(selected.schema.properties!)).toEqual(['id', 'siteId', 'colour', 'updatedAt']);
  });

  it('filters `required` down to the fields that remain', () => {
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', selects: only('colour') }, 'Stream widgets');
    expect(selected.schema.required).toEqual(['id']);
  });

  it('adds no `required` when the schema has none', () => {
    const schema = widgetSchema();
    delete schema.required;
    const selected = selectStream(widgets({ schema }), { method: 'INCREMENTAL', selects: () => true }, 'Stream widgets');
    expect(selected.schema).not.toHaveProperty('required');
    expect(Object.keys(selected.schema.properties!)).toEqual(['id', 'siteId', 'name', 'colour', 'updatedAt']);
  });

  it('does not change the discovered stream\'s schema', () => {
    const offered = widgets();
    selectStream(offered, { method: 'INCREMENTAL', selects: () => false }, 'Stream widgets');
    expect(offered.schema).toEqual(widgetSchema());
  });

  it('uses the choice\'s schema instead of the discovered one when it gives one', () => {
    const schema = widgetSchema();
    schema.properties!.colour = { type: 'integer' };
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', schema, selects: only('colour') }, 'Stream widgets');
    expect(selected.schema.properties).toEqual({
      id: { type: 'string' },
      colour: { type: 'integer' },
      updatedAt: { type: ['string', 'null'], format: 'date-time' },
    });
  });
});

describe('selectStream key properties', () => {
  it('uses the catalog\'s key properties when the setting does not name any', () => {
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', keyProperties: ['siteId', 'id'], selects: () => false }, 'Stream widgets');
    expect(selected.keyProperties).toEqual(['siteId', 'id']);
    // A catalog key is kept like any key.
    expect(Object.keys(selected.schema.properties!)).toEqual(['id', 'siteId', 'updatedAt']);
  });

  it('keeps the discovered keys when the catalog gives an empty key list', () => {
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', keyProperties: [], selects: () => true }, 'Stream widgets');
    expect(selected.keyProperties).toEqual(['id']);
  });

  it('keeps the keys of the key_properties setting over the catalog\'s', () => {
    const offered = widgets({ keyProperties: ['id', 'siteId'], keysFromSettings: true });
    const selected = selectStream(offered, { method: 'INCREMENTAL', keyProperties: ['name'], selects: () => false }, 'Stream widgets');
    expect(selected.keyProperties).toEqual(['id', 'siteId']);
    expect(Object.keys(selected.schema.properties!)).toEqual(['id', 'siteId', 'updatedAt']);
  });

  it('takes a key property the catalog\'s schema left out back from discovery: keys are always synced', () => {
    const schema = widgetSchema();
    delete schema.properties!.id;
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', schema, selects: only('name') }, 'Catalog stream widgets');
    expect(selected.schema.properties).toEqual({ name: { type: ['string', 'null'] }, updatedAt: { type: ['string', 'null'], format: 'date-time' }, id: { type: 'string' } });
  });

  it('rejects a key property neither the catalog nor discovery has, with a config error whose message starts with the `where` text', () => {
    const schema = widgetSchema();
    delete schema.properties!.id;
    const discovered = widgetSchema();
    delete discovered.properties!.id;
    const run = () => selectStream(widgets({ schema: discovered }), { method: 'INCREMENTAL', schema, selects: () => true }, 'Catalog stream widgets');
    expect(run).toThrow(TapError);
    expect(run).toThrow(/^Catalog stream widgets: /);
    try {
      run();
    } catch (error) {
      expect((error as TapError).message).toBe('Catalog stream widgets: the schema has no property id, which is a key or the replication key. Run discover again.');
      expect((error as TapError).exitCode).toBe(2);
      expect((error as TapError).kind).toBe('config');
    }
  });

  it('rejects a replication key neither the catalog nor discovery has the same way', () => {
    const schema = widgetSchema();
    delete schema.properties!.updatedAt;
    const discovered = widgetSchema();
    delete discovered.properties!.updatedAt;
    expect(() => selectStream(widgets({ schema: discovered }), { method: 'FULL_TABLE', schema, selects: () => true }, 'Somewhere')).toThrow(
      'Somewhere: the schema has no property updatedAt, which is a key or the replication key. Run discover again.',
    );
  });

  it('takes the catalog\'s replication key, and a key property spelt another way, as the fields the schema names', () => {
    const schema: JsonSchema = { type: 'object', properties: { ID: { type: 'string' }, updated_at: { type: 'string', format: 'date-time' } } };
    const selected = selectStream(widgets({ keyProperties: ['id'], keysFromSettings: true }), { method: 'INCREMENTAL', schema, replicationKey: 'updated_at', selects: () => true }, 'Entry');
    expect([selected.keyProperties, selected.replicationKey]).toEqual([['ID'], 'updated_at']);
  });

  it('rejects a catalog key the schema lacks', () => {
    expect(() => selectStream(widgets(), { method: 'INCREMENTAL', keyProperties: ['serial'], selects: () => true }, 'Entry 3')).toThrow(
      'Entry 3: the schema has no property serial, which is a key or the replication key. Run discover again.',
    );
  });
});

describe('selectStream declaredFields', () => {
  it('holds every field of the discovered schema, selected or not', () => {
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', selects: () => false }, 'Stream widgets');
    expect([...selected.declaredFields]).toEqual(['id', 'siteId', 'name', 'colour', 'updatedAt']);
  });

  it('also holds a selected field that only the choice\'s schema declares', () => {
    const schema = widgetSchema();
    schema.properties!.weight = { type: 'number' };
    const selected = selectStream(widgets(), { method: 'INCREMENTAL', schema, selects: only('weight') }, 'Stream widgets');
    expect([...selected.declaredFields]).toEqual(['id', 'siteId', 'name', 'colour', 'updatedAt', 'weight']);
    expect(Object.keys(selected.schema.properties!)).toEqual(['id', 'updatedAt', 'weight']);
  });
});

describe('defaultSelection', () => {
  it('selects every stream with every field, INCREMENTAL, with the discovered keys', () => {
    const offered = discoverStreams({});
    const selection = defaultSelection(offered);
    expect(selection.map((s) => [s.descriptor, s.replicationMethod, s.keyProperties, s.replicationKey])).toEqual([
      [TRAINING, 'INCREMENTAL', ['userId', 'programId', 'moduleId'], 'completedAt'],
      [PHISHING, 'INCREMENTAL', ['userId', 'campaignId'], 'sentAt'],
    ]);
    expect(selection[0].schema).toEqual(offered[0].schema);
    expect(selection[1].schema).toEqual(offered[1].schema);
    expect([...selection[1].declaredFields]).toEqual(Object.keys(offered[1].schema.properties!));
  });

  it('keeps keys from the key_properties setting', () => {
    const [, phishing] = defaultSelection(discoverStreams({ key_properties: { phishing: ['campaignId'] } }));
    expect(phishing.keyProperties).toEqual(['campaignId']);
  });

  it('names the stream in its error when a discovered schema lacks a key', () => {
    const schema = widgetSchema();
    delete schema.properties!.id;
    expect(() => defaultSelection([widgets({ schema })])).toThrow(
      'Stream widgets: the schema has no property id, which is a key or the replication key. Run discover again.',
    );
  });

  it('selects nothing from no streams', () => {
    expect(defaultSelection([])).toEqual([]);
  });
});
