import { fieldRecord, hasOwnField } from '../catalog/field-keys.js';
import type { JsonSchema } from '../catalog/schemas.js';

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

  /** The record's JSON text for the row whose stored key is `keyJson` (a JSON array of the key values, in key-property order), gone at `deletedAt`. */
  json(keyJson: Buffer, deletedAt: string): string {
    const values = JSON.parse(keyJson.toString('utf8')) as unknown[];
    if (!Array.isArray(values) || values.length !== this.keyProperties.length) throw new Error('a stored key that is not one value per key property');
    const keys = new Map(this.keyProperties.map((name, i) => [name, values[i]]));
    const members = this.fields.map((field) => `${JSON.stringify(field)}:${keys.has(field) ? JSON.stringify(keys.get(field)) : 'null'}`);
    return `{${members.join(',')},${JSON.stringify(this.member)}:${JSON.stringify(deletedAt)}}`;
  }
}
