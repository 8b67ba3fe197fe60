import { configError } from '../errors.js';
import type { AirbyteStream } from './catalog.js';

/**
 * A ConfiguredAirbyteCatalog made from discover's streams, as the Airbyte
 * platform makes one when a connection is set up: every stream with one sync
 * mode and one destination sync mode, its cursor the source's default cursor
 * and its primary key the source's. What CAT and a hand-run `read` take.
 */

export const SYNC_MODES = ['incremental', 'full_refresh'] as const;
export const DESTINATION_SYNC_MODES = ['append_dedup', 'append', 'overwrite'] as const;

export type SyncMode = (typeof SYNC_MODES)[number];
export type DestinationSyncMode = (typeof DESTINATION_SYNC_MODES)[number];

export interface ConfiguredModes {
  syncMode: SyncMode;
  destinationSyncMode: DestinationSyncMode;
}

export interface ConfiguredAirbyteStream {
  stream: AirbyteStream;
  sync_mode: SyncMode;
  destination_sync_mode: DestinationSyncMode;
  cursor_field: string[];
  primary_key: string[][];
}

export interface ConfiguredAirbyteCatalog {
  streams: ConfiguredAirbyteStream[];
}

export const DEFAULT_MODES: ConfiguredModes = { syncMode: 'incremental', destinationSyncMode: 'append_dedup' };

export function configuredCatalog(streams: readonly AirbyteStream[], modes: ConfiguredModes = DEFAULT_MODES): ConfiguredAirbyteCatalog {
  return { streams: streams.map((stream) => configuredStream(stream, modes)) };
}

function configuredStream(stream: AirbyteStream, { syncMode, destinationSyncMode }: ConfiguredModes): ConfiguredAirbyteStream {
  if (!stream.supported_sync_modes.includes(syncMode)) {
    throw configError(`Stream ${stream.name} does not support --sync-mode ${syncMode} (it supports ${stream.supported_sync_modes.join(', ')}). Choose one of those.`);
  }
  // A destination orders an incremental stream's rows by its cursor, and dedups by its primary key: neither can be left to guess.
  if (syncMode === 'incremental' && stream.default_cursor_field.length === 0) {
    throw configError(`Stream ${stream.name} has no cursor (no default_cursor_field), so it cannot be read with --sync-mode incremental. Use --sync-mode full_refresh.`);
  }
  if (destinationSyncMode === 'append_dedup' && stream.source_defined_primary_key.length === 0) {
    throw configError(`Stream ${stream.name} has no primary key (no source_defined_primary_key), so its destination cannot dedup it with --destination-sync-mode append_dedup. Set key_properties.${stream.name} in the config, or use append or overwrite.`);
  }
  return {
    stream,
    sync_mode: syncMode,
    destination_sync_mode: destinationSyncMode,
    cursor_field: stream.default_cursor_field,
    primary_key: stream.source_defined_primary_key,
  };
}
