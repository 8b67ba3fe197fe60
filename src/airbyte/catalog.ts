import { configError } from '../errors.js';
import type { JsonSchema } from '../catalog/schemas.js';
import type { DiscoveredStream } from '../catalog/discovery.js';
import { selectStream, type SelectedStream } from '../catalog/selection.js';

/** The Airbyte catalog: discovery's streams as a CATALOG message, and a configured catalog read back as the engine's selection. */

export function catalogMessage(streams: readonly DiscoveredStream[]): string {
  return JSON.stringify({
    type: 'CATALOG',
    catalog: {
      streams: streams.map(({ descriptor, schema, keyProperties, replicationKey }) => ({
        name: descriptor.name,
        json_schema: schema,
        supported_sync_modes: ['full_refresh', 'incremental'],
        source_defined_cursor: true,
        default_cursor_field: [replicationKey],
        source_defined_primary_key: keyProperties.map((k) => [k]),
        is_resumable: true,
      })),
    },
  });
}

interface ConfiguredStream {
  stream?: { name?: unknown; json_schema?: JsonSchema };
  sync_mode?: unknown;
  cursor_field?: unknown;
  primary_key?: unknown;
}

/** A ConfiguredAirbyteCatalog as the engine's stream selection. */
export function selectConfiguredStreams(catalog: unknown, offered: readonly DiscoveredStream[], source: string): SelectedStream[] {
  const streams = (catalog as { streams?: unknown } | null)?.streams;
  if (!Array.isArray(streams)) throw configError(`Configured catalog ${source} has no "streams" array.`);
  return streams.map((entry: ConfiguredStream, i) => {
    const name = entry?.stream?.name;
    const stream = offered.find((s) => s.descriptor.name === name);
    if (!stream) throw configError(`Configured catalog ${source}: streams[${i}].stream.name ${JSON.stringify(name)} is not a stream of this source (${offered.map((s) => s.descriptor.name).join(', ')}).`);
    if (entry.sync_mode !== 'incremental' && entry.sync_mode !== 'full_refresh') {
      throw configError(`Configured catalog ${source}: streams[${i}].sync_mode must be incremental or full_refresh.`);
    }
    const { replicationKey } = stream;
    if (entry.cursor_field !== undefined && (!Array.isArray(entry.cursor_field) || (entry.cursor_field.length > 0 && (entry.cursor_field.length !== 1 || entry.cursor_field[0] !== replicationKey)))) {
      throw configError(`Configured catalog ${source}: ${stream.descriptor.name} cursor_field must be ["${replicationKey}"] (the source defines the cursor).`);
    }
    const wanted = entry.stream?.json_schema?.properties;
    return selectStream(
      stream,
      { method: entry.sync_mode === 'incremental' ? 'INCREMENTAL' : 'FULL_TABLE', keyProperties: primaryKey(entry, stream, source), selects: (field) => !wanted || field in wanted },
      `Configured catalog ${source}: ${stream.descriptor.name}`,
    );
  });
}

function primaryKey(entry: ConfiguredStream, stream: DiscoveredStream, source: string): string[] | undefined {
  if (!Array.isArray(entry.primary_key) || entry.primary_key.length === 0 || stream.keysFromSettings) return undefined;
  if (!entry.primary_key.every((path) => Array.isArray(path) && path.length === 1 && typeof path[0] === 'string')) {
    throw configError(`Configured catalog ${source}: ${stream.descriptor.name} primary_key must be top-level fields, e.g. [["userId"]].`);
  }
  return (entry.primary_key as string[][]).map((path) => path[0]);
}
