import { configError } from '../errors.js';
import { readJsonFile } from '../config/json-file.js';
import { namesProblem, schemaShapeProblem } from '../catalog/schema-shape.js';
import { schemasByStream, type JsonSchema } from '../catalog/schemas.js';
import type { DiscoveredStream } from '../catalog/discovery.js';
import { selectStream, standsFor, type ReplicationMethod, type SelectedStream, type StreamChoice } from '../catalog/selection.js';

/** The Singer catalog: discovery's streams with Singer metadata, and a catalog file read back as the engine's selection. */

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

function singerStream({ descriptor, schema, keyProperties, replicationKey }: DiscoveredStream): CatalogStream {
  const automatic = new Set([...keyProperties, replicationKey]);
  const metadata: MetadataEntry[] = [
    {
      breadcrumb: [],
      metadata: {
        inclusion: 'available',
        'selected-by-default': true,
        selected: true,
        'table-key-properties': [...keyProperties],
        'valid-replication-keys': [replicationKey],
        'replication-key': replicationKey,
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
    key_properties: [...keyProperties],
    replication_key: replicationKey,
    replication_method: 'INCREMENTAL',
    metadata,
  };
}

/** What `discover` prints. */
export function singerCatalog(streams: readonly DiscoveredStream[]): Catalog {
  return { streams: streams.map(singerStream) };
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

/** The streams a catalog selects, with their fields and replication method. */
export function selectFromCatalog(catalog: Catalog, offered: readonly DiscoveredStream[]): SelectedStream[] {
  const selected: SelectedStream[] = [];
  for (const entry of catalog.streams) {
    const id = entry.tap_stream_id ?? entry.stream;
    const stream = offered.find((s) => s.descriptor.name === id);
    if (!stream) throw configError(`Catalog stream ${JSON.stringify(id)} is unknown; known streams: ${offered.map((s) => s.descriptor.name).join(', ')}. Run discover again.`);
    const metadata = Array.isArray(entry.metadata) ? entry.metadata : [];
    const streamMetadata = findMetadata(metadata, []);
    if (!isSelected(streamMetadata)) continue;
    selected.push(selectStream(stream, streamChoice(id, entry, streamMetadata, stream), `Catalog stream ${id}`));
  }
  return selected;
}

function streamChoice(id: string, entry: CatalogStream, streamMetadata: Record<string, unknown>, offered: DiscoveredStream): StreamChoice {
  const method = streamMetadata['replication-method'] ?? entry.replication_method ?? 'INCREMENTAL';
  if (method !== 'INCREMENTAL' && method !== 'FULL_TABLE') {
    throw configError(`Catalog stream ${id}: replication-method ${JSON.stringify(method)} is not supported; use INCREMENTAL or FULL_TABLE.`);
  }
  const replicationKey = streamMetadata['replication-key'] ?? entry.replication_key ?? offered.replicationKey;
  if (typeof replicationKey !== 'string' || !standsFor(replicationKey, offered.replicationKey)) {
    throw configError(`Catalog stream ${id}: replication-key ${JSON.stringify(replicationKey)} is not the stream's replication key ${offered.replicationKey} (as the service names it). Set it to ${offered.replicationKey} in the catalog, or set replication_key.${id} if that field holds ${offered.descriptor.replicationKey} under another name.`);
  }
  const catalogKeys = streamMetadata['table-key-properties'] ?? entry.key_properties;
  const metadata = Array.isArray(entry.metadata) ? entry.metadata : [];
  return {
    method: method as ReplicationMethod,
    schema: entry.schema && typeof entry.schema === 'object' && entry.schema.properties ? entry.schema : undefined,
    replicationKey,
    keyProperties: Array.isArray(catalogKeys) ? (catalogKeys as string[]) : undefined,
    selects: (field: string) => isSelected(findMetadata(metadata, ['properties', field])),
  };
}

/** The schema each catalog entry declares, by stream: the service's fields as discovery learnt them, which the key_properties and replication_key settings name. */
export function declaredSchemas(catalog: Catalog): Map<string, JsonSchema> {
  return schemasByStream(catalog.streams.map((entry) => [entry.tap_stream_id ?? entry.stream, entry.schema] as const));
}

/** Where a catalog stream's schema, metadata or key lists are not shaped as the tap reads them, or undefined. */
function streamShapeProblem(stream: Partial<CatalogStream>, at: string): string | undefined {
  const entries: unknown[] = stream.metadata ?? [];
  const badEntry = entries.findIndex((entry) => !isMetadataEntry(entry));
  if (badEntry >= 0) return `${at}.metadata[${badEntry}] is not a {breadcrumb, metadata} object`;
  const streamEntry = (stream.metadata ?? []).findIndex((entry) => entry.breadcrumb.length === 0);
  return (
    schemaShapeProblem(stream.schema, `${at}.schema`) ??
    namesProblem(stream.key_properties, `${at}.key_properties`) ??
    (streamEntry < 0 ? undefined : namesProblem(stream.metadata![streamEntry].metadata?.['table-key-properties'], `${at}.metadata[${streamEntry}].metadata.table-key-properties`))
  );
}

/** An entry findMetadata can read: a breadcrumb list, and metadata that is an object when given. */
function isMetadataEntry(entry: unknown): entry is MetadataEntry {
  if (typeof entry !== 'object' || entry === null || !Array.isArray((entry as MetadataEntry).breadcrumb)) return false;
  const metadata: unknown = (entry as MetadataEntry).metadata;
  return metadata === undefined || (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata));
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
      throw configError(`Catalog file ${path}: streams[${i}].metadata is not an array of {breadcrumb, metadata}. Regenerate the catalog with discover, or fix that entry.`);
    }
    const problem = streamShapeProblem(stream, `streams[${i}]`);
    if (problem !== undefined) throw configError(`Catalog file ${path}: ${problem}. Regenerate the catalog with discover, or fix that entry.`);
  });
  return parsed as Catalog;
}
