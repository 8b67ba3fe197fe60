import { describe, expect, it } from 'vitest';
import { airbyteStreams, type AirbyteStream } from '../../src/airbyte/catalog.js';
import { configuredCatalog } from '../../src/airbyte/configured-catalog.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { configErrorOf } from '../helpers/errors.js';

/** The configured catalog made from discover's streams: what the Airbyte platform would write for a connection. */

const streams = (): AirbyteStream[] => airbyteStreams(discoverStreams({}));

describe('the configured catalog made from discover', () => {
  it('reads every stream incrementally into append_dedup by default, with the source\'s cursor and primary key', () => {
    const catalog = configuredCatalog(streams());
    expect(catalog.streams.map((s) => s.stream.name)).toEqual(['training', 'phishing']);
    for (const configured of catalog.streams) {
      expect(configured).toMatchObject({ sync_mode: 'incremental', destination_sync_mode: 'append_dedup' });
      expect(configured.cursor_field).toEqual(configured.stream.default_cursor_field);
      expect(configured.cursor_field).toEqual(['_ab_extracted_at']);
      expect(configured.primary_key).toEqual(configured.stream.source_defined_primary_key);
      expect(configured.primary_key.length).toBeGreaterThan(0);
    }
    expect(catalog.streams[0].stream).toEqual(streams()[0]);
  });

  it('takes the sync mode and the destination sync mode asked for', () => {
    const catalog = configuredCatalog(streams(), { syncMode: 'full_refresh', destinationSyncMode: 'overwrite' });
    expect(catalog.streams.map((s) => [s.sync_mode, s.destination_sync_mode])).toEqual([
      ['full_refresh', 'overwrite'],
      ['full_refresh', 'overwrite'],
    ]);
  });

  it('refuses incremental for a stream without a cursor, saying to read it in full_refresh', () => {
    const [training] = streams();
    const error = configErrorOf(() => configuredCatalog([{ ...training, default_cursor_field: [] }])).message;
    expect(error).toBe('Stream training has no cursor (no default_cursor_field), so it cannot be read with --sync-mode incremental. Use --sync-mode full_refresh.');
    expect(configuredCatalog([{ ...training, default_cursor_field: [] }], { syncMode: 'full_refresh', destinationSyncMode: 'append_dedup' }).streams).toHaveLength(1);
  });

  it('refuses append_dedup for a stream without a primary key, saying how to give it one or which mode to use', () => {
    const [training] = streams();
    const error = configErrorOf(() => configuredCatalog([{ ...training, source_defined_primary_key: [] }])).message;
    expect(error).toBe(
      'Stream training has no primary key (no source_defined_primary_key), so its destination cannot dedup it with --destination-sync-mode append_dedup. Set key_properties.training in the config, or use append or overwrite.',
    );
    expect(configuredCatalog([{ ...training, source_defined_primary_key: [] }], { syncMode: 'incremental', destinationSyncMode: 'append' }).streams).toHaveLength(1);
  });

  it('refuses a sync mode the stream does not support', () => {
    const [training] = streams();
    expect(configErrorOf(() => configuredCatalog([{ ...training, supported_sync_modes: ['full_refresh'] }])).message).toBe(
      'Stream training does not support --sync-mode incremental (it supports full_refresh). Choose one of those.',
    );
  });
});
