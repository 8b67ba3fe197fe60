import type { JsonObject } from './messages.js';

/** Airbyte messages as a test reads them from the `airbyte` commands' stdout (the members the tests look at), and the configured catalog a read takes. */

export interface AirbyteStream extends JsonObject {
  name: string;
  json_schema: JsonObject;
  default_cursor_field: string[];
  source_defined_primary_key: string[][];
}

export interface AirbyteStreamState {
  stream: { stream_descriptor: { name: string }; stream_state: JsonObject };
}

export interface AirbyteMessage {
  type: string;
  record?: { stream: string; data: JsonObject };
  state?: AirbyteStreamState;
  catalog?: { streams: AirbyteStream[] };
}

/** One message a line. */
export function airbyteMessages(stdout: string): AirbyteMessage[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AirbyteMessage);
}

/** The streams of `airbyte discover`'s CATALOG message. */
export function discoveredStreams(stdout: string): AirbyteStream[] {
  return airbyteMessages(stdout).find((m) => m.type === 'CATALOG')!.catalog!.streams;
}

/** A record's data without the extraction cursor the Airbyte face adds to it: the service's fields, as the Singer face emits them. */
export function serviceFields(data: JsonObject): JsonObject {
  const { _ab_extracted_at: _cursor, ...fields } = data;
  return fields;
}

/** A stream's records, as the service's fields (airbyte-protocol.test.ts checks the extraction cursor). */
export function airbyteRecords(messages: readonly AirbyteMessage[], stream: string): JsonObject[] {
  return messages.filter((m) => m.type === 'RECORD' && m.record!.stream === stream).map((m) => serviceFields(m.record!.data));
}

/** The states of a read's STATE messages: what Airbyte passes to the next read. */
export function airbyteStates(messages: readonly AirbyteMessage[]): AirbyteStreamState[] {
  return messages.filter((m) => m.type === 'STATE').map((m) => m.state!);
}

/** A stream's bookmark in those states. */
export function airbyteBookmark(states: readonly AirbyteStreamState[], stream: string): string {
  return states.find((s) => s.stream.stream_descriptor.name === stream)!.stream.stream_state.replication_key_value as string;
}

/** The field a stream's bookmark in those states is kept on (the replication key; the catalog's cursor is the extraction cursor). */
export function airbyteBookmarkField(states: readonly AirbyteStreamState[], stream: string): string {
  return states.find((s) => s.stream.stream_descriptor.name === stream)!.stream.stream_state.replication_key as string;
}

/** A configured stream as a read and a destination take it. */
export interface ConfiguredStream extends JsonObject {
  stream: AirbyteStream;
  sync_mode: string;
  destination_sync_mode: string;
  cursor_field: string[];
  primary_key: string[][];
}

/** Every discovered stream read incrementally into append_dedup, with the cursor and primary key discover offers. */
export function incrementalCatalog(streams: readonly AirbyteStream[]): { streams: ConfiguredStream[] } {
  return { streams: streams.map((stream) => ({ stream, sync_mode: 'incremental', destination_sync_mode: 'append_dedup', cursor_field: stream.default_cursor_field, primary_key: stream.source_defined_primary_key })) };
}
