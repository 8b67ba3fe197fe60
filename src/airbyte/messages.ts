import { configError } from '../errors.js';
import { loadSchema, type JsonSchema } from '../catalog/schemas.js';
import { STREAMS, streamByName } from '../catalog/reports.js';
import { keyPropertiesFor, type SelectedStream } from '../singer/catalog.js';
import type { Config } from '../config/config.js';
import type { OutputProtocol } from '../singer/messages.js';
import type { TapState, StreamBookmark } from '../state.js';
import type { LogLevel } from '../observe/log.js';

/** Airbyte protocol messages (v0.3) for the same engine and the same state blobs. */

export const airbyte: OutputProtocol = {
  schema: () => undefined,
  recordEnvelope: (stream, extractedAt) => ({
    head: `{"type":"RECORD","record":{"stream":${JSON.stringify(stream)},"emitted_at":${extractedAt.getTime()},"data":`,
    tail: '}}',
  }),
  state: (stream, whole) =>
    JSON.stringify({
      type: 'STATE',
      state: { type: 'STREAM', stream: { stream_descriptor: { name: stream }, stream_state: whole.bookmarks?.[stream] ?? {} } },
    }),
};

const LOG_LEVELS: Record<LogLevel, string> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };

export function logMessage(level: LogLevel, message: string): string {
  return JSON.stringify({ type: 'LOG', log: { level: LOG_LEVELS[level], message } });
}

export function traceErrorMessage(message: string, failureType: 'config_error' | 'system_error' | 'transient_error', internal?: string): string {
  return JSON.stringify({
    type: 'TRACE',
    trace: { type: 'ERROR', emitted_at: Date.now(), error: { message, failure_type: failureType, ...(internal ? { internal_message: internal } : {}) } },
  });
}

export function connectionStatusMessage(ok: boolean, message: string): string {
  return JSON.stringify({ type: 'CONNECTION_STATUS', connectionStatus: { status: ok ? 'SUCCEEDED' : 'FAILED', message } });
}

/** The config schema as Airbyte's connectionSpecification: the token is marked secret for the UI and logs. */
export function specMessage(configSchema: JsonSchema): string {
  const connectionSpecification = structuredClone(configSchema);
  const properties = connectionSpecification.properties ?? {};
  let order = 0;
  for (const [name, property] of Object.entries(properties)) {
    if (property.secret === true) {
      delete property.secret;
      property.airbyte_secret = true;
    }
    property.title ??= name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
    property.order = order++;
  }
  connectionSpecification.title = 'Report Dump Source Spec';
  return JSON.stringify({
    type: 'SPEC',
    spec: {
      documentationUrl: 'https://www.npmjs.com/package/tap-report-dump',
      connectionSpecification,
      supportsIncremental: true,
      supported_destination_sync_modes: ['append', 'append_dedup', 'overwrite'],
      protocol_version: '0.3.2',
    },
  });
}

export function catalogMessage(config: Pick<Config, 'key_properties'>): string {
  return JSON.stringify({
    type: 'CATALOG',
    catalog: {
      streams: STREAMS.map((descriptor) => ({
        name: descriptor.name,
        json_schema: loadSchema(descriptor.schemaFile),
        supported_sync_modes: ['full_refresh', 'incremental'],
        source_defined_cursor: true,
        default_cursor_field: [descriptor.replicationKey],
        source_defined_primary_key: keyPropertiesFor(descriptor, config).map((k) => [k]),
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
export function selectConfiguredStreams(catalog: unknown, config: Pick<Config, 'key_properties'>, source: string): SelectedStream[] {
  const streams = (catalog as { streams?: unknown } | null)?.streams;
  if (!Array.isArray(streams)) throw configError(`Configured catalog ${source} has no "streams" array.`);
  return streams.map((entry: ConfiguredStream, i) => {
    const name = entry?.stream?.name;
    const descriptor = typeof name === 'string' ? streamByName(name) : undefined;
    if (!descriptor) throw configError(`Configured catalog ${source}: streams[${i}].stream.name ${JSON.stringify(name)} is not a stream of this source (${STREAMS.map((s) => s.name).join(', ')}).`);
    if (entry.sync_mode !== 'incremental' && entry.sync_mode !== 'full_refresh') {
      throw configError(`Configured catalog ${source}: streams[${i}].sync_mode must be incremental or full_refresh.`);
    }
    if (entry.cursor_field !== undefined && (!Array.isArray(entry.cursor_field) || (entry.cursor_field.length > 0 && (entry.cursor_field.length !== 1 || entry.cursor_field[0] !== descriptor.replicationKey)))) {
      throw configError(`Configured catalog ${source}: ${descriptor.name} cursor_field must be ["${descriptor.replicationKey}"] (the source defines the cursor).`);
    }
    let keyProperties = keyPropertiesFor(descriptor, config);
    if (Array.isArray(entry.primary_key) && entry.primary_key.length > 0 && config.key_properties?.[descriptor.name] === undefined) {
      if (!entry.primary_key.every((path) => Array.isArray(path) && path.length === 1 && typeof path[0] === 'string')) {
        throw configError(`Configured catalog ${source}: ${descriptor.name} primary_key must be top-level fields, e.g. [["userId"]].`);
      }
      keyProperties = (entry.primary_key as string[][]).map((path) => path[0]);
    }
    const full = loadSchema(descriptor.schemaFile);
    const wanted = entry.stream?.json_schema?.properties;
    const always = new Set([...keyProperties, descriptor.replicationKey]);
    const properties: Record<string, JsonSchema> = {};
    for (const [field, schema] of Object.entries(full.properties ?? {})) {
      if (always.has(field) || !wanted || field in wanted) properties[field] = schema;
    }
    return {
      descriptor,
      schema: { ...full, properties, required: (full.required ?? []).filter((f) => f in properties) },
      keyProperties,
      replicationMethod: entry.sync_mode === 'incremental' ? 'INCREMENTAL' : 'FULL_TABLE',
    };
  });
}

/** Airbyte state (a list of per-stream STATE blobs, a legacy object, or one message) as the tap's state. */
export function stateFromAirbyte(input: unknown, source: string): TapState {
  const bookmarks: Record<string, StreamBookmark> = {};
  const take = (message: unknown): void => {
    const m = message as { type?: string; stream?: { stream_descriptor?: { name?: unknown }; stream_state?: unknown }; data?: unknown; global?: { stream_states?: unknown[] } } | null;
    if (m?.type === 'STREAM' || m?.stream) {
      const name = m.stream?.stream_descriptor?.name;
      if (typeof name !== 'string') throw configError(`State ${source}: a STREAM state has no stream_descriptor.name.`);
      const blob = m.stream?.stream_state;
      if (blob !== undefined && blob !== null) bookmarks[name] = blob as StreamBookmark;
    } else if (m?.type === 'GLOBAL' && Array.isArray(m.global?.stream_states)) {
      for (const s of m.global.stream_states) take({ type: 'STREAM', stream: s });
    } else if (m && typeof m.data === 'object' && m.data !== null) {
      Object.assign(bookmarks, (m.data as TapState).bookmarks ?? {});
    } else {
      throw configError(`State ${source} is not an Airbyte state (a list of {"type": "STREAM", "stream": {...}} messages).`);
    }
  };
  if (Array.isArray(input)) input.forEach(take);
  else if (input && typeof input === 'object' && 'bookmarks' in input) return input as TapState;
  else if (input !== null && input !== undefined && !(typeof input === 'object' && Object.keys(input).length === 0)) take(input);
  return { bookmarks };
}
