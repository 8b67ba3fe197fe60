import { packageHomepage, type JsonSchema } from '../catalog/schemas.js';
import type { OutputProtocol, StreamStatus } from '../output/protocol.js';
import type { LogLevel } from '../observe/log.js';
import { EXTRACTION_CURSOR, extractionCursorMember } from './extraction-cursor.js';
import { openSchema } from './open-schema.js';

/** Airbyte protocol messages (v0.3) for the same engine and the same state blobs. */

/** The Airbyte protocol of a read: the RECORDs of `cursorStreams` carry the extraction cursor (extraction-cursor.ts), the others only the service's fields. */
export function airbyteProtocol(cursorStreams: ReadonlySet<string>): OutputProtocol {
  return {
    reader: 'destination',
    // Destinations remove a row whose _ab_cdc_deleted_at is set from the final table of an append_dedup stream.
    deletionMember: '_ab_cdc_deleted_at',
    recordMember: EXTRACTION_CURSOR,
    // Destinations v2 rank a key's rows by cursor and extraction time: two of one read tie.
    lastRecordWins: false,
    // The platform hands back the state it stored; its acceptance suite expects no record and a STATE from bookmarks far ahead.
    skipsFutureBookmarks: true,
    checkpointsBetweenReads: true,
    schema: () => undefined,
    recordEnvelope: (stream, extractedAt) => ({
      head: `{"type":"RECORD","record":{"stream":${JSON.stringify(stream)},"emitted_at":${extractedAt.getTime()},"data":`,
      tail: '}}',
      ...(cursorStreams.has(stream) ? { members: extractionCursorMember(extractedAt) } : {}),
    }),
    state: (stream, whole, records) => stateMessage(stream, whole.bookmarks?.[stream] ?? {}, records),
    streamStatus: (stream, status) => streamStatusMessage(stream, STREAM_STATUSES[status]),
  };
}

/**
 * A per-stream STATE with its sourceStats: `records`, the RECORD messages of
 * the stream since its previous STATE. The protocol declares recordCount a
 * double that "should always have a decimal point", so it is written `12.0`.
 */
export function stateMessage(stream: string, blob: object, records: number): string {
  const state = JSON.stringify({ type: 'STREAM', stream: { stream_descriptor: { name: stream }, stream_state: blob } });
  return `{"type":"STATE","state":${state.slice(0, -1)},"sourceStats":{"recordCount":${doubleText(records)}}}}`;
}

/** A count as JSON text with a decimal point (`12.0`); one too large for that (never a count of records) as JSON writes it. */
function doubleText(count: number): string {
  return Number.isInteger(count) && Math.abs(count) < 1e21 ? count.toFixed(1) : JSON.stringify(count);
}

export type AirbyteStreamStatus = 'STARTED' | 'RUNNING' | 'COMPLETE' | 'INCOMPLETE';

const STREAM_STATUSES: Record<StreamStatus, AirbyteStreamStatus> = { started: 'STARTED', running: 'RUNNING', complete: 'COMPLETE', incomplete: 'INCOMPLETE' };

/** A TRACE of type STREAM_STATUS: where the platform shows a stream's progress. */
export function streamStatusMessage(stream: string, status: AirbyteStreamStatus, emittedAt = Date.now()): string {
  return JSON.stringify({ type: 'TRACE', trace: { type: 'STREAM_STATUS', emitted_at: emittedAt, stream_status: { stream_descriptor: { name: stream }, status } } });
}

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

/** Settings of the Singer face only: the Airbyte protocol has no BATCH and no ACTIVATE_VERSION message (its deletions come from full refresh with overwrite). */
const SINGER_ONLY_SETTINGS = ['batch_config', 'full_pass_interval_days', 'emit_activate_version_messages', 'full_pass_min_ratio', 'spool_directory', 'spool_max_mb'];

/**
 * The config schema as Airbyte's connectionSpecification: open (open-schema.ts),
 * without the Singer-only settings, the token marked secret for the UI and logs.
 * `documentationUrl` is the package's `homepage` (package.json) when it names
 * one, and absent otherwise (the protocol makes it optional): a link the UI
 * shows must open a page, and the tap has no public page of its own yet.
 */
export function specMessage(configSchema: JsonSchema, documentationUrl: string | undefined = packageHomepage()): string {
  const connectionSpecification = openSchema(configSchema);
  const properties = connectionSpecification.properties ?? {};
  for (const name of SINGER_ONLY_SETTINGS) delete properties[name];
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
      ...(documentationUrl === undefined ? {} : { documentationUrl }),
      connectionSpecification,
      supportsIncremental: true,
      supported_destination_sync_modes: ['append', 'append_dedup', 'overwrite'],
      protocol_version: '0.3.2',
    },
  });
}
