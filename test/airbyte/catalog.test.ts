import { describe, expect, it } from 'vitest';
import { catalogMessage, checkConfiguredSchemas, configuredSchemas, extractionCursorStreams, replicationKeyCursorWarnings, selectConfiguredStreams, type AirbyteStream } from '../../src/airbyte/catalog.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { loadSchema, type JsonSchema } from '../../src/catalog/schemas.js';
import { configErrorOf } from '../helpers/errors.js';

const TRAINING_FIELDS = [
  'userId', 'email', 'firstName', 'lastName', 'employeeNumber', 'groupId', 'programId', 'programName', 'moduleId',
  'moduleName', 'availableFrom', 'completed', 'completedAt', 'progress', 'score', 'timeSpentSeconds', 'lastActivityAt',
];
const PHISHING_FIELDS = [
  'userId', 'email', 'employeeNumber', 'groupId', 'campaignId', 'campaignName',
  'templateName', 'sentAt', 'openedAt', 'clickedAt', 'submittedDataAt', 'reportedAt',
];
const SOURCE = 'configured_catalog.json';


function discoveredStreams(): AirbyteStream[] {
  return (JSON.parse(catalogMessage(discoverStreams({}))) as { catalog: { streams: AirbyteStream[] } }).catalog.streams;
}

/** A configured stream as Airbyte would send it for the discovered stream `name`. */
function configured(name: string, mode: 'incremental' | 'full_refresh', changes: Record<string, unknown> = {}): Record<string, unknown> {
  const stream = discoveredStreams().find((s) => s.name === name)!;
  return {
    stream,
    sync_mode: mode,
    destination_sync_mode: mode === 'incremental' ? 'append_dedup' : 'overwrite',
    ...(mode === 'incremental' ? { cursor_field: stream.default_cursor_field } : {}),
    primary_key: stream.source_defined_primary_key,
    ...changes,
  };
}

/** The same configured stream with some fields removed from its json_schema. */
function withoutFields(entry: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const copy = structuredClone(entry) as { stream: AirbyteStream };
  for (const field of fields) delete copy.stream.json_schema.properties![field];
  return copy;
}

/** A packaged schema as the Airbyte catalog declares it: open (no additionalProperties false), the service's fields, then the extraction cursor, then the CDC deletion member delete records set. */
function withCursor(schema: JsonSchema): JsonSchema {
  const { additionalProperties: _closed, ...open } = schema;
  return {
    ...open,
    properties: {
      ...schema.properties,
      _ab_extracted_at: { type: 'string', format: 'date-time', description: expect.stringContaining('emitted_at') as unknown as string },
      _ab_cdc_deleted_at: { type: ['null', 'string'], format: 'date-time', description: expect.stringContaining('delete records') as unknown as string },
    },
  };
}

describe('catalogMessage (what discover prints)', () => {
  it('is one CATALOG message with every stream, its schema, sync modes, source-defined cursor and primary key as paths', () => {
    const message = JSON.parse(catalogMessage(discoverStreams({})));
    expect(message).toEqual({
      type: 'CATALOG',
      catalog: {
        streams: [
          {
            name: 'training',
            json_schema: withCursor(loadSchema('training.json')),
            supported_sync_modes: ['full_refresh', 'incremental'],
            source_defined_cursor: true,
            default_cursor_field: ['_ab_extracted_at'],
            source_defined_primary_key: [['userId'], ['programId'], ['moduleId']],
            is_resumable: true,
          },
          {
            name: 'phishing',
            json_schema: withCursor(loadSchema('phishing.json')),
            supported_sync_modes: ['full_refresh', 'incremental'],
            source_defined_cursor: true,
            default_cursor_field: ['_ab_extracted_at'],
            source_defined_primary_key: [['userId'], ['campaignId']],
            is_resumable: true,
          },
        ],
      },
    });
  });

  it('declares the extraction cursor as the cursor of every stream, non-null, whatever the replication key is called', () => {
    for (const settings of [{}, { replication_key: { training: 'lastActivityAt' } }]) {
      for (const stream of (JSON.parse(catalogMessage(discoverStreams(settings))) as { catalog: { streams: AirbyteStream[] } }).catalog.streams) {
        expect(stream.default_cursor_field, stream.name).toEqual(['_ab_extracted_at']);
        expect(stream.json_schema.properties!._ab_extracted_at, stream.name).toMatchObject({ type: 'string', format: 'date-time' });
      }
    }
  });

  it('gives the keys of the key_properties setting as the source-defined primary key', () => {
    const message = JSON.parse(catalogMessage(discoverStreams({ key_properties: { phishing: ['campaignId', 'employeeNumber'] } })));
    expect(message.catalog.streams[1].source_defined_primary_key).toEqual([['campaignId'], ['employeeNumber']]);
    expect(message.catalog.streams[0].source_defined_primary_key).toEqual([['userId'], ['programId'], ['moduleId']]);
  });

  it('is a single line', () => {
    expect(catalogMessage(discoverStreams({}))).not.toContain('\n');
  });
});

describe('selectConfiguredStreams', () => {
  const offered = discoverStreams({});

  it('maps sync_mode incremental to INCREMENTAL and full_refresh to FULL_TABLE, in the configured order', () => {
    const selection = selectConfiguredStreams({ streams: [configured('phishing', 'full_refresh'), configured('training', 'incremental')] }, offered, SOURCE);
    expect(selection.map((s) => [s.descriptor.name, s.replicationMethod, s.keyProperties, s.replicationKey])).toEqual([
      ['phishing', 'FULL_TABLE', ['userId', 'campaignId'], 'sentAt'],
      ['training', 'INCREMENTAL', ['userId', 'programId', 'moduleId'], 'completedAt'],
    ]);
    expect(Object.keys(selection[0].schema.properties!)).toEqual(PHISHING_FIELDS);
    expect(Object.keys(selection[1].schema.properties!)).toEqual(TRAINING_FIELDS);
  });

  it('refuses a Singer catalog given to read, saying what it is, what read takes instead and the command that writes it', () => {
    const singerCatalog = { streams: [{ tap_stream_id: 'training', stream: 'training', schema: {}, metadata: [] }] };
    expect(() => selectConfiguredStreams(singerCatalog, offered, SOURCE)).toThrow(/is a Singer catalog \(streams with tap_stream_id and metadata, as tap-report-dump discover writes it\)\. read takes a ConfiguredAirbyteCatalog: each stream of source-report-dump discover under "stream", with "sync_mode"/);
    expect(() => selectConfiguredStreams(singerCatalog, offered, SOURCE)).toThrow(/\(source-report-dump configured-catalog --config <config\.json> writes one\)\.$/);
  });

  it('syncs only the configured streams', () => {
    expect(selectConfiguredStreams({ streams: [configured('training', 'incremental')] }, offered, SOURCE).map((s) => s.descriptor.name)).toEqual(['training']);
    expect(selectConfiguredStreams({ streams: [] }, offered, SOURCE)).toEqual([]);
  });

  it('leaves out fields missing from the configured json_schema but keeps the keys and the cursor', () => {
    const entry = withoutFields(configured('training', 'incremental'), ['email', 'score', 'userId', 'moduleId', 'completedAt']);
    const [training] = selectConfiguredStreams({ streams: [entry] }, offered, SOURCE);
    expect(Object.keys(training.schema.properties!)).toEqual(TRAINING_FIELDS.filter((f) => f !== 'email' && f !== 'score'));
    expect([...training.declaredFields]).toEqual(TRAINING_FIELDS);
  });

  it('takes every field when the configured stream has no json_schema properties', () => {
    const entry = configured('phishing', 'incremental', { stream: { name: 'phishing' } });
    expect(Object.keys(selectConfiguredStreams({ streams: [entry] }, offered, SOURCE)[0].schema.properties!)).toEqual(PHISHING_FIELDS);
  });

  it('uses the configured json_schema as discover offered it (live discovery may have typed and named fields its own way)', () => {
    const entry = structuredClone(configured('training', 'incremental')) as { stream: AirbyteStream };
    entry.stream.json_schema.properties!.score = { type: ['string', 'null'] };
    const [training] = selectConfiguredStreams({ streams: [entry] }, offered, SOURCE);
    expect(training.schema.properties!.score).toEqual({ type: ['string', 'null'] });
  });

  it('accepts a cursor_field that names the replication key as the service spells it', () => {
    const entry = structuredClone(configured('training', 'incremental')) as { stream: AirbyteStream; cursor_field?: string[] };
    const properties = entry.stream.json_schema.properties!;
    properties.completed_at = properties.completedAt;
    delete properties.completedAt;
    entry.cursor_field = ['completed_at'];
    expect(selectConfiguredStreams({ streams: [entry] }, offered, SOURCE)[0].replicationKey).toBe('completed_at');
  });

  it('uses primary_key as the key properties', () => {
    const entry = configured('phishing', 'incremental', { primary_key: [['campaignId'], ['userId'], ['employeeNumber']] });
    expect(selectConfiguredStreams({ streams: [entry] }, offered, SOURCE)[0].keyProperties).toEqual(['campaignId', 'userId', 'employeeNumber']);
  });

  it('keeps the discovered keys when primary_key is absent or empty', () => {
    const absent = configured('phishing', 'incremental', { primary_key: undefined });
    const empty = configured('phishing', 'incremental', { primary_key: [] });
    const selection = selectConfiguredStreams({ streams: [absent, empty] }, offered, SOURCE);
    expect(selection.map((s) => s.keyProperties)).toEqual([['userId', 'campaignId'], ['userId', 'campaignId']]);
  });

  it('keeps the keys of the key_properties setting over primary_key', () => {
    const fromSettings = discoverStreams({ key_properties: { phishing: ['campaignId', 'email'] } });
    const entry = configured('phishing', 'incremental', { primary_key: [['userId']] });
    expect(selectConfiguredStreams({ streams: [entry] }, fromSettings, SOURCE)[0].keyProperties).toEqual(['campaignId', 'email']);
  });

  it('does not read primary_key at all when the key_properties setting names the keys, so even a nested path passes', () => {
    const fromSettings = discoverStreams({ key_properties: { phishing: ['campaignId'] } });
    const entry = configured('phishing', 'incremental', { primary_key: [['user', 'id']] });
    expect(selectConfiguredStreams({ streams: [entry] }, fromSettings, SOURCE)[0].keyProperties).toEqual(['campaignId']);
  });

  it('rejects a nested primary key path with a config error', () => {
    const entry = configured('phishing', 'incremental', { primary_key: [['user', 'id']] });
    expect(configErrorOf(() => selectConfiguredStreams({ streams: [entry] }, offered, SOURCE)).message).toBe(
      'Configured catalog configured_catalog.json: phishing primary_key names a path that is not a top-level field. Set it to top-level fields, e.g. [["userId"]], or set key_properties.phishing.',
    );
  });

  it('rejects a primary key that names a field the stream lacks', () => {
    const entry = configured('phishing', 'incremental', { primary_key: [['serial']] });
    expect(configErrorOf(() => selectConfiguredStreams({ streams: [entry] }, offered, SOURCE)).message).toBe(
      'Configured catalog configured_catalog.json: phishing: the schema has no property serial, which is a key or the replication key. Run discover again.',
    );
  });

  it('accepts the source\'s cursor_field, an empty one, none, or the replication key (a catalog saved before the extraction cursor); the bookmark stays on the replication key', () => {
    const streams = [
      configured('training', 'incremental', { cursor_field: ['_ab_extracted_at'] }),
      configured('training', 'incremental', { cursor_field: [] }),
      configured('training', 'full_refresh'),
      configured('training', 'incremental', { cursor_field: ['completedAt'] }),
    ];
    const selection = selectConfiguredStreams({ streams }, offered, SOURCE);
    expect(selection.map((s) => [s.replicationMethod, s.replicationKey])).toEqual([
      ['INCREMENTAL', 'completedAt'],
      ['INCREMENTAL', 'completedAt'],
      ['FULL_TABLE', 'completedAt'],
      ['INCREMENTAL', 'completedAt'],
    ]);
  });

  it('reads the service\'s fields alone: the extraction cursor of the configured json_schema is no field of the dump', () => {
    const entry = configured('training', 'incremental');
    expect(Object.keys((entry.stream as AirbyteStream).json_schema.properties!)).toContain('_ab_extracted_at');
    const [training] = selectConfiguredStreams({ streams: [entry] }, offered, SOURCE);
    expect(Object.keys(training.schema.properties!)).toEqual(TRAINING_FIELDS);
    expect(training.declaredFields.has('_ab_extracted_at')).toBe(false);
    expect(Object.keys(configuredSchemas({ streams: [entry] }).get('training')!.properties!)).toEqual(TRAINING_FIELDS);
  });

  it('rejects a cursor_field other than the source\'s with a config error naming the only valid one', () => {
    for (const cursor_field of [['lastActivityAt'], ['completedAt', 'x'], 'completedAt', [['completedAt']]]) {
      const entry = configured('training', 'incremental', { cursor_field });
      expect(configErrorOf(() => selectConfiguredStreams({ streams: [entry] }, offered, SOURCE)).message, JSON.stringify(cursor_field)).toBe(
        `Configured catalog configured_catalog.json: training cursor_field is ${JSON.stringify(cursor_field)}, but the source defines the cursor. Set it to ["_ab_extracted_at"] or leave it empty.`,
      );
    }
  });

  it('rejects a sync_mode other than incremental or full_refresh', () => {
    for (const sync_mode of ['append', undefined, 'INCREMENTAL']) {
      const entry = configured('training', 'incremental', { sync_mode });
      expect(configErrorOf(() => selectConfiguredStreams({ streams: [configured('phishing', 'incremental'), entry] }, offered, SOURCE)).message).toBe(
        `Configured catalog configured_catalog.json: streams[1].sync_mode is ${JSON.stringify(sync_mode)}. Set it to incremental or full_refresh.`,
      );
    }
  });

  it('rejects an unknown stream with a config error listing the source\'s streams', () => {
    expect(configErrorOf(() => selectConfiguredStreams({ streams: [{ stream: { name: 'nope' }, sync_mode: 'incremental' }] }, offered, SOURCE)).message).toBe(
      'Configured catalog configured_catalog.json: streams[0].stream.name "nope" is not a stream of this source. Use one of training, phishing, as discover names them.',
    );
    expect(configErrorOf(() => selectConfiguredStreams({ streams: [{ sync_mode: 'incremental' }] }, offered, SOURCE)).message).toBe(
      'Configured catalog configured_catalog.json: streams[0].stream.name undefined is not a stream of this source. Use one of training, phishing, as discover names them.',
    );
  });

  it('checkConfiguredSchemas refuses a json_schema shaped otherwise (properties null, a property null), naming the path', () => {
    const entry = (json_schema: unknown) => ({ streams: [{ stream: { name: 'training', json_schema }, sync_mode: 'incremental' }] });
    expect(configErrorOf(() => checkConfiguredSchemas(entry({ properties: null }), SOURCE)).message).toBe(
      'Configured catalog configured_catalog.json: streams[0].stream.json_schema.properties is not an object of field schemas. Make the configured catalog again from discover\'s catalog (source-report-dump configured-catalog), or fix that entry.',
    );
    expect(configErrorOf(() => checkConfiguredSchemas(entry({ properties: { score: null } }), SOURCE)).message).toMatch(/streams\[0\]\.stream\.json_schema\.properties\.score is not a schema \(an object\)\./);
    expect(() => checkConfiguredSchemas(entry({ properties: { score: { type: 'number' }, extra: true } }), SOURCE)).not.toThrow();
  });

  it('rejects a catalog without a streams array, including no catalog at all', () => {
    for (const catalog of [{}, { streams: {} }, null, undefined, []]) {
      expect(configErrorOf(() => selectConfiguredStreams(catalog, offered, SOURCE)).message, JSON.stringify(catalog)).toBe(
        'Configured catalog configured_catalog.json has no "streams" array. Pass the configured catalog (a ConfiguredAirbyteCatalog) with a streams list.',
      );
    }
  });
});

describe('extractionCursorStreams', () => {
  it('names the configured streams whose json_schema declares the extraction cursor, or declares no field at all', () => {
    const streams = [
      configured('training', 'incremental'),
      withoutFields(configured('phishing', 'full_refresh'), ['_ab_extracted_at']),
    ];
    expect([...extractionCursorStreams({ streams })]).toEqual(['training']);
    expect([...extractionCursorStreams({ streams: [configured('phishing', 'incremental', { stream: { name: 'phishing' } })] })]).toEqual(['phishing']);
  });
});

describe('replicationKeyCursorWarnings', () => {
  it('warns for each dedup stream a catalog saved before the extraction cursor still gives the replication key as cursor', () => {
    const streams = [
      configured('training', 'incremental', { cursor_field: ['completedAt'] }),
      configured('phishing', 'incremental'),
      configured('phishing', 'incremental', { cursor_field: ['sentAt'], destination_sync_mode: 'append' }),
      configured('training', 'full_refresh'),
    ];
    expect(replicationKeyCursorWarnings({ streams })).toEqual([
      'training: the configured cursor_field is ["completedAt"]: the destination\'s append_dedup keeps, per primary key, the row with the latest completedAt, so a row emitted again with an earlier or null completedAt (a training row reopened or reassigned) does not replace the old one. Refresh the source schema in the connection: the source\'s cursor is now _ab_extracted_at.',
    ]);
  });
});
