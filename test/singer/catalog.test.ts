import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCatalogFile, selectFromCatalog, singerCatalog, type Catalog, type CatalogStream } from '../../src/singer/catalog.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { loadSchema } from '../../src/catalog/schemas.js';
import { TapError } from '../../src/errors.js';
import { configErrorOf } from '../helpers/errors.js';
import { tempFolder } from '../helpers/files.js';

const PHISHING_FIELDS = [
  'userId', 'email', 'employeeNumber', 'groupId', 'campaignId', 'campaignName',
  'templateName', 'sentAt', 'openedAt', 'clickedAt', 'submittedDataAt', 'reportedAt',
];
const TRAINING_FIELDS = [
  'userId', 'email', 'firstName', 'lastName', 'employeeNumber', 'groupId', 'programId', 'programName', 'moduleId',
  'moduleName', 'availableFrom', 'completed', 'completedAt', 'progress', 'score', 'timeSpentSeconds', 'lastActivityAt',
];

function discovered(): Catalog {
  return singerCatalog(discoverStreams({}));
}

function entry(catalog: Catalog, id: string): CatalogStream {
  const found = catalog.streams.find((s) => s.tap_stream_id === id);
  if (!found) throw new Error(`no stream ${id} in the catalog`);
  return found;
}

/** A copy of the catalog with `values` merged into one metadata entry. */
function withMetadata(catalog: Catalog, stream: string, breadcrumb: string[], values: Record<string, unknown>): Catalog {
  const copy = structuredClone(catalog);
  const meta = entry(copy, stream).metadata.find((m) => JSON.stringify(m.breadcrumb) === JSON.stringify(breadcrumb));
  if (!meta) throw new Error(`no metadata ${JSON.stringify(breadcrumb)} in ${stream}`);
  Object.assign(meta.metadata, values);
  return copy;
}

function deselectFields(catalog: Catalog, stream: string, fields: string[]): Catalog {
  return fields.reduce((c, field) => withMetadata(c, stream, ['properties', field], { selected: false }), catalog);
}

describe('singerCatalog (what discover prints)', () => {
  it('has one entry per discovered stream with its schema, keys, replication key and method', () => {
    const catalog = discovered();
    expect(catalog.streams.map((s) => [s.tap_stream_id, s.stream, s.key_properties, s.replication_key, s.replication_method])).toEqual([
      ['training', 'training', ['userId', 'programId', 'moduleId'], 'completedAt', 'INCREMENTAL'],
      ['phishing', 'phishing', ['userId', 'campaignId'], 'sentAt', 'INCREMENTAL'],
    ]);
    expect(entry(catalog, 'training').schema).toEqual(loadSchema('training.json'));
    expect(entry(catalog, 'phishing').schema).toEqual(loadSchema('phishing.json'));
  });

  it('gives the stream breadcrumb [] inclusion, selection, table-key-properties, valid-replication-keys, replication-key and replication-method', () => {
    const phishing = entry(discovered(), 'phishing');
    expect(phishing.metadata[0]).toEqual({
      breadcrumb: [],
      metadata: {
        inclusion: 'available',
        'selected-by-default': true,
        selected: true,
        'table-key-properties': ['userId', 'campaignId'],
        'valid-replication-keys': ['sentAt'],
        'replication-key': 'sentAt',
        'replication-method': 'INCREMENTAL',
      },
    });
    expect(phishing.metadata.filter((m) => m.breadcrumb.length === 0)).toHaveLength(1);
  });

  it('gives every field a breadcrumb, in schema order, automatic for the keys and the replication key and available otherwise', () => {
    const phishing = entry(discovered(), 'phishing');
    const automatic = new Set(['userId', 'campaignId', 'sentAt']);
    expect(phishing.metadata.slice(1)).toEqual(
      PHISHING_FIELDS.map((field) => ({
        breadcrumb: ['properties', field],
        metadata: { inclusion: automatic.has(field) ? 'automatic' : 'available', 'selected-by-default': true },
      })),
    );
    const training = entry(discovered(), 'training');
    expect(training.metadata.filter((m) => m.metadata.inclusion === 'automatic').map((m) => m.breadcrumb)).toEqual([
      ['properties', 'userId'],
      ['properties', 'programId'],
      ['properties', 'moduleId'],
      ['properties', 'completedAt'],
    ]);
  });

  it('uses the keys of the key_properties setting for table-key-properties, key_properties and automatic fields', () => {
    const phishing = entry(singerCatalog(discoverStreams({ key_properties: { phishing: ['campaignId', 'employeeNumber'] } })), 'phishing');
    expect(phishing.key_properties).toEqual(['campaignId', 'employeeNumber']);
    expect(phishing.metadata[0].metadata['table-key-properties']).toEqual(['campaignId', 'employeeNumber']);
    expect(phishing.metadata.filter((m) => m.metadata.inclusion === 'automatic').map((m) => m.breadcrumb[1])).toEqual(['employeeNumber', 'campaignId', 'sentAt']);
  });

  it('survives a JSON round trip unchanged', () => {
    const catalog = discovered();
    expect(JSON.parse(JSON.stringify(catalog))).toEqual(catalog);
  });
});

describe('selectFromCatalog', () => {
  const offered = discoverStreams({});

  it('selects every stream with every field, INCREMENTAL, from the discovered catalog as it is', () => {
    const selection = selectFromCatalog(discovered(), offered);
    expect(selection.map((s) => [s.descriptor.name, s.replicationMethod, s.keyProperties, s.replicationKey])).toEqual([
      ['training', 'INCREMENTAL', ['userId', 'programId', 'moduleId'], 'completedAt'],
      ['phishing', 'INCREMENTAL', ['userId', 'campaignId'], 'sentAt'],
    ]);
    expect(Object.keys(selection[0].schema.properties!)).toEqual(TRAINING_FIELDS);
    expect(Object.keys(selection[1].schema.properties!)).toEqual(PHISHING_FIELDS);
  });

  it('skips a stream deselected at breadcrumb []', () => {
    const selection = selectFromCatalog(withMetadata(discovered(), 'phishing', [], { selected: false }), offered);
    expect(selection.map((s) => s.descriptor.name)).toEqual(['training']);
  });

  it('skips a stream with selected-by-default false and no selected', () => {
    const catalog = structuredClone(discovered());
    const top = entry(catalog, 'training').metadata[0].metadata;
    delete top.selected;
    top['selected-by-default'] = false;
    expect(selectFromCatalog(catalog, offered).map((s) => s.descriptor.name)).toEqual(['phishing']);
  });

  it('leaves a deselected field out of the schema but keeps it among the declared fields', () => {
    const [training] = selectFromCatalog(deselectFields(discovered(), 'training', ['email', 'score']), offered);
    expect(Object.keys(training.schema.properties!)).toEqual(TRAINING_FIELDS.filter((f) => f !== 'email' && f !== 'score'));
    expect([...training.declaredFields]).toEqual(TRAINING_FIELDS);
  });

  it('keeps automatic fields (keys and the replication key) even when they are deselected', () => {
    const [training, phishing] = selectFromCatalog(
      deselectFields(deselectFields(discovered(), 'training', ['userId', 'moduleId', 'completedAt']), 'phishing', ['campaignId', 'sentAt', 'templateName']),
      offered,
    );
    expect(Object.keys(training.schema.properties!)).toEqual(TRAINING_FIELDS);
    expect(Object.keys(phishing.schema.properties!)).toEqual(PHISHING_FIELDS.filter((f) => f !== 'templateName'));
  });

  it('keeps a key even when the catalog downgrades it to available and deselects it', () => {
    const [, phishing] = selectFromCatalog(withMetadata(discovered(), 'phishing', ['properties', 'userId'], { inclusion: 'available', selected: false }), offered);
    expect(phishing.schema.properties).toHaveProperty('userId');
  });

  it('leaves out a field marked unsupported even if it says selected, and one with selected-by-default false', () => {
    let catalog = withMetadata(discovered(), 'phishing', ['properties', 'email'], { inclusion: 'unsupported', selected: true });
    catalog = withMetadata(catalog, 'phishing', ['properties', 'groupId'], { 'selected-by-default': false });
    const [, phishing] = selectFromCatalog(catalog, offered);
    expect(Object.keys(phishing.schema.properties!)).toEqual(PHISHING_FIELDS.filter((f) => f !== 'email' && f !== 'groupId'));
  });

  it('selects a field that has no metadata entry at all', () => {
    const catalog = structuredClone(discovered());
    const phishing = entry(catalog, 'phishing');
    phishing.metadata = phishing.metadata.filter((m) => m.breadcrumb[1] !== 'reportedAt');
    expect(Object.keys(selectFromCatalog(catalog, offered)[1].schema.properties!)).toEqual(PHISHING_FIELDS);
  });

  it('reads FULL_TABLE from the replication-method metadata', () => {
    const selection = selectFromCatalog(withMetadata(discovered(), 'training', [], { 'replication-method': 'FULL_TABLE' }), offered);
    expect(selection.map((s) => s.replicationMethod)).toEqual(['FULL_TABLE', 'INCREMENTAL']);
  });

  it('reads the entry\'s replication_method when the metadata has none, and lets the metadata win when both are set', () => {
    const catalog = structuredClone(discovered());
    const training = entry(catalog, 'training');
    delete training.metadata[0].metadata['replication-method'];
    training.replication_method = 'FULL_TABLE';
    entry(catalog, 'phishing').replication_method = 'FULL_TABLE';
    expect(selectFromCatalog(catalog, offered).map((s) => s.replicationMethod)).toEqual(['FULL_TABLE', 'INCREMENTAL']);
  });

  it('rejects an unsupported replication-method with a config error naming the stream', () => {
    const error = configErrorOf(() => selectFromCatalog(withMetadata(discovered(), 'training', [], { 'replication-method': 'LOG_BASED' }), offered));
    expect(error.message).toBe('Catalog stream training: replication-method "LOG_BASED" is not supported; use INCREMENTAL or FULL_TABLE.');
  });

  it('rejects a replication-key other than the stream\'s own with a config error naming the valid one', () => {
    const error = configErrorOf(() => selectFromCatalog(withMetadata(discovered(), 'training', [], { 'replication-key': 'lastActivityAt' }), offered));
    expect(error.message).toBe(
      'Catalog stream training: replication-key "lastActivityAt" is not the stream\'s replication key completedAt (as the service names it). Set it to completedAt in the catalog, or set replication_key.training if that field holds completedAt under another name.',
    );
  });

  it('rejects an entry\'s replication_key other than the stream\'s own when the metadata has none', () => {
    const catalog = structuredClone(discovered());
    const phishing = entry(catalog, 'phishing');
    delete phishing.metadata[0].metadata['replication-key'];
    phishing.replication_key = 'openedAt';
    expect(configErrorOf(() => selectFromCatalog(catalog, offered)).message).toBe(
      'Catalog stream phishing: replication-key "openedAt" is not the stream\'s replication key sentAt (as the service names it). Set it to sentAt in the catalog, or set replication_key.phishing if that field holds sentAt under another name.',
    );
  });

  it('rejects an unknown stream id with a config error listing the known streams', () => {
    const catalog = structuredClone(discovered());
    catalog.streams[1].tap_stream_id = 'phishing_v2';
    expect(configErrorOf(() => selectFromCatalog(catalog, offered)).message).toBe(
      'Catalog stream "phishing_v2" is unknown; known streams: training, phishing. Run discover again.',
    );
  });

  it('rejects even a deselected unknown stream', () => {
    const catalog = withMetadata(discovered(), 'phishing', [], { selected: false });
    catalog.streams[1].tap_stream_id = 'gone';
    expect(configErrorOf(() => selectFromCatalog(catalog, offered)).message).toMatch(/^Catalog stream "gone" is unknown/);
  });

  it('finds the stream by `stream` when the entry has no tap_stream_id', () => {
    const catalog = structuredClone(discovered());
    delete (catalog.streams[0] as Partial<CatalogStream>).tap_stream_id;
    expect(selectFromCatalog(catalog, offered).map((s) => s.descriptor.name)).toEqual(['training', 'phishing']);
  });

  it('uses the catalog\'s own schema, so a type override survives', () => {
    const catalog = structuredClone(discovered());
    entry(catalog, 'training').schema.properties!.score = { type: ['string', 'null'], description: 'As text.' };
    const [training] = selectFromCatalog(catalog, offered);
    expect(training.schema.properties!.score).toEqual({ type: ['string', 'null'], description: 'As text.' });
    expect(offered[0].schema.properties!.score).toEqual({ type: ['number', 'null'], description: 'Score in percent; null unless completed.' });
  });

  it('falls back to the discovered schema when the entry\'s schema has no properties', () => {
    const catalog = structuredClone(discovered());
    entry(catalog, 'phishing').schema = { type: 'object' };
    expect(selectFromCatalog(catalog, offered)[1].schema).toEqual(loadSchema('phishing.json'));
  });

  it('takes a key property the catalog schema lost back from discovery, and rejects one discovery does not have either', () => {
    const catalog = structuredClone(discovered());
    delete entry(catalog, 'phishing').schema.properties!.campaignId;
    expect(selectFromCatalog(catalog, offered)[1].schema.properties!.campaignId).toEqual(loadSchema('phishing.json').properties!.campaignId);
    const keyed = withMetadata(catalog, 'phishing', [], { 'table-key-properties': ['userId', 'ticketId'] });
    expect(configErrorOf(() => selectFromCatalog(keyed, offered)).message).toBe(
      'Catalog stream phishing: the schema has no property ticketId, which is a key or the replication key. Run discover again.',
    );
  });

  it('accepts the replication key as the service names it (same field after normalisation)', () => {
    const catalog = structuredClone(discovered());
    const training = entry(catalog, 'training');
    training.schema.properties!.completed_at = training.schema.properties!.completedAt;
    delete training.schema.properties!.completedAt;
    const withKey = withMetadata(catalog, 'training', [], { 'replication-key': 'completed_at' });
    expect(selectFromCatalog(withKey, offered)[0].replicationKey).toBe('completed_at');
  });

  it('uses the catalog\'s table-key-properties unless the key_properties setting names the keys', () => {
    const catalog = withMetadata(discovered(), 'phishing', [], { 'table-key-properties': ['campaignId', 'userId', 'employeeNumber'] });
    expect(selectFromCatalog(catalog, offered)[1].keyProperties).toEqual(['campaignId', 'userId', 'employeeNumber']);
    const fromSettings = discoverStreams({ key_properties: { phishing: ['campaignId', 'email'] } });
    expect(selectFromCatalog(catalog, fromSettings)[1].keyProperties).toEqual(['campaignId', 'email']);
  });

  it('follows the catalog\'s stream order', () => {
    const catalog = structuredClone(discovered());
    catalog.streams.reverse();
    expect(selectFromCatalog(catalog, offered).map((s) => s.descriptor.name)).toEqual(['phishing', 'training']);
  });

  it('selects only the streams the catalog lists', () => {
    const catalog = structuredClone(discovered());
    catalog.streams = catalog.streams.filter((s) => s.tap_stream_id === 'phishing');
    expect(selectFromCatalog(catalog, offered).map((s) => s.descriptor.name)).toEqual(['phishing']);
    expect(selectFromCatalog({ streams: [] }, offered)).toEqual([]);
  });
});

describe('readCatalogFile', () => {
  const dir = tempFolder('singer-catalog-test-');
  let counter = 0;
  const CONTENT = 'CONTENT-MARKER-4711';

  function write(text: string): string {
    const path = join(dir, `${++counter}-catalog.json`);
    writeFileSync(path, text);
    return path;
  }

  function errorFor(path: string): TapError {
    const error = configErrorOf(() => readCatalogFile(path));
    expect(error.message).toContain(path);
    expect(error.message).not.toContain(CONTENT);
    return error;
  }

  it('reads back the catalog discover prints', () => {
    const catalog = discovered();
    expect(readCatalogFile(write(JSON.stringify(catalog, null, 2)))).toEqual(catalog);
  });

  it('accepts an entry named by `stream` only and an entry without metadata', () => {
    const catalog = { streams: [{ stream: 'training' }, { tap_stream_id: 'phishing' }] };
    expect(readCatalogFile(write(JSON.stringify(catalog)))).toEqual(catalog);
  });

  it('rejects a file that is not JSON, naming the file and where it breaks, without quoting it', () => {
    // The second comma is at line 2, column 56.
    const path = write(`{\n  "streams": [{"tap_stream_id": "${CONTENT}" ,, ]}`);
    expect(errorFor(path).message).toBe(`Catalog file ${path} is not valid JSON (line 2, column 56). Regenerate it with discover.`);
  });

  it('rejects a file without a streams array', () => {
    const path = write(JSON.stringify({ stream: [{ tap_stream_id: CONTENT }] }));
    expect(errorFor(path).message).toBe(`Catalog file ${path} has no "streams" array. Regenerate it with discover.`);
    const notArray = write(JSON.stringify({ streams: { training: CONTENT } }));
    expect(errorFor(notArray).message).toBe(`Catalog file ${notArray} has no "streams" array. Regenerate it with discover.`);
  });

  it('rejects an empty file as one without a streams array', () => {
    const path = write('  \n');
    expect(errorFor(path).message).toBe(`Catalog file ${path} has no "streams" array. Regenerate it with discover.`);
  });

  it('rejects an entry without tap_stream_id or stream, naming its index', () => {
    const path = write(JSON.stringify({ streams: [{ tap_stream_id: 'training' }, { schema: { description: CONTENT } }] }));
    expect(errorFor(path).message).toBe(`Catalog file ${path}: streams[1] has no tap_stream_id. Regenerate it with discover.`);
    const notObject = write(JSON.stringify({ streams: [CONTENT] }));
    expect(errorFor(notObject).message).toBe(`Catalog file ${notObject}: streams[0] has no tap_stream_id. Regenerate it with discover.`);
  });

  it('rejects metadata that is not an array, naming the entry', () => {
    const path = write(JSON.stringify({ streams: [{ tap_stream_id: 'training', metadata: { selected: CONTENT } }] }));
    expect(errorFor(path).message).toBe(`Catalog file ${path}: streams[0].metadata is not an array of {breadcrumb, metadata}. Regenerate the catalog with discover, or fix that entry.`);
  });

  it('rejects entries shaped otherwise deep inside (a metadata entry, a property schema, a key list), naming the path', () => {
    const cases: Array<[unknown, string]> = [
      [{ metadata: [null] }, 'streams[0].metadata[0] is not a {breadcrumb, metadata} object'],
      [{ metadata: [{ breadcrumb: [], metadata: null }] }, 'streams[0].metadata[0] is not a {breadcrumb, metadata} object'],
      [{ metadata: [{ breadcrumb: [], metadata: { 'table-key-properties': [1] } }] }, 'streams[0].metadata[0].metadata.table-key-properties is not a list of field names'],
      [{ key_properties: 'userId' }, 'streams[0].key_properties is not a list of field names'],
      [{ schema: { properties: { completedAt: null } } }, 'streams[0].schema.properties.completedAt is not a schema (an object)'],
      [{ schema: { properties: [] } }, 'streams[0].schema.properties is not an object of field schemas'],
      [{ schema: null }, 'streams[0].schema is not an object'],
    ];
    for (const [entry, problem] of cases) {
      const path = write(JSON.stringify({ streams: [{ tap_stream_id: 'training', ...(entry as object) }] }));
      expect(errorFor(path).message, JSON.stringify(entry)).toBe(`Catalog file ${path}: ${problem}. Regenerate the catalog with discover, or fix that entry.`);
    }
  });

  it('takes boolean property schemas and metadata entries without metadata', () => {
    const path = write(JSON.stringify({ streams: [{ tap_stream_id: 'training', schema: { properties: { extra: true } }, metadata: [{ breadcrumb: [] }] }] }));
    expect(readCatalogFile(path).streams).toHaveLength(1);
  });

  it('rejects a missing file as a config error naming the path', () => {
    const path = join(dir, 'no-such-catalog.json');
    expect(errorFor(path).message).toBe(`Cannot read catalog file ${path}: ENOENT. Check the --catalog path.`);
  });
});
