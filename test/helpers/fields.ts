import { FieldTable } from '../../src/records/fields.js';
import { loadSchema, type JsonSchema } from '../../src/catalog/schemas.js';
import { TRAINING } from '../../src/catalog/reports.js';

/**
 * The field rules of the packaged training schema, or of the part of it named
 * in `fields` (a CSV header naming those columns then lacks no selected field);
 * undeclared fields are pushed to `warnings`.
 */
export function trainingTable(warnings: string[] = [], fields?: readonly string[]): FieldTable {
  const schema = loadSchema(TRAINING.schemaFile);
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([name]) => fields === undefined || fields.includes(name)));
  const selected: JsonSchema = { ...schema, properties };
  return new FieldTable(selected, {
    declaredFields: new Set(Object.keys(schema.properties ?? {})),
    keyProperties: TRAINING.keyProperties,
    replicationKey: TRAINING.replicationKey,
    personalFields: TRAINING.personalFields,
    onUndeclaredField: (f) => warnings.push(f),
  });
}
