import { FieldTable } from '../../src/records/fields.js';
import { loadSchema } from '../../src/catalog/schemas.js';
import { TRAINING } from '../../src/catalog/reports.js';

/** The field rules of the whole packaged training schema; undeclared fields are pushed to `warnings`. */
export function trainingTable(warnings: string[] = []): FieldTable {
  const schema = loadSchema(TRAINING.schemaFile);
  return new FieldTable(schema, {
    declaredFields: new Set(Object.keys(schema.properties ?? {})),
    keyProperties: TRAINING.keyProperties,
    replicationKey: TRAINING.replicationKey,
    personalFields: TRAINING.personalFields,
    onUndeclaredField: (f) => warnings.push(f),
  });
}
