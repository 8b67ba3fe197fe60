import { configError } from '../errors.js';
import { schemasByStream, type JsonSchema } from '../catalog/schemas.js';
import type { DiscoveredStream } from '../catalog/discovery.js';
import { selectStream, standsFor, type SelectedStream } from '../catalog/selection.js';
import { hasOwnField } from '../catalog/field-keys.js';
import { schemaShapeProblem } from '../catalog/schema-shape.js';
import { EXTRACTION_CURSOR, withExtractionCursor, withoutExtractionCursor } from './extraction-cursor.js';
import { withDeletionMember, withoutDeletionMember } from '../sync/pass/delete-records.js';
import { openSchema } from './open-schema.js';

/** The CDC member Airbyte destinations remove a row by, in append_dedup: the change pass's delete records set it. */
const DELETION_MEMBER = '_ab_cdc_deleted_at';

/**
 * The Airbyte catalog: discovery's streams as a CATALOG message, and a
 * configured catalog read back as the engine's selection. Every stream's
 * cursor is the extraction cursor (extraction-cursor.ts), declared in its
 * json_schema; the engine's bookmark stays on the replication key.
 */

/** An AirbyteStream of the CATALOG message, as the platform reads it. */
export interface AirbyteStream {
  name: string;
  json_schema: JsonSchema;
  supported_sync_modes: string[];
  source_defined_cursor: boolean;
  default_cursor_field: string[];
  source_defined_primary_key: string[][];
  is_resumable: boolean;
}

/** Discovery's streams as the CATALOG's streams. */
export function airbyteStreams(streams: readonly DiscoveredStream[]): AirbyteStream[] {
  return streams.map(({ descriptor, schema, keyProperties }) => ({
    name: descriptor.name,
    json_schema: openSchema(withDeletionMember(withExtractionCursor(schema), DELETION_MEMBER)),
    supported_sync_modes: ['full_refresh', 'incremental'],
    source_defined_cursor: true,
    default_cursor_field: [EXTRACTION_CURSOR],
    source_defined_primary_key: keyProperties.map((k) => [k]),
    is_resumable: true,
  }));
}

export function catalogMessage(streams: readonly DiscoveredStream[]): string {
  return JSON.stringify({ type: 'CATALOG', catalog: { streams: airbyteStreams(streams) } });
}

interface ConfiguredStream {
  stream?: { name?: unknown; json_schema?: JsonSchema };
  sync_mode?: unknown;
  destination_sync_mode?: unknown;
  cursor_field?: unknown;
  primary_key?: unknown;
}

/** A Singer catalog's entry (tap_stream_id, a stream name as text, metadata): what `tap-report-dump discover` writes, not a configured Airbyte stream. */
function isSingerEntry(entry: unknown): boolean {
  const fields = entry as { tap_stream_id?: unknown; stream?: unknown } | null;
  return typeof fields?.tap_stream_id === 'string' || typeof fields?.stream === 'string';
}

const SINGER_CATALOG = (source: string): string =>
  `Configured catalog ${source} is a Singer catalog (streams with tap_stream_id and metadata, as tap-report-dump discover writes it). read takes a ConfiguredAirbyteCatalog: each stream of source-report-dump discover under "stream", with "sync_mode" (incremental or full_refresh), "destination_sync_mode", "cursor_field" and "primary_key", as the Airbyte platform writes it (source-report-dump configured-catalog --config <config.json> writes one).`;

function configuredStreams(catalog: unknown): ConfiguredStream[] {
  const streams = (catalog as { streams?: unknown } | null)?.streams;
  return Array.isArray(streams) ? (streams as ConfiguredStream[]) : [];
}

/** A configured json_schema as the engine reads it: the service's fields, without the extraction cursor and the deletion member the source adds. */
function serviceSchema(schema: JsonSchema | undefined): JsonSchema | undefined {
  return schema && typeof schema === 'object' ? withoutDeletionMember(withoutExtractionCursor(schema), DELETION_MEMBER) : schema;
}

/** The json_schema each configured stream declares, by stream name: the service's fields as discovery learnt them, which the key_properties and replication_key settings name. */
export function configuredSchemas(catalog: unknown): Map<string, JsonSchema> {
  return schemasByStream(configuredStreams(catalog).map((entry) => [entry?.stream?.name, serviceSchema(entry?.stream?.json_schema)] as const));
}

/** The configured streams whose records carry the extraction cursor: their json_schema declares it, or declares no field at all (then every field discover offers is read). */
export function extractionCursorStreams(catalog: unknown): Set<string> {
  const carrying = configuredStreams(catalog).filter((entry) => {
    const properties = entry?.stream?.json_schema?.properties;
    return !properties || typeof properties !== 'object' || Object.keys(properties).length === 0 || hasOwnField(properties, EXTRACTION_CURSOR);
  });
  return new Set(carrying.map((entry) => entry.stream?.name).filter((name): name is string => typeof name === 'string'));
}

/**
 * A warning for each deduped stream whose configured cursor is still the
 * replication key (a connection set up before the extraction cursor): its
 * destination keeps a completed row over the same row reopened later. Call
 * after selectConfiguredStreams, which refuses any other cursor.
 */
export function replicationKeyCursorWarnings(catalog: unknown): string[] {
  return configuredStreams(catalog)
    .filter((entry) => entry?.sync_mode === 'incremental' && String(entry.destination_sync_mode).endsWith('dedup'))
    .flatMap(({ stream, cursor_field: cursor, destination_sync_mode: mode }) => {
      if (!Array.isArray(cursor) || cursor.length !== 1 || cursor[0] === EXTRACTION_CURSOR) return [];
      const field = String(cursor[0]);
      return [
        `${String(stream?.name)}: the configured cursor_field is ${JSON.stringify(cursor)}: the destination's ${String(mode)} keeps, per primary key, the row with the latest ${field}, so a row emitted again with an earlier or null ${field} (a training row reopened or reassigned) does not replace the old one. Refresh the source schema in the connection: the source's cursor is now ${EXTRACTION_CURSOR}.`,
      ];
    });
}

/**
 * Refuses a configured catalog whose stream schemas are not shaped as JSON
 * Schema objects (a property set to null by hand), naming the entry, before
 * anything reads them.
 */
export function checkConfiguredSchemas(catalog: unknown, source: string): void {
  const streams = (catalog as { streams?: unknown } | null)?.streams;
  if (!Array.isArray(streams)) return;
  streams.forEach((entry: unknown, i) => {
    const stream = (entry as { stream?: unknown } | null)?.stream;
    const problem = schemaShapeProblem((stream as { json_schema?: unknown } | null)?.json_schema, `streams[${i}].stream.json_schema`);
    if (problem !== undefined) throw configError(`Configured catalog ${source}: ${problem}. Make the configured catalog again from discover's catalog (source-report-dump configured-catalog), or fix that entry.`);
  });
}

/** A ConfiguredAirbyteCatalog as the engine's stream selection. */
export function selectConfiguredStreams(catalog: unknown, offered: readonly DiscoveredStream[], source: string): SelectedStream[] {
  const streams = (catalog as { streams?: unknown } | null)?.streams;
  if (!Array.isArray(streams)) throw configError(`Configured catalog ${source} has no "streams" array. Pass the configured catalog (a ConfiguredAirbyteCatalog) with a streams list.`);
  if (streams.some(isSingerEntry)) throw configError(SINGER_CATALOG(source));
  return (streams as ConfiguredStream[]).map((entry, i) => {
    const name = entry?.stream?.name;
    const stream = offered.find((s) => s.descriptor.name === name);
    if (!stream) throw configError(`Configured catalog ${source}: streams[${i}].stream.name ${JSON.stringify(name)} is not a stream of this source. Use one of ${offered.map((s) => s.descriptor.name).join(', ')}, as discover names them.`);
    if (entry.sync_mode !== 'incremental' && entry.sync_mode !== 'full_refresh') {
      throw configError(`Configured catalog ${source}: streams[${i}].sync_mode is ${JSON.stringify(entry.sync_mode)}. Set it to incremental or full_refresh.`);
    }
    const cursor = cursorField(entry, stream, source);
    const configured = serviceSchema(entry.stream?.json_schema);
    // The configured schema is what discover offered (live or packaged), minus the fields the user left out.
    const schema = configured && typeof configured === 'object' && configured.properties && Object.keys(configured.properties).length > 0 ? configured : undefined;
    return selectStream(
      stream,
      { method: entry.sync_mode === 'incremental' ? 'INCREMENTAL' : 'FULL_TABLE', keyProperties: primaryKey(entry, stream, source), schema, replicationKey: cursor, selects: () => true },
      `Configured catalog ${source}: ${stream.descriptor.name}`,
    );
  });
}

/**
 * The replication key a configured cursor names: none when the cursor is
 * absent, empty or the extraction cursor (the source's), or the one field
 * that stands for the replication key (a catalog saved before the
 * extraction cursor existed).
 */
function cursorField(entry: ConfiguredStream, stream: DiscoveredStream, source: string): string | undefined {
  const cursor = entry.cursor_field;
  if (cursor === undefined || (Array.isArray(cursor) && (cursor.length === 0 || (cursor.length === 1 && cursor[0] === EXTRACTION_CURSOR)))) return undefined;
  if (Array.isArray(cursor) && cursor.length === 1 && typeof cursor[0] === 'string' && standsFor(cursor[0], stream.replicationKey)) return cursor[0];
  throw configError(`Configured catalog ${source}: ${stream.descriptor.name} cursor_field is ${JSON.stringify(cursor)}, but the source defines the cursor. Set it to ["${EXTRACTION_CURSOR}"] or leave it empty.`);
}

function primaryKey(entry: ConfiguredStream, stream: DiscoveredStream, source: string): string[] | undefined {
  if (!Array.isArray(entry.primary_key) || entry.primary_key.length === 0 || stream.keysFromSettings) return undefined;
  if (!entry.primary_key.every((path) => Array.isArray(path) && path.length === 1 && typeof path[0] === 'string')) {
    throw configError(`Configured catalog ${source}: ${stream.descriptor.name} primary_key names a path that is not a top-level field. Set it to top-level fields, e.g. [["userId"]], or set key_properties.${stream.descriptor.name}.`);
  }
  return (entry.primary_key as string[][]).map((path) => path[0]);
}
