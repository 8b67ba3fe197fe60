import { fieldRecord, hasOwnField } from '../catalog/field-keys.js';
import type { JsonSchema } from '../catalog/schemas.js';

/**
 * The cursor the Airbyte face declares for every stream: the instant the read
 * that emitted a record began, equal to its RECORD's `emitted_at`. Airbyte
 * destinations dedup `append_dedup` by primary key, keeping the record first
 * by cursor descending with nulls last, then by extraction time. With the
 * replication key as cursor, a training row reopened or reassigned (its
 * `completedAt` back to null) lost to the completed row it replaces, and a
 * completion date corrected backwards lost to the old one. This cursor moves
 * each time the source emits a row, so the last emission wins, as the source
 * had it then. The bookmark stays on the replication key: the cursor only
 * orders rows in the destination. The `_ab_` prefix is the one Airbyte uses
 * for fields a source adds (`_ab_cdc_lsn`, `_ab_source_file_last_modified`).
 */
export const EXTRACTION_CURSOR = '_ab_extracted_at';

const CURSOR_SCHEMA: JsonSchema = {
  type: 'string',
  format: 'date-time',
  description: 'When the source read this record (RFC 3339, UTC; the instant of its emitted_at). The cursor: append_dedup keeps the row read last.',
};

/** A stream's schema as the Airbyte catalog declares it: the service's fields and the extraction cursor. */
export function withExtractionCursor(schema: JsonSchema): JsonSchema {
  return { ...schema, properties: fieldRecord([...Object.entries(withoutCursorProperty(schema.properties)), [EXTRACTION_CURSOR, CURSOR_SCHEMA]]) };
}

/** A configured stream's schema as the engine reads it: the service's fields alone (the face adds the cursor to each record itself). */
export function withoutExtractionCursor(schema: JsonSchema): JsonSchema {
  if (!hasOwnField(schema.properties, EXTRACTION_CURSOR)) return schema;
  const required = Array.isArray(schema.required) ? { required: schema.required.filter((field) => field !== EXTRACTION_CURSOR) } : {};
  return { ...schema, properties: withoutCursorProperty(schema.properties), ...required };
}

function withoutCursorProperty(properties: Record<string, JsonSchema> | undefined): Record<string, JsonSchema> {
  return fieldRecord(Object.entries(properties ?? {}).filter(([field]) => field !== EXTRACTION_CURSOR));
}

/** The member a record of a read that began at `extractedAt` carries, as JSON text after the record's own members. */
export function extractionCursorMember(extractedAt: Date): string {
  return `,"${EXTRACTION_CURSOR}":"${extractedAt.toISOString()}"`;
}
