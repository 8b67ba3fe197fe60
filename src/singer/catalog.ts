import { configError } from '../errors.js';
import { readJsonFile } from '../config/json-file.js';
import { loadSchema, type JsonSchema } from '../catalog/schemas.js';
import { STREAMS, streamByName, type StreamDescriptor } from '../catalog/reports.js';
import type { Config } from '../config/config.js';

export type ReplicationMethod = 'INCREMENTAL' | 'FULL_TABLE';

export interface MetadataEntry {
  breadcrumb: string[];
  metadata: Record<string, unknown>;
}

export interface CatalogStream {
  tap_stream_id: string;
  stream: string;
  schema: JsonSchema;
  key_properties: string[];
  replication_key?: string;
  replication_method?: ReplicationMethod;
  metadata: MetadataEntry[];
}

export interface Catalog {
  streams: CatalogStream[];
}

/** What the sync engine needs to know of one stream the consumer selected. */
export interface SelectedStream {
  descriptor: StreamDescriptor;
  /** The stream's schema narrowed to the selected fields. */
  schema: JsonSchema;
  keyProperties: string[];
  replicationMethod: ReplicationMethod;
}

export function keyPropertiesFor(descriptor: StreamDescriptor, config: Pick<Config, 'key_properties'>): string[] {
  return [...(config.key_properties?.[descriptor.name] ?? descriptor.keyProperties)];
}

function discoverStream(descriptor: StreamDescriptor, config: Pick<Config, 'key_properties'>): CatalogStream {
  const schema = loadSchema(descriptor.schemaFile);
  const keys = keyPropertiesFor(descriptor, config);
  const automatic = new Set([...keys, descriptor.replicationKey]);
  for (const key of automatic) {
    if (!schema.properties?.[key]) {
      throw configError(`Setting key_properties.${descriptor.name} names ${key}, which is not a field of the ${descriptor.name} stream.`);
    }
  }
  const metadata: MetadataEntry[] = [
    {
      breadcrumb: [],
      metadata: {
        inclusion: 'available',
        'selected-by-default': true,
        selected: true,
        'table-key-properties': keys,
        'valid-replication-keys': [descriptor.replicationKey],
        'replication-key': descriptor.replicationKey,
        'replication-method': 'INCREMENTAL',
      },
    },
    ...Object.keys(schema.properties ?? {}).map((field) => ({
      breadcrumb: ['properties', field],
      metadata: {
        inclusion: automatic.has(field) ? 'automatic' : 'available',
        'selected-by-default': true,
      },
    })),
  ];
  return {
    tap_stream_id: descriptor.name,
    stream: descriptor.name,
    schema,
    key_properties: keys,
    replication_key: descriptor.replicationKey,
    replication_method: 'INCREMENTAL',
    metadata,
  };
}

export function discover(config: Pick<Config, 'key_properties'>): Catalog {
  return { streams: STREAMS.map((d) => discoverStream(d, config)) };
}

function findMetadata(entries: MetadataEntry[], breadcrumb: readonly string[]): Record<string, unknown> {
  const entry = entries.find(
    (e) => Array.isArray(e.breadcrumb) && e.breadcrumb.length === breadcrumb.length && e.breadcrumb.every((b, i) => b === breadcrumb[i]),
  );
  return entry?.metadata ?? {};
}

function isSelected(metadata: Record<string, unknown>): boolean {
  if (metadata.inclusion === 'automatic') return true;
  if (metadata.inclusion === 'unsupported') return false;
  if (typeof metadata.selected === 'boolean') return metadata.selected;
  if (typeof metadata['selected-by-default'] === 'boolean') return metadata['selected-by-default'];
  return true;
}

function narrowSchema(schema: JsonSchema, entries: MetadataEntry[], always: ReadonlySet<string>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
    if (always.has(field) || isSelected(findMetadata(entries, ['properties', field]))) properties[field] = fieldSchema;
  }
  const narrowed: JsonSchema = { ...schema, properties };
  if (Array.isArray(schema.required)) narrowed.required = schema.required.filter((f) => f in properties);
  return narrowed;
}

/** Every stream with its defaults: what `sync` does without a catalog. */
export function defaultSelection(config: Pick<Config, 'key_properties'>): SelectedStream[] {
  return selectStreams(discover(config), config);
}

export function selectStreams(catalog: Catalog, config: Pick<Config, 'key_properties'>): SelectedStream[] {
  const selected: SelectedStream[] = [];
  for (const entry of catalog.streams) {
    const id = entry.tap_stream_id ?? entry.stream;
    const descriptor = streamByName(id);
    if (!descriptor) throw configError(`Catalog stream ${JSON.stringify(id)} is unknown; known streams: ${STREAMS.map((s) => s.name).join(', ')}. Run discover again.`);
    const metadata = Array.isArray(entry.metadata) ? entry.metadata : [];
    const streamMetadata = findMetadata(metadata, []);
    if (!isSelected(streamMetadata)) continue;

    const method = streamMetadata['replication-method'] ?? entry.replication_method ?? 'INCREMENTAL';
    if (method !== 'INCREMENTAL' && method !== 'FULL_TABLE') {
      throw configError(`Catalog stream ${id}: replication-method ${JSON.stringify(method)} is not supported; use INCREMENTAL or FULL_TABLE.`);
    }
    const replicationKey = streamMetadata['replication-key'] ?? entry.replication_key ?? descriptor.replicationKey;
    if (replicationKey !== descriptor.replicationKey) {
      throw configError(`Catalog stream ${id}: replication-key ${JSON.stringify(replicationKey)} is not supported; the only valid replication key is ${descriptor.replicationKey}.`);
    }
    const catalogKeys = streamMetadata['table-key-properties'] ?? entry.key_properties;
    const keyProperties = config.key_properties?.[descriptor.name] ?? (Array.isArray(catalogKeys) && catalogKeys.length > 0 ? (catalogKeys as string[]) : [...descriptor.keyProperties]);
    const schema = entry.schema && typeof entry.schema === 'object' && entry.schema.properties ? entry.schema : loadSchema(descriptor.schemaFile);
    const always = new Set([...keyProperties, descriptor.replicationKey]);
    for (const field of always) {
      if (!schema.properties?.[field]) throw configError(`Catalog stream ${id}: the schema has no property ${field}, which is a key or the replication key. Run discover again.`);
    }
    selected.push({ descriptor, schema: narrowSchema(schema, metadata, always), keyProperties, replicationMethod: method });
  }
  return selected;
}

export function readCatalogFile(path: string): Catalog {
  const parsed = readJsonFile(path, 'catalog file', { unreadable: 'Check the --catalog path.', invalid: 'Regenerate it with discover.' });
  const streams = (parsed as { streams?: unknown })?.streams;
  if (!Array.isArray(streams)) throw configError(`Catalog file ${path} has no "streams" array. Regenerate it with discover.`);
  streams.forEach((s, i) => {
    const stream = s as Partial<CatalogStream>;
    if (typeof stream !== 'object' || stream === null || (typeof stream.tap_stream_id !== 'string' && typeof stream.stream !== 'string')) {
      throw configError(`Catalog file ${path}: streams[${i}] has no tap_stream_id. Regenerate it with discover.`);
    }
    if (stream.metadata !== undefined && !Array.isArray(stream.metadata)) {
      throw configError(`Catalog file ${path}: streams[${i}].metadata must be an array of {breadcrumb, metadata}.`);
    }
  });
  return parsed as Catalog;
}
