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
  sourceStats?: { recordCount: number };
}

export interface AirbyteMessage {
  type: string;
  record?: { stream: string; data: JsonObject };
  state?: AirbyteStreamState;
  catalog?: { streams: AirbyteStream[] };
  log?: { level: string; message: string };
  trace?: { type: string; stream_status?: { stream_descriptor: { name: string }; status: string }; error?: { message: string; failure_type: string } };
}

/** The stream a RECORD, STATE or STREAM_STATUS message is about. */
function streamOf(message: AirbyteMessage): string | undefined {
  return message.record?.stream ?? message.state?.stream.stream_descriptor.name ?? message.trace?.stream_status?.stream_descriptor.name;
}

/**
 * A stream's messages in order, in short: its STREAM_STATUS statuses, `RECORD×n`
 * for a run of n records, `STATE n` for a STATE whose sourceStats.recordCount is n
 * (`STATE` without one): ['STARTED', 'RUNNING', 'RECORD×300', 'STATE 300', 'COMPLETE'].
 */
export function streamTimeline(messages: readonly AirbyteMessage[], stream: string): string[] {
  const out: string[] = [];
  let records = 0;
  for (const message of messages.filter((m) => streamOf(m) === stream)) {
    if (message.type === 'RECORD') {
      records++;
      continue;
    }
    if (records > 0) out.push(`RECORD×${records}`);
    records = 0;
    const count = message.state?.sourceStats?.recordCount;
    out.push(message.type === 'STATE' ? (count === undefined ? 'STATE' : `STATE ${count}`) : message.trace!.stream_status!.status);
  }
  if (records > 0) out.push(`RECORD×${records}`);
  return out;
}

/** The streams of the RECORD, STATE and STREAM_STATUS messages, in order, a run of one stream's messages named once: ['training', 'phishing'] when they do not interleave. */
export function streamSequence(messages: readonly AirbyteMessage[]): string[] {
  return messages.map(streamOf).filter((stream): stream is string => stream !== undefined).filter((stream, i, all) => i === 0 || all[i - 1] !== stream);
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
