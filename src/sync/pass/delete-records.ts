import { fieldRecord, hasOwnField } from '../../catalog/field-keys.js';
import type { JsonSchema } from '../../catalog/schemas.js';
import { CLOSE_ARRAY, COMMA, JsonValueEnd, OPEN_ARRAY, skipSpace } from '../../records/json-value-end.js';

/**
 * Delete records: how a change pass tells a target that a row is gone. The
 * record carries the row's key properties (as emitted, so a pseudonymised key
 * stays pseudonymised), every other field null, and the deletion's instant
 * in the protocol's deletion member: Singer's `_sdc_deleted_at` (targets with
 * hard_delete remove the row; those that only mark it blank its personal
 * fields) or Airbyte's `_ab_cdc_deleted_at` (append_dedup destinations remove
 * it). The stream's schema declares the member (`withDeletionMember`).
 */

const DELETED_AT_SCHEMA: JsonSchema = {
  type: ['null', 'string'],
  format: 'date-time',
  description: 'When the tap found the row gone from the source (RFC 3339, UTC): set only on delete records, whose other fields are null but the key.',
};

/** A stream's schema with the deletion member declared (last, like the metadata columns targets add). */
export function withDeletionMember(schema: JsonSchema, member: string): JsonSchema {
  return { ...schema, properties: fieldRecord([...Object.entries(schema.properties ?? {}).filter(([field]) => field !== member), [member, DELETED_AT_SCHEMA]]) };
}

/** A configured schema as the engine reads it: without the deletion member (no dump has it). */
export function withoutDeletionMember(schema: JsonSchema, member: string): JsonSchema {
  if (!hasOwnField(schema.properties, member)) return schema;
  const properties = fieldRecord(Object.entries(schema.properties ?? {}).filter(([field]) => field !== member));
  const required = Array.isArray(schema.required) ? { required: schema.required.filter((field) => field !== member) } : {};
  return { ...schema, properties, ...required };
}

/** The fields a delete record names, in the schema's order, and how to fill them. */
export class DeleteRecords {
  private readonly fields: readonly string[];

  constructor(
    schema: JsonSchema,
    private readonly keyProperties: readonly string[],
    private readonly member: string,
  ) {
    this.fields = Object.keys(schema.properties ?? {}).filter((field) => field !== member);
  }

  /**
   * The record's JSON text for the row whose stored key is `keyJson` (a JSON
   * array of the key values, in key-property order), gone at `deletedAt`.
   * Each key value goes out as its stored text: the digits of a number beyond
   * 2^53 kept, as the record had them.
   */
  json(keyJson: Buffer, deletedAt: string): string {
    const values = valueTexts(keyJson);
    if (values === undefined || values.length !== this.keyProperties.length) throw new Error('a stored key that is not one value per key property');
    const keys = new Map(this.keyProperties.map((name, i) => [name, values[i]]));
    const members = this.fields.map((field) => `${JSON.stringify(field)}:${keys.get(field) ?? 'null'}`);
    return `{${members.join(',')},${JSON.stringify(this.member)}:${JSON.stringify(deletedAt)}}`;
  }
}

/** The texts of the values of a JSON array, as written (nothing parsed), or undefined when it is not one. */
function valueTexts(array: Buffer): string[] | undefined {
  // Of the whole ArrayBuffer: the scanner reads it at the buffer's byteOffset plus a position.
  const view = new DataView(array.buffer);
  const ends = new JsonValueEnd();
  const texts: string[] = [];
  let i = skipSpace(array, 0, array.length);
  if (array[i] !== OPEN_ARRAY) return undefined;
  i = skipSpace(array, i + 1, array.length);
  if (array[i] === CLOSE_ARRAY) return texts;
  for (;;) {
    const end = ends.valueEnd(array, view, i, array.length);
    if (end < 0) return undefined;
    texts.push(array.toString('utf8', i, end));
    i = skipSpace(array, end, array.length);
    if (array[i] === CLOSE_ARRAY) return skipSpace(array, i + 1, array.length) === array.length ? texts : undefined;
    if (array[i] !== COMMA) return undefined;
    i = skipSpace(array, i + 1, array.length);
  }
}
