import type { JsonSchema } from '../schemas.js';

/** Singer messages, serialised by hand where it saves work on the per-record path. */

export function schemaMessage(stream: string, schema: JsonSchema, keyProperties: readonly string[], bookmarkProperties: readonly string[]): string {
  return JSON.stringify({ type: 'SCHEMA', stream, schema, key_properties: keyProperties, bookmark_properties: bookmarkProperties });
}

export function stateMessage(value: unknown): string {
  return JSON.stringify({ type: 'STATE', value });
}

/** Prefix and suffix of every RECORD line of one stream, so a record's JSON text is spliced in. */
export function recordEnvelope(stream: string, timeExtracted: string): { head: string; tail: string } {
  return {
    head: `{"type":"RECORD","stream":${JSON.stringify(stream)},"record":`,
    tail: `,"time_extracted":${JSON.stringify(timeExtracted)}}`,
  };
}
