import type { StreamBookmark as Bookmark, TapState as StateValue } from '../../src/state.js';

/** Singer messages as a test reads them from the tap's stdout. */

export type JsonObject = Record<string, unknown>;

/** The tap's own state types: the tests read what the tap writes. */
export type { Bookmark, StateValue };

export interface SchemaMessage {
  type: 'SCHEMA';
  stream: string;
  schema: { properties?: Record<string, JsonObject>; required?: string[]; [key: string]: unknown };
  key_properties: string[];
  bookmark_properties?: string[];
}

export interface RecordMessage {
  type: 'RECORD';
  stream: string;
  record: JsonObject;
  /** The table version: the full pass's, or the table's current one. */
  version?: number;
  time_extracted?: string;
}

export interface ActivateVersionMessage {
  type: 'ACTIVATE_VERSION';
  stream: string;
  version: number;
}

export interface StateMessage {
  type: 'STATE';
  value: StateValue;
}

export interface BatchMessage {
  type: 'BATCH';
  stream: string;
  encoding: { format: string; compression: string };
  manifest: string[];
}

export type SingerMessage = SchemaMessage | RecordMessage | StateMessage | BatchMessage | ActivateVersionMessage;

export function parseMessages(stdout: string): SingerMessage[] {
  const messages: SingerMessage[] = [];
  const lines = stdout.split('\n');
  lines.forEach((line, index) => {
    if (line === '' && index === lines.length - 1) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`stdout line ${index + 1} is not JSON: ${line.slice(0, 200)}`);
    }
    const type = (parsed as { type?: unknown })?.type;
    if (type !== 'SCHEMA' && type !== 'RECORD' && type !== 'STATE' && type !== 'BATCH' && type !== 'ACTIVATE_VERSION') throw new Error(`stdout line ${index + 1} is not a Singer message: ${line.slice(0, 200)}`);
    messages.push(parsed as SingerMessage);
  });
  return messages;
}

export function recordMessages(messages: readonly SingerMessage[], stream?: string): RecordMessage[] {
  return messages.filter((m): m is RecordMessage => m.type === 'RECORD' && (stream === undefined || m.stream === stream));
}

export function recordsOf(messages: readonly SingerMessage[], stream: string): JsonObject[] {
  return recordMessages(messages, stream).map((m) => m.record);
}

export function batchesOf(messages: readonly SingerMessage[], stream?: string): BatchMessage[] {
  return messages.filter((m): m is BatchMessage => m.type === 'BATCH' && (stream === undefined || m.stream === stream));
}

export function schemasOf(messages: readonly SingerMessage[], stream?: string): SchemaMessage[] {
  return messages.filter((m): m is SchemaMessage => m.type === 'SCHEMA' && (stream === undefined || m.stream === stream));
}

export function activationsOf(messages: readonly SingerMessage[], stream?: string): ActivateVersionMessage[] {
  return messages.filter((m): m is ActivateVersionMessage => m.type === 'ACTIVATE_VERSION' && (stream === undefined || m.stream === stream));
}

export function statesOf(messages: readonly SingerMessage[]): StateMessage[] {
  return messages.filter((m): m is StateMessage => m.type === 'STATE');
}

export function lastState(messages: readonly SingerMessage[]): StateValue {
  const states = statesOf(messages);
  if (states.length === 0) throw new Error('no STATE message');
  return states[states.length - 1].value;
}

export function bookmarkOf(state: StateValue, stream: string): Bookmark | undefined {
  return state.bookmarks?.[stream];
}

/** The member a Singer delete record sets; the SCHEMA of an incremental stream sent through the change store declares it, last. */
export const DELETED_AT = '_sdc_deleted_at';

/** A SCHEMA message's fields as its records carry them: every property but the deletion member (declared last when the change store is on). */
export function recordFields(message: SchemaMessage): string[] {
  const fields = Object.keys(message.schema.properties ?? {});
  return fields.at(-1) === DELETED_AT ? fields.slice(0, -1) : fields;
}
